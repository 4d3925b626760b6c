package io.gmp4j;

import io.gmp4j.runtime.SchedTesting;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Helpers shared by the black-box tests: waits that fail with a schedtrace of the moment. */
final class GmpTesting {
  /** Stress multiplier, as Kotlin's {@code *StressTest}: {@code -Dgmp.stress=N}. */
  static final int STRESS = Integer.getInteger("gmp.stress", 1);

  /** Go's randomizeScheduler mode, on in surefire's second pass. */
  static final boolean RANDOMIZED = Boolean.getBoolean("gmp.randomizeScheduler");

  private GmpTesting() {}

  /** Waits for {@code latch}; on timeout fails with the schedtrace detail taken right then. */
  static void await(CountDownLatch latch, long seconds, String what) throws InterruptedException {
    if (!latch.await(seconds, TimeUnit.SECONDS)) {
      throw new AssertionError(
          what
              + ": timed out after "
              + seconds
              + " s (count "
              + latch.getCount()
              + ")\n"
              + Gmp.schedtrace(true));
    }
  }

  /** Joins {@code t}; on timeout fails with the schedtrace detail taken right then. */
  static void join(Thread t, long seconds, String what) throws InterruptedException {
    if (!t.join(java.time.Duration.ofSeconds(seconds))) {
      throw new AssertionError(
          what + ": " + t + " did not end within " + seconds + " s\n" + Gmp.schedtrace(true));
    }
  }

  /** Polls {@code cond} every millisecond or so until it holds or {@code millis} pass. */
  static boolean poll(long millis, BooleanSupplier cond) throws InterruptedException {
    return SchedTesting.poll(millis, cond);
  }

  interface Body {
    void run() throws Exception;
  }

  /**
   * Runs {@code body} in a new G, as Go runs a test function in a goroutine, waits up to
   * {@code seconds}, and rethrows what it threw.
   */
  static void runInG(String what, long seconds, Body body) throws Exception {
    java.util.concurrent.atomic.AtomicReference<Throwable> failure =
        new java.util.concurrent.atomic.AtomicReference<>();
    Thread g =
        Gmp.go(
            () -> {
              try {
                body.run();
              } catch (Throwable t) {
                failure.set(t);
              }
            });
    join(g, seconds, what);
    Throwable t = failure.get();
    if (t instanceof Exception e) {
      throw e;
    } else if (t instanceof Error e) {
      throw e;
    }
  }

  /**
   * Runs {@code body} at GOMAXPROCS {@code n} and restores it (see {@link #restoreProcs}); if
   * both fail, the restore's failure is added to the body's as suppressed instead of hiding it.
   */
  static void withProcs(int n, Body body) throws Exception {
    int prev = Gmp.gomaxprocs(n);
    Throwable primary = null;
    try {
      body.run();
    } catch (Throwable t) {
      primary = t;
      throw t;
    } finally {
      try {
        restoreProcs(prev);
      } catch (Throwable restore) {
        if (primary == null) {
          throw restore;
        }
        primary.addSuppressed(restore);
      }
    }
  }

  /**
   * Restores GOMAXPROCS after a test (the tests share one process-wide scheduler), from a
   * {@code finally} block. The stop-the-world runs on a daemon thread so that a scheduler that
   * lost a P, or a G that never yields, fails the test with a trace instead of hanging it.
   */
  static void restoreProcs(int prev) throws InterruptedException {
    Thread t =
        Thread.ofPlatform().daemon().name("restore-gomaxprocs").start(() -> Gmp.gomaxprocs(prev));
    if (!t.join(java.time.Duration.ofSeconds(10))) {
      throw new AssertionError(
          "gomaxprocs("
              + prev
              + ") to restore GOMAXPROCS did not return"
              + " within 10 s: the stop-the-world never finished\n"
              + Gmp.schedtrace(true));
    }
  }
}
