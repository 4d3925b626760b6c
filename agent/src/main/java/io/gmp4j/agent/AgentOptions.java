package io.gmp4j.agent;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
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

  /** Key → normalised effective value; absent keys take the runtime's default. */
  private final Map<String, String> effective;

  /** Key → where its effective value came from, for messages. */
  private final Map<String, String> sources;

  private AgentOptions(
      Map<String, String> agentArguments, Map<String, String> effective, Map<String, String> sources) {
    this.agentArguments = Collections.unmodifiableMap(agentArguments);
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
      put(effective, sources, "gomaxprocs", check(checker, "gomaxprocs", gomaxprocsEnv,
          "the GOMAXPROCS environment variable"), "GOMAXPROCS");
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
          throw new IllegalArgumentException("gmp4j: bad GMPDEBUG item \"" + item
              + "\": want key=value with key one of " + String.join(", ", debugKeys));
        }
        put(effective, sources, key,
            check(checker, key, item.substring(eq + 1), "GMPDEBUG"), "GMPDEBUG");
      }
    }
    for (String key : keys) {
      String value = props.getProperty(PREFIX + key);
      if (value != null) {
        put(effective, sources, key, check(checker, key, value, "-D" + PREFIX + key),
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
          throw new IllegalArgumentException("gmp4j: bad agent argument \"" + item
              + "\": want key=value[,key=value...] with key one of " + String.join(", ", keys));
        }
        String key = item.substring(0, eq).trim();
        String value = check(checker, key, item.substring(eq + 1), "the -javaagent argument");
        agentArguments.put(key, value);
        put(effective, sources, key, value, "the -javaagent argument");
      }
    }
    return new AgentOptions(agentArguments, effective, sources);
  }

  /** Writes each agent argument into {@code gmp.<key>}: step 1 of the precedence order. */
  void applyTo(Properties props) {
    for (Map.Entry<String, String> e : agentArguments.entrySet()) {
      props.setProperty(PREFIX + e.getKey(), e.getValue());
    }
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

  /** True when the 0|1 option {@code key} is effectively 1. */
  boolean flag(String key) {
    return "1".equals(effective.get(key));
  }

  @Override
  public String toString() {
    return "AgentOptions" + effective + " from " + sources;
  }

  private static void put(Map<String, String> effective, Map<String, String> sources,
      String key, String value, String source) {
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
    return ((List<?>) list).stream().map(String::valueOf).toList();
  }

  private static Object invoke(Method m, Object... args) {
    try {
      return m.invoke(null, args);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      throw new IllegalStateException("gmp4j: Config." + m.getName() + " failed: "
          + Stderr.describe(e.getCause()), e.getCause());
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("gmp4j: cannot call Config." + m.getName(), e);
    }
  }
}
