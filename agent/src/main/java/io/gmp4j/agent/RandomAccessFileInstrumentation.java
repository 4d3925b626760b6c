package io.gmp4j.agent;

import static io.gmp4j.agent.JdkWeaver.Hook.*;

import io.gmp4j.agent.JdkWeaver.Site;
import java.util.List;

/**
 * Go's entersyscall / exitsyscall around the {@code java.io.RandomAccessFile} methods that read
 * or open in the kernel. In JDK 25 only its writes have a Blocker bracket ({@code
 * Blocker.begin(sync)} in implWrite / implWriteBytes, handled by {@link
 * BlockerInstrumentation}); its reads call read0 / readBytes0 bare. Woven: {@code
 * SYSCALL_BRACKET} ('JDK weaving' in {@link JdkWeaver}).
 *
 * <p>Shapes pinned to JDK 25 ({@code javap -p -c java.io.RandomAccessFile}, 25.0.3):
 *
 * <pre>
 * private void open(String, int)            // open0(name, mode)
 * public int read()                         // read0(), or traceRead0 (JFR)
 * private int readBytes(byte[], int, int)   // readBytes0, or traceReadBytes0 (JFR)
 * </pre>
 *
 * Every other read ({@code read(byte[])}, {@code read(byte[],int,int)}, {@code readFully},
 * {@code readInt}...) goes through {@code readBytes} or {@code read()}. {@code seek}, {@code
 * length}, {@code getFilePointer} (lseek, fstat) are not bracketed.
 */
final class RandomAccessFileInstrumentation {
  static final String TYPE = "java.io.RandomAccessFile";

  private RandomAccessFileInstrumentation() {}

  /** The bracketed methods (see the class comment). */
  static List<Site> sites() {
    return List.of(
        new Site(TYPE, "open", "(Ljava/lang/String;I)", false, SYSCALL_BRACKET),
        new Site(TYPE, "read", "()", false, SYSCALL_BRACKET),
        new Site(TYPE, "readBytes", "([BII)", false, SYSCALL_BRACKET));
  }

  /** Null if this JDK has the pinned methods, else why not. Any thread. */
  static String checkShape() {
    return Shapes.check(TYPE, "open/2", "read/0", "readBytes/3");
  }
}
