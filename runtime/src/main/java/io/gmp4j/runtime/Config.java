package io.gmp4j.runtime;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * gmp4j's settings: their names, their validation, and where they are read from.
 *
 * <p>Every setting has one key, used the same way everywhere: as an agent argument
 * ({@code -javaagent:gmp4j-agent.jar=timeslice=5ms,schedtrace=1000}), as a system property
 * ({@code -Dgmp.timeslice=5ms}), and for the debugging keys inside the {@code GMPDEBUG}
 * environment variable, in GODEBUG syntax ({@code GMPDEBUG=schedtrace=1000,scheddetail=1}).
 * {@code GOMAXPROCS} is read from the environment as in Go. Precedence, highest first: agent
 * argument (the agent writes it into the system property), {@code -Dgmp.key}, {@code GMPDEBUG} or
 * {@code GOMAXPROCS}, the default.
 *
 * <p>Go ignores a malformed GODEBUG or GOMAXPROCS. A JVM service would rather be told, so a bad
 * value or an unknown key is an {@link IllegalArgumentException} whose message is the whole
 * one-line error: it names the setting, the bad value, and what is valid.
 */
public final class Config {
  private Config() {}

  /** Key → what a valid value looks like; the order is the order users see in messages. */
  private static final Map<String, String> KEYS = new LinkedHashMap<>();

  static {
    KEYS.put("gomaxprocs", "a positive integer");
    KEYS.put("schedtrace", "a period in milliseconds, 0 for off");
    KEYS.put("scheddetail", "0 or 1");
    KEYS.put("timeslice", "a duration such as 10ms, 500us or 1s (at least 100us)");
    KEYS.put("asyncpreemptoff", "0 or 1");
    KEYS.put("updatemaxprocs", "0 or 1: 0 stops sysmon from following the CPU limit (Go 1.25)");
    KEYS.put(
        "preempt.handoff",
        "a duration such as 20ms, 500us or 1s (at least 100us), or 0 or"
            + " off to keep the P of a goroutine that ignores preemption (the default with"
            + " asyncpreemptoff=1)");
    KEYS.put("preempt.include", "class-name globs separated by ; or |, e.g. com.acme.*");
    KEYS.put("preempt.exclude", "class-name globs separated by ; or |, e.g. com.acme.gen.*");
    KEYS.put("preempt.prologue", "0 or 1");
    KEYS.put(
        "preempt.cache",
        "a directory where the agent keeps the classes it rewrote with polls, for the next start"
            + " to read back (owned by this user, not writable by others)");
    KEYS.put(
        "preempt.defer",
        "a quiet period such as 1s or 500ms: classes loaded at start-up get early polls as they"
            + " load and their placed polls in the background once class loading and the process"
            + " have been quiet that long (default 1s; off with preempt.cache or"
            + " preempt.prologue); 0 or off: placed polls as they load");
    KEYS.put(
        "preempt.deadline",
        "a duration such as 60s: while preempt.defer holds the placed polls back, the longest a"
            + " busy process runs the early polls of a loop that C2 may vectorize, which cost"
            + " several times its placed polls (default 60s); 0 or off: every loop that reads or"
            + " writes an array and calls nothing gets its placed polls as it loads");
    KEYS.put(
        "preempt.jit",
        "c1 (the default: a compiler directive keeps C2 off the agent's own class rewriting, for a"
            + " faster start) or c2 (the JVM compiles it as it would any code)");
    KEYS.put(
        "preempt.retransform",
        "0 or 1: 0 leaves the classes loaded before an attach" + " without polls (default 1)");
    KEYS.put(
        "inittrace",
        "0 or 1: print one line with the agent's start-up phases and their"
            + " times (Go's GODEBUG=inittrace=1)");
    KEYS.put(
        "preempt.report",
        "0 or 1: print one line at exit with the classes that got polls" + " and those left alone");
    KEYS.put("maxthreads", "a positive integer: the limit on gmp4j's threads (Go's SetMaxThreads)");
    KEYS.put("maxthreads.exceeded", "fatal (Go: print and exit 2) or queue (start no thread)");
    KEYS.put(
        "idlethreadtimeout",
        "a duration such as 30s: how long an idle thread waits before"
            + " it exits (at least 100us)");
    KEYS.put(
        "timers",
        "p (the timeouts of timed parks on the Ps' timer heaps, as Go; with the"
            + " agent) or jdk (on the JDK's timer threads)");
    KEYS.put("exporter.port", "a TCP port 1-65535 for the agent's HTTP endpoint, 0 for off");
    KEYS.put("exporter.host", "the address the endpoint binds to, e.g. 127.0.0.1 or 0.0.0.0");
    // Read by the agent only (io.gmp4j.agent.jfr); defined here so that one table validates all.
    KEYS.put("jfr", "a file to record to from start-up until exit, e.g. gmp4j.jfr");
    KEYS.put("jfr.settings", "default (gmp4j.jfc), detail (gmp4j-detail.jfc) or a .jfc file");
    KEYS.put("flightrecorder", "on (a 10s window), off, or the window, e.g. 30s (at least 1s)");
    KEYS.put("flightrecorder.maxsize", "a size such as 10MiB, 64m or 1g (at least 1MiB)");
    KEYS.put("flightrecorder.dir", "a directory for the flight recorder's dumps");
    KEYS.put("flightrecorder.latency", "a duration such as 50ms (at least 100us), or off");
    KEYS.put(
        "flightrecorder.settings", "detail (gmp4j-detail.jfc), default (gmp4j.jfc) or a .jfc file");
  }

  /** Keys that GMPDEBUG may set, as GODEBUG sets Go's. */
  private static final List<String> GMPDEBUG_KEYS =
      List.of("schedtrace", "scheddetail", "asyncpreemptoff", "updatemaxprocs", "inittrace");

  /** The keys that GMPDEBUG may set. */
  public static List<String> gmpdebugKeys() {
    return GMPDEBUG_KEYS;
  }

  /** Every option key. */
  public static List<String> keys() {
    return List.copyOf(KEYS.keySet());
  }

  /**
   * Validates one setting; returns its normalised value. Throws {@link IllegalArgumentException}
   * with the complete message for an unknown key or a bad value.
   */
  public static String check(String key, String value) {
    String want = KEYS.get(key);
    if (want == null) {
      throw new IllegalArgumentException(
          "gmp4j: unknown option \""
              + key
              + "\"; valid options: "
              + String.join(", ", KEYS.keySet()));
    }
    String v = value == null ? "" : value.trim();
    try {
      switch (key) {
        case "maxthreads.exceeded" -> {
          if (!v.equals("fatal") && !v.equals("queue")) {
            throw new NumberFormatException();
          }
        }
        case "timers" -> {
          if (!v.equals("p") && !v.equals("jdk")) {
            throw new NumberFormatException();
          }
        }
        case "preempt.jit" -> {
          if (!v.equals("c1") && !v.equals("c2")) {
            throw new NumberFormatException();
          }
        }
        case "idlethreadtimeout" -> {
          return parseDuration(v) + "ns";
        }
        case "gomaxprocs", "maxthreads" -> {
          if (Integer.parseInt(v) < 1) {
            throw new NumberFormatException();
          }
        }
        case "schedtrace" -> {
          if (Integer.parseInt(v) < 0) {
            throw new NumberFormatException();
          }
        }
        case "exporter.port" -> {
          int port = Integer.parseInt(v);
          if (port < 0 || port > 65535) {
            throw new NumberFormatException();
          }
        }
        case "scheddetail",
            "asyncpreemptoff",
            "preempt.prologue",
            "preempt.report",
            "inittrace",
            "updatemaxprocs",
            "preempt.retransform" -> {
          if (!v.equals("0") && !v.equals("1")) {
            throw new NumberFormatException();
          }
        }
        case "timeslice" -> {
          return parseDuration(v) + "ns";
        }
        case "preempt.handoff", "flightrecorder.latency", "preempt.defer", "preempt.deadline" -> {
          return v.equals("0") || v.equalsIgnoreCase("off") ? "off" : parseDuration(v) + "ns";
        }
        case "flightrecorder" -> {
          if (v.equals("0") || v.equalsIgnoreCase("off")) {
            return "off";
          }
          // Go's FlightRecorderConfig.MinAge default; 1s at least, JFR's flush period.
          long n = v.equalsIgnoreCase("on") ? 10_000_000_000L : parseDuration(v);
          if (n < 1_000_000_000L) {
            throw new NumberFormatException();
          }
          return n + "ns";
        }
        case "flightrecorder.maxsize" -> {
          return parseSize(v) + "b";
        }
        default -> {
          if (v.isEmpty()) {
            throw new NumberFormatException();
          }
        }
      }
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException(
          "gmp4j: bad value \"" + value + "\" for option " + key + ": want " + want);
    }
    return v;
  }

  /**
   * Bytes of a size like 10MiB, 10m, 64mb, 1g, 1048576; at least 1 MiB (below that the window
   * holds less than one flush), at most 1 TiB. Units are binary, as JFR's own maxsize.
   */
  private static long parseSize(String v) {
    String s = v.toLowerCase(Locale.ROOT);
    if (s.endsWith("ib")) {
      s = s.substring(0, s.length() - 2);
    } else if (s.endsWith("b")) {
      s = s.substring(0, s.length() - 1);
    }
    long unit =
        switch (s.isEmpty() ? ' ' : s.charAt(s.length() - 1)) {
          case 'k' -> 1L << 10;
          case 'm' -> 1L << 20;
          case 'g' -> 1L << 30;
          default -> 1;
        };
    String num = unit == 1 ? s : s.substring(0, s.length() - 1);
    long n = Math.multiplyExact(Long.parseLong(num.trim()), unit);
    if (n < (1L << 20) || n > (1L << 40)) {
      throw new NumberFormatException();
    }
    return n;
  }

  /** Nanoseconds of a duration like 10ms, 500us, 1s, 2000000ns; at least 100us. */
  private static long parseDuration(String v) {
    String s = v.toLowerCase(Locale.ROOT);
    long unit;
    String num;
    if (s.endsWith("ns")) {
      unit = 1;
      num = s.substring(0, s.length() - 2);
    } else if (s.endsWith("us") || s.endsWith("µs")) {
      unit = 1_000;
      num = s.substring(0, s.length() - 2);
    } else if (s.endsWith("ms")) {
      unit = 1_000_000;
      num = s.substring(0, s.length() - 2);
    } else if (s.endsWith("s")) {
      unit = 1_000_000_000;
      num = s.substring(0, s.length() - 1);
    } else {
      throw new NumberFormatException();
    }
    long n = Long.parseLong(num.trim()) * unit;
    if (n < 100_000 || n > 3_600_000_000_000L) {
      throw new NumberFormatException();
    }
    return n;
  }

  /**
   * The effective value of {@code key}, validated, or null when unset. Reads {@code -Dgmp.key},
   * then GMPDEBUG or GOMAXPROCS.
   */
  static String get(String key) {
    String prop = System.getProperty("gmp." + key);
    if (prop != null) {
      return check(key, prop);
    }
    if (key.equals("gomaxprocs")) {
      String env = System.getenv("GOMAXPROCS");
      if (env != null && !env.isEmpty()) {
        try {
          return check(key, env);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(
              "gmp4j: bad GOMAXPROCS value \""
                  + env
                  + "\": want a positive integer, e.g. GOMAXPROCS="
                  + Runtime.getRuntime().availableProcessors());
        }
      }
    }
    return gmpdebug().get(key);
  }

  /** GMPDEBUG, parsed and validated. */
  static Map<String, String> gmpdebug() {
    Map<String, String> out = new LinkedHashMap<>();
    String env = System.getenv("GMPDEBUG");
    if (env == null || env.isBlank()) {
      return out;
    }
    for (String item : env.split(",")) {
      if (item.isBlank()) {
        continue;
      }
      int eq = item.indexOf('=');
      String k = eq < 0 ? item.trim() : item.substring(0, eq).trim();
      if (eq < 0 || !GMPDEBUG_KEYS.contains(k)) {
        throw new IllegalArgumentException(
            "gmp4j: bad GMPDEBUG item \""
                + item
                + "\": want "
                + "key=value with key one of "
                + String.join(", ", GMPDEBUG_KEYS));
      }
      out.put(k, check(k, item.substring(eq + 1)));
    }
    return out;
  }

  /** The number of Ps at start-up; see the class overview. */
  static int gomaxprocs() {
    String prop = System.getProperty("gmp.gomaxprocs");
    if (prop != null) {
      try {
        return Integer.parseInt(check("gomaxprocs", prop));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "gmp4j: bad -Dgmp.gomaxprocs value \""
                + prop
                + "\": want a positive integer, e.g. -Dgmp.gomaxprocs="
                + Runtime.getRuntime().availableProcessors());
      }
    }
    String v = get("gomaxprocs");
    return v == null ? MaxProcsLimit.defaultGomaxprocs() : Integer.parseInt(v);
  }

  /** Go's GODEBUG=updatemaxprocs: whether sysmon follows the CPU limit (unless fixed). */
  static boolean updateMaxProcs() {
    return !"0".equals(get("updatemaxprocs"));
  }

  /** Whether the user fixed GOMAXPROCS (then sysmon does not follow the CPU limit). */
  static boolean customGomaxprocs() {
    return get("gomaxprocs") != null;
  }

  /** Go's forcePreemptNS: the time slice, 10ms by default. */
  static long timesliceNanos() {
    String v = get("timeslice");
    return v == null ? 10_000_000L : Long.parseLong(v.substring(0, v.length() - 2));
  }

  /** The default of {@code preempt.handoff}: two time slices (see handoffNanos). */
  static final long DEFAULT_HANDOFF_NS = 20_000_000L;

  /**
   * How long a G may ignore a preemption request before sysmon hands its P to another M (see
   * 'Hog hand-off' in {@link HogHandoff}); 0 when off. 20ms by default, two time slices: a G
   * with polls honours a request within microseconds, so 20ms of silence means it runs code
   * without polls (or is pinned), and the other Gs of its P wait at most about three slices.
   * Off by default with {@code asyncpreemptoff=1}: the user asked for Go's behaviour without
   * preemption, where a G that never yields keeps its P; an explicit value still wins. Off, a G
   * whose carrier is blocked still loses its P ('Blocked carriers, with the hand-off off' in
   * HogHandoff).
   */
  static long handoffNanos() {
    String v = get("preempt.handoff");
    if (v == null) {
      return "1".equals(get("asyncpreemptoff")) ? 0 : DEFAULT_HANDOFF_NS;
    }
    return v.equals("off") ? 0 : Long.parseLong(v.substring(0, v.length() - 2));
  }

  static int maxThreads() {
    String v = get("maxthreads");
    return v == null ? 10000 : Integer.parseInt(v);
  }

  static boolean queueOnThreadLimit() {
    return "queue".equals(get("maxthreads.exceeded"));
  }

  /** Option timers: see 'Timers on the P' in {@link Timers}. */
  static boolean timersOnP() {
    return !"jdk".equals(get("timers"));
  }

  static long idleThreadTimeoutNanos() {
    String v = get("idlethreadtimeout");
    return v == null ? 30_000_000_000L : Long.parseLong(v.substring(0, v.length() - 2));
  }

  static int schedtraceMillis() {
    String v = get("schedtrace");
    return v == null ? 0 : Integer.parseInt(v);
  }

  static boolean scheddetail() {
    return "1".equals(get("scheddetail"));
  }
}
