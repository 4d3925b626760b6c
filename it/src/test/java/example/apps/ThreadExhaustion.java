package example.apps;

import io.gmp4j.Gmp;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;

/**
 * Go's TestThreadExhaustion (testprog ThreadExhaustion): with a 10-thread limit, 100 virtual
 * threads each lock their carrier, hand main a token through an unbuffered channel and block
 * forever. Each needs its own carrier, so the 11th thread kills the program: Go prints {@code
 * runtime: program exceeds 10-thread limit} and {@code fatal error: thread exhaustion} and exits
 * with status 2.
 *
 * <p>Usage: {@code ThreadExhaustion api|option [waitMillis]}: {@code api} calls {@code
 * Gmp.setMaxThreads(10)}, {@code option} relies on the agent's {@code maxthreads=10}. Main is a
 * platform thread and takes each token with a deadline, {@code waitMillis} (default 2000) for
 * all of them: under {@code maxthreads.exceeded=queue} no carrier is started past the limit, so
 * the later threads never run, and a virtual main would starve too. If it gets that far, it
 * prints {@code tokens=}, {@code carriers=} (live {@code gmp-m} threads), {@code alive} and
 * halts with status 0.
 */
public final class ThreadExhaustion {
  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(30_000, "ThreadExhaustion");
    if (args[0].equals("api")) {
      Gmp.setMaxThreads(10);
    }
    long waitNanos =
        TimeUnit.MILLISECONDS.toNanos(args.length > 1 ? Long.parseLong(args[1]) : 2_000);
    SynchronousQueue<Integer> c = new SynchronousQueue<>();
    long deadline = System.nanoTime() + waitNanos;
    int tokens = 0;
    for (int i = 0; i < 100; i++) {
      Thread.ofVirtual()
          .start(
              () -> {
                Gmp.lockOSThread();
                try {
                  c.put(0);
                  new CountDownLatch(1).await(); // select {}
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
      if (c.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS) != null) {
        tokens++;
      }
    }
    System.out.println("tokens=" + tokens);
    System.out.println(
        "carriers="
            + Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("gmp-m"))
                .count());
    System.out.println("alive");
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }
}
