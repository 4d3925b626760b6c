package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.poll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A hand-off at the thread limit with {@code maxthreads.exceeded=queue}: sysmon retakes the P of
 * a G that ignores preemption, but no M may be started for it. The P's queued Gs must not be lost
 * with it (an idle P must have an empty run queue): they go to the global queue, and run once
 * an M is free again, here the hog's own M after the hog ends.
 */
class ThreadLimitHandoffTest {
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void handoffWithNoMToSpareLosesNoG() throws Exception {
    Sched s = SchedTesting.newSched(1);
    s.queueOnThreadLimit = true;
    s.setMaxThreads(2); // sysmon and one M
    s.startSysmon(1_000_000L, 2_000_000L, 0, false, false);
    AtomicInteger ran = new AtomicInteger();
    Thread hog =
        s.newBuilder()
            .start(
                () -> {
                  for (int i = 0; i < 5; i++) {
                    Thread.ofVirtual().start(ran::incrementAndGet); // into this P's local run queue
                  }
                  long end = System.nanoTime() + 300_000_000L;
                  while (System.nanoTime() - end < 0) {
                    Thread.onSpinWait(); // no poll: sysmon retakes the P after 1ms + 2ms
                  }
                });
    assertTrue(hog.join(Duration.ofSeconds(20)), "the hog did not finish\n" + s.schedtrace(true));
    assertTrue(
        poll(10_000, () -> ran.get() == 5), ran.get() + " of 5 Gs ran\n" + s.schedtrace(true));
    assertTrue(s.preemptHandoffs.sum() >= 1, "no hand-off happened\n" + s.schedtrace(true));
    assertTrue(
        poll(10_000, () -> s.npidle == 1 && s.numGoroutine() == 0),
        "the P was lost\n" + s.allp[0] + "\n" + s.schedtrace(true));
    assertEquals(0, s.runq.runqsize(), s.schedtrace(true));
    assertTrue(poll(10_000, s.allm::isEmpty), "idle Ms did not exit\n" + s.schedtrace(true));
  }
}
