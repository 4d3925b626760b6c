package io.gmp4j;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;

/**
 * {@code ./demo}: what gmp4j does, in one minute. Runs with {@code java -jar
 * gmp4j-runtime.jar} (its manifest opens java.lang to gmp4j).
 */
public final class Demo {
  private Demo() {}

  public static void main(String[] args) throws Exception {
    System.out.println(
        "gmp4j demo on JDK " + Runtime.version() + ", GOMAXPROCS=" + Gmp.gomaxprocs());

    // 1. Goroutines are virtual threads carried by gmp4j's Ms.
    Thread g = Gmp.go(() -> System.out.println("  hello from " + Thread.currentThread()));
    g.join();

    // 2. runnext: at one P, Gs readied by a G run next, newest first, then in FIFO order.
    int prev = Gmp.gomaxprocs(1);
    List<Integer> order = new ArrayList<>();
    Gmp.go(
            () -> {
              CountDownLatch done = new CountDownLatch(10);
              for (int i = 0; i < 10; i++) {
                int id = i;
                Gmp.go(
                    () -> {
                      synchronized (order) {
                        order.add(id);
                      }
                      done.countDown();
                    });
              }
              try {
                done.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            })
        .join();
    System.out.println("  at GOMAXPROCS=1 ten Gs started by one G ran in order " + order);

    // 3. The global queue overflow: 300 Gs started without yielding, as Go's schedtrace shows.
    CountDownLatch release = new CountDownLatch(1);
    String[] trace = new String[1];
    Gmp.go(
            () -> {
              for (int i = 0; i < 300; i++) {
                Gmp.go(
                    () -> {
                      try {
                        release.await();
                      } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                      }
                    });
              }
              trace[0] = Gmp.schedtrace(false);
            })
        .join();
    release.countDown();
    System.out.print("  after 300 go statements at one P: " + trace[0]);
    Gmp.gomaxprocs(prev);

    // 4. Ping-pong: runnext keeps both Gs on one P. Through park/unpark, the scheduler's own
    // cost; through a SynchronousQueue, which spins 128 onSpinWait()s before it parks unless
    // the carrier is a ForkJoinPool worker with queued work (JDK 25 LinkedTransferQueue).
    System.out.printf(
        "  ping-pong round trip, park/unpark: gmp4j %.0f ns, JDK default %.0f ns%n",
        parkPingPong(true), parkPingPong(false));
    System.out.printf(
        "  ping-pong round trip, SynchronousQueue: gmp4j %.0f ns, JDK default %.0f" + " ns%n",
        pingPong(true), pingPong(false));

    System.out.print(Gmp.schedtrace(false));
    Map<String, Object> m = Gmp.readMetrics();
    m.forEach(
        (k, v) ->
            System.out.println(
                "  "
                    + k
                    + " = "
                    + (v instanceof long[] per
                        ? java.util.Arrays.toString(per)
                        : v))); // one value per P
  }

  private static double parkPingPong(boolean gmp) throws InterruptedException {
    int rounds = 200_000;
    Thread.Builder b = gmp ? Gmp.ofVirtual() : Thread.ofVirtual();
    double best = Double.MAX_VALUE;
    for (int trial = 0; trial < 5; trial++) {
      java.util.concurrent.atomic.AtomicInteger turn =
          new java.util.concurrent.atomic.AtomicInteger();
      Thread[] t = new Thread[2];
      long[] ns = new long[1];
      t[0] =
          b.unstarted(
              () -> {
                long t0 = System.nanoTime();
                for (int i = 0; i < rounds; i++) {
                  turn.set(1);
                  java.util.concurrent.locks.LockSupport.unpark(t[1]);
                  while (turn.get() != 0) {
                    java.util.concurrent.locks.LockSupport.park();
                  }
                }
                ns[0] = System.nanoTime() - t0;
              });
      t[1] =
          b.unstarted(
              () -> {
                for (int i = 0; i < rounds; i++) {
                  while (turn.get() != 1) {
                    java.util.concurrent.locks.LockSupport.park();
                  }
                  turn.set(0);
                  java.util.concurrent.locks.LockSupport.unpark(t[0]);
                }
              });
      t[1].start();
      t[0].start();
      t[0].join();
      t[1].join();
      best = Math.min(best, (double) ns[0] / rounds);
    }
    return best;
  }

  private static double pingPong(boolean gmp) throws InterruptedException {
    int rounds = 200_000;
    Thread.Builder b = gmp ? Gmp.ofVirtual() : Thread.ofVirtual();
    double best = Double.MAX_VALUE;
    for (int trial = 0; trial < 5; trial++) {
      SynchronousQueue<Integer> ping = new SynchronousQueue<>();
      SynchronousQueue<Integer> pong = new SynchronousQueue<>();
      Thread echo =
          b.start(
              () -> {
                try {
                  for (int i = 0; i < rounds; i++) {
                    pong.put(ping.take());
                  }
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
      long[] ns = new long[1];
      Thread driver =
          b.start(
              () -> {
                try {
                  long t0 = System.nanoTime();
                  for (int i = 0; i < rounds; i++) {
                    ping.put(i);
                    pong.take();
                  }
                  ns[0] = System.nanoTime() - t0;
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
      driver.join();
      echo.join();
      best = Math.min(best, (double) ns[0] / rounds);
    }
    return best;
  }
}
