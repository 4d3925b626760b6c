package io.gmp4j;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestWatcher;
import org.opentest4j.TestAbortedException;

/**
 * Prints {@code Gmp.schedtrace(true)} to stderr when a test fails or times out (house style rule
 * 10: every concurrent test prints schedtrace detail when it fails).
 *
 * <p>The trace is taken in {@link #handleTestExecutionException}, as soon as the test method has
 * thrown (a failed assertion, or the {@code TimeoutException} of {@code @Timeout}), before
 * {@code @AfterEach} runs; {@link #testFailed} covers failures outside the method (a lifecycle
 * method). A test that restores GOMAXPROCS in a {@code finally} block has done so by then, so
 * tests that wait on the scheduler also put a trace taken at the moment of failure into their
 * assertion message (see {@link GmpTesting}).
 *
 * <p>The tests declare {@code @Timeout(threadMode = SEPARATE_THREAD)}: a stop-the-world waits
 * uninterruptibly for every running G to block or yield, so a test thread stuck in {@code
 * gomaxprocs(n)} ignores the interrupt of the default mode and would hang the whole suite. In the
 * separate-thread mode JUnit reports the timeout at once, and the trace shows the stuck state.
 */
public final class SchedTraceOnFailure implements TestExecutionExceptionHandler, TestWatcher {
  private static final ExtensionContext.Namespace NS =
      ExtensionContext.Namespace.create(SchedTraceOnFailure.class);

  @Override
  public void handleTestExecutionException(ExtensionContext context, Throwable throwable)
      throws Throwable {
    if (!(throwable instanceof TestAbortedException)) { // an assumption is not a failure
      print(context, throwable);
    }
    throw throwable;
  }

  @Override
  public void testFailed(ExtensionContext context, Throwable cause) {
    print(context, cause);
  }

  private static void print(ExtensionContext context, Throwable cause) {
    ExtensionContext.Store store = context.getStore(NS);
    if (store.get("printed") != null) {
      return;
    }
    store.put("printed", Boolean.TRUE);
    String trace;
    try {
      trace = Gmp.schedtrace(true);
    } catch (Throwable t) {
      trace = "(schedtrace failed: " + t + ")\n";
    }
    System.err.println(
        "=== "
            + context.getDisplayName()
            + " in "
            + context.getRequiredTestClass().getSimpleName()
            + " failed: "
            + cause
            + "\n=== Gmp.schedtrace(true):\n"
            + trace
            + "=== end of schedtrace");
    System.err.flush();
  }
}
