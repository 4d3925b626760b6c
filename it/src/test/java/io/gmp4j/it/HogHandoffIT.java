package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.IgnoresPreemption;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Beyond Go, end to end with the agent: a virtual thread in code without polls loses its P
 * after {@code preempt.handoff}, so another virtual thread keeps running at one P; sysmon counts
 * the hand-off and reports it on stderr; and the hog's first poll afterwards takes it back into
 * the scheduler.
 */
@Timeout(200)
class HogHandoffIT {
  private static final Duration LIMIT = Duration.ofSeconds(60);

  /** Runs of a scenario at most (see {@link #runAndCheck}). */
  private static final int ATTEMPTS = 3;

  /** One frame of the hand-off line in a JDK class, e.g. {@code java.lang.System.nanoTime(...)}. */
  private static final String JDK_FRAME = "(?:java|javax|jdk|sun)\\.[\\w.$]+\\([^)]*\\)";

  /** The frames of a hand-off line. */
  private static final Pattern FRAMES = Pattern.compile(" \\(running (.*)\\); its P was handed");

  /** A frame of a sleep or a park, e.g. {@code java.lang.VirtualThread.parkNanos(...)}. */
  private static final Pattern SLEEP_OR_PARK = Pattern.compile("\\.(?:sleep|park)\\w*\\(");

  /** The hog sits in a class that {@code preempt.exclude} leaves without polls. */
  @Test
  void excludedClassLosesItsPAndIsReported() throws Exception {
    runAndCheck(
        "gomaxprocs=1,preempt.exclude=" + IgnoresPreemption.Library.class.getName(),
        "excluded",
        Pattern.quote(IgnoresPreemption.Library.class.getName()) + "\\.spin\\(");
  }

  /** The hog sits in a JDK method, which the agent never instruments. */
  @Test
  void jdkMethodLosesItsPAndIsReported() throws Exception {
    runAndCheck("gomaxprocs=1", "jdk", "java\\.util\\.(?:Arrays|DualPivotQuicksort)\\.");
  }

  /**
   * Runs the scenario, and once more (up to {@value #ATTEMPTS} runs) if the one report line of
   * the second went to the ticker. On a loaded machine the OS may leave the ticker's carrier
   * without a CPU for the whole {@code preempt.handoff} (20 ms) in the middle of a run: to
   * sysmon that is a G that ignores preemption, so it hands the P off, by design, and the report
   * names the ticker, in its sleep, and the hog's own hand-off right after is only counted
   * ("1 more"). Seen in 1 run in 6 beside the other helpers' builds (load average 2.4 on 2
   * CPUs), and in 4 in 6 with the child on one CPU ({@code taskset -c 0}, load 12), where the
   * ticker's carrier got 0 to 3 ms of CPU time in the 20 to 30 ms that sysmon counted. Such a
   * run says nothing about the hog's report, which is what this test checks; a wrong or
   * missing line for the hog still fails.
   */
  private static void runAndCheck(String options, String mode, String hogFrame) throws Exception {
    for (int attempt = 1; ; attempt++) {
      ChildJvm.Result r = ChildJvm.withAgent(options, IgnoresPreemption.class, LIMIT, mode);
      String line =
          r.err().lines().filter(l -> l.startsWith("gmp4j: goroutine ")).findFirst().orElse("");
      boolean tickerFirst =
          r.exit() == 0
              && line.contains("java.lang.Thread.sleep")
              && !Pattern.compile(hogFrame).matcher(line).find()
              && r.value("handoffs") != null
              && Long.parseLong(r.value("handoffs")) >= 2;
      if (tickerFirst && attempt < ATTEMPTS) {
        System.out.println(
            "HogHandoffIT: run "
                + attempt
                + " reported the ticker's starved"
                + " carrier first, running again: "
                + line);
        continue;
      }
      check(r, hogFrame);
      return;
    }
  }

  private static void check(ChildJvm.Result r, String hogFrame) {
    assertEquals(0, r.exit(), r.toString());
    long hogMs = Long.parseLong(r.value("hog_ms"));
    long ticks = Long.parseLong(r.value("ticks"));
    System.out.printf(
        "HogHandoffIT: the hog ran %d ms without polls; the other thread's 1 ms"
            + " sleeps came back %d times meanwhile; handoffs=%s%n",
        hogMs, ticks, r.value("handoffs"));
    assertTrue(Long.parseLong(r.value("handoffs")) >= 1, r.toString());
    // Without the hand-off: 0 (the ticker waits for the only P). With it, the P is back to
    // work after about 30 ms, and on a quiet machine a tick comes back every 1 to 2 ms; on a
    // loaded one the ticker's carrier got 0 to 3 ms of CPU in 20 to 30 ms (see runAndCheck), so
    // ask for a tick per 40 ms, which only a hog that keeps the P for most of its call fails.
    assertTrue(hogMs < 200 || ticks >= Math.max(10, hogMs / 40), r.toString());
    assertTrue(Long.parseLong(r.value("honored_after")) >= 1, r.toString());
    // One line for the hog. Reports come at most once a second, so a run longer than that (a
    // slow machine's Arrays.sort) may add a line for the ticker, caught in its sleep by the
    // starved carrier of runAndCheck; such a line is left out, any other line counts.
    Pattern hog = Pattern.compile(hogFrame);
    List<String> lines =
        r.err()
            .lines()
            .filter(l -> l.startsWith("gmp4j: goroutine "))
            .filter(l -> !namesOnlyAWait(l, hog))
            .toList();
    assertEquals(1, lines.size(), r.toString());
    // The line shows the hog's stack as sysmon sampled it, and the hog calls into the JDK from
    // its loop (System.nanoTime, a native method): the sample may land there. What the user
    // needs is the code that ignored preemption, so ask for it as the innermost frame outside
    // the JDK, below any JDK frames it called (in the jdk case the hog is itself a JDK frame).
    assertTrue(
        Pattern.matches(
            "gmp4j: goroutine \\d+ ignored preemption for \\d+ms \\(running "
                + "(?:"
                + JDK_FRAME
                + " <- )*"
                + hogFrame
                + ".*\\); its P was handed to another M",
            lines.get(0)),
        r.toString());
    System.out.println("HogHandoffIT stderr: " + lines.get(0));
  }

  /**
   * Whether a report line names only the ticker's wait: a sleep or park frame and no frame of
   * {@code hog}, or no frames at all (a G that stopped running before sysmon took its stack).
   */
  private static boolean namesOnlyAWait(String line, Pattern hog) {
    if (hog.matcher(line).find()) {
      return false;
    }
    Matcher frames = FRAMES.matcher(line);
    return !frames.find() || SLEEP_OR_PARK.matcher(frames.group(1)).find();
  }
}
