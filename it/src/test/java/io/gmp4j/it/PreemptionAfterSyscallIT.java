package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.PreemptionAfterSyscall;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Go's TestPreemptionAfterSyscall end to end (go-scheduler.md section 4 item 35): subtests 10
 * µs, 100 µs and 1000 µs, at {@code gomaxprocs=2}, in a child JVM with the agent and {@code
 * -Xverify:all}. Each syscall is a real JDK call the agent brackets (a FileOutputStream write to
 * /dev/null) followed by Go's fakeSyscall busy wait inside {@code Gmp.syscall}; see the app's
 * comment for why. The busy wait's class is excluded from poll injection, as Go's busy wait has
 * no preemption point; the goroutines' own loops get the agent's polls. Go runs 10 iterations
 * (1 with -short); so do we, times {@code gmp.stress}. On the JDK's scheduler the same program
 * hangs ({@link #onTheJdkSchedulerItHangs}).
 */
@Timeout(180)
class PreemptionAfterSyscallIT {
  private static final int ITERATIONS = 10 * Integer.getInteger("gmp.stress", 1);
  private static final String OPTIONS =
      "gomaxprocs=2," + "preempt.exclude=" + PreemptionAfterSyscall.Spin.class.getName();

  @ParameterizedTest(name = "{0}us")
  @ValueSource(ints = {10, 100, 1000})
  void testPreemptionAfterSyscall(int micros) throws Exception {
    ChildJvm.Result r =
        ChildJvm.withAgent(
            OPTIONS,
            PreemptionAfterSyscall.class,
            Duration.ofSeconds(30 + ITERATIONS * 10L),
            String.valueOf(micros),
            String.valueOf(ITERATIONS));
    System.out.println(
        "PreemptionAfterSyscallIT "
            + micros
            + "us: "
            + ITERATIONS
            + " iterations, max "
            + r.value("max_ms")
            + " ms (limit 5000), syscall hand-offs "
            + r.value("syscall_handoffs"));
    assertEquals(0, r.exit(), r.toString());
    assertEquals("boot", r.value("gmp_loader"), r.toString());
    assertEquals("2", r.value("gomaxprocs"), r.toString());
    assertTrue(r.value("main_carrier").startsWith("gmp-m"), r.toString());
    for (int i = 0; i < ITERATIONS; i++) {
      String ms = r.value("iter" + i + "_ms");
      assertTrue(ms != null && Long.parseLong(ms) <= 5_000, "iteration " + i + ": " + r);
    }
    assertTrue(r.out().contains("OK\n"), r.toString());
  }

  /**
   * The JDK's own scheduler at parallelism 2, for comparison: nothing hands a carrier off
   * during the syscalls (the JDK does not compensate for FileOutputStream writes, and {@code
   * Gmp.syscall} just calls its argument without gmp4j), so two loopers keep both carriers, the
   * other six never start and main waits forever. The app's watchdog ends it after 5 s.
   */
  @Test
  void onTheJdkSchedulerItHangs() throws Exception {
    ChildJvm.Result r =
        ChildJvm.run(
            List.of("-Xverify:all", "-Djdk.virtualThreadScheduler.parallelism=2"),
            Map.of(),
            PreemptionAfterSyscall.class,
            Duration.ofSeconds(60),
            "10",
            "1",
            "5000");
    System.out.println(
        "PreemptionAfterSyscallIT, JDK default scheduler: "
            + (r.out().contains("WATCHDOG") ? "hung (watchdog after 5 s)" : "exit " + r.exit()));
    assertEquals(3, r.exit(), r.toString());
    assertTrue(r.out().contains("WATCHDOG"), r.toString());
  }
}
