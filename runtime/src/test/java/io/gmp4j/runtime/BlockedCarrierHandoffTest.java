package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.dump;
import static io.gmp4j.runtime.SchedTesting.poll;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 'Blocked carriers, with the hand-off off' in HogHandoff: with {@code preempt.handoff} off (as
 * {@code asyncpreemptoff=1} sets it), a G whose carrier is blocked still loses its P, as Go's
 * sysmon retakes a P from a syscall; a G that computes keeps it, as in Go without preemption.
 * One P each, so the second G can run only on a P taken from the first. A class initializer
 * pins its virtual thread in JDK 25, so the first G blocks its carrier there.
 *
 * <p>Before, the first two tests deadlocked: the second G waited for a P that the first G's
 * blocked carrier kept for good (a Spring Boot app under {@code asyncpreemptoff=1} hung that way
 * in about one cold start in four).
 */
class BlockedCarrierHandoffTest {
  /** Bound on the second G's wait for the P; the hand-off takes a slice and 20 ms. */
  private static final long WAIT_MS = 10_000;

  static final CountDownLatch parkedInside = new CountDownLatch(1);
  static volatile boolean parkReleased;

  /** Parks in its initializer, so while pinned, until parkReleased. */
  static final class ParksInClinit {
    static final boolean DONE;

    static {
      parkedInside.countDown();
      while (!parkReleased) {
        LockSupport.park();
      }
      DONE = true;
    }

    private ParksInClinit() {}
  }

  static final Object MONITOR = new Object();
  static final CountDownLatch blockedInside = new CountDownLatch(1);

  /** Waits for MONITOR in its initializer: the carrier blocks in the JVM. */
  static final class BlocksInClinit {
    static final boolean DONE;

    static {
      blockedInside.countDown();
      synchronized (MONITOR) {
        DONE = true;
      }
    }

    private BlocksInClinit() {}
  }

  /** A scheduler of one P whose sysmon has {@code preempt.handoff} off, as asyncpreemptoff=1. */
  private static Sched onePHandoffOff() {
    Sched s = SchedTesting.newSched(1);
    s.startSysmon(10_000_000L, 0, 0, false, false);
    return s;
  }

  /**
   * Starts a second G on {@code s}'s only P, which runs {@code release}; fails with {@code why}
   * if it has not run within WAIT_MS.
   */
  private static void secondGRuns(Sched s, Runnable release, String why)
      throws InterruptedException {
    CountDownLatch ran = new CountDownLatch(1);
    s.newBuilder()
        .start(
            () -> {
              ran.countDown();
              release.run();
            });
    assertTrue(ran.await(WAIT_MS, TimeUnit.MILLISECONDS), why + "\n" + dump(s));
  }

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void aGParkedWhilePinnedLosesItsP() throws Exception {
    Sched s = onePHandoffOff();
    Thread[] first = new Thread[1];
    first[0] = s.newBuilder().start(() -> assertTrue(ParksInClinit.DONE));
    try {
      assertTrue(parkedInside.await(WAIT_MS, TimeUnit.MILLISECONDS), "never parked\n" + dump(s));
      secondGRuns(
          s,
          () -> {
            parkReleased = true;
            LockSupport.unpark(first[0]);
          },
          "the parked pinned G kept the only P");
      assertTrue(first[0].join(java.time.Duration.ofMillis(WAIT_MS)), dump(s));
    } finally {
      parkReleased = true; // so that a failure leaves no parked carrier behind
      LockSupport.unpark(first[0]);
    }
    assertTrue(poll(WAIT_MS, () -> s.numGoroutine() == 0), dump(s));
  }

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void aGBlockedOnAMonitorWhilePinnedLosesItsP() throws Exception {
    Sched s = onePHandoffOff();
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch held = new CountDownLatch(1);
    Thread holder =
        Thread.ofPlatform()
            .start(
                () -> {
                  synchronized (MONITOR) {
                    held.countDown();
                    try {
                      release.await();
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  }
                });
    try {
      assertTrue(held.await(WAIT_MS, TimeUnit.MILLISECONDS));
      Thread first = s.newBuilder().start(() -> assertTrue(BlocksInClinit.DONE));
      assertTrue(blockedInside.await(WAIT_MS, TimeUnit.MILLISECONDS), dump(s));
      secondGRuns(s, release::countDown, "the G blocked on a monitor kept the only P");
      assertTrue(first.join(java.time.Duration.ofMillis(WAIT_MS)), dump(s));
    } finally {
      release.countDown(); // so that a failure leaves no blocked carrier behind
      holder.join();
    }
    assertTrue(poll(WAIT_MS, () -> s.numGoroutine() == 0), dump(s));
  }

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void aGThatComputesKeepsItsP() throws Exception {
    Sched s = onePHandoffOff();
    CountDownLatch computing = new CountDownLatch(1);
    long[] firstEnd = new long[1];
    long[] secondStart = new long[1];
    Thread first =
        s.newBuilder()
            .start(
                () -> {
                  computing.countDown();
                  long end = System.nanoTime() + 300_000_000L; // 30 slices; no polls here
                  long x = 0;
                  while (System.nanoTime() < end) {
                    x += x * 31 + 7;
                  }
                  firstEnd[0] = System.nanoTime() + (x == 42 ? 1 : 0);
                });
    assertTrue(computing.await(WAIT_MS, TimeUnit.MILLISECONDS), dump(s));
    Thread second = s.newBuilder().start(() -> secondStart[0] = System.nanoTime());
    assertTrue(first.join(java.time.Duration.ofMillis(WAIT_MS)), dump(s));
    assertTrue(second.join(java.time.Duration.ofMillis(WAIT_MS)), dump(s));
    assertFalse(
        secondStart[0] < firstEnd[0],
        "with the hand-off off, the computing G lost its P "
            + (firstEnd[0] - secondStart[0]) / 1_000_000
            + " ms before it finished\n"
            + dump(s));
    assertTrue(poll(WAIT_MS, () -> s.numGoroutine() == 0), dump(s));
  }
}
