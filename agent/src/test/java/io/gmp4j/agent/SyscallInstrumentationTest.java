package io.gmp4j.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.lang.classfile.ClassFile;
import java.lang.classfile.MethodModel;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The JDK 25 shapes the instrumentations pin: each site list selects exactly the methods its class
 * comment lists, on the JDK running the tests, and the woven class files pass the class-file
 * API's verifier.
 */
class SyscallInstrumentationTest {
  @Test
  void blockerMatchesBeginBeginBooleanAndEnd() throws Exception {
    assertNull(BlockerInstrumentation.checkShape());
    Class<?> blocker = Class.forName(BlockerInstrumentation.TYPE);
    assertEquals(
        Set.of("begin()Z"), matched(blocker, BlockerInstrumentation.sites().subList(0, 1)));
    assertEquals(
        Set.of("begin(Z)Z"), matched(blocker, BlockerInstrumentation.sites().subList(1, 2)));
    assertEquals(Set.of("end(Z)V"), matched(blocker, BlockerInstrumentation.sites().subList(2, 3)));
  }

  @Test
  void fileInputStreamBracketsOpenAndTheThreeReads() throws Exception {
    assertNull(FileInputStreamInstrumentation.checkShape());
    assertEquals(
        Set.of("open(Ljava/lang/String;)V", "read()I", "read([B)I", "read([BII)I"),
        matched(FileInputStream.class, FileInputStreamInstrumentation.sites()));
  }

  @Test
  void fileOutputStreamBracketsOpenAndTheThreeWritesButNotTheNative() throws Exception {
    assertNull(FileOutputStreamInstrumentation.checkShape());
    assertEquals(
        Set.of("open(Ljava/lang/String;Z)V", "write(I)V", "write([B)V", "write([BII)V"),
        matched(FileOutputStream.class, FileOutputStreamInstrumentation.sites()));
  }

  @Test
  void randomAccessFileBracketsOpenAndItsTwoReadPrimitives() throws Exception {
    assertNull(RandomAccessFileInstrumentation.checkShape());
    assertEquals(
        Set.of("open(Ljava/lang/String;I)V", "read()I", "readBytes([BII)I"),
        matched(RandomAccessFile.class, RandomAccessFileInstrumentation.sites()));
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
    assertEquals(
        Set.of("open(Lsun/nio/fs/UnixPath;II)I", "openat(I[BII)I"),
        matched(und, UnixNativeDispatcherInstrumentation.sites()));
  }

  @Test
  void netpollMarksThePollerWaitsOfSocketsAndSelectors() throws Exception {
    assertNull(NetpollInstrumentation.checkShape());
    assertEquals(
        Set.of("poll(IIJLjava/util/function/BooleanSupplier;)V", "pollSelector(IJ)V"),
        matched(Class.forName(NetpollInstrumentation.TYPE), NetpollInstrumentation.sites()));
  }

  @Test
  void shapesNamesWhatIsMissing() {
    assertEquals(
        "java.io.FileInputStream has no read with 7 parameters on JDK "
            + Runtime.version()
            + " (gmp4j pins JDK 25's shape)",
        Shapes.check("java.io.FileInputStream", "read/0", "read/7"));
    assertEquals(
        "java.io.FileInputStream has no read0 on JDK "
            + Runtime.version()
            + " (gmp4j pins JDK 25's shape)",
        Shapes.check("java.io.FileInputStream", "read0")); // native: never advised
  }

  @Test
  void virtualThreadAndForkJoinWorkerThreadMatchTheirPinnedMethods() throws Exception {
    assertNull(VirtualThreadInstrumentation.checkShape());
    assertEquals(
        Set.of("<init>(Ljava/util/concurrent/Executor;Ljava/lang/String;ILjava/lang/Runnable;)V"),
        matched(
            Class.forName(VirtualThreadInstrumentation.TYPE),
            VirtualThreadInstrumentation.sites()));
    assertNull(VirtualThreadInstrumentation.checkScheduleShape());
    assertEquals(
        Set.of(
            "schedule(Ljava/lang/Runnable;JLjava/util/concurrent/TimeUnit;)"
                + "Ljava/util/concurrent/Future;"),
        matched(
            Class.forName(VirtualThreadInstrumentation.TYPE),
            VirtualThreadInstrumentation.scheduleSites()));
    assertNull(ForkJoinWorkerThreadInstrumentation.checkShape());
    assertEquals(
        Set.of("hasKnownQueuedWork()Z"),
        matched(
            Class.forName(ForkJoinWorkerThreadInstrumentation.TYPE),
            ForkJoinWorkerThreadInstrumentation.sites()));
  }

  /**
   * Every class the agent weaves, woven from this JDK's own class file, passes the class-file
   * API's verifier (the frames it recomputed included), and names the hook it calls.
   */
  @Test
  void everyWovenJdkClassVerifies() throws Exception {
    List<JdkWeaver.Site> all = new ArrayList<>();
    all.addAll(VirtualThreadInstrumentation.sites());
    all.addAll(VirtualThreadInstrumentation.scheduleSites());
    all.addAll(ForkJoinWorkerThreadInstrumentation.sites());
    all.addAll(SyscallInstrumentations.sites());
    all.addAll(ManagementFactoryInstrumentation.sites());
    Set<String> types = new TreeSet<>();
    for (JdkWeaver.Site s : all) {
      types.add(s.type());
    }
    for (String type : types) {
      List<JdkWeaver.Site> here = all.stream().filter(s -> s.type().equals(type)).toList();
      byte[] woven = JdkWeaver.weave(classFile(type), here);
      List<VerifyError> errors = ClassFile.of().verify(woven);
      assertTrue(errors.isEmpty(), type + ": " + errors);
      assertTrue(
          new String(woven, java.nio.charset.StandardCharsets.ISO_8859_1)
              .contains("io/gmp4j/runtime/Hooks"),
          type);
    }
  }

  @Test
  void aSiteThatMatchesNothingFailsTheWeave() throws Exception {
    List<JdkWeaver.Site> none =
        List.of(
            new JdkWeaver.Site(
                FileInputStreamInstrumentation.TYPE,
                "read",
                "(JJJ)",
                false,
                JdkWeaver.Hook.SYSCALL_BRACKET));
    try {
      JdkWeaver.weave(classFile(FileInputStreamInstrumentation.TYPE), none);
      throw new AssertionError("woven without a matching method");
    } catch (IllegalStateException expected) {
      assertTrue(expected.getMessage().contains("read(JJJ)"), expected.getMessage());
    }
  }

  /** name + descriptor of the methods {@code sites} select among {@code type}'s own. */
  private static Set<String> matched(Class<?> type, List<JdkWeaver.Site> sites) throws IOException {
    Set<String> out = new TreeSet<>();
    for (MethodModel m : ClassFile.of().parse(classFile(type.getName())).methods()) {
      for (JdkWeaver.Site s : sites) {
        if (s.matches(m)) {
          out.add(m.methodName().stringValue() + m.methodType().stringValue());
        }
      }
    }
    return out;
  }

  private static byte[] classFile(String type) throws IOException {
    try (InputStream in =
        ClassLoader.getSystemResourceAsStream(type.replace('.', '/') + ".class")) {
      return in.readAllBytes();
    }
  }
}
