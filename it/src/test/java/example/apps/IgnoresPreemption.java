package example.apps;

import java.util.Arrays;
import java.util.Random;

/**
 * A virtual thread that ignores preemption beside one that keeps running, at one P: the hog
 * spends about a second in code without polls, either a class that the test leaves out with
 * {@code preempt.exclude} ({@code args[0] = "excluded"}, {@link Library#spin}) or a JDK method
 * ({@code "jdk"}, {@code Arrays.sort} of 10M ints). Then it runs an instrumented loop, whose
 * first poll finds sysmon's request still set and yields: the way back to a P.
 *
 * <p>Prints {@code ticks=} (1 ms sleeps of the other thread that came back while the hog was in
 * the call), {@code hog_ms=}, {@code handoffs=} and {@code honored_after=} (preemption requests
 * honoured after the call, by the hog's first poll).
 */
public final class IgnoresPreemption {
  /** Stands for a library the agent does not instrument (the test excludes it). */
  public static final class Library {
    private Library() {}

    public static long spin(long millis) {
      long end = System.nanoTime() + millis * 1_000_000;
      long x = 0;
      while (System.nanoTime() - end < 0) {
        x++;
      }
      return x;
    }
  }

  static volatile boolean hogInCall;
  static volatile boolean stop;
  static volatile long sink;

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(30_000, "IgnoresPreemption");
    boolean jdk = args[0].equals("jdk");
    int[] data = new Random(42).ints(10_000_000).toArray();
    long[] ticks = new long[1];
    Thread ticker = AppSupport.ticker("ticker", () -> stop, () -> hogInCall, ticks);
    Thread.sleep(50); // the ticker is parked in its first sleep
    long[] hogNanos = new long[1];
    long[] honoredAtReturn = new long[1];
    Thread hog =
        Thread.ofVirtual()
            .start(
                () -> {
                  hogInCall = true;
                  long t0 = System.nanoTime();
                  if (jdk) {
                    Arrays.sort(data);
                  } else {
                    sink = Library.spin(1000);
                  }
                  hogNanos[0] = System.nanoTime() - t0;
                  hogInCall = false;
                  honoredAtReturn[0] = AppSupport.metric("/sched/preemptions/honored:preemptions");
                  long end = System.nanoTime() + 50_000_000L;
                  long x = 0;
                  while (System.nanoTime() - end < 0) { // instrumented: polls at this back-edge
                    x++;
                  }
                  sink += x;
                });
    hog.join();
    stop = true;
    ticker.join();
    System.out.println("ticks=" + ticks[0]);
    System.out.println("hog_ms=" + hogNanos[0] / 1_000_000);
    System.out.println("handoffs=" + AppSupport.metric("/sched/preemptions/handoffs:handoffs"));
    System.out.println(
        "honored_after="
            + (AppSupport.metric("/sched/preemptions/honored:preemptions") - honoredAtReturn[0]));
    System.out.flush();
  }
}
