package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.dump;
import static io.gmp4j.runtime.SchedTesting.poll;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 'Pinned waiters first' in Sched.handoffP: a G pinned on an M that lost its P gets the next P
 * that is handed off, even while new Gs keep arriving. The shape of a cold Spring Boot app: one
 * G runs a class initializer (so it is pinned) and, inside it, a syscall long enough for sysmon
 * to hand its P off; meanwhile new Gs arrive every 5 ms, and each waits, pinned too, for that
 * class to be initialized, so each keeps the P it gets until the hog hand-off takes it (a slice
 * and {@code preempt.handoff}). Before, every hand-off went to the next queued G, and the G in
 * the initializer waited until the stream stopped and its queue drained: 2 s and more, here.
 */
class PinnedWaiterFirstTest {
  /** How long the stream of new Gs lasts. */
  private static final long STREAM_MS = 2_000;

  /** Bound on the initializer's wait for a P after its syscall; a hand-off takes about 30 ms. */
  private static final long WAIT_BOUND_MS = 1_000;

  static final CountDownLatch inSyscall = new CountDownLatch(1);
  static volatile long waitedNs = -1;

  /** Initialized by the first G; its initializer holds every other G that touches it. */
  static final class Slow {
    static final boolean READY;

    static {
      boolean entered = Syscall.enter();
      inSyscall.countDown();
      try {
        Thread.sleep(200); // pinned: blocks the carrier; sysmon hands the P off meanwhile
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      long t0 = System.nanoTime();
      Syscall.exit(entered); // no P: waits for one (reacquireIfPinned)
      waitedNs = System.nanoTime() - t0;
      READY = true;
    }

    private Slow() {}
  }

  @Test
  @Timeout(value = 120, threadMode = SEPARATE_THREAD)
  void aPinnedGWaitingForAPGetsTheNextOne() throws Exception {
    Sched s = SchedTesting.newSched(1);
    s.startSysmon(10_000_000L, 20_000_000L, 0, false, false);
    Thread first = s.newBuilder().start(() -> assertTrue(Slow.READY));
    List<Thread> stream = new ArrayList<>();
    assertTrue(inSyscall.await(10, TimeUnit.SECONDS), dump(s));
    long end = System.nanoTime() + STREAM_MS * 1_000_000;
    while (System.nanoTime() < end) {
      stream.add(s.newBuilder().start(() -> assertTrue(Slow.READY)));
      Thread.sleep(5);
    }
    String state = dump(s);
    assertTrue(first.join(Duration.ofSeconds(60)), "the initializer never ended\n" + dump(s));
    long waitedMs = waitedNs / 1_000_000;
    for (Thread t : stream) {
      assertTrue(t.join(Duration.ofSeconds(60)), "a G of the stream is stuck\n" + dump(s));
    }
    assertTrue(
        waitedMs >= 0 && waitedMs < WAIT_BOUND_MS,
        "the pinned G waited "
            + waitedMs
            + " ms for a P while "
            + stream.size()
            + " Gs arrived over "
            + STREAM_MS
            + " ms\nat the end of the stream:\n"
            + state);
    assertTrue(poll(10_000, () -> s.numGoroutine() == 0), dump(s));
    System.out.println("PinnedWaiterFirstTest: the pinned G waited " + waitedMs + " ms for a P");
  }
}
