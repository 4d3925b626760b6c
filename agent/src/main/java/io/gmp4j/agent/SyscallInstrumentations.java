package io.gmp4j.agent;

import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.matcher.ElementMatchers;
import net.bytebuddy.pool.TypePool;

/**
 * Registers the blocking-call ("syscall") instrumentations (DESIGN.md section 5) on the
 * installer's JDK AgentBuilder: {@link BlockerInstrumentation} for the JDK's own Blocker-marked
 * calls, and a {@link SyscallAdvice} bracket around the natives JDK 25 leaves unmarked ({@link
 * FileInputStreamInstrumentation}, {@link FileOutputStreamInstrumentation}, {@link
 * RandomAccessFileInstrumentation}, {@link UnixNativeDispatcherInstrumentation}); and {@link
 * NetpollInstrumentation}, which marks the JDK's network poller wait as Go's {@code IO wait}
 * (not a syscall: the G parks there without its carrier). Classes loaded before premain are
 * retransformed with the builder's strategy.
 *
 * <p>None of them is essential: a type whose pinned shape is missing is left alone after one
 * warning line, and a failed transformation gets one line from the installer's listener. Without
 * them, a G that blocks in such a call keeps its P for the duration, as on the JDK's scheduler.
 *
 * <p>What JDK 25 blocks on without a bracket here, and why it is left alone: {@code
 * Process.waitFor} (a j.u.c Condition, which unmounts); Socket, SocketChannel and Pipe I/O (the
 * JDK's poller, which unmounts); {@code Files} metadata calls (stat, readdir..., short on a local
 * file system); {@code ProcessImpl.forkAndExec} (short).
 */
final class SyscallInstrumentations {
  private SyscallInstrumentations() {}

  /** Adds the types whose shape this JDK has to {@code builder}. Called once, by the installer. */
  static AgentBuilder.Identified.Extendable register(AgentBuilder.Identified.Extendable builder,
      TypePool pool, ClassFileLocator locator) {
    if (warnIfMissing(BlockerInstrumentation.checkShape())) {
      Advice begin = advice(pool, locator, BlockerInstrumentation.BEGIN_ADVICE);
      Advice beginBoolean = advice(pool, locator, BlockerInstrumentation.BEGIN_BOOLEAN_ADVICE);
      Advice end = advice(pool, locator, BlockerInstrumentation.END_ADVICE);
      builder = builder
          .type(ElementMatchers.named(BlockerInstrumentation.TYPE))
          .transform((b, type, loader, module, domain) -> b
              .visit(begin.on(BlockerInstrumentation.begin()))
              .visit(beginBoolean.on(BlockerInstrumentation.beginBoolean()))
              .visit(end.on(BlockerInstrumentation.end())));
    }
    Advice bracket = advice(pool, locator, SyscallAdvice.NAME);
    if (warnIfMissing(FileInputStreamInstrumentation.checkShape())) {
      builder = builder
          .type(ElementMatchers.named(FileInputStreamInstrumentation.TYPE))
          .transform((b, type, loader, module, domain) ->
              b.visit(bracket.on(FileInputStreamInstrumentation.methods())));
    }
    if (warnIfMissing(FileOutputStreamInstrumentation.checkShape())) {
      builder = builder
          .type(ElementMatchers.named(FileOutputStreamInstrumentation.TYPE))
          .transform((b, type, loader, module, domain) ->
              b.visit(bracket.on(FileOutputStreamInstrumentation.methods())));
    }
    if (warnIfMissing(RandomAccessFileInstrumentation.checkShape())) {
      builder = builder
          .type(ElementMatchers.named(RandomAccessFileInstrumentation.TYPE))
          .transform((b, type, loader, module, domain) ->
              b.visit(bracket.on(RandomAccessFileInstrumentation.methods())));
    }
    if (exists(UnixNativeDispatcherInstrumentation.TYPE)
        && warnIfMissing(UnixNativeDispatcherInstrumentation.checkShape())) {
      builder = builder
          .type(ElementMatchers.named(UnixNativeDispatcherInstrumentation.TYPE))
          .transform((b, type, loader, module, domain) ->
              b.visit(bracket.on(UnixNativeDispatcherInstrumentation.methods())));
    }
    if (warnIfMissing(NetpollInstrumentation.checkShape(),
        "a G waiting there shows a bare park, not IO wait")) {
      Advice netpoll = advice(pool, locator, NetpollInstrumentation.ADVICE);
      builder = builder
          .type(ElementMatchers.named(NetpollInstrumentation.TYPE))
          .transform((b, type, loader, module, domain) ->
              b.visit(netpoll.on(NetpollInstrumentation.methods())));
    }
    return builder;
  }

  private static Advice advice(TypePool pool, ClassFileLocator locator, String name) {
    return Advice.to(pool.describe(name).resolve(), locator);
  }

  /** True if {@code shape} is null (the JDK has it); otherwise prints one line. */
  private static boolean warnIfMissing(String shape) {
    return warnIfMissing(shape, "a G blocked there keeps its P");
  }

  /** True if {@code shape} is null; otherwise prints one line ending in {@code effect}. */
  private static boolean warnIfMissing(String shape, String effect) {
    if (shape == null) {
      return true;
    }
    Stderr.line("gmp4j: " + shape + "; " + effect);
    return false;
  }

  private static boolean exists(String bootClass) {
    try {
      Class.forName(bootClass, false, null);
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
