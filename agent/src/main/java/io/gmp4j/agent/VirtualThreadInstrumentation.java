package io.gmp4j.agent;

import static net.bytebuddy.matcher.ElementMatchers.isConstructor;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import io.gmp4j.runtime.Hooks;
import java.lang.reflect.Constructor;
import java.util.concurrent.Executor;
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
 */
final class VirtualThreadInstrumentation {
  static final String TYPE = "java.lang.VirtualThread";

  /** Advice class, referenced by name so the agent's class loader never loads it. */
  static final String ADVICE = VirtualThreadInstrumentation.class.getName() + "$ConstructorAdvice";

  private VirtualThreadInstrumentation() {}

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

  /** Inlined into the constructor: one call into the runtime. */
  public static final class ConstructorAdvice {
    private ConstructorAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void enter(@Advice.Argument(value = 0, readOnly = false) Executor scheduler) {
      scheduler = Hooks.scheduler(scheduler);
    }
  }
}
