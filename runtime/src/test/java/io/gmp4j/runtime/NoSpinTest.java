package io.gmp4j.runtime;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.SynchronousQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 'No spin in j.u.c without the agent' in {@link Machine}. These tests run without the agent,
 * so every M here is a library-mode M.
 */
class NoSpinTest {
  /**
   * The question that LinkedTransferQueue, SynchronousQueue and Exchanger ask before they spin,
   * asked as they ask it, from a G: on a gmp4j carrier it answers "queued work" (do not spin).
   * Without the M's marker task it answers false.
   */
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void theJdkIsToldThatAGmp4jCarrierHasQueuedWork() throws Exception {
    Sched s = SchedTesting.newSched(1);
    Method ask = ForkJoinWorkerThread.class.getDeclaredMethod("hasKnownQueuedWork");
    ask.setAccessible(true);
    boolean[] answer = new boolean[1];
    Thread[] carrier = new Thread[1];
    SchedTesting.runOnG(
        s,
        30,
        () -> {
          answer[0] = (boolean) ask.invoke(null);
          carrier[0] = VirtualThreads.carrier(Thread.currentThread());
        });
    assertTrue(carrier[0] instanceof Machine, "carrier " + carrier[0]);
    assertSame(s.noSpinPool, ((Machine) carrier[0]).getPool());
    assertTrue(answer[0], "hasKnownQueuedWork() on " + carrier[0] + "\n" + SchedTesting.dump(s));
  }

  /**
   * What the answer buys: at one P a SynchronousQueue ping-pong, whose waiter would otherwise
   * spin about 128 onSpinWait rounds that its partner cannot end, costs about what an
   * ArrayBlockingQueue(1) ping-pong (which never spins) does. With the spin it took 8-9x as long
   * on the machine of BENCHMARKS.md (5.6 us against 0.64 us a round trip); the bound is 3x, and
   * the two run in turn, five times each, so that a loaded machine slows both.
   */
  @Test
  @Timeout(value = 120, threadMode = SEPARATE_THREAD)
  void aSynchronousQueuePingPongAtOnePCostsWhatABlockingQueueOneDoes() throws Exception {
    Sched s = SchedTesting.newSched(1);
    final int trips = 20_000;
    long[] sync = new long[5];
    long[] blocking = new long[5];
    SchedTesting.runOnG(
        s,
        100,
        () -> {
          pingPong(s, new SynchronousQueue<>(), new SynchronousQueue<>(), trips); // warm-up
          pingPong(s, new ArrayBlockingQueue<>(1), new ArrayBlockingQueue<>(1), trips);
          for (int i = 0; i < sync.length; i++) {
            sync[i] = pingPong(s, new SynchronousQueue<>(), new SynchronousQueue<>(), trips);
            blocking[i] =
                pingPong(s, new ArrayBlockingQueue<>(1), new ArrayBlockingQueue<>(1), trips);
          }
        });
    Arrays.sort(sync);
    Arrays.sort(blocking);
    long syncNs = sync[2] / trips;
    long blockingNs = blocking[2] / trips;
    System.out.printf(
        "NoSpinTest: round trip at 1 P, median of 5: SynchronousQueue %d ns,"
            + " ArrayBlockingQueue(1) %d ns%n",
        syncNs, blockingNs);
    assertTrue(
        syncNs < 3 * blockingNs,
        "SynchronousQueue " + syncNs + " ns against ArrayBlockingQueue " + blockingNs + " ns");
  }

  /** {@code trips} round trips between this G and an echo G; returns the nanoseconds. */
  private static long pingPong(
      Sched s, BlockingQueue<Integer> ping, BlockingQueue<Integer> pong, int trips)
      throws InterruptedException {
    Thread echo =
        s.newBuilder()
            .start(
                () -> {
                  try {
                    for (int i = 0; i < trips; i++) {
                      pong.put(ping.take());
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                });
    long t0 = System.nanoTime();
    for (int i = 0; i < trips; i++) {
      ping.put(i);
      pong.take();
    }
    long t = System.nanoTime() - t0;
    echo.join();
    return t;
  }
}
