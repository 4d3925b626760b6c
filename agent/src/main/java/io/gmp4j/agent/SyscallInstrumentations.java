package io.gmp4j.agent;

import java.util.ArrayList;
import java.util.List;

/**
 * Collects the blocking-call ("syscall") instrumentations (DESIGN.md section 5) for the
 * installer's {@link JdkWeaver}: {@link BlockerInstrumentation} for the JDK's own Blocker-marked
 * calls, and a {@code SYSCALL_BRACKET} around the natives JDK 25 leaves unmarked ({@link
 * FileInputStreamInstrumentation}, {@link FileOutputStreamInstrumentation}, {@link
 * RandomAccessFileInstrumentation}, {@link UnixNativeDispatcherInstrumentation}); and {@link
 * NetpollInstrumentation}, which marks the JDK's network poller wait as Go's {@code IO wait}
 * (not a syscall: the G parks there without its carrier). Classes loaded before premain are
 * retransformed.
 *
 * <p>None of them is essential: a type whose pinned shape is missing is left alone after one
 * warning line, and a failed transformation gets one line from the weaver. Without
 * them, a G that blocks in such a call keeps its P for the duration, as on the JDK's scheduler.
 *
 * <p>What JDK 25 blocks on without a bracket here, and why it is left alone: {@code
 * Process.waitFor} (a j.u.c Condition, which unmounts); Socket, SocketChannel and Pipe I/O (the
 * JDK's poller, which unmounts); {@code Files} metadata calls (stat, readdir..., short on a local
 * file system); {@code ProcessImpl.forkAndExec} (short).
 */
final class SyscallInstrumentations {
  private SyscallInstrumentations() {}

  /** The sites of the types whose shape this JDK has. Called once, by the installer. */
  static List<JdkWeaver.Site> sites() {
    List<JdkWeaver.Site> sites = new ArrayList<>();
    if (warnIfMissing(BlockerInstrumentation.checkShape())) {
      sites.addAll(BlockerInstrumentation.sites());
    }
    if (warnIfMissing(FileInputStreamInstrumentation.checkShape())) {
      sites.addAll(FileInputStreamInstrumentation.sites());
    }
    if (warnIfMissing(FileOutputStreamInstrumentation.checkShape())) {
      sites.addAll(FileOutputStreamInstrumentation.sites());
    }
    if (warnIfMissing(RandomAccessFileInstrumentation.checkShape())) {
      sites.addAll(RandomAccessFileInstrumentation.sites());
    }
    if (exists(UnixNativeDispatcherInstrumentation.TYPE)
        && warnIfMissing(UnixNativeDispatcherInstrumentation.checkShape())) {
      sites.addAll(UnixNativeDispatcherInstrumentation.sites());
    }
    if (warnIfMissing(
        NetpollInstrumentation.checkShape(), "a G waiting there shows a bare park, not IO wait")) {
      sites.addAll(NetpollInstrumentation.sites());
    }
    return sites;
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
