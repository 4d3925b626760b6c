package example.apps;

import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * What the test programs share. They live outside {@code io.gmp4j}, which the agent never
 * instruments: to the agent they are application classes like any other.
 *
 * <p> The programs use only JDK APIs; when the agent runs them on
 * gmp4j, a watchdog that fires prints the scheduler's state through the public API, which the
 * agent put on the boot class path (looked up by name: the programs do not link to gmp4j).
 */
public final class AppSupport {
  private AppSupport() {}

  /**
   * Prints {@code p50=}, {@code p90=}, {@code p99=} and {@code max=} of {@code nanos} in ms,
   * three decimals, one a line, as ChildJvm.Result.value reads them. Sorts {@code nanos}.
   */
  public static void printPercentilesMs(long[] nanos) {
    int n = nanos.length;
    java.util.Arrays.sort(nanos);
    System.out.printf(
        "p50=%.3f%np90=%.3f%np99=%.3f%nmax=%.3f%n",
        nanos[n / 2] / 1e6,
        nanos[n * 9 / 10] / 1e6,
        nanos[Math.min(n - 1, n * 99 / 100)] / 1e6,
        nanos[n - 1] / 1e6);
  }

  /** Go's schedtrace with detail, or a note that gmp4j is not loaded. */
  public static String schedtrace() {
    try {
      return (String)
          Class.forName("io.gmp4j.Gmp", true, null)
              .getMethod("schedtrace", boolean.class)
              .invoke(null, true);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return "(gmp4j not loaded: " + e + ")\n";
    }
  }

  /** Exits with status 3 and the scheduler state if {@code millis} pass before the end. */
  public static void watchdog(long millis, String what) {
    Thread.ofPlatform()
        .daemon()
        .name("watchdog")
        .start(
            () -> {
              try {
                Thread.sleep(millis);
              } catch (InterruptedException e) {
                return;
              }
              System.out.println("WATCHDOG " + what + " still running after " + millis + " ms");
              System.out.print(schedtrace());
              System.out.flush();
              Runtime.getRuntime().halt(3);
            });
  }

  /**
   * The platform MBean server if someone started it, else null, without starting it: reads
   * ManagementFactory's private field under the class lock that guards its write. The child
   * needs {@code --add-opens java.management/java.lang.management=ALL-UNNAMED}.
   */
  public static javax.management.MBeanServer platformMBeanServerIfStarted()
      throws ReflectiveOperationException {
    java.lang.reflect.Field f =
        java.lang.management.ManagementFactory.class.getDeclaredField("platformMBeanServer");
    f.setAccessible(true);
    synchronized (java.lang.management.ManagementFactory.class) {
      return (javax.management.MBeanServer) f.get(null);
    }
  }

  /**
   * Waits until no live thread has one of {@code names} (the agent's start-up threads, say), at
   * most {@code millis}.
   */
  public static void awaitThreadsEnded(long millis, String... names) throws InterruptedException {
    java.util.Set<String> wanted = java.util.Set.of(names);
    long deadline = System.nanoTime() + millis * 1_000_000L;
    while (System.nanoTime() < deadline
        && Thread.getAllStackTraces().keySet().stream()
            .anyMatch(t -> wanted.contains(t.getName()))) {
      Thread.sleep(10);
    }
  }

  /**
   * Starts the seed's sleeper beside a hog: a virtual thread that sleeps 1 ms at a time until
   * {@code stop} holds, and counts in {@code ticks[0]} the wake-ups that come while {@code
   * counting} holds.
   */
  public static Thread ticker(
      String name, BooleanSupplier stop, BooleanSupplier counting, long[] ticks) {
    return Thread.ofVirtual()
        .name(name)
        .start(
            () -> {
              try {
                while (!stop.getAsBoolean()) {
                  Thread.sleep(1);
                  if (counting.getAsBoolean()) {
                    ticks[0]++;
                  }
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
  }

  /** A {@code Gmp.readMetrics()} counter, by its Go name; the agent put gmp4j on the boot path. */
  @SuppressWarnings("unchecked")
  public static long metric(String name) {
    try {
      Map<String, Object> m =
          (Map<String, Object>)
              Class.forName("io.gmp4j.Gmp", true, null).getMethod("readMetrics").invoke(null);
      return ((Number) m.get(name)).longValue();
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The carrier shown in a virtual thread's toString, e.g. {@code gmp-m0}. */
  public static String carrier() {
    String s = Thread.currentThread().toString();
    int at = s.lastIndexOf('@');
    return at < 0 ? "none" : s.substring(at + 1);
  }
}
