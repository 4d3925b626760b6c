package io.gmp4j.agent;

import static net.bytebuddy.matcher.ElementMatchers.isStatic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.returns;
import static net.bytebuddy.matcher.ElementMatchers.takesNoArguments;

import io.gmp4j.runtime.Hooks;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Gives gmp4j Go's "may I spin?" answer where the JDK's queues ask it: exit advice on {@code
 * java.util.concurrent.ForkJoinWorkerThread.hasKnownQueuedWork()}.
 *
 * <p>Shape pinned to JDK 25 ({@code java/util/concurrent/ForkJoinWorkerThread.java}):
 *
 * <pre>
 * static boolean hasKnownQueuedWork()      // package-private
 * </pre>
 *
 * {@code LinkedTransferQueue} and {@code SynchronousQueue} call it before they spin waiting for
 * a partner. On a gmp4j carrier (not a ForkJoinWorkerThread) the JDK always answers false, so a G
 * would spin while the partner it waits for sits in its own P's run queue. {@code
 * Hooks.hasKnownQueuedWork} adds Go's sync_runtime_canSpin rule. Losing this advice costs
 * throughput, not correctness, so a JDK without the method gets a warning and no advice.
 */
final class ForkJoinWorkerThreadInstrumentation {
  static final String TYPE = "java.util.concurrent.ForkJoinWorkerThread";

  /** Advice class, referenced by name so the agent's class loader never loads it. */
  static final String ADVICE =
      ForkJoinWorkerThreadInstrumentation.class.getName() + "$HasKnownQueuedWorkAdvice";

  private ForkJoinWorkerThreadInstrumentation() {}

  /** The JDK 25 method (see the class comment). */
  static ElementMatcher<MethodDescription> hasKnownQueuedWork() {
    return named("hasKnownQueuedWork")
        .and(isStatic())
        .and(takesNoArguments())
        .and(returns(boolean.class));
  }

  /** Null if this JDK has the pinned method, else why not. Any thread. */
  static String checkShape() {
    try {
      Class<?> fjwt = Class.forName(TYPE, false, null);
      Method m = fjwt.getDeclaredMethod("hasKnownQueuedWork");
      if (Modifier.isStatic(m.getModifiers()) && m.getReturnType() == boolean.class) {
        return null;
      }
      return TYPE + ".hasKnownQueuedWork() is not static boolean on JDK " + Runtime.version();
    } catch (ReflectiveOperationException | LinkageError e) {
      return TYPE + " has no static boolean hasKnownQueuedWork() on JDK " + Runtime.version()
          + ": " + Stderr.describe(e);
    }
  }

  /** Inlined at every return of hasKnownQueuedWork(): one call into the runtime. */
  public static final class HasKnownQueuedWorkAdvice {
    private HasKnownQueuedWorkAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void exit(@Advice.Return(readOnly = false) boolean queued) {
      queued = Hooks.hasKnownQueuedWork(queued);
    }
  }
}
