package io.gmp4j.agent;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * gmp4j's settings as the agent sees them: parsed from the agent argument, validated together
 * with the system properties and environment variables the runtime will read.
 *
 * <h2>Implementation overview</h2>
 *
 * The runtime ({@code io.gmp4j.runtime.Config}) owns the keys and their validation; this class
 * owns only the agent argument and the order of precedence, highest first:
 *
 * <ol>
 *   <li>the agent argument, {@code -javaagent:gmp4j-agent.jar=timeslice=5ms,schedtrace=1000};
 *   <li>{@code -Dgmp.<key>=value};
 *   <li>the environment: {@code GMPDEBUG} in GODEBUG syntax ({@code schedtrace=1000,
 *       scheddetail=1,asyncpreemptoff=1}) for the debugging keys, {@code GOMAXPROCS} for
 *       gomaxprocs;
 *   <li>the runtime's default.
 * </ol>
 *
 * The agent implements step 1 by writing every agent argument into {@code gmp.<key>} (see {@link
 * #applyTo}), after which the runtime's own rule "property over environment" gives the order
 * above. Everything is validated before anything is written, so a bad setting anywhere means
 * nothing is installed and the application runs on the JDK's default scheduler, with one line
 * that names the setting, the bad value and what is valid.
 *
 * <h3>The JDK's scheduler settings</h3>
 *
 * A user who tuned the JDK's scheduler expects the settings to mean something under gmp4j, and
 * gmp4j says in one start-up line ({@link #jdkSettingsLine}) what it made of them. They rank below
 * every gmp4j source above. JDK 25 reads them in {@code VirtualThread.createDefaultScheduler}:
 *
 * <ol>
 *   <li>{@code jdk.virtualThreadScheduler.parallelism}, the ForkJoinPool's parallelism, is the
 *       number of carriers that run virtual threads at once: Go's GOMAXPROCS. It becomes
 *       {@code gomaxprocs} unless gomaxprocs is set; then it is ignored, and the line says which
 *       source won.
 *   <li>{@code jdk.virtualThreadScheduler.maxPoolSize} bounds the JDK's carriers, the ones that
 *       compensate for a pinned or blocked carrier included; at the bound the JDK starts none and
 *       the work waits. That is {@code maxthreads} with {@code maxthreads.exceeded=queue}, plus one
 *       thread for sysmon, which Go's mcount counts and the JDK's pool does not. It also caps a
 *       gomaxprocs that came from the JDK's settings or the CPU count, as the JDK caps
 *       parallelism. Ignored, with the winner named, when maxthreads or maxthreads.exceeded is set.
 *   <li>{@code jdk.virtualThreadScheduler.minRunnable} tunes when the ForkJoinPool compensates;
 *       Go has no such knob (an M in a syscall hands its P off by sysmon's rules), so it is
 *       ignored, and the line points to maxthreads.
 * </ol>
 *
 * The mapped values reach the runtime through {@code gmp.<key>} like agent arguments.
 *
 * <p>Other {@code gmp.*} system properties (for example {@code gmp.randomizeScheduler}, or a test
 * harness's own) are not options and are left alone; only the option keys are checked there. In
 * the agent argument and in GMPDEBUG every key must be an option key.
 *
 * <p>Rejected: parsing values here. Config.check is the single definition of a valid value, and
 * its messages are the ones users see whether or not the agent is present.
 */
final class AgentOptions {
  /** The system property prefix the runtime reads. */
  static final String PREFIX = "gmp.";

  /**
   * The runtime's option table: {@code Config.keys()} and {@code Config.check(key, value)}.
   * An interface so that tests can also drive a fake, and so that the agent can reach a Config
   * loaded in a throw-away class loader (see AgentInstaller step 2).
   */
  interface Checker {
    /** Every option key, in the order users see them. */
    List<String> keys();

    /** The normalised value, or IllegalArgumentException whose message is the whole line. */
    String check(String key, String value);

    /** The keys GMPDEBUG may set. */
    List<String> gmpdebugKeys();
  }

  /** Agent arguments, key → normalised value, in argument order. Written once, in parse. */
  private final Map<String, String> agentArguments;

  /** JDK 25's scheduler settings, read by VirtualThread.createDefaultScheduler. */
  static final String JDK_PARALLELISM = "jdk.virtualThreadScheduler.parallelism";

  static final String JDK_MAX_POOL_SIZE = "jdk.virtualThreadScheduler.maxPoolSize";

  static final String JDK_MIN_RUNNABLE = "jdk.virtualThreadScheduler.minRunnable";

  /** Values taken from the JDK's settings, key → value, for applyTo. Written once, in parse. */
  private final Map<String, String> fromJdk;

  /** What became of the JDK's settings, or null when none is set. */
  private final String jdkSettingsLine;

  /** Key → normalised effective value; absent keys take the runtime's default. */
  private final Map<String, String> effective;

  /** Key → where its effective value came from, for messages. */
  private final Map<String, String> sources;

  private AgentOptions(
      Map<String, String> agentArguments,
      Map<String, String> effective,
      Map<String, String> sources,
      Map<String, String> fromJdk,
      String jdkSettingsLine) {
    this.agentArguments = Collections.unmodifiableMap(agentArguments);
    this.fromJdk = Collections.unmodifiableMap(fromJdk);
    this.jdkSettingsLine = jdkSettingsLine;
    this.effective = Collections.unmodifiableMap(effective);
    this.sources = Collections.unmodifiableMap(sources);
  }

  /**
   * Parses the agent argument and validates it together with {@code props} ({@code gmp.<key>})
   * and {@code env} ({@code GMPDEBUG}, {@code GOMAXPROCS}). Throws IllegalArgumentException whose
   * message is one complete line starting with {@code gmp4j: } at the first bad setting.
   */
  static AgentOptions parse(
      String agentArgs, Properties props, Map<String, String> env, Checker checker) {
    List<String> keys = checker.keys();
    Map<String, String> effective = new LinkedHashMap<>();
    Map<String, String> sources = new LinkedHashMap<>();

    // Lowest precedence first, so that each later source overwrites.
    String gomaxprocsEnv = env.get("GOMAXPROCS");
    if (gomaxprocsEnv != null && !gomaxprocsEnv.isEmpty() && keys.contains("gomaxprocs")) {
      put(
          effective,
          sources,
          "gomaxprocs",
          check(checker, "gomaxprocs", gomaxprocsEnv, "the GOMAXPROCS environment variable"),
          "GOMAXPROCS");
    }
    String gmpdebug = env.get("GMPDEBUG");
    if (gmpdebug != null && !gmpdebug.isBlank()) {
      List<String> debugKeys = checker.gmpdebugKeys();
      for (String item : gmpdebug.split(",")) {
        if (item.isBlank()) {
          continue;
        }
        int eq = item.indexOf('=');
        String key = eq < 0 ? item.trim() : item.substring(0, eq).trim();
        if (eq < 0 || !debugKeys.contains(key)) {
          throw new IllegalArgumentException(
              "gmp4j: bad GMPDEBUG item \""
                  + item
                  + "\": want key=value with key one of "
                  + String.join(", ", debugKeys));
        }
        put(
            effective,
            sources,
            key,
            check(checker, key, item.substring(eq + 1), "GMPDEBUG"),
            "GMPDEBUG");
      }
    }
    for (String key : keys) {
      String value = props.getProperty(PREFIX + key);
      if (value != null) {
        put(
            effective,
            sources,
            key,
            check(checker, key, value, "-D" + PREFIX + key),
            "-D" + PREFIX + key);
      }
    }
    Map<String, String> agentArguments = new LinkedHashMap<>();
    if (agentArgs != null) {
      for (String item : agentArgs.split(",")) {
        if (item.isBlank()) {
          continue;
        }
        int eq = item.indexOf('=');
        if (eq <= 0) {
          throw new IllegalArgumentException(
              "gmp4j: bad agent argument \""
                  + item
                  + "\": want key=value[,key=value...] with key one of "
                  + String.join(", ", keys));
        }
        String key = item.substring(0, eq).trim();
        String value = check(checker, key, item.substring(eq + 1), "the -javaagent argument");
        agentArguments.put(key, value);
        put(effective, sources, key, value, "the -javaagent argument");
      }
    }
    Map<String, String> fromJdk = new LinkedHashMap<>();
    String line = readJdkSettings(props, checker, effective, sources, fromJdk);
    return new AgentOptions(agentArguments, effective, sources, fromJdk, line);
  }

  /**
   * The JDK's scheduler settings, below every gmp4j source: see 'The JDK's scheduler settings'.
   * Fills {@code fromJdk} with what it maps; returns the start-up line, or null.
   */
  private static String readJdkSettings(
      Properties props,
      Checker checker,
      Map<String, String> effective,
      Map<String, String> sources,
      Map<String, String> fromJdk) {
    String parallelism = props.getProperty(JDK_PARALLELISM);
    String maxPoolSize = props.getProperty(JDK_MAX_POOL_SIZE);
    String minRunnable = props.getProperty(JDK_MIN_RUNNABLE);
    List<String> said = new ArrayList<>();
    int cap = Integer.MAX_VALUE;
    if (maxPoolSize != null) {
      String winner = winner(effective, sources, "maxthreads", "maxthreads.exceeded");
      if (winner != null) {
        said.add(
            "-D"
                + JDK_MAX_POOL_SIZE
                + "="
                + maxPoolSize.trim()
                + " is ignored: "
                + winner
                + " wins");
      } else {
        cap = Integer.parseInt(check(checker, "maxthreads", maxPoolSize, "-D" + JDK_MAX_POOL_SIZE));
        String maxthreads = String.valueOf((long) cap + 1 > Integer.MAX_VALUE ? cap : cap + 1);
        put(effective, sources, "maxthreads", maxthreads, "-D" + JDK_MAX_POOL_SIZE);
        put(effective, sources, "maxthreads.exceeded", "queue", "-D" + JDK_MAX_POOL_SIZE);
        fromJdk.put("maxthreads", maxthreads);
        fromJdk.put("maxthreads.exceeded", "queue");
        said.add(
            "-D"
                + JDK_MAX_POOL_SIZE
                + "="
                + cap
                + " is taken as maxthreads="
                + maxthreads
                + " ("
                + cap
                + (cap == 1 ? " carrier" : " carriers")
                + " and sysmon),"
                + " maxthreads.exceeded=queue");
      }
    }
    String gomaxprocsWinner = winner(effective, sources, "gomaxprocs");
    if (parallelism != null && gomaxprocsWinner != null) {
      said.add(
          "-D"
              + JDK_PARALLELISM
              + "="
              + parallelism.trim()
              + " is ignored: "
              + gomaxprocsWinner
              + " wins");
    } else if (gomaxprocsWinner == null && (parallelism != null || cap != Integer.MAX_VALUE)) {
      int n =
          parallelism != null
              ? Integer.parseInt(check(checker, "gomaxprocs", parallelism, "-D" + JDK_PARALLELISM))
              : Runtime.getRuntime().availableProcessors();
      int gomaxprocs = Math.min(n, cap); // the JDK's own clamp of parallelism to maxPoolSize
      if (parallelism != null || gomaxprocs < n) {
        put(
            effective,
            sources,
            "gomaxprocs",
            String.valueOf(gomaxprocs),
            "-D" + (parallelism != null ? JDK_PARALLELISM : JDK_MAX_POOL_SIZE));
        fromJdk.put("gomaxprocs", String.valueOf(gomaxprocs));
        said.add(
            (parallelism != null
                    ? "-D" + JDK_PARALLELISM + "=" + parallelism.trim()
                    : "the CPU count " + n)
                + " is taken as gomaxprocs="
                + gomaxprocs
                + (gomaxprocs < n ? " (at most maxPoolSize, as the JDK does)" : ""));
      }
    }
    if (minRunnable != null) {
      said.add(
          "-D"
              + JDK_MIN_RUNNABLE
              + "="
              + minRunnable.trim()
              + " is ignored: gmp4j hands"
              + " a blocked carrier's P off by Go's rules; bound its threads with maxthreads");
    }
    return said.isEmpty() ? null : "gmp4j: " + String.join("; ", said);
  }

  /** "key=value from source" for the first of {@code keys} a gmp4j source set, else null. */
  private static String winner(
      Map<String, String> effective, Map<String, String> sources, String... keys) {
    for (String key : keys) {
      if (effective.containsKey(key)) {
        return key + "=" + effective.get(key) + " from " + sources.get(key);
      }
    }
    return null;
  }

  /**
   * Writes each agent argument into {@code gmp.<key>} (step 1 of the precedence order), and each
   * value taken from the JDK's settings, which no gmp4j source set.
   */
  void applyTo(Properties props) {
    for (Map.Entry<String, String> e : fromJdk.entrySet()) {
      props.setProperty(PREFIX + e.getKey(), e.getValue());
    }
    for (Map.Entry<String, String> e : agentArguments.entrySet()) {
      props.setProperty(PREFIX + e.getKey(), e.getValue());
    }
  }

  /**
   * The one start-up line that says what gmp4j made of the JDK's scheduler settings, or null
   * when none is set.
   */
  String jdkSettingsLine() {
    return jdkSettingsLine;
  }

  /** The agent arguments, normalised. */
  Map<String, String> agentArguments() {
    return agentArguments;
  }

  /** The normalised effective value of {@code key}, or null for the runtime's default. */
  String get(String key) {
    return effective.get(key);
  }

  /** Where {@code key}'s effective value came from, or null for the default. */
  String source(String key) {
    return sources.get(key);
  }

  /**
   * The nanoseconds of the duration option {@code key} (Config's normal form {@code 123ns}), or 0
   * when it is unset or {@code off}.
   */
  long nanos(String key) {
    String v = effective.get(key);
    return v == null || v.equals("off") ? 0 : Long.parseLong(v.substring(0, v.length() - 2));
  }

  /** True when the 0|1 option {@code key} is effectively 1. */
  boolean flag(String key) {
    return "1".equals(effective.get(key));
  }

  @Override
  public String toString() {
    return "AgentOptions" + effective + " from " + sources;
  }

  private static void put(
      Map<String, String> effective,
      Map<String, String> sources,
      String key,
      String value,
      String source) {
    effective.put(key, value);
    sources.put(key, source);
  }

  /** Config.check, with the source of the value appended to its message. */
  private static String check(Checker checker, String key, String value, String source) {
    try {
      return checker.check(key, value);
    } catch (IllegalArgumentException e) {
      String msg = e.getMessage() == null ? "gmp4j: bad option " + key : e.getMessage();
      throw new IllegalArgumentException(msg + " (in " + source + ")", e);
    }
  }

  /**
   * A Checker over {@code io.gmp4j.runtime.Config}, reached by reflection because the agent sees
   * it through a class loader of its own (AgentInstaller step 2) or the boot loader. Any thread.
   */
  static Checker reflective(Class<?> config) throws ReflectiveOperationException {
    Method keys = config.getMethod("keys");
    Method check = config.getMethod("check", String.class, String.class);
    Method debugKeys = config.getMethod("gmpdebugKeys");
    return new Checker() {
      @Override
      public List<String> keys() {
        return strings(invoke(keys));
      }

      @Override
      public String check(String key, String value) {
        return (String) invoke(check, key, value);
      }

      @Override
      public List<String> gmpdebugKeys() {
        return strings(invoke(debugKeys));
      }
    };
  }

  private static List<String> strings(Object list) {
    // A loop, not a stream: premain's path links no lambda ('Start-up' in AgentInstaller).
    List<String> out = new java.util.ArrayList<>();
    for (Object o : (List<?>) list) {
      out.add(String.valueOf(o));
    }
    return java.util.Collections.unmodifiableList(out);
  }

  private static Object invoke(Method m, Object... args) {
    try {
      return m.invoke(null, args);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      throw new IllegalStateException(
          "gmp4j: Config." + m.getName() + " failed: " + Stderr.describe(e.getCause()),
          e.getCause());
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("gmp4j: cannot call Config." + m.getName(), e);
    }
  }
}
