package io.gmp4j.agent;

import java.lang.instrument.Instrumentation;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * The {@code Premain-Class} and {@code Agent-Class} of gmp4j-agent.jar: checks the JDK, then hands
 * over to {@link AgentInstaller}.
 *
 * <h2>Implementation overview</h2>
 *
 * This class "does as little as possible" (OpenTelemetry's rule for its premain class): whatever
 * goes wrong, the application must start, on the JDK's default scheduler, with one line on
 * stderr that says so.
 *
 * <ol>
 *   <li>It is compiled for Java 8 (see agent/pom.xml), so that any JVM that can run
 *       {@code -javaagent} can load it. A premain class the JVM cannot load aborts the JVM
 *       ("processing of -javaagent failed"); an old JDK gets one line instead.
 *   <li>It checks {@code java.specification.version} before touching anything else: gmp4j needs
 *       JDK 25's {@code java.lang.VirtualThread} constructor shape.
 *   <li>It reaches {@link AgentInstaller} only by reflection. A direct reference would make javac
 *       for release 8 read a version-69 class file, and would make an old JVM's verifier try to
 *       load it.
 *   <li>It catches every Throwable. Errors the installer reports itself already printed their
 *       line; anything that escapes gets one here.
 * </ol>
 *
 * <p>Rejected: {@code Launcher-Agent-Class} (gmp4j-agent.jar is not an application) and a
 * {@code Boot-Class-Path} manifest entry (it would need a second file next to the agent jar).
 */
public final class GmpAgent {
  /** The first JDK feature release whose VirtualThread shape gmp4j pins. */
  private static final int MIN_FEATURE = 25;

  private GmpAgent() {}

  /** Entry point for {@code -javaagent:gmp4j-agent.jar[=key=value,...]}. Called once, on main. */
  public static void premain(String agentArgs, Instrumentation inst) {
    start(agentArgs, inst, true);
  }

  /** Entry point for dynamic attach. Idempotent: a second attach only says it is installed. */
  public static void agentmain(String agentArgs, Instrumentation inst) {
    start(agentArgs, inst, false);
  }

  private static void start(String agentArgs, Instrumentation inst, boolean premain) {
    try {
      String spec = System.getProperty("java.specification.version", "?");
      int feature = feature(spec);
      if (feature < MIN_FEATURE) {
        System.err.println(
            "gmp4j: needs JDK "
                + MIN_FEATURE
                + " or newer, this is JDK "
                + spec
                + "; gmp4j is not installed, the app runs on the JDK's default scheduler");
        return;
      }
      Class<?> installer =
          Class.forName("io.gmp4j.agent.AgentInstaller", true, GmpAgent.class.getClassLoader());
      Method install =
          installer.getDeclaredMethod(
              "install", String.class, Instrumentation.class, boolean.class);
      install.setAccessible(true);
      install.invoke(null, agentArgs, inst, premain);
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      System.err.println(
          "gmp4j: agent failed: "
              + describe(cause)
              + "; gmp4j is not installed, the app runs on the JDK's default scheduler");
    } catch (Throwable t) {
      System.err.println(
          "gmp4j: agent failed: "
              + describe(t)
              + "; gmp4j is not installed, the app runs on the JDK's default scheduler");
    }
  }

  /** "1.8" → 8, "17" → 17, "25" → 25; unparsable → 0. */
  static int feature(String spec) {
    String s = spec.startsWith("1.") ? spec.substring(2) : spec;
    int end = 0;
    while (end < s.length() && Character.isDigit(s.charAt(end))) {
      end++;
    }
    try {
      return end == 0 ? 0 : Integer.parseInt(s.substring(0, end));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** One line: the exception's class and message, never a stack trace. */
  static String describe(Throwable t) {
    String msg = t.getMessage();
    String line = msg == null ? t.getClass().getName() : t.getClass().getName() + ": " + msg;
    return line.replace('\n', ' ').replace('\r', ' ');
  }
}
