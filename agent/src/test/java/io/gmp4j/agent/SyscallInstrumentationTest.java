package io.gmp4j.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.RandomAccessFile;
import java.util.Set;
import java.util.TreeSet;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.pool.TypePool;
import org.junit.jupiter.api.Test;

/**
 * The JDK 25 shapes the syscall instrumentations pin: each matcher selects exactly the methods
 * its class comment lists, on the JDK running the tests, and each advice class is valid advice.
 */
class SyscallInstrumentationTest {
  @Test
  void blockerMatchesBeginBeginBooleanAndEnd() throws Exception {
    assertNull(BlockerInstrumentation.checkShape());
    Class<?> blocker = Class.forName(BlockerInstrumentation.TYPE);
    assertEquals(Set.of("begin()Z"), matched(blocker, BlockerInstrumentation.begin()));
    assertEquals(Set.of("begin(Z)Z"), matched(blocker, BlockerInstrumentation.beginBoolean()));
    assertEquals(Set.of("end(Z)V"), matched(blocker, BlockerInstrumentation.end()));
  }

  @Test
  void fileInputStreamBracketsOpenAndTheThreeReads() {
    assertNull(FileInputStreamInstrumentation.checkShape());
    assertEquals(Set.of("open(Ljava/lang/String;)V", "read()I", "read([B)I", "read([BII)I"),
        matched(FileInputStream.class, FileInputStreamInstrumentation.methods()));
  }

  @Test
  void fileOutputStreamBracketsOpenAndTheThreeWritesButNotTheNative() {
    assertNull(FileOutputStreamInstrumentation.checkShape());
    assertEquals(Set.of("open(Ljava/lang/String;Z)V", "write(I)V", "write([B)V", "write([BII)V"),
        matched(FileOutputStream.class, FileOutputStreamInstrumentation.methods()));
  }

  @Test
  void randomAccessFileBracketsOpenAndItsTwoReadPrimitives() {
    assertNull(RandomAccessFileInstrumentation.checkShape());
    assertEquals(Set.of("open(Ljava/lang/String;I)V", "read()I", "readBytes([BII)I"),
        matched(RandomAccessFile.class, RandomAccessFileInstrumentation.methods()));
  }

  @Test
  void unixNativeDispatcherBracketsOpenAndOpenat() throws Exception {
    Class<?> und;
    try {
      und = Class.forName(UnixNativeDispatcherInstrumentation.TYPE);
    } catch (ClassNotFoundException e) {
      return; // not a Unix JDK
    }
    assertNull(UnixNativeDispatcherInstrumentation.checkShape());
    assertEquals(Set.of("open(Lsun/nio/fs/UnixPath;II)I", "openat(I[BII)I"),
        matched(und, UnixNativeDispatcherInstrumentation.methods()));
  }

  @Test
  void netpollMarksThePollerWaitsOfSocketsAndSelectors() throws Exception {
    assertNull(NetpollInstrumentation.checkShape());
    assertEquals(Set.of("poll(IIJLjava/util/function/BooleanSupplier;)V", "pollSelector(IJ)V"),
        matched(Class.forName(NetpollInstrumentation.TYPE), NetpollInstrumentation.methods()));
  }

  @Test
  void shapesNamesWhatIsMissing() {
    assertEquals("java.io.FileInputStream has no read with 7 parameters on JDK "
            + Runtime.version() + " (gmp4j pins JDK 25's shape)",
        Shapes.check("java.io.FileInputStream", "read/0", "read/7"));
    assertEquals("java.io.FileInputStream has no read0 on JDK " + Runtime.version()
            + " (gmp4j pins JDK 25's shape)",
        Shapes.check("java.io.FileInputStream", "read0")); // native: never advised
  }

  @Test
  void everyAdviceClassIsValidAdvice() {
    ClassFileLocator locator =
        ClassFileLocator.ForClassLoader.of(SyscallInstrumentationTest.class.getClassLoader());
    TypePool pool = TypePool.Default.of(locator);
    for (String name : new String[] {SyscallAdvice.NAME, BlockerInstrumentation.BEGIN_ADVICE,
        BlockerInstrumentation.BEGIN_BOOLEAN_ADVICE, BlockerInstrumentation.END_ADVICE,
        NetpollInstrumentation.ADVICE}) {
      Advice.to(pool.describe(name).resolve(), locator); // throws if not
    }
  }

  /** name + descriptor of the methods {@code matcher} selects among {@code type}'s own. */
  private static Set<String> matched(Class<?> type,
      ElementMatcher<? super MethodDescription> matcher) {
    Set<String> out = new TreeSet<>();
    for (MethodDescription.InDefinedShape m :
        TypeDescription.ForLoadedType.of(type).getDeclaredMethods().filter(matcher)) {
      out.add(m.getInternalName() + m.getDescriptor());
    }
    return out;
  }
}
