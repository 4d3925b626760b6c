package io.gmp4j.agent;

import static io.gmp4j.agent.JdkWeaver.Hook.*;

import io.gmp4j.agent.JdkWeaver.Site;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.List;

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

  private ForkJoinWorkerThreadInstrumentation() {}

  /** The JDK 25 method (see the class comment): its every ireturn passes through the hook. */
  static List<Site> sites() {
    return List.of(new Site(TYPE, "hasKnownQueuedWork", "()", true, KNOWN_QUEUED_WORK));
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
      return TYPE
          + " has no static boolean hasKnownQueuedWork() on JDK "
          + Runtime.version()
          + ": "
          + Stderr.describe(e);
    }
  }
}
