package io.gmp4j.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Go 1.25's default GOMAXPROCS rule over the JDK's numbers (see MaxProcsLimit's overview), as
 * Go's TestCgroupGOMAXPROCS cases read it: the limit rounds up, never below 2 while 2 CPUs may
 * be used, never above the affinity.
 */
class MaxProcsLimitTest {
  @Test
  void noLimitFollowsTheAffinity() {
    assertEquals(2, MaxProcsLimit.compute(2, 2, 2));
    assertEquals(1, MaxProcsLimit.compute(2, 2, 1)); // taskset -p -c 0 on the main thread
    assertTrue(MaxProcsLimit.lastReason.contains("no CPU limit"), MaxProcsLimit.lastReason);
  }

  @Test
  void limitBelowTwoIsRaisedToTwo() {
    // 0.5 CPU on 2 CPUs: the JDK rounds the quota up to 1; Go's rule says 2.
    assertEquals(2, MaxProcsLimit.compute(1, 2, 2));
    assertTrue(MaxProcsLimit.lastReason.contains("raised to 2"), MaxProcsLimit.lastReason);
    // ... but never above the affinity: one CPU allowed means one P.
    assertEquals(1, MaxProcsLimit.compute(1, 2, 1));
  }

  @Test
  void limitAboveTwoIsTaken() {
    assertEquals(3, MaxProcsLimit.compute(3, 8, 8));
    assertEquals(2, MaxProcsLimit.compute(3, 8, 2));
  }

  @Test
  void cpuListsAreCounted() {
    assertEquals(1, MaxProcsLimit.countList("0"));
    assertEquals(2, MaxProcsLimit.countList("0-1"));
    assertEquals(7, MaxProcsLimit.countList("0-3,8,10-11"));
  }

  @Test
  void statusFileIsRead() throws Exception {
    Path f = Files.createTempFile("status", "");
    try {
      Files.writeString(f, "Name:\tjava\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n");
      assertEquals(2, MaxProcsLimit.affinity(f, 9));
      assertEquals(9, MaxProcsLimit.affinity(f.resolveSibling("no-such-status-file"), 9));
    } finally {
      Files.delete(f);
    }
  }
}
