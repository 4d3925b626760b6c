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
    String reason = reason(2, 2, 1);
    assertTrue(reason.contains("no CPU limit"), reason);
  }

  @Test
  void limitBelowTwoIsRaisedToTwo() {
    // 0.5 CPU on 2 CPUs: the JDK rounds the quota up to 1; Go's rule says 2.
    assertEquals(2, MaxProcsLimit.compute(1, 2, 2));
    String reason = reason(1, 2, 2);
    assertTrue(reason.contains("raised to 2"), reason);
    // ... but never above the affinity: one CPU allowed means one P.
    assertEquals(1, MaxProcsLimit.compute(1, 2, 1));
  }

  /**
   * The reason compute gives for these numbers. lastReason is shared: the sysmon of the
   * process-wide scheduler (which the io.gmp4j tests start in this JVM) writes the machine's own
   * once a second, and one such write between a compute and the read after it would be taken
   * for ours. Two reads in a row, each right after a compute, that agree are ours: sysmon cannot
   * write into both windows, microseconds apart. Judging by content instead (retry until it
   * says what the test wants) could pass on sysmon's reason alone.
   */
  private static String reason(int jdk, int threadAffinity, int ncpu) {
    String last = null;
    for (int i = 0; i < 5; i++) {
      MaxProcsLimit.compute(jdk, threadAffinity, ncpu);
      String r = MaxProcsLimit.lastReason;
      if (r.equals(last)) {
        return r;
      }
      last = r;
    }
    return "no two reads agreed; the last: " + last;
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
