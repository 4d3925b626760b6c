package io.gmp4j.agent;

/**
 * The agent's only output: single lines on stderr, each starting with {@code gmp4j: }.
 *
 * <p>No logging framework: the agent runs before the application's logging is configured, and
 * must not load or initialise the application's logging classes (OpenTelemetry's premain rule).
 */
final class Stderr {
  /** Appended to every line that reports why gmp4j did not install itself. */
  static final String NOT_INSTALLED =
      "; gmp4j is not installed, the app runs on the JDK's default scheduler";

  private Stderr() {}

  /**
   * Prints {@code line} as one line; a line break inside would split it, so none survives. Any
   * thread.
   */
  static void line(String line) {
    String one = oneLine(line);
    java.util.List<String> c = capture;
    if (c != null && Thread.currentThread() == captureThread) {
      c.add(one);
    }
    System.err.println(one);
  }

  /**
   * While an attach runs, its lines also go here, so that {@code gmp4j attach} can show them
   * (AgentState). Set and cleared by the installer under its lock.
   */
  static volatile java.util.List<String> capture;

  /**
   * The attach thread whose lines go to {@link #capture}: a background thread's line (the
   * retransformation's summary) is not part of the attach's result. Written with capture.
   */
  static volatile Thread captureThread;

  /** The exception as {@code Class: message} on one line, never a stack trace. */
  static String describe(Throwable t) {
    String msg = t.getMessage();
    return oneLine(msg == null ? t.getClass().getName() : t.getClass().getName() + ": " + msg);
  }

  /**
   * The message of an exception thrown by the runtime or by {@link AgentOptions}. Those already
   * read as a complete sentence starting with {@code gmp4j: }; anything else is described.
   */
  static String message(Throwable t) {
    String msg = t.getMessage();
    if (msg != null && msg.startsWith("gmp4j: ")) {
      return oneLine(msg);
    }
    return "gmp4j: " + describe(t);
  }

  private static String oneLine(String s) {
    return s.replace('\r', ' ').replace('\n', ' ');
  }
}
