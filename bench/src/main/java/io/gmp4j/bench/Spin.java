package io.gmp4j.bench;

/**
 * The driver loop of {@link kernels.PreemptionDelay}: calls a kernel until told to stop. It lives
 * in {@code io.gmp4j}, which the agent never instruments, so its loop has no poll of its own and
 * the only polls the running goroutine reaches are the kernel's: the measured preemption delay is
 * that of the kernel's poll placement alone.
 */
public final class Spin {
  private static volatile boolean stop;

  private Spin() {}

  /** Calls {@code kernel} until {@link #stop()}; returns the number of calls. */
  public static long run(Runnable kernel) {
    long calls = 0;
    while (!stop) {
      kernel.run();
      calls++;
    }
    return calls;
  }

  public static void stop() {
    stop = true;
  }

  /** Clears the stop flag; call before starting the next {@link #run}. */
  public static void reset() {
    stop = false;
  }
}
