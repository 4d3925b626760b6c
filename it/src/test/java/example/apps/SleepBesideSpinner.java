package example.apps;

import java.util.Arrays;

/**
 * Seed 000, the section on sysmon and the 10 ms preemption, on the JVM: with one P, a virtual
 * thread spins in a call-free loop while another sleeps 1 ms fifty times. Prints the sleep
 * latencies, or how many sleeps came back before {@code args[0]} ms passed.
 */
public final class SleepBesideSpinner {
  static volatile boolean stop;
  static volatile String spinnerCarrier = "none";

  public static void main(String[] args) throws Exception {
    long budgetMs = Long.parseLong(args[0]);
    long[] lat = new long[50];
    int[] done = new int[1];
    Thread spinner = Thread.ofVirtual().start(() -> {
      spinnerCarrier = AppSupport.carrier();
      long x = 0;
      while (!stop) {
        x++;
      }
      if (x == 7) {
        System.out.print("");
      }
    });
    Thread sleeper = Thread.ofVirtual().start(() -> {
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
    boolean finished = sleeper.join(java.time.Duration.ofMillis(budgetMs));
    stop = true;
    System.out.println("carrier=" + spinnerCarrier);
    System.out.println("sleeps=" + done[0]);
    if (finished) {
      long[] s = lat.clone();
      Arrays.sort(s);
      System.out.printf("p50=%.1f%np90=%.1f%nmax=%.1f%n", s[24] / 1e6, s[44] / 1e6, s[49] / 1e6);
    } else {
      System.out.println("stuck=true");
    }
    System.out.flush();
    Runtime.getRuntime().halt(0); // the spinner may never see stop without preemption
  }
}
