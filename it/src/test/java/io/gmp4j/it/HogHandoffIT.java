package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.IgnoresPreemption;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Beyond Go, end to end with the agent: a virtual thread in code without polls loses its P
 * after {@code preempt.handoff}, so another virtual thread keeps running at one P; sysmon counts
 * the hand-off and reports it on stderr; and the hog's first poll afterwards takes it back into
 * the scheduler.
 */
@Timeout(120)
class HogHandoffIT {
  private static final Duration LIMIT = Duration.ofSeconds(60);

  /** One frame of the hand-off line in a JDK class, e.g. {@code java.lang.System.nanoTime(...)}. */
  private static final String JDK_FRAME = "(?:java|javax|jdk|sun)\\.[\\w.$]+\\([^)]*\\)";

  /** The hog sits in a class that {@code preempt.exclude} leaves without polls. */
  @Test
  void excludedClassLosesItsPAndIsReported() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("gomaxprocs=1,preempt.exclude="
        + IgnoresPreemption.Library.class.getName(), IgnoresPreemption.class, LIMIT,
        "excluded");
    check(r, Pattern.quote(IgnoresPreemption.Library.class.getName()) + "\\.spin\\(");
  }

  /** The hog sits in a JDK method, which the agent never instruments. */
  @Test
  void jdkMethodLosesItsPAndIsReported() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("gomaxprocs=1", IgnoresPreemption.class, LIMIT,
        "jdk");
    check(r, "java\\.util\\.");
  }

  private static void check(ChildJvm.Result r, String hogFrame) {
    assertEquals(0, r.exit(), r.toString());
    long hogMs = Long.parseLong(r.value("hog_ms"));
    long ticks = Long.parseLong(r.value("ticks"));
    System.out.printf("HogHandoffIT: the hog ran %d ms without polls; the other thread's 1 ms"
        + " sleeps came back %d times meanwhile; handoffs=%s%n", hogMs, ticks,
        r.value("handoffs"));
    assertTrue(Long.parseLong(r.value("handoffs")) >= 1, r.toString());
    // Without the hand-off: 0 (the ticker waits for the only P). With it, the P is back to
    // work after about 30 ms; a tick costs more than 1 ms, so ask for a quarter.
    assertTrue(hogMs < 200 || ticks >= (hogMs - 100) / 4, r.toString());
    assertTrue(Long.parseLong(r.value("honored_after")) >= 1, r.toString());
    List<String> lines = r.err().lines().filter(l -> l.startsWith("gmp4j: goroutine ")).toList();
    assertEquals(1, lines.size(), r.toString());
    // The line shows the hog's stack as sysmon sampled it, and the hog calls into the JDK from
    // its loop (System.nanoTime, a native method): the sample may land there. What the user
    // needs is the code that ignored preemption, so ask for it as the innermost frame outside
    // the JDK, below any JDK frames it called (in the jdk case the hog is itself a JDK frame).
    assertTrue(Pattern.matches("gmp4j: goroutine \\d+ ignored preemption for \\d+ms \\(running "
        + "(?:" + JDK_FRAME + " <- )*" + hogFrame + ".*\\); its P was handed to another M",
        lines.get(0)), r.toString());
    System.out.println("HogHandoffIT stderr: " + lines.get(0));
  }
}
