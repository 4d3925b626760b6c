package io.gmp4j.agent;

import static io.gmp4j.agent.JdkWeaver.Hook.*;

import io.gmp4j.agent.JdkWeaver.Site;
import java.util.List;

/**
 * Go's entersyscall / exitsyscall around the two {@code sun.nio.fs.UnixNativeDispatcher} calls that
 * open a file for {@code java.nio.file.Files} ({@code newInputStream}, {@code newByteChannel},
 * {@code FileChannel.open}...): opening a FIFO blocks until the other end opens, with no Blocker
 * bracket in JDK 25. Reads and writes on the channel that results go through FileChannelImpl, which
 * has one ({@link BlockerInstrumentation}). Woven: {@code SYSCALL_BRACKET} ('JDK weaving' in {@link
 * JdkWeaver}).
 *
 * <p>Shapes pinned to JDK 25 ({@code javap -p -c sun.nio.fs.UnixNativeDispatcher}, 25.0.3):
 *
 * <pre>
 * static int open(UnixPath path, int flags, int mode)          // open0(address, flags, mode)
 * static int openat(int dfd, byte[] path, int flags, int mode) // openat0(dfd, address, ...)
 * </pre>
 *
 * The other natives here (stat, lstat, mkdir, readdir, unlink...) are short on a local file
 * system and not bracketed; on a hung NFS mount they hold the carrier, as in the JDK itself.
 * Linux and macOS only: on Windows the class does not exist and nothing is instrumented.
 */
final class UnixNativeDispatcherInstrumentation {
  static final String TYPE = "sun.nio.fs.UnixNativeDispatcher";

  private UnixNativeDispatcherInstrumentation() {}

  /** The bracketed methods (see the class comment). */
  static List<Site> sites() {
    return List.of(
        new Site(TYPE, "open", "/3", true, SYSCALL_BRACKET),
        new Site(TYPE, "openat", "(I[BII)", true, SYSCALL_BRACKET));
  }

  /** Null if this JDK has the pinned methods, else why not. Any thread. */
  static String checkShape() {
    return Shapes.check(TYPE, "open/3", "openat/4");
  }
}
