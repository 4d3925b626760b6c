package io.gmp4j.agent;

import static io.gmp4j.agent.JdkWeaver.Hook.*;

import io.gmp4j.agent.JdkWeaver.Site;
import java.util.List;

/**
 * Go's entersyscall / exitsyscall around the {@code java.io.FileOutputStream} methods that write or
 * open in the kernel: JDK 25 calls these natives with no {@code Blocker} bracket (a write to a full
 * pipe or FIFO, a slow disk or a tty holds its carrier). Woven: {@code SYSCALL_BRACKET} ('JDK
 * weaving' in {@link JdkWeaver}). Process's PipeOutputStream adds a Blocker bracket on top; nesting
 * is counted by the runtime.
 *
 * <p>Shapes pinned to JDK 25 ({@code javap -p -c java.io.FileOutputStream}, 25.0.3):
 *
 * <pre>
 * private void open(String, boolean)    // open0(name, append): a FIFO blocks until a reader
 * public void write(int)                // native write(b, append), or traceWrite (JFR)
 * public void write(byte[])             // native writeBytes(b, 0, len, append), or traceWriteBytes
 * public void write(byte[], int, int)   // native writeBytes(b, off, len, append), or traceWriteBytes
 * </pre>
 *
 * The native {@code write(int, boolean)} shares the name; natives carry no code and are never
 * advised. {@code close()} is not bracketed.
 */
final class FileOutputStreamInstrumentation {
  static final String TYPE = "java.io.FileOutputStream";

  private FileOutputStreamInstrumentation() {}

  /** The bracketed methods (see the class comment). */
  static List<Site> sites() {
    return List.of(
        new Site(TYPE, "open", "(Ljava/lang/String;Z)", false, SYSCALL_BRACKET),
        new Site(TYPE, "write", "(I)", false, SYSCALL_BRACKET),
        new Site(TYPE, "write", "([B)", false, SYSCALL_BRACKET),
        new Site(TYPE, "write", "([BII)", false, SYSCALL_BRACKET));
  }

  /** Null if this JDK has the pinned methods, else why not. Any thread. */
  static String checkShape() {
    return Shapes.check(TYPE, "open/2", "write/1", "write/3");
  }
}
