package io.gmp4j;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The global run queue under contention, through the "Delicate dance" in findRunnable (proc.go):
 * a spinning M that gives up drops its P and nmspinning, then rechecks the global queue and, if
 * it is not empty, takes an idle P and a batch. Many Ms race for the queue when a platform thread
 * (not a G, so every start goes to the global queue) starts short Gs in bursts, so the queue is
 * often emptied by another M between a racy look and the locked take.
 *
 * <p>Property: every G runs, and no P is lost: once the work is done every P is idle again and a
 * stop-the-world (the GOMAXPROCS restore) finishes.
 */
@ExtendWith(SchedTraceOnFailure.class)
class GlobalRunqTest {
  private static final Pattern PROCS = Pattern.compile("gomaxprocs=(\\d+) idleprocs=(\\d+)");

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void burstsFromAPlatformThreadLoseNoGAndNoP() throws Exception {
    GmpTesting.withProcs(
        4,
        () -> {
          AtomicLong ran = new AtomicLong();
          long submitted = 0;
          long end = System.nanoTime() + 3_000_000_000L * GmpTesting.STRESS;
          for (int round = 1; System.nanoTime() - end < 0; round++) {
            for (int i = 0; i < 200; i++) {
              Gmp.go(ran::incrementAndGet);
            }
            submitted += 200;
            if (round % 50 == 0) {
              Thread.sleep(1); // let the Ms run dry and start spinning down
            }
          }
          long want = submitted;
          assertTrue(
              GmpTesting.poll(10_000, () -> ran.get() == want),
              "only " + ran.get() + " of " + want + " Gs ran\n" + Gmp.schedtrace(true));
          assertTrue(
              GmpTesting.poll(5_000, GlobalRunqTest::allPsIdle),
              "with no work left, not every P is idle: a P was lost\n" + Gmp.schedtrace(true));
          System.out.println(
              "GlobalRunqTest: " + want + " Gs started from a platform thread, all ran");
        });
  }

  private static boolean allPsIdle() {
    Matcher m = PROCS.matcher(Gmp.schedtrace(false));
    return m.find() && m.group(1).equals(m.group(2));
  }
}
