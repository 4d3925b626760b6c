package io.gmp4j.agent;

import static net.bytebuddy.matcher.ElementMatchers.isNative;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Go's entersyscall / exitsyscall around the {@code java.io.FileOutputStream} methods that write
 * or open in the kernel: JDK 25 calls these natives with no {@code Blocker} bracket (a write to
 * a full pipe or FIFO, a slow disk or a tty holds its carrier). Advice: {@link SyscallAdvice}.
 * Process's PipeOutputStream adds a Blocker bracket on top; nesting is counted by the runtime.
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
  static ElementMatcher<MethodDescription> methods() {
    return not(isNative()).and(
        named("open").and(takesArguments(String.class, boolean.class))
            .or(named("write").and(takesArguments(int.class)))
            .or(named("write").and(takesArguments(byte[].class)))
            .or(named("write").and(takesArguments(byte[].class, int.class, int.class))));
  }

  /** Null if this JDK has the pinned methods, else why not. Any thread. */
  static String checkShape() {
    return Shapes.check(TYPE, "open/2", "write/1", "write/3");
  }
}
