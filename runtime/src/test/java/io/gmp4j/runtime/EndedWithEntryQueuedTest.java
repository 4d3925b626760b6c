package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.dump;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A spurious submit (JDK 25's stack walker resubmits a thread it suspended) that lands while the G
 * still runs, and the G then ends without parking: its M destroys it with the entry still queued
 * (runnable → dead), and the M that later pops the entry must drop it. Before, that M's execute
 * threw InternalError ("bad status") out of its scheduler loop, and the P it held was lost with
 * it: nothing ran any more. Here the resubmit comes from a platform thread, as the walker's does.
 */
class EndedWithEntryQueuedTest {
  private static final int ROUNDS = 50;

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void anEntryQueuedForAnEndedGIsDropped() throws Exception {
    Sched s = SchedTesting.newSched(1);
    AtomicInteger queuedAtTheEnd = new AtomicInteger();
    for (int i = 0; i < ROUNDS; i++) {
      Thread g =
          s.newBuilder()
              .start(
                  () -> {
                    Goroutine me = (Goroutine) VirtualThreads.scheduler(Thread.currentThread());
                    Thread walker = Thread.ofPlatform().start(() -> me.execute(me.runContinuation));
                    while (walker.isAlive()) {
                      Thread.onSpinWait(); // no park: at one P the entry stays queued
                    }
                    if (me.status() == Goroutine.RUNNABLE) {
                      queuedAtTheEnd.incrementAndGet();
                    }
                  });
      assertTrue(g.join(Duration.ofSeconds(20)), "round " + i + ": the G did not end\n" + dump(s));
      Thread next = s.newBuilder().start(() -> {});
      assertTrue(
          next.join(Duration.ofSeconds(20)),
          "round " + i + ": the scheduler stopped after the queued entry\n" + dump(s));
    }
    assertEquals(ROUNDS, queuedAtTheEnd.get(), "every G ended with its entry queued");
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (s.allgs.size() != 0 && System.nanoTime() - deadline < 0) {
      Thread.sleep(10); // the Ms destroy the last Gs after their joiners wake
    }
    assertEquals(0, s.allgs.size(), "Gs destroyed once each\n" + dump(s));
  }
}
