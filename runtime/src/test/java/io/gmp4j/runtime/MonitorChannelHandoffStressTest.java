package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.dump;
import static io.gmp4j.runtime.SchedTesting.poll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * OpenJDK's Skynet100kWithMonitors in small, on a scheduler whose sysmon asks for a yield after
 * 200us and hands the P off 200us later: a tree of Gs that pass their sums up through channels
 * built on {@code synchronized}, {@code wait} and {@code notifyAll}, with the poll the agent
 * would inject at the wait loop's back-edge, and leaves that compute without polls so that Ps
 * are retaken all the time. Every G's exception (an InternalError of the runtime's, say) fails
 * the test, every sum must be right, and at the end every P is idle. Before 'Reacquire after an
 * unmount' (HogHandoff) a G here got Skynet's {@code InternalError: tryReacquireP: .. holds a P}
 * in 2 of 3 runs at {@code -Dgmp.stress=10} (60 rounds a run, 30 at each GOMAXPROCS), both at
 * GOMAXPROCS=2, after 31 and 49 rounds, on a loaded 2-core VM. Scaled by {@code -Dgmp.stress=N}.
 */
class MonitorChannelHandoffStressTest {
  private static final int STRESS = Integer.getInteger("gmp.stress", 1);

  /** Skynet's channel, with the poll the agent injects into the wait loop. */
  static final class Channel {
    private final Object lock = new Object();
    private Long element;

    void send(long e) throws InterruptedException {
      synchronized (lock) {
        while (element != null) {
          lock.wait();
          Preempt.poll();
        }
        element = e;
        lock.notifyAll();
      }
    }

    long receive() throws InterruptedException {
      synchronized (lock) {
        Long e;
        while ((e = element) == null) {
          lock.wait();
          Preempt.poll();
        }
        element = null;
        lock.notifyAll();
        return e;
      }
    }
  }

  @Test
  @Timeout(value = 300, threadMode = SEPARATE_THREAD)
  void monitorChannelsUnderHandoffsLoseNothing() throws Exception {
    for (int nprocs = 1; nprocs <= 2; nprocs++) {
      Sched s = SchedTesting.newSched(nprocs);
      s.startSysmon(200_000L, 200_000L, 0, false, false);
      Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
      Thread.Builder.OfVirtual builder = s.newBuilder();
      for (int round = 0; round < 3 * STRESS; round++) {
        Channel root = new Channel();
        int size = 1000; // 1111 Gs
        builder.start(() -> skynet(builder, failures, root, 0, size));
        long[] sum = new long[1];
        Thread receiver =
            builder.start(
                () -> {
                  try {
                    sum[0] = root.receive();
                  } catch (Throwable t) {
                    failures.add(t);
                  }
                });
        boolean done = receiver.join(java.time.Duration.ofSeconds(60));
        if (!failures.isEmpty()) {
          AssertionError e =
              new AssertionError(
                  "nprocs " + nprocs + " round " + round + ": a G threw\n" + s.schedtrace(true),
                  failures.peek());
          failures.forEach(e::addSuppressed);
          throw e;
        }
        assertTrue(
            done, "nprocs " + nprocs + " round " + round + ": the sum never came\n" + dump(s));
        assertEquals((long) size * (size - 1) / 2, sum[0], "nprocs " + nprocs);
      }
      System.out.println(
          "MonitorChannelHandoffStressTest nprocs="
              + nprocs
              + ": handoffs="
              + s.preemptHandoffs.sum());
      int n = nprocs;
      boolean quiet = poll(10_000, () -> s.npidle == n && s.numGoroutine() == 0);
      assertTrue(quiet, "a P is lost: npidle=" + s.npidle + "\n" + dump(s));
      assertTrue(poll(10_000, s.allm::isEmpty), "idle Ms did not exit\n" + s.schedtrace(true));
    }
  }

  private static void skynet(
      Thread.Builder.OfVirtual builder,
      Queue<Throwable> failures,
      Channel result,
      int num,
      int size) {
    try {
      if (size == 1) {
        long until = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(num % 7 == 0 ? 400 : 5);
        while (System.nanoTime() < until) {
          Thread.onSpinWait(); // no poll: ignores sysmon until the P is retaken
        }
        result.send(num);
        return;
      }
      Channel chan = new Channel();
      for (int i = 0; i < 10; i++) {
        int sub = num + i * (size / 10);
        builder.start(() -> skynet(builder, failures, chan, sub, size / 10));
      }
      long sum = 0;
      for (int i = 0; i < 10; i++) {
        sum += chan.receive();
      }
      result.send(sum);
    } catch (Throwable t) {
      failures.add(t);
    }
  }
}
