package io.gmp4j.agent;

import static io.gmp4j.agent.JdkWeaver.Hook.*;

import io.gmp4j.agent.JdkWeaver.Site;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Moves every new virtual thread onto gmp4j: advice on the constructor of {@code
 * java.lang.VirtualThread} swaps gmp4j's scheduler in where the JDK would choose its own.
 *
 * <p>Shape pinned to JDK 25 ({@code java/lang/VirtualThread.java}):
 *
 * <pre>
 * VirtualThread(Executor scheduler, String name, int characteristics, Runnable task)
 * private Future<?> schedule(Runnable command, long delay, TimeUnit unit)
 * </pre>
 *
 * A null {@code scheduler} means "the creating virtual thread's scheduler, or else
 * DEFAULT_SCHEDULER (a ForkJoinPool)". Every public way to build a virtual thread passes null:
 * {@code Thread.ofVirtual()}, {@code Thread.startVirtualThread}, {@code
 * Executors.newVirtualThreadPerTaskExecutor()}, the JDK's own poller threads. gmp4j replaces
 * only DEFAULT_SCHEDULER: a non-null scheduler (gmp4j's own builder, a test's) is left as it is,
 * and so is the scheduler a creator on a custom scheduler passes on; see {@code Hooks.scheduler}.
 *
 * <p>VirtualThread is loaded before premain runs, so this is applied by retransformation, which
 * may not add members: the woven call ({@code SCHEDULER} in {@link JdkWeaver}) only reassigns an
 * argument. Threads created
 * before the agent ran (none under {@code -javaagent}; any under attach) keep the JDK scheduler,
 * because {@code VirtualThread.scheduler} is final.
 *
 * <p>{@code schedule} is where JDK 25 puts the timeout of a timed park ({@code afterYield}: {@code
 * schedule(this::parkTimeoutExpired, timeout, NANOSECONDS)}) or a timed wait ({@code
 * schedule(() -> waitTimeoutExpired(seqNo), timeout, MILLISECONDS)}), on the carrier after the
 * unmount; for a scheduler that is not a ForkJoinPool it hands the task to a {@code
 * VirtualThread-unparker} executor. Its hook asks {@code Hooks.schedule} for a gmp4j timer on
 * the carrier's P and, given one, skips the body and returns it ('Timers on the P' in the
 * runtime's Timers; JdkWeaver's SCHEDULE hook). A JDK without this shape keeps its timer threads
 * and gets one warning.
 */
final class VirtualThreadInstrumentation {
  static final String TYPE = "java.lang.VirtualThread";

  private VirtualThreadInstrumentation() {}

  /** The JDK 25 constructor (see the class comment). */
  static List<Site> sites() {
    return List.of(
        new Site(
            TYPE,
            "<init>",
            "(Ljava/util/concurrent/Executor;Ljava/lang/String;ILjava/lang/Runnable;)",
            false,
            SCHEDULER));
  }

  /** The {@code schedule} site ('Timers on the P'); woven only if {@link #checkScheduleShape}. */
  static List<Site> scheduleSites() {
    return List.of(
        new Site(
            TYPE,
            "schedule",
            "(Ljava/lang/Runnable;JLjava/util/concurrent/TimeUnit;)",
            false,
            SCHEDULE));
  }

  /**
   * Null if this JDK has the pinned {@code schedule} and the {@code scheduler} field its hook
   * reads, else why not. Any thread.
   */
  static String checkScheduleShape() {
    try {
      Class<?> vt = Class.forName(TYPE, false, null);
      Method m = vt.getDeclaredMethod("schedule", Runnable.class, long.class, TimeUnit.class);
      if (!Modifier.isPrivate(m.getModifiers())
          || m.getReturnType() != Future.class
          || Modifier.isStatic(m.getModifiers())) {
        return TYPE
            + ".schedule is not JDK 25's private Future<?> schedule(Runnable, long,"
            + " TimeUnit)";
      }
      if (vt.getDeclaredField("scheduler").getType() != Executor.class) {
        return TYPE + ".scheduler is not an Executor";
      }
      return null;
    } catch (ReflectiveOperationException | LinkageError e) {
      return TYPE
          + " has no schedule(Runnable, long, TimeUnit) on JDK "
          + Runtime.version()
          + " (gmp4j pins JDK 25's shape): "
          + Stderr.describe(e);
    }
  }

  /**
   * Null if this JDK has the pinned constructor, else why not. Checked before instrumenting: a
   * matcher that matches nothing transforms the class without error, and gmp4j would then run
   * no thread at all. Any thread.
   */
  static String checkShape() {
    try {
      Class<?> vt = Class.forName(TYPE, false, null);
      Constructor<?> c =
          vt.getDeclaredConstructor(Executor.class, String.class, int.class, Runnable.class);
      return c == null ? "no constructor" : null;
    } catch (ReflectiveOperationException | LinkageError e) {
      return TYPE
          + " has no (Executor, String, int, Runnable) constructor on JDK "
          + Runtime.version()
          + " (gmp4j pins JDK 25's shape): "
          + Stderr.describe(e);
    }
  }
}
