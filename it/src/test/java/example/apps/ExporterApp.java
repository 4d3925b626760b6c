package example.apps;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An unmodified program for ExporterIT: parks {@code args[0]} virtual threads in {@link
 * #parkHere}, keeps creating short-lived ones, prints {@code ready}, and then either waits for
 * its standard input to close ({@code args[1] = stdin}) or exits at once ({@code exit}).
 * Exiting with the endpoint still open also shows that the endpoint's threads are daemons.
 */
public final class ExporterApp {
  private ExporterApp() {}

  /** The distinctive frame ExporterIT looks for in /debug/goroutines. */
  static void parkHere(CountDownLatch release) {
    try {
      release.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(120_000, "ExporterApp");
    int n = Integer.parseInt(args[0]);
    boolean waitForStdin = args.length > 1 && args[1].equals("stdin");
    CountDownLatch release = new CountDownLatch(1);
    List<Thread> parked = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      parked.add(Thread.ofVirtual().name("parked-" + i).start(() -> parkHere(release)));
    }
    AtomicBoolean stop = new AtomicBoolean();
    Thread churn =
        Thread.ofVirtual()
            .name("churn")
            .start(
                () -> {
                  while (!stop.get()) {
                    try {
                      Thread.ofVirtual().start(() -> {}).join();
                      Thread.sleep(2);
                    } catch (InterruptedException e) {
                      return;
                    }
                  }
                });
    System.out.println("ready");
    System.out.flush();
    if (waitForStdin) {
      try {
        while (System.in.read() >= 0) {
          // until ExporterIT closes our stdin
        }
      } catch (IOException ignored) {
        // closed
      }
    }
    stop.set(true);
    churn.join();
    release.countDown();
    for (Thread t : parked) {
      t.join();
    }
    System.out.println("done");
  }
}
