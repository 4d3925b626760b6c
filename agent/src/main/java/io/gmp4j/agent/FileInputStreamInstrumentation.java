package io.gmp4j.agent;

import static io.gmp4j.agent.JdkWeaver.Hook.*;

import io.gmp4j.agent.JdkWeaver.Site;
import java.util.List;

/**
 * Go's entersyscall / exitsyscall around the {@code java.io.FileInputStream} methods that read
 * or open in the kernel: JDK 25 calls these natives with no {@code Blocker} bracket, so a read
 * of a FIFO, a tty or a slow device would hold its P forever (jvm-prior-art section 3.6).
 * Woven: {@code SYSCALL_BRACKET} ('JDK weaving' in {@link JdkWeaver}).
 *
 * <p>Shapes pinned to JDK 25 ({@code javap -p -c java.io.FileInputStream}, 25.0.3):
 *
 * <pre>
 * private void open(String)             // open0(name): opening a FIFO blocks until a writer
 * public int read()                     // read0(), or traceRead0() (JFR) which calls read0()
 * public int read(byte[])               // readBytes(b, 0, len) or traceReadBytes (JFR)
 * public int read(byte[], int, int)     // readBytes(b, off, len) or traceReadBytes (JFR)
 * </pre>
 *
 * Not bracketed, because they reach the kernel only through the methods above or do not block:
 * {@code readAllBytes()} and {@code readNBytes(int)} (length0 and position0 are fstat and lseek,
 * then {@code read(byte[],int,int)} / {@code read()} or InputStream's, which calls {@code
 * read(byte[],int,int)}); {@code readNBytes(byte[],int,int)} (inherited from InputStream, calls
 * {@code read(byte[],int,int)}); {@code transferTo} (FileChannel.transferTo, Blocker-bracketed,
 * or InputStream's, which calls {@code read(byte[],int,int)}); {@code skip(long)} (skip0 is
 * lseek, only for a regular file; otherwise InputStream's, which reads); {@code available()}
 * (ioctl FIONREAD); {@code close()}.
 */
final class FileInputStreamInstrumentation {
  static final String TYPE = "java.io.FileInputStream";

  private FileInputStreamInstrumentation() {}

  /** The bracketed methods (see the class comment). */
  static List<Site> sites() {
    return List.of(
        new Site(TYPE, "open", "(Ljava/lang/String;)", false, SYSCALL_BRACKET),
        new Site(TYPE, "read", "()", false, SYSCALL_BRACKET),
        new Site(TYPE, "read", "([B)", false, SYSCALL_BRACKET),
        new Site(TYPE, "read", "([BII)", false, SYSCALL_BRACKET));
  }

  /** Null if this JDK has the pinned methods, else why not. Any thread. */
  static String checkShape() {
    return Shapes.check(TYPE, "open/1", "read/0", "read/1", "read/3");
  }
}
