package io.gmp4j.agent.jfr;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Consumer;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;

/**
 * AgentInstaller's last step: the {@code jfr=} recording and the {@code flightrecorder=} window.
 *
 * <h2>Implementation overview</h2>
 *
 * Two independent JFR recordings, both through the JDK's public API and both in the agent's
 * class loader (the runtime only commits events; it never starts, stops or reads a recording):
 *
 * <ul>
 *   <li>{@code jfr=<file>}: a {@link Recording} with {@code jfr.settings} (gmp4j.jfc by default),
 *       started here, before main, and written to the file by JFR's own dump on exit ({@code
 *       setDestination} plus {@code setDumpOnExit}), as {@code
 *       -XX:StartFlightRecording:filename=<file>,settings=gmp4j.jfc} would. Rejected: the command
 *       line option itself, which the agent cannot add, and which needs the settings as a file.
 *   <li>{@code flightrecorder=<age>}: Go 1.25's {@code runtime/trace.FlightRecorder}, see {@link
 *       FlightRecorder}.
 * </ul>
 *
 * Either may run alongside a recording the user starts with {@code jcmd JFR.start}; JFR merges
 * the settings of all running recordings per event (the most verbose wins).
 *
 * <p>Each step either succeeds or prints one line that starts with {@code gmp4j: jfr:} or {@code
 * gmp4j: flightrecorder:} and ends in what still runs: gmp4j and the app always do. The values
 * themselves were validated with the other options (io.gmp4j.runtime.Config), before anything
 * was installed; what is checked here is only what needs the file system or JFR.
 */
public final class Recordings {
  private Recordings() {}

  /**
   * Starts what {@code options} (key → normalised effective value, absent for the default)
   * asks for. Called once by AgentInstaller, after the scheduler started. Never throws.
   */
  public static void start(Map<String, String> options, Consumer<String> log) {
    String file = options.get("jfr");
    if (file != null) {
      String line = startRecording(Path.of(file), options.getOrDefault("jfr.settings", "default"));
      if (line != null) {
        log.accept(line);
      }
    }
    String age = options.get("flightrecorder");
    if (age != null && !age.equals("off")) {
      String line = FlightRecorder.start(options, log);
      if (line != null) {
        log.accept(line);
      }
    }
  }

  /** {@code jfr=<file>}. Returns null, or the line to print. */
  static String startRecording(Path file, String settings) {
    Configuration config;
    try {
      config = Settings.resolve(settings);
    } catch (Exception | LinkageError e) {
      return "gmp4j: jfr: " + reason(e) + "; no recording, gmp4j and the app run on";
    }
    try {
      Recording r = new Recording(config);
      r.setName("gmp4j");
      r.setToDisk(true);
      // Resolved against the working directory now, as JFR's filename= is: a later chdir of
      // the app cannot move the dump.
      r.setDestination(file.toAbsolutePath()); // IOException when the file is not writable
      r.setDumpOnExit(true);
      r.start();
      return null;
    } catch (IOException e) {
      return "gmp4j: jfr: cannot write "
          + file.toAbsolutePath()
          + ": "
          + Settings.describe(e)
          + "; no recording, gmp4j and the app run on";
    } catch (Exception | LinkageError e) {
      return "gmp4j: jfr: cannot start the recording: "
          + Settings.describe(e)
          + "; no recording, gmp4j and the app run on";
    }
  }

  /** Settings.resolve's messages are the reason itself; anything else is described. */
  static String reason(Throwable e) {
    if (e instanceof NoClassDefFoundError) {
      return "JFR is not available (module jdk.jfr is not in the boot layer: "
          + Settings.describe(e)
          + ")";
    }
    if (e instanceof IOException && e.getMessage() != null && e.getCause() != null) {
      return e.getMessage();
    }
    return "bad settings: " + Settings.describe(e);
  }
}
