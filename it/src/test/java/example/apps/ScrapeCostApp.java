package example.apps;

import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.atomic.LongAdder;

/**
 * Scheduling throughput for the scrape-cost measurement in exporter/README.md (not a test):
 * {@code args[0]} ping-pong pairs of virtual threads hand a token back and forth through a
 * SynchronousQueue, and every 8th round each side also spawns and joins a short-lived virtual
 * thread, for {@code args[1]} seconds. Prints {@code ops/s} (one op = one hand-off or spawn).
 */
public final class ScrapeCostApp {
  private ScrapeCostApp() {}

  public static void main(String[] args) throws Exception {
    int pairs = Integer.parseInt(args[0]);
    long seconds = Long.parseLong(args[1]);
    LongAdder ops = new LongAdder();
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    Thread[] all = new Thread[pairs * 2];
    for (int i = 0; i < pairs; i++) {
      SynchronousQueue<Integer> ab = new SynchronousQueue<>();
      SynchronousQueue<Integer> ba = new SynchronousQueue<>();
      all[2 * i] = Thread.ofVirtual().start(() -> side(ab, ba, true, end, ops));
      all[2 * i + 1] = Thread.ofVirtual().start(() -> side(ba, ab, false, end, ops));
    }
    for (Thread t : all) {
      t.join();
    }
    System.out.printf("ops/s=%.0f%n", ops.sum() / (double) seconds);
  }

  private static void side(
      SynchronousQueue<Integer> out,
      SynchronousQueue<Integer> in,
      boolean first,
      long end,
      LongAdder ops) {
    try {
      int n = 0;
      if (first) {
        out.put(0);
      }
      while (true) {
        int v = in.take();
        if (v < 0) {
          return;
        }
        ops.increment();
        if ((++n & 7) == 0) {
          Thread.ofVirtual().start(ops::increment).join();
        }
        if (System.nanoTime() > end) {
          out.put(-1);
          return;
        }
        out.put(v + 1);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
