package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.dump;
import static io.gmp4j.runtime.SchedTesting.poll;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 'Overdue wake-ups' in {@link Sysmon}: a G that a thread of the JDK's (here the test's own
 * thread) wakes while every P runs a G does not wait for a time slice to end. Sysmon treats the
 * wake-up segment of the global queue like a timer: once it has waited 1 ms, the G of the oldest
 * slice is asked to yield at its next poll.
 */
class OverdueWakeUpTest {
  private static final long HOUR = 3_600_000_000_000L;

  /**
   * One P, a G that polls without end, and a time slice and a hand-off of an hour: without the
   * rule the woken G waits for the hog's slice, an hour; with it, about a millisecond.
   */
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void aGWokenByAJdkThreadDoesNotWaitForTheSlice() throws Exception {
    Sched s = SchedTesting.newSched(1);
    s.startSysmon(HOUR, HOUR, 0, false, false);
    AtomicInteger woken = new AtomicInteger();
    AtomicLong ranAt = new AtomicLong();
    CountDownLatch parked = new CountDownLatch(1);
    Thread waiter =
        s.newBuilder()
            .start(
                () -> {
                  parked.countDown();
                  while (woken.get() == 0) {
                    LockSupport.park();
                  }
                  ranAt.set(System.nanoTime());
                });
    parked.await();
    assertTrue(poll(5_000, () -> s.npidle == 1), "the P never went idle: " + dump(s));
    AtomicInteger stop = new AtomicInteger();
    CountDownLatch running = new CountDownLatch(1);
    Thread hog =
        s.newBuilder()
            .start(
                () -> {
                  running.countDown();
                  while (stop.get() == 0) {
                    Preempt.poll(); // the agent's poll, by hand
                  }
                });
    try {
      running.await();
      long t0 = System.nanoTime();
      woken.set(1);
      LockSupport.unpark(waiter); // not from one of our threads: the wake-up segment
      assertTrue(
          waiter.join(Duration.ofSeconds(20)),
          "the woken G waits for the hog's slice of an hour: " + dump(s));
      System.out.println(
          "OverdueWakeUpTest: the woken G ran "
              + (ranAt.get() - t0) / 1_000
              + " us after its unpark, "
              + s.overdueTimerPreempts.sum()
              + " slice(s) cut");
    } finally {
      stop.set(1);
      hog.join();
    }
  }
}
