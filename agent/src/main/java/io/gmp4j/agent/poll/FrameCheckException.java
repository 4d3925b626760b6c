package io.gmp4j.agent.poll;

/**
 * Thrown by {@link PollInjector#transform} when {@link FrameCheck} finds that a rewritten method's
 * stack-map frames do not match what its code computes: the JVM would reject the class with a
 * {@code VerifyError}, so the class must stay exactly as it was. The agent's transformer prints
 * one {@code gmp4j:} line with the message and loads the original class; the coverage report
 * counts it as "frame check failed".
 *
 * <p>The message names the class, the method, the bytecode offset and what mismatched, e.g. {@code
 * frame check failed in org/acme/Lexer.skip()V at bci 588: locals[2] is top, not assignable to int
 * in the frame of the handler at bci 1007}.
 */
public final class FrameCheckException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String className;
  private final String method;

  FrameCheckException(String className, String method, String where, String reason) {
    super("frame check failed in " + className + "." + method + " at " + where + ": " + reason);
    this.className = className;
    this.method = method;
  }

  /** Internal name of the class that was left alone. */
  public String className() {
    return className;
  }

  /** Name and descriptor of the first method that failed, e.g. {@code skip()V}. */
  public String method() {
    return method;
  }
}
