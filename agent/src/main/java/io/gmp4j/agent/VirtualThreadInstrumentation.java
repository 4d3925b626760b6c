package io.gmp4j.agent;

import static net.bytebuddy.matcher.ElementMatchers.isConstructor;
import static net.bytebuddy.matcher.ElementMatchers.isPrivate;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.returns;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import io.gmp4j.runtime.Hooks;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.matcher.ElementMatcher;

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
 * may not add members: the advice is inlined and only reassigns an argument. Threads created
 * before the agent ran (none under {@code -javaagent}; any under attach) keep the JDK scheduler,
 * because {@code VirtualThread.scheduler} is final.
 *
 * <p>{@code schedule} is where JDK 25 puts the timeout of a timed park ({@code afterYield}: {@code
 * schedule(this::parkTimeoutExpired, timeout, NANOSECONDS)}) or a timed wait ({@code
 * schedule(() -> waitTimeoutExpired(seqNo), timeout, MILLISECONDS)}), on the carrier after the
 * unmount; for a scheduler that is not a ForkJoinPool it hands the task to a {@code
 * VirtualThread-unparker} executor. Its advice asks {@code Hooks.schedule} for a gmp4j timer on
 * the carrier's P and, given one, skips the body and returns it ('Timers on the P' in the
 * runtime's Timers). A JDK without this shape keeps its timer threads and gets one warning.
 */
final class VirtualThreadInstrumentation {
  static final String TYPE = "java.lang.VirtualThread";

  /** Advice class, referenced by name so the agent's class loader never loads it. */
  static final String ADVICE = VirtualThreadInstrumentation.class.getName() + "$ConstructorAdvice";

  private VirtualThreadInstrumentation() {}

  /** Advice class for {@code schedule}, referenced by name as {@link #ADVICE} is. */
  static final String SCHEDULE_ADVICE =
      VirtualThreadInstrumentation.class.getName() + "$ScheduleAdvice";

  /** JDK 25's {@code private Future<?> schedule(Runnable, long, TimeUnit)}. */
  static ElementMatcher<MethodDescription> schedule() {
    return named("schedule").and(isPrivate()).and(returns(Future.class))
        .and(takesArguments(Runnable.class, long.class, TimeUnit.class));
  }

  /**
   * Null if this JDK has the pinned {@code schedule} and the {@code scheduler} field its advice
   * reads, else why not. Any thread.
   */
  static String checkScheduleShape() {
    try {
      Class<?> vt = Class.forName(TYPE, false, null);
      Method m = vt.getDeclaredMethod("schedule", Runnable.class, long.class, TimeUnit.class);
      if (!Modifier.isPrivate(m.getModifiers()) || m.getReturnType() != Future.class
          || Modifier.isStatic(m.getModifiers())) {
        return TYPE + ".schedule is not JDK 25's private Future<?> schedule(Runnable, long,"
            + " TimeUnit)";
      }
      if (vt.getDeclaredField("scheduler").getType() != Executor.class) {
        return TYPE + ".scheduler is not an Executor";
      }
      return null;
    } catch (ReflectiveOperationException | LinkageError e) {
      return TYPE + " has no schedule(Runnable, long, TimeUnit) on JDK " + Runtime.version()
          + " (gmp4j pins JDK 25's shape): " + Stderr.describe(e);
    }
  }

  /** The JDK 25 constructor (see the class comment). */
  static ElementMatcher<MethodDescription> constructor() {
    return isConstructor()
        .and(takesArguments(Executor.class, String.class, int.class, Runnable.class));
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
      return TYPE + " has no (Executor, String, int, Runnable) constructor on JDK "
          + Runtime.version() + " (gmp4j pins JDK 25's shape): " + Stderr.describe(e);
    }
  }

  /**
   * Inlined into {@code schedule}: a gmp4j timer skips the JDK's body and is returned in place of
   * its Future; null (or a throw, suppressed) runs the body as before.
   */
  public static final class ScheduleAdvice {
    private ScheduleAdvice() {}

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
    public static Future<?> enter(@Advice.FieldValue("scheduler") Executor scheduler,
        @Advice.Argument(0) Runnable command, @Advice.Argument(1) long delay,
        @Advice.Argument(2) TimeUnit unit) {
      return Hooks.schedule(scheduler, command, delay, unit);
    }

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void exit(@Advice.Enter Future<?> timer,
        @Advice.Return(readOnly = false) Future<?> returned) {
      if (timer != null) {
        returned = timer;
      }
    }
  }

  /** Inlined into the constructor: one call into the runtime. */
  public static final class ConstructorAdvice {
    private ConstructorAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void enter(@Advice.Argument(value = 0, readOnly = false) Executor scheduler) {
      scheduler = Hooks.scheduler(scheduler);
    }
  }
}
