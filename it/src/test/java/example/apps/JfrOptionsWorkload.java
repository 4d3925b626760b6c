package example.apps;

import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.SynchronousQueue;

/**
 * Workloads for the agent's JFR options ({@code jfr=}, {@code flightrecorder=}, and a {@code
 * jcmd JFR.start} from outside). {@code args[0]} picks one:
 *
 * <ul>
 *   <li>{@code short}: only the carrier line;
 *   <li>{@code mixed}: ping-pong pairs, a G that runs 30 ms slices (so that gmp4j.jfc's 10 ms
 *       GoRun threshold has something to keep), spawns and a GOMAXPROCS change, for 1.5 s
 *       (SchedStats is periodic at 1 s);
 *   <li>{@code attach <dir>}: writes its pid to {@code <dir>/pid}, then runs {@code mixed}
 *       until {@code <dir>/stop} exists (at most 60 s);
 *   <li>{@code hog <dir>}: at one P, a G in {@link IgnoresPreemption.Library#spin} (left without
 *       polls by the test's {@code preempt.exclude}) for a second beside a sleeping ticker, so that
 *       sysmon hands the P off (a second more, up to 20, while no hand-off was counted: sysmon
 *       counts only the time the carrier ran, and on a loaded machine a second of wall time may
 *       hold less than {@code preempt.handoff} of it); then waits until a {@code
 *       gmp4j-flight-*.jfr} appears in {@code <dir>} (at most 20 s);
 *   <li>{@code hog-nodir <dir>}: deletes {@code <dir>} first (the dump must fail), hogs, then
 *       waits until the flight recorder's dump thread has tried and is idle again (at most 30
 *       s): a fixed 3 s was not always past the JFR flush, the trigger stream and the dump on a
 *       loaded machine (seen: no line at all).
 * </ul>
 *
 * Prints {@code carrier=} (gmp-m* when gmp4j runs the virtual threads) and {@code done=1}.
 */
public final class JfrOptionsWorkload {
  static volatile boolean stop;
  static volatile long sink;

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(90_000, "JfrOptionsWorkload " + args[0]);
    String[] carrier = new String[1];
    Thread.ofVirtual().start(() -> carrier[0] = AppSupport.carrier()).join();
    System.out.println("carrier=" + carrier[0]);
    switch (args[0]) {
      case "short" -> {}
      case "mixed" -> mixed(1_500, null);
      case "attach" -> {
        Path dir = Path.of(args[1]);
        Files.writeString(dir.resolve("pid.tmp"), Long.toString(ProcessHandle.current().pid()));
        Files.move(dir.resolve("pid.tmp"), dir.resolve("pid"));
        mixed(60_000, dir.resolve("stop"));
      }
      case "hog" -> {
        hog();
        waitForDump(Path.of(args[1]), 20_000);
      }
      case "hog-nodir" -> {
        Files.delete(Path.of(args[1]));
        hog();
        waitForDumpAttempt(30_000);
      }
      default -> throw new IllegalArgumentException(args[0]);
    }
    System.out.println("done=1");
  }

  /** Runs the mixed workload for {@code millis}, or until {@code stopFile} exists. */
  static void mixed(long millis, Path stopFile) throws Exception {
    stop = false;
    long end = System.nanoTime() + millis * 1_000_000;
    Thread[] pairs = new Thread[4];
    for (int i = 0; i < pairs.length; i += 2) {
      SynchronousQueue<Integer> ping = new SynchronousQueue<>();
      SynchronousQueue<Integer> pong = new SynchronousQueue<>();
      pairs[i] =
          Thread.ofVirtual()
              .start(
                  () -> {
                    try {
                      while (!stop) {
                        ping.put(1);
                        pong.take();
                      }
                      ping.put(0);
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  });
      pairs[i + 1] =
          Thread.ofVirtual()
              .start(
                  () -> {
                    try {
                      while (ping.take() != 0) {
                        pong.put(1);
                      }
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  });
    }
    Thread spinner =
        Thread.ofVirtual()
            .start(
                () -> {
                  while (!stop) {
                    long until = System.nanoTime() + 30_000_000L;
                    long x = 0;
                    while (System.nanoTime() - until
                        < 0) { // polls here: preempted at each 10 ms slice
                      x++;
                    }
                    sink += x;
                    try {
                      Thread.sleep(5);
                    } catch (InterruptedException e) {
                      return;
                    }
                  }
                });
    boolean resized = false;
    while (System.nanoTime() - end < 0 && (stopFile == null || !Files.exists(stopFile))) {
      for (int i = 0; i < 20; i++) {
        Thread.ofVirtual().start(() -> sink++).join();
      }
      if (!resized) {
        gomaxprocs(Math.max(1, gomaxprocs(0) - 1)); // a ProcsChange, then back
        gomaxprocs(Runtime.getRuntime().availableProcessors());
        resized = true;
      }
      Thread.sleep(20);
    }
    stop = true;
    spinner.join();
    for (Thread t : pairs) {
      t.join();
    }
  }

  /** io.gmp4j.Gmp.gomaxprocs(n) by name (0: read only); -1 without gmp4j. */
  static int gomaxprocs(int n) {
    try {
      return (int)
          Class.forName("io.gmp4j.Gmp", true, null)
              .getMethod("gomaxprocs", int.class)
              .invoke(null, n);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return -1;
    }
  }

  /** A second without polls at one P beside a ticker: sysmon hands the P off. */
  static void hog() throws InterruptedException {
    Thread ticker =
        Thread.ofVirtual()
            .start(
                () -> {
                  try {
                    while (!stop) {
                      Thread.sleep(1);
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                });
    Thread.sleep(500); // half a second of ticks: the runs the flight recorder's window shows
    long handoffs0 = AppSupport.metric(HANDOFFS);
    Thread hog =
        Thread.ofVirtual()
            .start(
                () -> {
                  for (int i = 0;
                      i < 20 && (i == 0 || AppSupport.metric(HANDOFFS) == handoffs0);
                      i++) {
                    sink = IgnoresPreemption.Library.spin(1_000);
                  }
                });
    hog.join();
    stop = true;
    ticker.join();
  }

  private static final String HANDOFFS = "/sched/preemptions/handoffs:handoffs";

  /**
   * Waits until the flight recorder's dump thread ({@code gmp4j-flightrecorder}, started by the
   * first trigger) is back in its executor's queue: the dump it was given, and its line, are done.
   */
  static void waitForDumpAttempt(long millis) throws Exception {
    long end = System.nanoTime() + millis * 1_000_000;
    while (System.nanoTime() - end < 0) {
      for (var e : Thread.getAllStackTraces().entrySet()) {
        if (e.getKey().getName().equals("gmp4j-flightrecorder")
            && java.util.Arrays.stream(e.getValue())
                .anyMatch(f -> f.getMethodName().equals("getTask"))) {
          return;
        }
      }
      Thread.sleep(100);
    }
    System.out.println("no dump attempt within " + millis + " ms");
  }

  static void waitForDump(Path dir, long millis) throws Exception {
    long end = System.nanoTime() + millis * 1_000_000;
    while (System.nanoTime() - end < 0) {
      try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "gmp4j-flight-*.jfr")) {
        if (ds.iterator().hasNext()) {
          Thread.sleep(500); // the dump line comes after the file is complete
          return;
        }
      }
      Thread.sleep(100);
    }
    System.out.println("no dump within " + millis + " ms");
  }
}
