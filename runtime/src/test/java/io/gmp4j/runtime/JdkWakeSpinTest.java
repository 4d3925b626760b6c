package io.gmp4j.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 'Waiting for JDK threads' in {@link Machine}: platform threads that unpark virtual threads in
 * a loop, as the JDK's stress/ParkALot does, so that every wake-up is a readying from outside
 * the scheduler. The Ms must catch such wake-ups by spinning (at least some of them, whatever
 * the machine's load), and the skipped wake-up of resetSpinning must lose none: every G ends.
 * Only the catches that no Go rule would make are counted (Machine.jdkWakeSpinHits).
 */
class JdkWakeSpinTest {
  private static final int STRESS = Integer.getInteger("gmp.stress", 1);

  @Test
  @Timeout(value = 120, threadMode = SEPARATE_THREAD)
  void spinnersCatchWakeUpsFromPlatformThreadsAndLoseNone() throws Exception {
    Sched s = SchedTesting.newSched(2);
    s.startSysmon(10_000_000L, 20_000_000L, 0, false, false);
    Thread.Builder.OfVirtual builder = s.newBuilder();
    int parks = 20_000 * STRESS;
    long caughtTotal = 0;
    // One waker first (ParkALot's shape, where the spin pays), then three at once on 2 Ps.
    for (int wakers : new int[] {1, 3}) {
      AtomicInteger done = new AtomicInteger();
      List<Thread> platform = new ArrayList<>();
      long hits0 = hits(s);
      for (int w = 0; w < wakers; w++) {
        Thread g =
            builder.start(
                () -> {
                  for (int i = 0; i < parks; i++) {
                    if ((i & 1) == 0) {
                      LockSupport.park();
                    } else {
                      LockSupport.parkNanos(Long.MAX_VALUE);
                    }
                    done.incrementAndGet();
                  }
                });
        platform.add(Thread.ofPlatform().start(() -> unparkUntilDone(g)));
      }
      for (Thread t : platform) {
        assertTrue(
            t.join(Duration.ofSeconds(50)),
            wakers
                + " waker(s): "
                + done.get()
                + " of "
                + wakers * parks
                + " parks returned\n"
                + SchedTesting.dump(s));
      }
      long caught = hits(s) - hits0;
      System.out.println(
          "JdkWakeSpinTest: "
              + wakers
              + " waker(s), "
              + wakers * parks
              + " wake-ups, "
              + caught
              + " caught by a spinning M");
      caughtTotal += caught;
    }
    // Over both phases: with one core busy, the single waker's phase saw as few as 2 such
    // catches (most wake-ups then meet an M that spins by Go's rules anyway); three wakers on
    // 2 Ps give thousands.
    assertTrue(
        caughtTotal > 0,
        "no wake-up from a platform thread met the spin or an early spinner\n"
            + s.schedtrace(true));
  }

  /** ParkALot's waker: unparks {@code g} whenever it is parked, until it ends. */
  private static void unparkUntilDone(Thread g) {
    for (Thread.State st; (st = g.getState()) != Thread.State.TERMINATED; ) {
      if (st == Thread.State.WAITING || st == Thread.State.TIMED_WAITING) {
        LockSupport.unpark(g);
      } else {
        Thread.yield();
      }
    }
  }

  private static long hits(Sched s) {
    return s.mCounters()[3]; // exited Ms included
  }
}
