package io.gmp4j.agent;

import static net.bytebuddy.matcher.ElementMatchers.isStatic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import io.gmp4j.runtime.Hooks;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Marks the JDK's network poller wait, so that a G parked there reads as Go's {@code IO wait}
 * in schedtrace and goroutine dumps, rather than as a bare park ({@code semacquire}, or {@code
 * sleep} with a timeout). A virtual thread whose socket, socket channel or pipe is not ready
 * registers with {@code sun.nio.ch.Poller} and parks in it: Go's netpoller, where a goroutine
 * waits without a thread.
 *
 * <p>Shape pinned to JDK 25 ({@code javap -p sun.nio.ch.Poller}, 25.0.3):
 *
 * <pre>
 * static void poll(int fdVal, int event, long nanos, BooleanSupplier isOpen)   // sockets, pipes
 * static void pollSelector(int fdVal, long nanos)                              // Selector.select
 * </pre>
 *
 * Advice: {@link Advice} below, referenced by name ({@link #ADVICE}) so the agent's class loader
 * never loads it.
 */
final class NetpollInstrumentation {
  static final String TYPE = "sun.nio.ch.Poller";

  static final String ADVICE = NetpollInstrumentation.class.getName() + "$NetpollAdvice";

  private NetpollInstrumentation() {}

  /** The marked methods (see the class comment). */
  static ElementMatcher<MethodDescription> methods() {
    return isStatic().and(named("poll").and(takesArguments(4))
        .or(named("pollSelector").and(takesArguments(2))));
  }

  /** Null if this JDK has the pinned methods, else why not. Any thread. */
  static String checkShape() {
    return Shapes.check(TYPE, "poll/4", "pollSelector/2");
  }

  /** Inlined around the poller wait: the token travels in a local of the advised method. */
  public static final class NetpollAdvice {
    private NetpollAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static boolean enter() {
      return Hooks.enterNetpoll();
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
    public static void exit(@Advice.Enter boolean entered) {
      Hooks.exitNetpoll(entered);
    }
  }
}
