package io.gmp4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * One million parked goroutines, as the issue demands: all are created, all park on one gate,
 * all run after it opens, and the scheduler forgets them afterwards (NumGoroutine returns to
 * where it was). Exactly 1,000,000 at {@code gmp.stress=1}; the stress factor multiplies it.
 */
@ExtendWith(SchedTraceOnFailure.class)
class ScaleTest {

  @Test
  @Timeout(value = 120, threadMode = SEPARATE_THREAD)
  void oneMillionParkedGoroutines() throws Exception {
    final int n = 1_000_000 * GmpTesting.STRESS;
    Runtime rt = Runtime.getRuntime();
    // The earlier tests' goroutines end first (up to 10 s): one still ending when the baseline is
    // taken ends during the test and leaves numGoroutine one short of baseline + n (CI with a
    // core kept busy, after ProcTest's spinners had been handed off: 1,000,000 with 1,000,000).
    GmpTesting.poll(10_000, () -> Gmp.numGoroutine() == 0);
    int baseline = Gmp.numGoroutine();
    long createdBefore = (Long) Gmp.readMetrics().get("/sched/goroutines-created:goroutines");
    CountDownLatch gate = new CountDownLatch(1);
    AtomicLong arrived = new AtomicLong();
    AtomicLong ran = new AtomicLong();
    Runnable body =
        () -> {
          arrived.incrementAndGet();
          try {
            gate.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
          ran.incrementAndGet();
        };

    long t0 = System.nanoTime();
    try {
      for (int i = 0; i < n; i++) {
        Gmp.go(body);
      }
      long t1 = System.nanoTime();
      assertTrue(
          GmpTesting.poll(60_000, () -> arrived.get() == n),
          "only "
              + arrived.get()
              + " of "
              + n
              + " Gs ran up to the gate\n"
              + Gmp.schedtrace(false));
      long t2 = System.nanoTime();
      int live = Gmp.numGoroutine();
      assertTrue(live >= baseline + n, "numGoroutine " + live + " with " + n + " parked");
      long created = (Long) Gmp.readMetrics().get("/sched/goroutines-created:goroutines");
      assertTrue(
          created - createdBefore >= n, "goroutines-created grew by " + (created - createdBefore));
      // All parked: eventually the waiting gauge counts them (racy, so poll).
      assertTrue(
          GmpTesting.poll(
              10_000,
              () -> (Long) Gmp.readMetrics().get("/sched/goroutines/waiting:goroutines") >= n),
          "waiting gauge " + Gmp.readMetrics().get("/sched/goroutines/waiting:goroutines"));
      long used = (rt.totalMemory() - rt.freeMemory()) >> 20;
      System.out.printf(
          "ScaleTest: started %,d Gs in %d ms, all parked after %d ms;"
              + " heap used %,d MB of max %,d MB%n",
          n, (t1 - t0) / 1_000_000, (t2 - t0) / 1_000_000, used, rt.maxMemory() >> 20);

      gate.countDown();
      assertTrue(
          GmpTesting.poll(60_000, () -> ran.get() == n),
          "only "
              + ran.get()
              + " of "
              + n
              + " Gs ran after the gate opened\n"
              + Gmp.schedtrace(false));
      long t3 = System.nanoTime();
      assertTrue(
          GmpTesting.poll(30_000, () -> Gmp.numGoroutine() <= baseline),
          "numGoroutine " + Gmp.numGoroutine() + " did not return to " + baseline);
      long t4 = System.nanoTime();
      System.out.printf(
          "ScaleTest: %,d Gs ran to the end %d ms after the gate opened;"
              + " numGoroutine back to %d after %d ms more%n",
          n, (t3 - t2) / 1_000_000, Gmp.numGoroutine(), (t4 - t3) / 1_000_000);
    } finally {
      gate.countDown();
    }
    assertEquals(n, ran.get());
  }
}
