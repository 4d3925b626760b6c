package example.servers;

import example.apps.AppSupport;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the four test servers share: the two endpoints' application code and the life cycle a
 * child JVM goes through. The servers are started as their own documentation starts them on
 * virtual threads; only these two handlers are ours.
 *
 * <ul>
 *   <li>{@code /light}: a small JSON answer naming the thread that served it (its carrier shows
 *       whether gmp4j or the JDK's ForkJoinPool ran it).
 *   <li>{@code /cpu}: about 200 ms of computation in a loop of application code, which the agent
 *       gives preemption polls like any other application loop.
 * </ul>
 *
 * <p>Life cycle ({@link #serve}): take the loop's length, start the server on 127.0.0.1 port 0,
 * print {@code startup.ms=} (the JVM's uptime then), {@code port=N} and {@code ready}, serve until
 * standard input closes, stop, exit 0. A watchdog ends a child that its parent forgot.
 */
public final class Endpoints {
  private Endpoints() {}

  /** The CPU endpoint's target; the "about 200 ms of computation". */
  static final long CPU_MILLIS = Long.getLong("servers.cpu.ms", 200);

  /** Loop iterations for {@link #CPU_MILLIS}: see {@link #calibrated}. */
  private static long cpuIterations;

  private static final AtomicLong served = new AtomicLong();

  /** A server's start: returns the bound port. */
  interface Start {
    int start() throws Exception;
  }

  /** The light endpoint's answer. */
  static byte[] light() {
    return ("{\"ok\":true,\"n\":"
            + served.incrementAndGet()
            + ",\"thread\":\""
            + Thread.currentThread()
            + "\"}")
        .getBytes(StandardCharsets.UTF_8);
  }

  /** The CPU endpoint's answer, after {@link #CPU_MILLIS} of computation on this thread. */
  static byte[] cpu() {
    long t0 = System.nanoTime();
    long x = spin(cpuIterations);
    long ms = (System.nanoTime() - t0) / 1_000_000;
    return ("{\"ok\":true,\"x\":" + x + ",\"ms\":" + ms + "}").getBytes(StandardCharsets.UTF_8);
  }

  /** The light requests served so far, this one included once it is counted. */
  static long nextServed() {
    return served.incrementAndGet();
  }

  /** The CPU endpoint's loop length in this JVM; set by {@link #serve}. */
  static long cpuIterations() {
    return cpuIterations;
  }

  /** xorshift64: a loop the JIT cannot fold away, since its result is sent back. */
  static long spin(long n) {
    long x = 0x9E3779B97F4A7C15L;
    for (long i = 0; i < n; i++) {
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
    }
    return x;
  }

  /**
   * The loop iterations for {@link #CPU_MILLIS} on this machine, measured once per JVM: the best
   * of many timed runs over a second, after the JIT compiled {@link #spin}, so that a run slowed
   * by another process does not make every request short. The parent measures it and passes it
   * to every server child ({@code -Dservers.cpu.iterations}, see ServerProcess), so that both
   * schedulers' servers do exactly the same work per CPU request.
   */
  public static synchronized long calibrated() {
    if (calibrated == 0) {
      long n = 1_000_000;
      long best = Long.MAX_VALUE;
      long deadline = System.nanoTime() + 1_000_000_000L;
      long sink = 0;
      for (int i = 0; System.nanoTime() < deadline || i < 20; i++) {
        long t0 = System.nanoTime();
        sink += spin(n);
        best = Math.min(best, System.nanoTime() - t0);
      }
      calibrated = Math.max(1, n * CPU_MILLIS * 1_000_000 / Math.max(best, 1)) | (sink & 1);
    }
    return calibrated;
  }

  private static long calibrated;

  /** See the class overview. Called once by each server's main. */
  static void serve(String name, Start start, AutoCloseable stop) throws Exception {
    AppSupport.watchdog(Long.getLong("servers.watchdog.ms", 300_000), name);
    cpuIterations = Long.getLong("servers.cpu.iterations", 0);
    if (cpuIterations <= 0) {
      cpuIterations = calibrated();
    }
    System.out.println("cpu.iterations=" + cpuIterations);
    int port = start.start();
    // The JVM's uptime once the server listens: for Spring Boot what its log calls "process
    // running for"; SpringBench's start-up figure.
    System.out.println("startup.ms=" + ManagementFactory.getRuntimeMXBean().getUptime());
    System.out.println("server=" + name);
    System.out.println("port=" + port);
    System.out.println("ready");
    System.out.flush();
    try {
      while (System.in.read() >= 0) {
        // until the parent closes our stdin
      }
    } catch (IOException ignored) {
      // closed
    }
    stop.close();
    System.out.println("stopped served=" + served.get());
    System.out.flush();
    System.exit(0);
  }
}
