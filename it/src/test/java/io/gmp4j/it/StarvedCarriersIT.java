package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import example.apps.StarvedCarriers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 11, 'No false "ignored preemption"': a carrier that the OS keeps off the CPU is not a G
 * that ignores preemption ('Carrier time' in HogHandoff). The child runs on one CPU beside {@value
 * #BUSY} busy processes on that CPU, so that its carriers wait far longer than {@code
 * preempt.handoff} (20 ms) for their turn; every G in it honours preemption. Before the run delay
 * was counted, such a run printed "goroutine N ignored preemption" lines naming sleeps, parks and
 * polled loops, and counted 22 to 38 hand-offs in its 4 s; now it may count at most {@value
 * #MAX_HANDOFFS}. Not 0: on a CPU this starved, a carrier can sleep at the moment sysmon looks (on
 * a lock a starved thread holds, at a safepoint that starved threads hold up) while its G runs its
 * own code, and that is what a G blocked in an unmarked native call looks like too, which must lose
 * its P. Seen in 14 runs since the fix: 0 to 2, in runs where the gauge below saw threads starved
 * for 250 to 900 ms.
 *
 * <p>The test checks that it made the condition it is about, and is skipped where the OS did
 * not: the child's own gauge, a platform thread that spins as the carriers do, must have been
 * kept off the CPU for longer than {@code preempt.handoff} at least once. Up to this issue the
 * gauge was a platform thread's 1 ms sleep, which Linux (EEVDF) lets in ahead of the busy
 * processes: one run saw at most 19 ms and failed the check while its spinning threads were
 * starved far longer.
 */
@Timeout(240)
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
    String cpu = firstAllowedCpu();
    List<String> cmd =
        new ArrayList<>(
            List.of(
                "taskset",
                "-c",
                cpu,
                ChildJvm.JAVA.toString(),
                "-Xverify:all",
                ChildJvm.javaagent("gomaxprocs=2"),
                "-cp",
                System.getProperty("java.class.path"),
                StarvedCarriers.class.getName(),
                String.valueOf(RUN_MS)));
    List<Process> busy = new ArrayList<>();
    try (LiveChild child = LiveChild.start(cmd, Map.of())) {
      // The busy processes start only once the child is up: its start-up (the agent, and
      // -Xverify:all on every class) at a twentieth of a CPU took most of the deadline on a slow
      // machine, and the condition under test is the run, not the start-up.
      child.awaitOut("ready"::equals, Duration.ofSeconds(60));
      for (int i = 0; i < BUSY; i++) {
        // At nice -5 (three times a default task's CPU share each, where the test may renice:
        // as root; elsewhere nice says so and runs them at 0): since timers are on the Ps and
        // carriers spin less, the child was starved for at most 19 ms at equal priority in one
        // run, under the 20 ms that the check below needs.
        busy.add(
            new ProcessBuilder(
                    "taskset", "-c", cpu, "nice", "-n", "-5", "sh", "-c", "while :; do :; done")
                .redirectErrorStream(true)
                .start());
      }
      child.send("go");
      // Its last line; then the busy processes go, so that its exit is not starved too.
      child.awaitOut(l -> l.startsWith("max_spin_gap_ms="), Duration.ofSeconds(90));
      stop(busy);
      int exit = child.waitFor(Duration.ofSeconds(30));
      ChildJvm.Result r = new ChildJvm.Result(exit, child.out(), child.err(), exit < 0, List.of());
      assertEquals(0, r.exit(), r.toString());
      long gap = Long.parseLong(r.value("max_spin_gap_ms"));
      System.out.printf(
          "StarvedCarriersIT: on CPU %s, longest gap of a spinning thread %d ms, longest 1 ms"
              + " sleep %s ms; honored=%s spins=%sM sleeps=%s pairs=%s handoffs=%s%n",
          cpu,
          gap,
          r.value("max_gap_ms"),
          r.value("honored"),
          r.value("spins"),
          r.value("sleeps"),
          r.value("pairs"),
          r.value("handoffs"));
      // About the machine, not gmp4j: the gauge is a platform thread, which only the OS
      // schedules (at equal priority, where nice -5 is refused, EEVDF's slices can keep it
      // under 20 ms).
      assumeTrue(
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
      stop(busy);
    }
  }

  /**
   * The first CPU this JVM may run on (its {@code Cpus_allowed_list}, say {@code 2-3,6}): CPU 0
   * is not ours in a container or a CI job given a CPU set.
   */
  private static String firstAllowedCpu() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("Cpus_allowed_list:")) {
        Matcher m = Pattern.compile("\\d+").matcher(line.substring(line.indexOf(':') + 1));
        if (m.find()) {
          return m.group();
        }
      }
    }
    throw new IllegalStateException("no Cpus_allowed_list in /proc/self/status");
  }

  private static void stop(List<Process> busy) throws IOException {
    for (Process p : busy) {
      p.destroyForcibly();
    }
    for (Process p : busy) {
      waitFor(p);
    }
    busy.clear();
  }

  private static void waitFor(Process p) throws IOException {
    try {
      p.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
