package example.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;

/**
 * Prints the JDK's CPU count and gmp4j's GOMAXPROCS at start ({@code jdk=1 gomaxprocs=2}), then
 * {@code gomaxprocs=N} each time it changes, polled every 50 ms, until stdin closes or says
 * {@code finish}; then {@code updates=N}, the /sched/gomaxprocs/updates:changes counter. Runs
 * with the agent (MaxProcsIT).
 */
public final class MaxProcsWatch {
  private MaxProcsWatch() {}

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(120_000, "MaxProcsWatch");
    // A G running keeps sysmon out of its deep sleep, as a busy service would.
    Thread.ofVirtual()
        .start(
            () -> {
              for (; ; ) {
                try {
                  Thread.sleep(5);
                } catch (InterruptedException e) {
                  return;
                }
              }
            });
    long first = AppSupport.metric("/sched/gomaxprocs:threads");
    System.out.println(
        "jdk=" + Runtime.getRuntime().availableProcessors() + " gomaxprocs=" + first);
    System.out.flush();
    Thread watcher =
        Thread.ofPlatform()
            .daemon()
            .start(
                () -> {
                  // From the value printed above: the test's taskset follows that line, and on a
                  // loaded machine sysmon may apply it before this thread's first reading, which
                  // would then be taken for the start and never printed.
                  long seen = first;
                  for (; ; ) {
                    long n = AppSupport.metric("/sched/gomaxprocs:threads");
                    if (n != seen) {
                      System.out.println("gomaxprocs=" + n);
                      System.out.flush();
                      seen = n;
                    }
                    try {
                      Thread.sleep(50);
                    } catch (InterruptedException e) {
                      return;
                    }
                  }
                });
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    for (String line; (line = in.readLine()) != null && !line.equals("finish"); ) {
      // wait
    }
    watcher.interrupt();
    System.out.println("updates=" + AppSupport.metric("/sched/gomaxprocs/updates:changes"));
  }
}
