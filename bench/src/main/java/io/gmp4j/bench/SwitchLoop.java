package io.gmp4j.bench;

import io.gmp4j.Gmp;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

/**
 * Three of {@link Primitives}' workloads as a plain program, for A/B runs of whole JVMs (two
 * agent jars, two runtime jars, or gmp4j against the JDK) where JMH's short iterations are too
 * noisy to show a few percent: each round does {@code n} operations on one driver goroutine and
 * prints its ns per operation; take the last rounds, after the JIT has settled.
 *
 * <pre>
 * java [-javaagent:agent/target/gmp4j-agent.jar] -Dgmp.gomaxprocs=1 \
 *      -Djdk.virtualThreadScheduler.parallelism=1 -cp bench/target/gmp4j-bench.jar \
 *      io.gmp4j.bench.SwitchLoop park|yield|spawn [jdk|lib] [rounds]
 * </pre>
 *
 * <ul>
 *   <li>{@code park}: a park/unpark round trip with a volatile turn, as {@code pingPongPark}.
 *   <li>{@code yield}: two goroutines that call {@code Thread.yield()} in turn; ns per yield.
 *   <li>{@code spawn}: start 10,000 goroutines that count down a latch, wait, repeat; ns per
 *       goroutine, as {@code spawn}.
 * </ul>
 *
 * The driver is a {@code Thread.ofVirtual()} thread ({@code jdk}, the default: the JDK's
 * scheduler, or gmp4j's under the agent) or {@code Gmp.go} (library mode, which needs {@code
 * --add-opens=java.base/java.lang=ALL-UNNAMED}). Every thread the driver starts runs on the
 * driver's scheduler.
 */
public final class SwitchLoop {
  private SwitchLoop() {}

  private static volatile int turn;
  private static volatile Thread driverThread;
  private static volatile Thread echoThread;

  public static void main(String[] args) throws Exception {
    if (args.length < 1
        || !args[0].matches("park|yield|spawn")
        || (args.length > 1 && !args[1].matches("jdk|lib"))
        || (args.length > 2 && !args[2].matches("[1-9][0-9]{0,3}"))) {
      System.err.println("usage: SwitchLoop park|yield|spawn [jdk|lib] [rounds: 1-9999]");
      System.exit(2);
    }
    String what = args[0];
    boolean lib = args.length > 1 && args[1].equals("lib");
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    Runnable driver =
        () -> {
          for (int r = 0; r < rounds; r++) {
            long t0 = System.nanoTime();
            long ops = run(what);
            long t1 = System.nanoTime();
            System.out.printf(
                "%s %s round %d: %.0f ns/op%n",
                what, lib ? "lib" : "jdk", r, (t1 - t0) / (double) ops);
          }
        };
    Thread d = lib ? Gmp.go(driver) : Thread.ofVirtual().start(driver);
    d.join();
  }

  private static long run(String what) {
    return switch (what) {
      case "park" -> park(2_000_000);
      case "yield" -> yields(2_000_000);
      default -> spawn(300);
    };
  }

  private static long park(int n) {
    turn = 0;
    driverThread = Thread.currentThread();
    Thread echo =
        Thread.ofVirtual()
            .unstarted(
                () -> {
                  for (int i = 0; i < n; i++) {
                    while (turn != 1) {
                      LockSupport.park();
                    }
                    turn = 0;
                    LockSupport.unpark(driverThread);
                  }
                });
    echoThread = echo;
    echo.start();
    for (int i = 0; i < n; i++) {
      turn = 1;
      LockSupport.unpark(echoThread);
      while (turn != 0) {
        LockSupport.park();
      }
    }
    join(echo);
    return n;
  }

  private static long yields(int n) {
    Thread other =
        Thread.ofVirtual()
            .start(
                () -> {
                  for (int i = 0; i < n; i++) {
                    Thread.yield();
                  }
                });
    for (int i = 0; i < n; i++) {
      Thread.yield();
    }
    join(other);
    return 2L * n;
  }

  private static long spawn(int batches) {
    final int batch = 10_000;
    for (int k = 0; k < batches; k++) {
      CountDownLatch ended = new CountDownLatch(batch);
      Runnable body = ended::countDown;
      Thread.Builder.OfVirtual b = Thread.ofVirtual();
      for (int i = 0; i < batch; i++) {
        b.start(body);
      }
      try {
        ended.await();
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }
    return (long) batch * batches;
  }

  private static void join(Thread t) {
    try {
      t.join();
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }
}
