package example.apps;

import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;

/**
 * The cost of timed parks that are cancelled: two virtual threads ping-pong {@code args[1]}
 * times through two SynchronousQueues, with {@code offer}/{@code poll(10 s)} ({@code args[0]} =
 * {@code timed}: every park schedules a timeout and its hand-off cancels it) or {@code put}/{@code
 * take} ({@code untimed}). Prints {@code ns_per_roundtrip} of the third of three repetitions.
 */
public final class TimedPingPong {
  public static void main(String[] args) throws Exception {
    boolean timed = args[0].equals("timed");
    int n = Integer.parseInt(args[1]);
    for (int rep = 0; rep < 3; rep++) {
      SynchronousQueue<Integer> ping = new SynchronousQueue<>();
      SynchronousQueue<Integer> pong = new SynchronousQueue<>();
      Thread echo =
          Thread.ofVirtual()
              .start(
                  () -> {
                    try {
                      for (int i = 0; i < n; i++) {
                        Integer v = timed ? ping.poll(10, TimeUnit.SECONDS) : ping.take();
                        if (timed) {
                          pong.offer(v, 10, TimeUnit.SECONDS);
                        } else {
                          pong.put(v);
                        }
                      }
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  });
      long[] ns = new long[1];
      Thread driver =
          Thread.ofVirtual()
              .start(
                  () -> {
                    try {
                      long t0 = System.nanoTime();
                      for (int i = 0; i < n; i++) {
                        if (timed) {
                          ping.offer(i, 10, TimeUnit.SECONDS);
                          pong.poll(10, TimeUnit.SECONDS);
                        } else {
                          ping.put(i);
                          pong.take();
                        }
                      }
                      ns[0] = System.nanoTime() - t0;
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  });
      driver.join();
      echo.join();
      if (rep == 2) {
        System.out.printf("%s ns_per_roundtrip=%d%n", args[0], ns[0] / n);
      }
    }
  }
}
