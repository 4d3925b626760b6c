package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.StarvedCarriers;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 11, 'No false "ignored preemption"': a carrier that the OS keeps off the CPU is not a
 * G that ignores preemption ('Carrier time' in HogHandoff). The child runs on one CPU beside {@value
 * #BUSY} busy processes on that CPU, so that its carriers wait far longer than {@code
 * preempt.handoff} (20 ms) for their turn; every G in it honours preemption. Before the run
 * delay was counted, such a run printed "goroutine N ignored preemption" lines naming sleeps,
 * parks and polled loops, and counted 22 to 38 hand-offs in its 4 s; now it may count at most
 * {@value #MAX_HANDOFFS}. Not 0: on a CPU this starved, a carrier can sleep at the moment sysmon
 * looks (on a lock a starved thread holds, at a safepoint that starved threads hold up) while
 * its G runs its own code, and that is what a G blocked in an unmarked native call looks like
 * too, which must lose its P. Seen in 14 runs since the fix: 0 to 2, in runs where the gauge
 * below saw threads starved for 250 to 900 ms.
 *
 * <p>The test checks that it made the condition it is about: the child's own gauge, a platform
 * thread that spins as the carriers do, must have been kept off the CPU for longer than {@code
 * preempt.handoff} at least once. Up to this issue the gauge was a platform thread's 1 ms sleep,
 * which Linux (EEVDF) lets in ahead of the busy processes: one run saw at most 19 ms and failed
 * the check while its spinning threads were starved far longer.
 */
@Timeout(120)
class StarvedCarriersIT {
  /** Busy processes beside the child on its CPU. */
  private static final int BUSY = 6;

  private static final long RUN_MS = 4_000;

  /**
   * Hand-offs allowed in the run (see above; 22 to 38 before the fix). 8, not 4, since the busy
   * processes run at nice -5: the child is starved harder, and four runs counted 0, 1, 0 and 3.
   */
  private static final int MAX_HANDOFFS = 8;

  @Test
  void starvedCarriersAreNotTakenForHogs() throws Exception {
    List<Process> busy = new ArrayList<>();
    try {
      for (int i = 0; i < BUSY; i++) {
        // At nice -5 (three times a default task's CPU share each, where the test may renice:
        // as root; elsewhere nice says so and runs them at 0): since timers are on the Ps and
        // carriers spin less, the child was starved for at most 19 ms at equal priority in one
        // run, under the 20 ms that the check below needs.
        busy.add(
            new ProcessBuilder(
                    "taskset", "-c", "0", "nice", "-n", "-5", "sh", "-c", "while :; do :; done")
                .redirectErrorStream(true)
                .start());
      }
      ChildJvm.Result r =
          ChildJvm.run(
              List.of("taskset", "-c", "0"),
              List.of("-Xverify:all", ChildJvm.javaagent("gomaxprocs=2")),
              Map.of(),
              StarvedCarriers.class,
              Duration.ofSeconds(90),
              String.valueOf(RUN_MS));
      assertEquals(0, r.exit(), r.toString());
      long gap = Long.parseLong(r.value("max_spin_gap_ms"));
      System.out.printf(
          "StarvedCarriersIT: longest gap of a spinning thread %d ms, longest 1 ms"
              + " sleep %s ms; honored=%s spins=%sM sleeps=%s pairs=%s handoffs=%s%n",
          gap,
          r.value("max_gap_ms"),
          r.value("honored"),
          r.value("spins"),
          r.value("sleeps"),
          r.value("pairs"),
          r.value("handoffs"));
      assertTrue(
          gap > 20,
          "the OS never kept a spinning thread off the CPU for longer than"
              + " preempt.handoff (longest gap: "
              + gap
              + " ms), so this run tests nothing\n"
              + r);
      assertTrue(Long.parseLong(r.value("honored")) > 0, "no G was preempted\n" + r);
      long handoffs = Long.parseLong(r.value("handoffs"));
      assertTrue(
          handoffs <= MAX_HANDOFFS,
          handoffs + " Gs that honour preemption were handed" + " off as hogs\n" + r);
      // Every report line names at least one of them.
      long reported =
          r.err().lines().filter(l -> ChildJvm.HANDOFF_REPORT.matcher(l).matches()).count();
      assertTrue(reported <= handoffs, r.toString());
    } finally {
      for (Process p : busy) {
        p.destroyForcibly();
      }
      for (Process p : busy) {
        waitFor(p);
      }
    }
  }

  private static void waitFor(Process p) throws IOException {
    try {
      p.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
