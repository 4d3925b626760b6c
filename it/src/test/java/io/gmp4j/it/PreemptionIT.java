package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.AsyncPreempt;
import example.apps.GCFairness2;
import example.apps.MatrixHog;
import example.apps.PingPongHog;
import example.apps.Preemption;
import example.apps.SleepBesideSpinner;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Time slicing end to end: unmodified programs in child JVMs with the agent (which injects the
 * back-edge polls) and {@code -Xverify:all}. Each app prints the scheduler state through its
 * watchdog if it hangs, and a failing assertion prints the child's whole output.
 */
@Timeout(120)
class PreemptionIT {
  private static final Duration LIMIT = Duration.ofSeconds(60);

  /**
   * Seed 000, "sysmon and the 10 ms preemption": at one P, fifty 1 ms sleeps beside a spinning
   * virtual thread all come back. Go on this kind of machine: p50 about 20 ms, max about 29 ms.
   */
  @Test
  void seedSleepsComeBackBesideASpinner() throws Exception {
    ChildJvm.Result r =
        ChildJvm.withAgent("gomaxprocs=1", SleepBesideSpinner.class, LIMIT, "10000");
    System.out.println(
        "PreemptionIT seed, gmp4j: p50="
            + r.value("p50")
            + "ms p90="
            + r.value("p90")
            + "ms max="
            + r.value("max")
            + "ms");
    assertEquals("50", r.value("sleeps"), r.toString());
    assertTrue(r.value("carrier").startsWith("gmp-m"), r.toString());
    // 30 ms of M time (a time slice plus sysmon's period): the spinner sees the request only
    // while its carrier is on a CPU, so on a loaded machine the bound stretches by the inverse
    // of the CPU share the OS gave the carriers (see PreemptTest).
    double share = Math.max(0.1, Double.parseDouble(r.value("m_cpu_share")));
    assertTrue(Double.parseDouble(r.value("p50")) < 30 / share, r.toString());
  }

  /**
   * With asyncpreemptoff=1 there are no polls and (by default then) no hand-off, and the sleeps
   * never come back, as in Go.
   */
  @Test
  void seedWithAsyncPreemptOffNeverComesBack() throws Exception {
    ChildJvm.Result r =
        ChildJvm.withAgent(
            "gomaxprocs=1,asyncpreemptoff=1", SleepBesideSpinner.class, LIMIT, "2000");
    assertEquals("true", r.value("stuck"), r.toString());
    assertTrue(Integer.parseInt(r.value("sleeps")) < 50, r.toString());
  }

  /**
   * Beyond Go: with asyncpreemptoff=1 and an explicit preempt.handoff the spinner never yields
   * either, but after the time slice and the hand-off its P goes to another M, and every sleep
   * comes back.
   */
  @Test
  void seedWithAsyncPreemptOffComesBackThroughTheHandoff() throws Exception {
    ChildJvm.Result r =
        ChildJvm.withAgent(
            "gomaxprocs=1,asyncpreemptoff=1,preempt.handoff=20ms",
            SleepBesideSpinner.class,
            LIMIT,
            "10000");
    System.out.println(
        "PreemptionIT seed, asyncpreemptoff=1 with the hand-off: p50="
            + r.value("p50")
            + "ms p90="
            + r.value("p90")
            + "ms max="
            + r.value("max")
            + "ms");
    assertEquals("50", r.value("sleeps"), r.toString());
    assertTrue(r.err().contains("ignored preemption"), r.toString());
  }

  /** The JDK's own scheduler at parallelism 1, for comparison: no time slicing at all. */
  @Test
  void seedOnTheJdkSchedulerNeverComesBack() throws Exception {
    ChildJvm.Result r =
        ChildJvm.run(
            List.of("-Djdk.virtualThreadScheduler.parallelism=1"),
            Map.of(),
            SleepBesideSpinner.class,
            LIMIT,
            "2000");
    System.out.println(
        "PreemptionIT seed, JDK default scheduler: sleeps="
            + r.value("sleeps")
            + " stuck="
            + r.value("stuck"));
    assertEquals("true", r.value("stuck"), r.toString());
  }

  /**
   * With HotSpot's JVMTI virtual-thread notifications off ({@code
   * -XX:-DoJVMTIVirtualThreadTransitions}: README, 'What any Java agent costs a virtual thread')
   * the agent still installs, rewrites classes and time-slices, since it uses none of those
   * notifications: MatrixHog's hog, inside a library at one P, is preempted by its polls and
   * keeps its P, as {@link OldClassFilesIT#hogInAJava5LibraryIsPreemptedByItsPolls} asks with
   * the notifications on. With commons-math3 excluded from the polls this fails on the hog's
   * hand-off, and without the agent no preemption is honoured.
   */
  @Test
  void hogIsPreemptedWithJvmtiVirtualThreadNotificationsOff() throws Exception {
    ChildJvm.Result r =
        ChildJvm.run(
            List.of(
                "-XX:+UnlockExperimentalVMOptions",
                "-XX:-DoJVMTIVirtualThreadTransitions",
                "-Xverify:all",
                ChildJvm.javaagent("gomaxprocs=1")),
            Map.of(),
            MatrixHog.class,
            LIMIT,
            "1000");
    assertEquals(0, r.exit(), r.toString());
    System.out.printf(
        "PreemptionIT without JVMTI virtual-thread notifications: %s products, ticks=%s"
            + " honored=%s handoffs=%s%n",
        r.value("products"), r.value("ticks"), r.value("honored"), r.value("handoffs"));
    OldClassFilesIT.assertHogKeptItsP(r);
    long ticks = Long.parseLong(r.value("ticks"));
    assertTrue(ticks >= 5 && ticks > 2 * Long.parseLong(r.value("products")), r.toString());
    assertTrue(Long.parseLong(r.value("honored")) >= 5, r.toString());
  }

  /** Go's TestPingPongHog: the two pairs get CPU within a factor of 20. */
  @Test
  void testPingPongHog() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("gomaxprocs=1", PingPongHog.class, LIMIT);
    assertEquals(0, r.exit(), r.toString());
    long hog = Long.parseLong(r.value("hog"));
    long light = Long.parseLong(r.value("light"));
    System.out.printf("PreemptionIT PingPongHog: hog=%d light=%d%n", hog, light);
    assertTrue(hog / 20 <= light && light / 20 <= hog, r.toString());
  }

  /** Go's TestPreemption: two spinners that take turns finish at one P. */
  @Test
  void testPreemption() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("gomaxprocs=1", Preemption.class, LIMIT);
    assertEquals(0, r.exit(), r.toString());
    assertEquals("10", r.value("turns"), r.toString());
  }

  /** Go's TestGCFairness2: three CPU-bound threads at one P all run within 30 ms (+1 s). */
  @Test
  void testGCFairness2() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("gomaxprocs=1", GCFairness2.class, LIMIT);
    assertEquals("true", r.value("fair"), r.toString());
  }

  /** Go's TestAsyncPreempt, with "main gets the P back" for the stop-the-world. */
  @Test
  void testAsyncPreempt() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("gomaxprocs=1", AsyncPreempt.class, LIMIT);
    assertTrue(r.out().contains("OK\n"), r.toString());
  }
}
