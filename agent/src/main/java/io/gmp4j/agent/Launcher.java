package io.gmp4j.agent;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * The {@code Main-Class} of gmp4j-agent.jar: {@code java -jar gmp4j-agent.jar <verb> ...} runs
 * one of the command-line verbs (the root {@code gmp4j} script does the same). Checks the JDK,
 * then hands over to {@code io.gmp4j.agent.cli.Cli}.
 *
 * <p>Compiled for Java 8, for the reason given in {@link GmpAgent}: a user who runs the jar with
 * an older {@code java} gets one line naming the JDK it needs, not an
 * {@code UnsupportedClassVersionError} with a stack trace. Exit status 2 (bad usage) in that case.
 */
public final class Launcher {
  private Launcher() {}

  public static void main(String[] args) {
    String spec = System.getProperty("java.specification.version", "?");
    if (GmpAgent.feature(spec) < 25) {
      System.err.println(
          "gmp4j: the gmp4j command needs JDK 25 or newer, this java is JDK "
              + spec
              + " ("
              + System.getProperty("java.home")
              + "); run it with a JDK 25 java");
      System.exit(2);
    }
    int status;
    try {
      Class<?> cli = Class.forName("io.gmp4j.agent.cli.Cli", true, Launcher.class.getClassLoader());
      Method run = cli.getDeclaredMethod("run", String[].class);
      run.setAccessible(true);
      status = (Integer) run.invoke(null, (Object) args);
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      System.err.println("gmp4j: internal error: " + GmpAgent.describe(cause));
      status = 70;
    } catch (Throwable t) {
      System.err.println("gmp4j: internal error: " + GmpAgent.describe(t));
      status = 70;
    }
    System.out.flush();
    System.exit(status);
  }
}
