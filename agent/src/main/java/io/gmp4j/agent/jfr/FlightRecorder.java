package io.gmp4j.agent.jfr;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.EventStream;
import jdk.jfr.consumer.RecordedEvent;

/**
 * The flight recorder ({@code flightrecorder=<age>}): Go 1.25's {@code
 * runtime/trace.FlightRecorder} on JFR. A rolling window of the scheduler's events, written to a
 * file when something went wrong.
 *
 * <h2>Implementation overview: 'Flight recorder'</h2>
 *
 * Go keeps the last generations of its execution trace in memory ({@code FlightRecorderConfig}:
 * MinAge 10 s, MaxBytes 10 MiB, "MaxBytes takes precedence") and the program calls {@code
 * WriteTo} when it sees a slow request. Here JFR keeps the window, and the triggers are events:
 *
 * <ol>
 *   <li>{@link #start} starts a {@link Recording} with {@code flightrecorder.settings}
 *       (gmp4j-detail.jfc by default: a window is for "what happened just before", which needs
 *       every run, not the runs above gmp4j.jfc's 10 ms), {@code setMaxAge(flightrecorder)} and
 *       {@code setMaxSize(flightrecorder.maxsize)}, and an {@code EventStream.openRepository()}
 *       over it (from the recording's start) on the daemon thread {@code
 *       gmp4j-flightrecorder-stream}.
 *   <li>Triggers, on that thread: a {@code gmp4j.ProcHandoff} for a hog (reason {@code
 *       ignoredPreemption} or {@code pinned}: sysmon took the P from a G that kept it for two
 *       time slices), and, when {@code flightrecorder.latency} is set, a {@code
 *       gmp4j.GoRun} whose {@code schedLatency} (time runnable before the run) is above it.
 *   <li>A trigger queues one dump on the {@code gmp4j-flightrecorder} daemon thread, which calls
 *       {@code Recording.dump(file)}: the window as it is on disk, through the last flush,
 *       so the file holds the trigger's own event and the window before it.
 *   <li>{@code GET /debug/flightrecorder} on the agent's endpoint dumps at once, on the same
 *       thread, and answers with the file's path and size.
 * </ol>
 *
 * Rejected: a hand-off from a syscall as a trigger. It is the normal course of blocking I/O (Go's
 * retake does it all the time, and Go's tracer records it as a plain ProcSteal); an I/O-bound
 * app would dump a window every window.
 *
 * <h3>Rate limit</h3>
 *
 * Triggered dumps are at most one per window: a dump already holds the whole window, so a second
 * one within it would mostly repeat the first, and a storm of hand-offs (a hog at every P) must
 * not fill the disk. Later triggers inside the window are counted, and the next dump's line says
 * how many were folded. Endpoint requests are not limited (a person asked), only serialised.
 *
 * <h3>Where this differs from Go</h3>
 *
 * <ul>
 *   <li>Go's MinAge is a lower bound on what is kept; JFR's maxage an upper bound, and JFR drops
 *       whole chunks: right after a chunk rotation the window may be shorter than the age.
 *   <li>The window lives in JFR's disk repository (the window is a disk recording), not in
 *       the heap; maxsize bounds that disk use. (A Recording, not the RecordingStream: see
 *       the comment in start.)
 *   <li>A trigger is seen at JFR's next flush (once a second, JEP 349: streaming is not
 *       synchronous), so the file also holds up to about a second after the trigger. Go's
 *       WriteTo is called by the program at the moment it chooses.
 *   <li>The latency trigger parses every GoRun on the stream thread, one RecordedEvent each; that
 *       is why it is off by default. The hand-off trigger parses only hand-offs (JFR skips the
 *       events of types without a handler).
 * </ul>
 *
 * <h3>Failure</h3>
 *
 * A dump is written to a hidden {@code .part} file and renamed, so a {@code gmp4j-flight-*.jfr} is
 * always complete. A dump that fails (a full disk, a directory removed meanwhile) prints one line
 * and deletes its partial file; the recording goes on and the next trigger tries again. A directory
 * that is not writable at start is one line and no flight recorder.
 */
public final class FlightRecorder {
  /** Go's FlightRecorderConfig.MaxBytes default. */
  static final long DEFAULT_MAXSIZE = 10L << 20;

  /**
   * The running recorder, or null. Written once by start (under the class lock); any thread reads.
   */
  private static volatile FlightRecorder running;

  private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss-SSS");

  private final Recording recording;
  private final Path dir;
  private final Duration window;
  private final Consumer<String> log;
  private final ExecutorService dumper;
  private final long pid = ProcessHandle.current().pid();

  /**
   * System.nanoTime of the last triggered dump; Long.MIN_VALUE before the first. Guarded by this.
   */
  private long lastTriggered = Long.MIN_VALUE;

  /** Triggers dropped by the rate limit since the last triggered dump. Guarded by this. */
  private int folded;

  private FlightRecorder(Recording recording, Path dir, Duration window, Consumer<String> log) {
    this.recording = recording;
    this.dir = dir;
    this.window = window;
    this.log = log;
    this.dumper =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "gmp4j-flightrecorder");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Step 1 of 'Flight recorder'. Returns null, or the one line to print. Called once by
   * Recordings.start. Never throws.
   */
  static synchronized String start(Map<String, String> options, Consumer<String> log) {
    if (running != null) {
      return null;
    }
    Duration window = Duration.ofNanos(nanos(options.get("flightrecorder")));
    String size = options.get("flightrecorder.maxsize");
    long maxSize = size == null ? DEFAULT_MAXSIZE : Long.parseLong(size.replace("b", ""));
    String latency = options.get("flightrecorder.latency");
    long latencyNanos = latency == null || latency.equals("off") ? 0 : nanos(latency);
    Path dir =
        Path.of(options.getOrDefault("flightrecorder.dir", System.getProperty("user.dir")))
            .toAbsolutePath();
    if (!Files.isDirectory(dir) || !Files.isWritable(dir)) {
      return "gmp4j: flightrecorder: "
          + dir
          + " is not a writable directory (flightrecorder.dir);"
          + " no flight recorder, gmp4j and the app run on";
    }
    Configuration config;
    try {
      config = Settings.resolve(options.getOrDefault("flightrecorder.settings", "detail"));
    } catch (Exception | LinkageError e) {
      return "gmp4j: flightrecorder: "
          + Recordings.reason(e)
          + "; no flight recorder, gmp4j and the app run on";
    }
    Recording recording = null;
    try {
      // A Recording started here, on the caller's thread, so that the window holds what
      // happens from now on; an EventStream over this JVM's repository for the triggers, from
      // the recording's start. Rejected: a RecordingStream. Its start() starts the recording on
      // the thread that runs it, later than premain returns under load (the first hand-off
      // was missed), and its startAsync() thread is never a daemon (AbstractEventStream's
      // flag is internal), so it kept the JVM alive after main returned.
      recording = new Recording(config);
      recording.setName("gmp4j-flightrecorder");
      recording.setToDisk(true);
      recording.setMaxAge(window);
      recording.setMaxSize(maxSize);
      recording.start();
      EventStream stream = EventStream.openRepository();
      stream.setStartTime(recording.getStartTime());
      FlightRecorder fr = new FlightRecorder(recording, dir, window, log);
      stream.onEvent(
          "gmp4j.ProcHandoff",
          e -> {
            if (!"syscall".equals(e.getString("reason"))) {
              fr.trigger("a hog hand-off (" + describe(e) + ")");
            }
          });
      if (latencyNanos > 0) {
        stream.onEvent(
            "gmp4j.GoRun",
            e -> {
              if (e.hasField("schedLatency")
                  && e.getDuration("schedLatency").toNanos() > latencyNanos) {
                fr.trigger(
                    "a scheduling latency of "
                        + e.getDuration("schedLatency").toMillis()
                        + "ms (goid "
                        + e.getLong("goid")
                        + ")");
              }
            });
      }
      Thread t =
          new Thread(
              () -> {
                try {
                  stream.start(); // returns when the stream closes, at the JVM's exit
                } catch (RuntimeException e) {
                  log.accept(
                      "gmp4j: flightrecorder: the trigger stream stopped: "
                          + Settings.describe(e)
                          + "; no more triggered dumps, gmp4j and the app run on");
                }
              },
              "gmp4j-flightrecorder-stream");
      t.setDaemon(true);
      t.start();
      running = fr;
      return null;
    } catch (Exception | LinkageError e) {
      if (recording != null) {
        recording.close();
      }
      return "gmp4j: flightrecorder: cannot start: "
          + Settings.describe(e)
          + "; no flight recorder, gmp4j and the app run on";
    }
  }

  /**
   * Step 4: dumps the window now and returns "path size" on one line, or the one-line reason it
   * could not. Called by the endpoint's handler thread.
   */
  public static String dumpNow() {
    FlightRecorder fr = running;
    if (fr == null) {
      return null;
    }
    Future<String> f = fr.dumper.submit(() -> fr.dump("a request to /debug/flightrecorder", 0));
    try {
      return f.get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      return "gmp4j: flightrecorder: the dump did not finish: " + Settings.describe(e);
    }
  }

  /** Steps 2 and 3, with the rate limit. Called on the gmp4j-flightrecorder-stream thread. */
  private void trigger(String why) {
    int foldedNow;
    synchronized (this) {
      long now = System.nanoTime();
      if (lastTriggered != Long.MIN_VALUE && now - lastTriggered < window.toNanos()) {
        folded++;
        return;
      }
      lastTriggered = now;
      foldedNow = folded;
      folded = 0;
    }
    try {
      dumper.execute(() -> dump(why, foldedNow));
    } catch (RuntimeException shutdown) {
      // the JVM is exiting: the dumper is gone, nothing to report
    }
  }

  /**
   * Writes the window to a fresh file in dir. Returns "path size", or the line it printed.
   * Runs on the gmp4j-flightrecorder thread only, so dumps never overlap.
   */
  private String dump(String why, int foldedTriggers) {
    Path file =
        dir.resolve("gmp4j-flight-" + pid + "-" + LocalDateTime.now().format(STAMP) + ".jfr");
    // Written under a name no watcher matches, then renamed: a gmp4j-flight-*.jfr is complete.
    Path part = dir.resolve("." + file.getFileName() + ".part");
    try {
      recording.dump(part);
      Files.move(part, file, StandardCopyOption.ATOMIC_MOVE);
      long size = Files.size(file);
      log.accept(
          "gmp4j: flightrecorder: "
              + why
              + ": wrote the last "
              + window.toSeconds()
              + "s to "
              + file
              + " ("
              + size
              + " bytes"
              + (foldedTriggers > 0
                  ? "; "
                      + foldedTriggers
                      + " triggers since the last dump fell"
                      + " in its window and were not dumped"
                  : "")
              + ")");
      return file + " " + size;
    } catch (Exception e) {
      try {
        Files.deleteIfExists(part);
      } catch (IOException | RuntimeException ignored) {
        // the same disk that failed the dump: the line below says enough
      }
      String line =
          "gmp4j: flightrecorder: "
              + why
              + ": cannot write "
              + file
              + ": "
              + Settings.describe(e)
              + "; the flight recorder keeps recording";
      log.accept(line);
      return line;
    }
  }

  private static String describe(RecordedEvent e) {
    StringBuilder sb = new StringBuilder();
    for (String field : new String[] {"reason", "p", "goid", "fromM", "toM"}) {
      if (e.hasField(field)) {
        sb.append(sb.isEmpty() ? "" : " ")
            .append(field)
            .append('=')
            .append((Object) e.getValue(field));
      }
    }
    return sb.toString();
  }

  /** The nanoseconds of Config's normal form "123ns". */
  private static long nanos(String normalised) {
    return Long.parseLong(normalised.substring(0, normalised.length() - 2));
  }

  /** For tests and the endpoint: whether a flight recorder runs in this JVM. Any thread. */
  public static boolean isRunning() {
    return running != null;
  }

  @Override
  public synchronized String toString() {
    return "FlightRecorder[dir="
        + dir
        + " window="
        + window
        + " lastTriggered="
        + lastTriggered
        + " folded="
        + folded
        + "]";
  }
}
