package example.apps;

import java.io.InputStream;
import java.net.URI;
import java.net.URLConnection;
import java.nio.charset.StandardCharsets;
import org.apache.commons.math3.linear.Array2DRowRealMatrix;

/**
 * A hog in a Java 5 library beside a sleeper: one virtual thread multiplies 400x400 matrices
 * with commons-math3 3.6.1 (class files of version 49, no stack-map frames) for at least
 * {@code args[0]} ms, while another sleeps 1 ms in a loop. Each product runs for tens to
 * hundreds of milliseconds inside {@code Array2DRowRealMatrix.multiply}, so at one P the sleeper
 * comes back during the products only if the library's own loops poll (or, failing that, if
 * sysmon hands the hog's P off, which prints an "ignored preemption" line).
 *
 * <p>Prints {@code ticks=} (sleeps that came back while the hog ran), {@code hog_ms=}, {@code
 * products=}, {@code honored=} (preemption requests honoured meanwhile), {@code handoffs=},
 * {@code instrumented=} (the metric {@code /sched/instrumentation/classes/instrumented:classes}),
 * and, when the agent's endpoint is on ({@code -Dgmp.exporter.port} or the agent argument), the
 * body of {@code /debug/instrumentation} between {@code --- instrumentation ---} and {@code ---
 * end ---}.
 */
public final class MatrixHog {
  private MatrixHog() {}

  static volatile boolean hogRunning;
  static volatile boolean stop;
  static volatile double sink;

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(60_000, "MatrixHog");
    long millis = Long.parseLong(args[0]);
    double[][] a = new double[400][400];
    for (int i = 0; i < 400; i++) {
      for (int k = 0; k < 400; k++) {
        a[i][k] = ((i * 31 + k * 17) % 11 - 5) / 7.0;
      }
    }
    Array2DRowRealMatrix m = new Array2DRowRealMatrix(a, false);
    // Load (and instrument) every class the product needs here, on the main thread: a class
    // being defined runs the agent's transformer, which has no polls, on the loading thread.
    Array2DRowRealMatrix small = new Array2DRowRealMatrix(new double[][] {{1, 2}, {3, 4}}, false);
    sink = small.multiply(small).getEntry(1, 1);
    long[] ticks = new long[1];
    Thread sleeper = AppSupport.ticker("sleeper", () -> stop, () -> hogRunning, ticks);
    Thread.sleep(50); // the sleeper is parked in its first sleep
    long honored0 = AppSupport.metric("/sched/preemptions/honored:preemptions");
    long[] hog = new long[2]; // {nanos, products}
    Thread hogThread =
        Thread.ofVirtual()
            .name("hog")
            .start(
                () -> {
                  hogRunning = true;
                  long t0 = System.nanoTime();
                  do {
                    sink += m.multiply(m).getEntry(7, 7);
                    hog[1]++;
                  } while (System.nanoTime() - t0 < millis * 1_000_000);
                  hog[0] = System.nanoTime() - t0;
                  hogRunning = false;
                });
    hogThread.join();
    stop = true;
    sleeper.join();
    System.out.println("ticks=" + ticks[0]);
    System.out.println("hog_ms=" + hog[0] / 1_000_000);
    System.out.println("products=" + hog[1]);
    System.out.println(
        "honored=" + (AppSupport.metric("/sched/preemptions/honored:preemptions") - honored0));
    System.out.println("handoffs=" + AppSupport.metric("/sched/preemptions/handoffs:handoffs"));
    System.out.println(
        "instrumented=" + AppSupport.metric("/sched/instrumentation/classes/instrumented:classes"));
    String port = System.getProperty("gmp.exporter.port");
    if (port != null && !port.equals("0")) {
      URLConnection c =
          URI.create("http://127.0.0.1:" + port + "/debug/instrumentation")
              .toURL()
              .openConnection();
      // Bounded: where another process held the port, the agent's endpoint is not there, and
      // that process may never answer (the test runs again on another port).
      c.setConnectTimeout(10_000);
      c.setReadTimeout(10_000);
      try (InputStream in = c.getInputStream()) {
        System.out.println("--- instrumentation ---");
        System.out.print(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        System.out.println("--- end ---");
      }
    }
    System.out.flush();
  }
}
