package example.apps;

/**
 * The deferral's deadline seen from the application ('The deadline' in the agent's
 * DeferredPolls): a process that is never quiet gets the placed polls of its array loops at the
 * deadline, and keeps the early polls of its other loops.
 *
 * <p>A virtual thread spins for {@code args[0]} ms in {@link Spinner#spin}, a loop without
 * arrays that keeps the process busy throughout, and every 10 ms calls {@link Scanner#sum}, an
 * array loop that calls nothing, for a few microseconds, so that the scanner's class is seldom
 * on a stack when the deadline's look comes ('Running classes' in the agent's Retransformer).
 * {@code args[1]} ms in, main prints the agent's {@code gmp4j.retransform} property as {@code
 * busy=}; after the spin it prints {@code sums=} (the distinct results of every call of the
 * scanner, one value if its rewrite changed nothing it computes), {@code calls=} and {@code
 * spun=}, and exits while still busy, so no quiet moment ends the deferral.
 */
public final class ArrayDeadline {
  private ArrayDeadline() {}

  /** The class with an array loop that calls nothing ('Array loops' in the injector). */
  static final class Scanner {
    static byte[] data(int n) {
      byte[] b = new byte[n];
      for (int i = 0; i < n; i++) {
        b[i] = (byte) (i * 7 + 3);
      }
      return b;
    }

    static long sum(byte[] b) {
      long s = 0;
      for (int i = 0; i < b.length; i++) {
        s = s * 31 + b[i];
      }
      return s;
    }
  }

  /** The class without arrays: early polls until a quiet moment, which never comes. */
  static final class Spinner {
    static long spin(long nanos, byte[] b, java.util.Set<Long> sums, long[] calls) {
      long end = System.nanoTime() + nanos;
      long next = 0;
      long x = 1;
      for (long now = System.nanoTime(); now < end; now = System.nanoTime()) {
        for (int i = 0; i < 1000; i++) {
          x = x * 6364136223846793005L + 1442695040888963407L;
        }
        if (now >= next) {
          sums.add(Scanner.sum(b));
          calls[0]++;
          next = now + 10_000_000L;
        }
      }
      return x;
    }
  }

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(60_000, "ArrayDeadline");
    long busyMs = Long.parseLong(args[0]);
    long lookMs = Long.parseLong(args[1]);
    byte[] b = Scanner.data(4096); // main's class has no loop: main is in it to the end
    java.util.Set<Long> sums = java.util.concurrent.ConcurrentHashMap.newKeySet();
    long[] calls = new long[1];
    long[] spun = new long[1];
    Thread t =
        Thread.ofVirtual().start(() -> spun[0] = Spinner.spin(busyMs * 1_000_000L, b, sums, calls));
    Thread.sleep(lookMs);
    System.out.println("busy=" + System.getProperty("gmp4j.retransform"));
    t.join();
    System.out.println("sums=" + sums);
    System.out.println("calls=" + calls[0]);
    System.out.println("spun=" + spun[0]);
  }
}
