package io.gmp4j.agent;

/**
 * The agent's start-up phases and what each cost: Go's {@code GODEBUG=inittrace=1} for gmp4j's
 * premain. With {@code inittrace=1} (agent argument, {@code -Dgmp.inittrace=1} or {@code
 * GMPDEBUG=inittrace=1}) the installer prints, once it is done:
 *
 * <pre>
 * gmp4j: inittrace: 212 ms wall, 230 ms cpu: extract 9 ms, options 31 ms, bootjar 2 ms, ...
 * </pre>
 *
 * Each phase is the wall time from the end of the one before, with the CPU time of the premain
 * thread beside it where it differs by more than a millisecond (JIT and GC threads are not in
 * it). Recording is always on and costs a nanoTime per phase; only the printing is optional, and
 * it is decided at the end, after the options were read.
 *
 * <p>Written and read only by the thread that runs premain or agentmain, under the installer's
 * lock.
 */
final class InitTrace {
  private final long start = System.nanoTime();
  private long last = start;

  /**
   * Whether the CPU times are taken: only when inittrace may be on, since the first call loads
   * java.management's thread MXBean classes, a start-up cost of its own.
   */
  private final boolean withCpu;

  private final long startCpu;
  private long lastCpu;
  private final StringBuilder phases = new StringBuilder();

  /**
   * Starts the first phase. {@code agentArgs} is looked at only for the word "inittrace", which
   * turns the CPU times on; whether the line is printed is decided by {@link #enabled}.
   */
  InitTrace(String agentArgs) {
    String env = System.getenv("GMPDEBUG");
    withCpu =
        (agentArgs != null && agentArgs.contains("inittrace"))
            || System.getProperty("gmp.inittrace") != null
            || (env != null && env.contains("inittrace"));
    startCpu = cpu();
    lastCpu = startCpu;
  }

  /** Ends the phase called {@code name}, which began where the previous one ended. */
  void phase(String name) {
    long now = System.nanoTime();
    long nowCpu = cpu();
    if (phases.length() > 0) {
      phases.append(", ");
    }
    long wallMs = (now - last) / 1_000_000;
    long cpuMs = (nowCpu - lastCpu) / 1_000_000;
    phases.append(name).append(' ').append(wallMs).append(" ms");
    if (lastCpu >= 0 && Math.abs(cpuMs - wallMs) > 1) {
      phases.append(" (cpu ").append(cpuMs).append(')');
    }
    last = now;
    lastCpu = nowCpu;
  }

  /** The one line, ended by {@link #phase} calls so far. */
  String line() {
    long cpuMs = startCpu < 0 ? -1 : (cpu() - startCpu) / 1_000_000;
    return "gmp4j: inittrace: "
        + (System.nanoTime() - start) / 1_000_000
        + " ms wall"
        + (cpuMs >= 0 ? ", " + cpuMs + " ms cpu" : "")
        + " on the premain thread: "
        + phases;
  }

  /** True when {@code inittrace=1} was asked for; the options are in the system properties. */
  static boolean enabled() {
    return "1".equals(System.getProperty("gmp.inittrace"));
  }

  /** This thread's CPU time, or -1 where it is not taken. */
  private long cpu() {
    if (!withCpu) {
      return -1;
    }
    try {
      java.lang.management.ThreadMXBean mx =
          java.lang.management.ManagementFactory.getThreadMXBean();
      return mx.isCurrentThreadCpuTimeSupported() ? mx.getCurrentThreadCpuTime() : -1;
    } catch (Throwable t) {
      return -1;
    }
  }
}
