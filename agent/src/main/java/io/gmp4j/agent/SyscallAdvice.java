package io.gmp4j.agent;

import io.gmp4j.runtime.Hooks;
import net.bytebuddy.asm.Advice;

/**
 * The syscall bracket inlined around a JDK method that blocks its carrier in the kernel with no
 * {@code jdk.internal.misc.Blocker} bracket of its own: Go's entersyscall before the body,
 * exitsyscall after it, on return or throw. The token travels in a local of the advised method.
 * Shared by the {@code *Instrumentation} classes that bracket whole methods ({@link
 * FileInputStreamInstrumentation}, {@link FileOutputStreamInstrumentation}, {@link
 * RandomAccessFileInstrumentation}, {@link UnixNativeDispatcherInstrumentation}); referenced by
 * name ({@link #NAME}) so the agent's class loader never loads it.
 */
public final class SyscallAdvice {
  static final String NAME = SyscallAdvice.class.getName();

  private SyscallAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static boolean enter() {
    return Hooks.enterSyscall();
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.Enter boolean entered) {
    Hooks.exitSyscall(entered);
  }
}
