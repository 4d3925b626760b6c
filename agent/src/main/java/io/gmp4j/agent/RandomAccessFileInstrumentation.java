package io.gmp4j.agent;

import static net.bytebuddy.matcher.ElementMatchers.isNative;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Go's entersyscall / exitsyscall around the {@code java.io.RandomAccessFile} methods that read
 * or open in the kernel. In JDK 25 only its writes have a Blocker bracket ({@code
 * Blocker.begin(sync)} in implWrite / implWriteBytes, handled by {@link
 * BlockerInstrumentation}); its reads call read0 / readBytes0 bare. Advice: {@link
 * SyscallAdvice}.
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
  static ElementMatcher<MethodDescription> methods() {
    return not(isNative()).and(
        named("open").and(takesArguments(String.class, int.class))
            .or(named("read").and(takesArguments(0)))
            .or(named("readBytes").and(takesArguments(byte[].class, int.class, int.class))));
  }

  /** Null if this JDK has the pinned methods, else why not. Any thread. */
  static String checkShape() {
    return Shapes.check(TYPE, "open/2", "read/0", "readBytes/3");
  }
}
