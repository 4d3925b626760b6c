package example.apps;

import java.util.Arrays;

/**
 * Seed 000, the section on sysmon and the 10 ms preemption, on the JVM: with one P, a virtual
 * thread spins in a call-free loop while another sleeps 1 ms fifty times. Prints the sleep
 * latencies, or how many sleeps came back before {@code args[0]} ms passed, and {@code
 * m_cpu_share=}, the share of a CPU that the carriers got meanwhile (see {@link #mCpuNanos}).
 */
public final class SleepBesideSpinner {
  static volatile boolean stop;
  static volatile String spinnerCarrier = "none";

  public static void main(String[] args) throws Exception {
    long budgetMs = Long.parseLong(args[0]);
    long[] lat = new long[50];
    int[] done = new int[1];
    // Load AppSupport here, not on the spinner: a class load reads the class path and may wait
    // for the loader's lock, and a spinner blocked that long on a busy host lost its P under
    // asyncpreemptoff=1 as a G in a syscall does ('Blocked carriers, with the hand-off off' in
    // HogHandoff), then spun on without one. The spinner must only spin.
    AppSupport.carrier();
    Thread spinner =
        Thread.ofVirtual()
            .start(
                () -> {
                  spinnerCarrier = AppSupport.carrier();
                  long x = 0;
                  while (!stop) {
                    x++;
                  }
                  if (x == 7) {
                    System.out.print("");
                  }
                });
    Thread sleeper =
        Thread.ofVirtual()
            .start(
                () -> {
                  try {
                    for (int i = 0; i < lat.length; i++) {
                      long t0 = System.nanoTime();
                      Thread.sleep(1);
                      lat[i] = System.nanoTime() - t0;
                      done[0] = i + 1;
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                });
    long cpu0 = mCpuNanos();
    long wall0 = System.nanoTime();
    boolean finished = sleeper.join(java.time.Duration.ofMillis(budgetMs));
    // Read before the spinner is stopped and before the CPU times are read: a thread dump at 3%
    // of a CPU took long enough for a released sleeper to finish its sleeps.
    int sleeps = done[0];
    stop = true;
    double share = (mCpuNanos() - cpu0) / (double) (System.nanoTime() - wall0);
    System.out.printf("m_cpu_share=%.2f%n", Math.min(1.0, share));
    System.out.println("carrier=" + spinnerCarrier);
    System.out.println("sleeps=" + sleeps);
    if (finished) {
      long[] s = lat.clone();
      Arrays.sort(s);
      System.out.printf("p50=%.1f%np90=%.1f%nmax=%.1f%n", s[24] / 1e6, s[44] / 1e6, s[49] / 1e6);
    } else {
      System.out.println("stuck=true");
      System.out.print(AppSupport.schedtrace());
    }
    System.out.flush();
    Runtime.getRuntime().halt(0); // the spinner may never see stop without preemption
  }

  /**
   * CPU time so far of the carriers: gmp4j's gmp-m threads, or the JDK's ForkJoinPool workers.
   * At one P (or parallelism 1) one of them runs all the time, so their CPU time over wall time
   * is the share of a CPU that the OS gave the program's scheduler.
   */
  static long mCpuNanos() {
    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
    long sum = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("gmp-m") || t.getName().startsWith("ForkJoinPool")) {
        sum += Math.max(0, mx.getThreadCpuTime(t.threadId()));
      }
    }
    return sum;
  }
}
