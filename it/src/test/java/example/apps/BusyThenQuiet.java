package example.apps;

/**
 * The deferral's two rules seen from the application ('Deferred polls' in the agent's
 * DeferredPolls): a busy process keeps its early polls, and a quiet one gets its placed polls.
 *
 * <p>A virtual thread spins in {@link Spinner#spin}, a loop that calls nothing (so its class has
 * early polls by default), for {@code args[0]} ms; meanwhile, {@code args[1]} ms in, main reads the
 * agent's {@code gmp4j.retransform} property and prints it as {@code busy=}. Once the spin is
 * over the process is idle, and main prints the property as {@code quiet=} when it says {@code
 * done}, or after 20 s, whichever comes first. Also prints {@code spun=} (the spin's result, so
 * that the JIT keeps the work).
 */
public final class BusyThenQuiet {
  private BusyThenQuiet() {}

  /**
   * The spinning class; not main's, which main is in to the end ('Running classes' in the
   * agent's Retransformer keeps a class whose loop a thread is in).
   */
  static final class Spinner {
    /** A loop without calls or arrays: early polls at load, placed polls once retransformed. */
    static long spin(long nanos) {
      long end = System.nanoTime() + nanos;
      long x = 1;
      while (System.nanoTime() < end) {
        for (int i = 0; i < 1000; i++) {
          x = x * 6364136223846793005L + 1442695040888963407L;
        }
      }
      return x;
    }
  }

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(60_000, "BusyThenQuiet");
    long busyMs = Long.parseLong(args[0]);
    long lookMs = Long.parseLong(args[1]);
    long[] spun = new long[1];
    Thread t = Thread.ofVirtual().start(() -> spun[0] = Spinner.spin(busyMs * 1_000_000L));
    Thread.sleep(lookMs);
    System.out.println("busy=" + System.getProperty("gmp4j.retransform"));
    t.join();
    System.out.println("spun=" + spun[0]);
    long deadline = System.nanoTime() + 20_000_000_000L;
    String state = System.getProperty("gmp4j.retransform");
    while ((state == null || !state.startsWith("done")) && System.nanoTime() < deadline) {
      Thread.sleep(50);
      state = System.getProperty("gmp4j.retransform");
    }
    System.out.println("quiet=" + state);
  }
}
