package io.gmp4j.agent.poll;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gmp4j.agent.poll.Disassembly.Method;
import io.gmp4j.agent.poll.PollInjector.Stats;
import java.io.InputStream;
import java.net.URL;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarInputStream;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * 'Old class files' in PollInjector: every class-file version from 45 (Java 1.1) to 69 (Java 25)
 * comes out of the injector with polls, verifies, and computes what the class did before. The
 * classes are javac's loop shapes rewritten by ASM's ClassWriter at each version (frames dropped
 * below 50), and hand-written ones for what javac no longer emits: a JSR subroutine in a loop, and
 * a strip-minable loop with a value on the operand stack. They are defined by {@link
 * TestClasses.Loader}, whose classes the JVM verifies (BytecodeVerificationRemote, on by default);
 * {@link #theJvmVerifiesEveryVersionHere} proves that it does.
 */
class OldClassFilesTest {
  static final String SHAPES =
      """
      package old;
      public class Shapes {
        static int[] T = {1, 2, 3, 4, 5, 6, 7, 8};
        public static int whileLoop(int n) { int s = 0, i = 0; while (s < n) { s += ++i; } return s; }
        public static int doWhile(int n) { int i = 0, s = 0; do { s += T[i & 7]; i += 2; } while (i < n); return s; }
        public static long counted(int n) {
          int[] a = new int[n];
          for (int i = 0; i < a.length; i++) a[i] = i * 3;
          long s = 0;
          for (int i = 0; i < n; i++) s += a[i];
          return s;
        }
        public static long countedDown(int n) { long s = 0; for (int i = n; i > 0; i--) s += 5L * i; return s; }
        public static long nested(int n) {
          long s = 0;
          int k = n >> 5;
          for (int i = 0; i < k; i++) for (int j = 0; j < n; j++) s += ((long) i * j) ^ T[j & 7];
          return s;
        }
        public static int switchLoop(int n) {
          int state = 0, steps = 0, x = n;
          while (true) {
            switch (state) {
              case 0: if (x <= 0) return steps; state = (x & 1) == 0 ? 1 : 2; break;
              case 1: x /= 2; state = 0; break;
              case 2: x = x - 1; state = 0; break;
              default: throw new IllegalStateException();
            }
            steps++;
          }
        }
        public static int tryFinallyLoop(int n) {
          int s = 0, count = 0;
          for (int i = 0; i < n; i++) {
            try { s += 100 / (i % 7 - 3); } catch (ArithmeticException e) { s--; } finally { count++; }
          }
          return s + count;
        }
        public static int mergedTypes(int n) {
          Number x = null;
          int s = 0;
          for (int i = 0; i < n; i++) { x = (i & 1) == 0 ? (Number) Integer.valueOf(i) : (Number) Long.valueOf(i); s += x.intValue(); }
          return x == null ? s : s + x.intValue();
        }
      }
      """;

  static final int[] INPUTS = {0, 1, 7, 300, 4097, 9000};

  static byte[] shapes; // as javac wrote it, version 69

  @BeforeAll
  static void compile() {
    shapes = TestClasses.compile(Map.of("old.Shapes", SHAPES)).get("old/Shapes");
  }

  /** ASM's version word for a major version: 45 is Java 1.1's 45.3 ({@code V1_1}). */
  static int asmVersion(int major) {
    return major == 45 ? Opcodes.V1_1 : major;
  }

  /**
   * {@code classfile} rewritten by ASM's ClassWriter at {@code major}, with its stack-map frames
   * dropped below 50, where no JVM reads them.
   */
  static byte[] atVersion(byte[] classfile, int major) {
    ClassWriter w = new ClassWriter(0);
    new ClassReader(classfile)
        .accept(
            new ClassVisitor(Opcodes.ASM9, w) {
              @Override
              public void visit(
                  int v, int access, String name, String sig, String sup, String[] ifs) {
                super.visit(asmVersion(major), access, name, sig, sup, ifs);
              }

              @Override
              public MethodVisitor visitMethod(
                  int access, String name, String desc, String sig, String[] exceptions) {
                MethodVisitor mv = super.visitMethod(access, name, desc, sig, exceptions);
                return major >= 50
                    ? mv
                    : new MethodVisitor(Opcodes.ASM9, mv) {
                      @Override
                      public void visitFrame(
                          int type, int nLocal, Object[] local, int nStack, Object[] stack) {}
                    };
              }
            },
            ClassReader.EXPAND_FRAMES);
    return w.toByteArray();
  }

  /** Calls every public static int method of {@code cls} on {@link #INPUTS}. */
  static List<Object> results(Map<String, byte[]> classes, String cls) throws Exception {
    Class<?> c = Class.forName(cls, true, new TestClasses.Loader(classes));
    List<Object> out = new ArrayList<>();
    java.lang.reflect.Method[] methods = c.getDeclaredMethods();
    java.util.Arrays.sort(
        methods, java.util.Comparator.comparing(java.lang.reflect.Method::getName));
    for (java.lang.reflect.Method m : methods) {
      if (java.lang.reflect.Modifier.isPublic(m.getModifiers()) && m.getParameterCount() == 1) {
        for (int n : INPUTS) {
          out.add(m.getName() + "(" + n + ") = " + m.invoke(null, n));
        }
      }
    }
    return out;
  }

  @Test
  void theJvmVerifiesEveryVersionHere() {
    for (int v = 45; v <= 69; v++) {
      Map<String, byte[]> broken = Map.of("old/Broken", broken(v));
      int major = v;
      assertThrows(
          VerifyError.class,
          () -> Class.forName("old.Broken", true, new TestClasses.Loader(broken)),
          () -> "version " + major + ": an int returned as an Object was not rejected");
    }
  }

  /** Every javac loop shape, at every version: polls everywhere, same placement, same results. */
  @Test
  void everyLoopShapeAtEveryVersionGetsPollsAndVerifies() throws Exception {
    PollInjector injector = new PollInjector(null, null, false, new Coverage());
    Stats current = null;
    for (int v = 69; v >= 45; v--) {
      byte[] original = atVersion(shapes, v);
      byte[] polled = injector.transform(null, "old/Shapes", original);
      assertNotNull(polled, "version " + v);
      Stats stats = injector.lastStats();
      if (current == null) {
        current = stats;
        assertTrue(stats.stripMined() >= 4 && stats.countdownPolls() >= 3, stats::toString);
      }
      // Frames or none, the scanner places the polls alike.
      assertEquals(current, stats, "version " + v);
      assertEquals(v, new ClassReader(polled).readUnsignedShort(6));
      for (Method m : Disassembly.methods(polled).values()) {
        if (!m.backwardBranches().isEmpty()) {
          assertTrue(m.everyCyclePolls(), "version " + v + " " + m.name() + ": unpolled cycle");
        }
      }
      assertEquals(
          results(Map.of("old/Shapes", original), "old.Shapes"),
          results(Map.of("old/Shapes", polled), "old.Shapes"),
          "version " + v);
    }
  }

  /**
   * A strip-minable loop entered with a value under it on the operand stack: only a frameless
   * method can be rewritten so (a frame would show the depth, and the framed path wants it
   * empty), and its max_stack must grow by the bound's whole peak over the old max_stack.
   */
  @Test
  void stripMinedLoopOverANonEmptyStackHasRoomForItsBound() throws Exception {
    for (int v = 45; v <= 69; v++) {
      byte[] original = hand(v, false);
      PollInjector injector = new PollInjector(null, null, false, new Coverage());
      byte[] polled = injector.transform(null, "old/Hand", original);
      assertNotNull(polled);
      assertEquals(v < 50 ? 1 : 0, injector.lastStats().stripMined(), "version " + v);
      assertTrue(Disassembly.method(polled, "stackUnderLoop").everyCyclePolls());
      assertEquals(
          results(Map.of("old/Hand", original), "old.Hand"),
          results(Map.of("old/Hand", polled), "old.Hand"),
          "version " + v);
    }
  }

  /**
   * Below 50, methods with JSR subroutines get their subroutines inlined and their loops polled
   * ('Subroutines' in SubroutineInliner); the result verifies and computes what the original did.
   * At 50, where the JVM still accepts subroutines but would need frames for the inlined code,
   * the method is left alone and listed, and the rest of its class polls.
   */
  @Test
  void subroutinesAreInlinedAndTheirLoopsPoll() throws Exception {
    for (int v = 45; v <= 50; v++) {
      byte[] original = hand(v, true);
      Coverage coverage = new Coverage();
      PollInjector injector = new PollInjector(null, null, false, coverage);
      byte[] polled = injector.transform(null, "old/Hand", original);
      assertNotNull(polled);
      Map<String, Method> before = Disassembly.methods(original);
      Map<String, Method> after = Disassembly.methods(polled);
      assertTrue(after.get("stackUnderLoop(I)I").polls() > 0, "version " + v);
      assertEquals(1, coverage.instrumented());
      for (String m : List.of("jsrLoop(I)I", "finallyLoop(I)I")) {
        if (v < 50) {
          assertTrue(
              after.get(m).insns().stream()
                  .noneMatch(i -> i.op() == Opcodes.JSR || i.op() == Opcodes.RET),
              m + " " + v);
          assertTrue(after.get(m).polls() > 0 && after.get(m).everyCyclePolls(), m + " " + v);
        } else {
          assertEquals(before.get(m).insns().size(), after.get(m).insns().size(), m);
          assertEquals(0, after.get(m).polls(), m);
          assertTrue(coverage.table().contains("old version: old.Hand." + m), coverage.table());
        }
      }
      if (v < 50) {
        assertTrue(
            coverage.table().contains("left alone (too large, old version, failed):\n" + "  none"),
            coverage.table());
      }
      assertEquals(
          results(Map.of("old/Hand", original), "old.Hand"),
          results(Map.of("old/Hand", polled), "old.Hand"),
          "version " + v);
    }
    // Alone in its class, the JSR method makes the class instrumented, not old version.
    Coverage coverage = new Coverage();
    byte[] onlyJsr = jsrOnly();
    byte[] polled =
        new PollInjector(null, null, false, coverage).transform(null, "old/Jsr", onlyJsr);
    assertNotNull(polled);
    assertEquals(1, coverage.instrumented());
    assertEquals(0, coverage.skipped(Coverage.Reason.OLD_VERSION));
    assertEquals(
        results(Map.of("old/Jsr", onlyJsr), "old.Jsr"),
        results(Map.of("old/Jsr", polled), "old.Jsr"));
  }

  /**
   * A subroutine that would pass 64 KB once copied into each of its six callers is not inlined:
   * the method stays as it was and is counted as old version ('Subroutines' step 3).
   */
  @Test
  void subroutineTooLargeToInlineStaysAsItWas() throws Exception {
    byte[] original = bigSubroutine();
    Coverage coverage = new Coverage();
    assertNull(new PollInjector(null, null, false, coverage).transform(null, "old/Big", original));
    assertEquals(1, coverage.skipped(Coverage.Reason.OLD_VERSION));
    assertTrue(coverage.table().contains("old version: old.Big.big(I)I"), coverage.table());
    assertEquals(
        List.of(
            "big(0) = 0",
            "big(1) = 33000",
            "big(7) = 231000",
            "big(300) = 9900000",
            "big(4097) = 135201000",
            "big(9000) = 297000000"),
        results(Map.of("old/Big", original), "old.Big"));
  }

  /**
   * A real Java 5 jar: every class of commons-math3 3.6.1 that has loops comes out verifiable,
   * and Array2DRowRealMatrix.multiply polls and still multiplies.
   */
  @Test
  void commonsMath3ClassesGetPollsAndVerify() throws Exception {
    URL jar = Array2DRowRealMatrix.class.getProtectionDomain().getCodeSource().getLocation();
    Map<String, byte[]> original = new HashMap<>();
    try (InputStream in = jar.openStream();
        JarInputStream j = new JarInputStream(in)) {
      for (JarEntry e = j.getNextJarEntry(); e != null; e = j.getNextJarEntry()) {
        if (e.getName().endsWith(".class")) {
          original.put(e.getName().substring(0, e.getName().length() - 6), j.readAllBytes());
        }
      }
    }
    byte[] matrix = original.get("org/apache/commons/math3/linear/Array2DRowRealMatrix");
    assertEquals(49, new ClassReader(matrix).readUnsignedShort(6), "commons-math3 is Java 5");
    Coverage coverage = new Coverage();
    PollInjector injector = new PollInjector(null, null, false, coverage);
    Map<String, byte[]> polled = new HashMap<>();
    original.forEach(
        (name, bytes) -> {
          byte[] t = injector.transform(null, name, bytes);
          polled.put(name, t == null ? bytes : t);
        });
    assertEquals(0, coverage.skipped(Coverage.Reason.FAILED), coverage.table());
    assertTrue(coverage.instrumented() > 300, coverage::summaryLine);
    System.out.println("commons-math3 3.6.1: " + coverage.summaryLine());
    Method multiply =
        Disassembly.methods(polled.get("org/apache/commons/math3/linear/Array2DRowRealMatrix"))
            .get(
                "multiply(Lorg/apache/commons/math3/linear/Array2DRowRealMatrix;)"
                    + "Lorg/apache/commons/math3/linear/Array2DRowRealMatrix;");
    assertTrue(multiply.everyCyclePolls() && multiply.polls() > 0);

    // Link every instrumented class: verification runs at link time, without initialisers.
    TestClasses.Loader loader = new TestClasses.Loader(polled);
    int linked = 0;
    for (String name : polled.keySet()) {
      if (polled.get(name) != original.get(name)) {
        Class<?> c = Class.forName(name.replace('/', '.'), false, loader);
        verify(c);
        linked++;
      }
    }
    assertEquals(coverage.instrumented(), linked);

    double[][] a = new double[37][37];
    for (int i = 0; i < 37; i++) {
      for (int k = 0; k < 37; k++) {
        a[i][k] = (i * 31 + k * 17) % 11 - 5;
      }
    }
    Object expected = product(new TestClasses.Loader(original), a);
    Object actual = product(loader, a);
    assertArrayEquals((double[][]) expected, (double[][]) actual);
  }

  /**
   * Links, and so verifies, {@code c} by initialising it: commons-math3's static initialisers
   * only fill constant tables. A VerifyError is a LinkageError and goes through; an initialiser
   * that throws has passed verification already.
   */
  private static void verify(Class<?> c) throws ClassNotFoundException {
    try {
      Class.forName(c.getName(), true, c.getClassLoader());
    } catch (ExceptionInInitializerError e) {
      // verified, then failed in <clinit>
    }
  }

  private static Object product(ClassLoader loader, double[][] a) throws Exception {
    Class<?> m =
        Class.forName("org.apache.commons.math3.linear.Array2DRowRealMatrix", true, loader);
    Object x = m.getConstructor(double[][].class).newInstance((Object) a);
    Object p = m.getMethod("multiply", m).invoke(x, x);
    return m.getMethod("getData").invoke(p);
  }

  /** {@code public static Object bad(int n) { return n; }} without the boxing: never verifies. */
  static byte[] broken(int major) {
    ClassWriter w = new ClassWriter(0);
    w.visit(
        asmVersion(major),
        Opcodes.ACC_PUBLIC | Opcodes.ACC_SUPER,
        "old/Broken",
        null,
        "java/lang/Object",
        null);
    MethodVisitor mv =
        w.visitMethod(
            Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, "bad", "(I)Ljava/lang/Object;", null, null);
    mv.visitCode();
    mv.visitVarInsn(Opcodes.ILOAD, 0);
    mv.visitInsn(Opcodes.ARETURN);
    mv.visitMaxs(1, 1);
    mv.visitEnd();
    w.visitEnd();
    return w.toByteArray();
  }

  /**
   * {@code old.Hand}: {@code stackUnderLoop(n) = 7 + 3n}, whose counted loop runs with the 7
   * on the operand stack; with {@code jsr}, also {@code jsrLoop(n) = n}, whose loop body is a
   * JSR to a subroutine that increments (javac 1.4's {@code finally}), and {@code finallyLoop(n)},
   * a try/catch/finally in a loop as javac 1.4 compiled it. Frames by ASM from 50.
   */
  static byte[] hand(int major, boolean jsr) {
    ClassWriter w = new ClassWriter(major >= 50 && !jsr ? ClassWriter.COMPUTE_FRAMES : 0);
    w.visit(
        asmVersion(major),
        Opcodes.ACC_PUBLIC | Opcodes.ACC_SUPER,
        "old/Hand",
        null,
        "java/lang/Object",
        null);
    MethodVisitor mv =
        w.visitMethod(
            Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, "stackUnderLoop", "(I)I", null, null);
    mv.visitCode();
    mv.visitInsn(Opcodes.ICONST_0);
    mv.visitVarInsn(Opcodes.ISTORE, 2); // s
    mv.visitIntInsn(Opcodes.BIPUSH, 7); // stays on the stack through the loop
    mv.visitInsn(Opcodes.ICONST_0);
    mv.visitVarInsn(Opcodes.ISTORE, 1); // i
    Label head = new Label();
    Label exit = new Label();
    mv.visitLabel(head);
    mv.visitVarInsn(Opcodes.ILOAD, 1);
    mv.visitVarInsn(Opcodes.ILOAD, 0);
    mv.visitJumpInsn(Opcodes.IF_ICMPGE, exit);
    mv.visitIincInsn(2, 3);
    mv.visitIincInsn(1, 1);
    mv.visitJumpInsn(Opcodes.GOTO, head);
    mv.visitLabel(exit);
    mv.visitVarInsn(Opcodes.ILOAD, 2);
    mv.visitInsn(Opcodes.IADD);
    mv.visitInsn(Opcodes.IRETURN);
    mv.visitMaxs(3, 3);
    mv.visitEnd();
    if (jsr) {
      jsrLoop(w);
      finallyLoop(w);
    }
    w.visitEnd();
    return w.toByteArray();
  }

  /** A version-48 class {@code old.Jsr} with {@code jsrLoop} only. */
  static byte[] jsrOnly() {
    ClassWriter w = new ClassWriter(0);
    w.visit(
        Opcodes.V1_4,
        Opcodes.ACC_PUBLIC | Opcodes.ACC_SUPER,
        "old/Jsr",
        null,
        "java/lang/Object",
        null);
    jsrLoop(w);
    w.visitEnd();
    return w.toByteArray();
  }

  /**
   * {@code old.Big.big(n) = 33000 n} in a version-48 class: a loop whose body calls one
   * subroutine from six places, a subroutine of 5,500 {@code iinc} (16.5 KB): six copies pass 64
   * KB.
   */
  static byte[] bigSubroutine() {
    ClassWriter w = new ClassWriter(0);
    w.visit(
        Opcodes.V1_4,
        Opcodes.ACC_PUBLIC | Opcodes.ACC_SUPER,
        "old/Big",
        null,
        "java/lang/Object",
        null);
    MethodVisitor mv =
        w.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, "big", "(I)I", null, null);
    mv.visitCode();
    mv.visitInsn(Opcodes.ICONST_0);
    mv.visitVarInsn(Opcodes.ISTORE, 1); // s
    mv.visitInsn(Opcodes.ICONST_0);
    mv.visitVarInsn(Opcodes.ISTORE, 2); // i
    Label head = new Label();
    Label exit = new Label();
    Label sub = new Label();
    mv.visitLabel(head);
    mv.visitVarInsn(Opcodes.ILOAD, 2);
    mv.visitVarInsn(Opcodes.ILOAD, 0);
    mv.visitJumpInsn(Opcodes.IF_ICMPGE, exit);
    for (int k = 0; k < 6; k++) {
      mv.visitJumpInsn(Opcodes.JSR, sub);
    }
    mv.visitIincInsn(2, 1);
    mv.visitJumpInsn(Opcodes.GOTO, head);
    mv.visitLabel(exit);
    mv.visitVarInsn(Opcodes.ILOAD, 1);
    mv.visitInsn(Opcodes.IRETURN);
    mv.visitLabel(sub);
    mv.visitVarInsn(Opcodes.ASTORE, 3);
    for (int k = 0; k < 5500; k++) {
      mv.visitIincInsn(1, 1);
    }
    mv.visitVarInsn(Opcodes.RET, 3);
    mv.visitMaxs(2, 4);
    mv.visitEnd();
    w.visitEnd();
    return w.toByteArray();
  }

  /**
   * {@code finallyLoop(n)}: OldClassFilesTest's {@code tryFinallyLoop} as javac 1.4 compiled it,
   * the {@code finally} a subroutine called from the end of the try block, from the end of the
   * catch block, and from the catch-any handler that rethrows.
   */
  private static void finallyLoop(ClassWriter w) {
    MethodVisitor mv =
        w.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, "finallyLoop", "(I)I", null, null);
    mv.visitCode();
    Label head = new Label();
    Label exit = new Label();
    Label tryStart = new Label();
    Label tryEnd = new Label();
    Label catchArith = new Label();
    Label catchAny = new Label();
    Label sub = new Label();
    Label next = new Label();
    mv.visitTryCatchBlock(tryStart, tryEnd, catchArith, "java/lang/ArithmeticException");
    mv.visitTryCatchBlock(tryStart, catchAny, catchAny, null);
    mv.visitInsn(Opcodes.ICONST_0);
    mv.visitVarInsn(Opcodes.ISTORE, 1); // s
    mv.visitInsn(Opcodes.ICONST_0);
    mv.visitVarInsn(Opcodes.ISTORE, 2); // count
    mv.visitInsn(Opcodes.ICONST_0);
    mv.visitVarInsn(Opcodes.ISTORE, 3); // i
    mv.visitLabel(head);
    mv.visitVarInsn(Opcodes.ILOAD, 3);
    mv.visitVarInsn(Opcodes.ILOAD, 0);
    mv.visitJumpInsn(Opcodes.IF_ICMPGE, exit);
    mv.visitLabel(tryStart); // s += 100 / (i % 7 - 3)
    mv.visitVarInsn(Opcodes.ILOAD, 1);
    mv.visitIntInsn(Opcodes.BIPUSH, 100);
    mv.visitVarInsn(Opcodes.ILOAD, 3);
    mv.visitIntInsn(Opcodes.BIPUSH, 7);
    mv.visitInsn(Opcodes.IREM);
    mv.visitInsn(Opcodes.ICONST_3);
    mv.visitInsn(Opcodes.ISUB);
    mv.visitInsn(Opcodes.IDIV);
    mv.visitInsn(Opcodes.IADD);
    mv.visitVarInsn(Opcodes.ISTORE, 1);
    mv.visitLabel(tryEnd);
    mv.visitJumpInsn(Opcodes.JSR, sub);
    mv.visitJumpInsn(Opcodes.GOTO, next);
    mv.visitLabel(catchArith); // s--
    mv.visitVarInsn(Opcodes.ASTORE, 4);
    mv.visitIincInsn(1, -1);
    mv.visitJumpInsn(Opcodes.JSR, sub);
    mv.visitJumpInsn(Opcodes.GOTO, next);
    mv.visitLabel(catchAny);
    mv.visitVarInsn(Opcodes.ASTORE, 5);
    mv.visitJumpInsn(Opcodes.JSR, sub);
    mv.visitVarInsn(Opcodes.ALOAD, 5);
    mv.visitInsn(Opcodes.ATHROW);
    mv.visitLabel(sub); // finally { count++; }
    mv.visitVarInsn(Opcodes.ASTORE, 6);
    mv.visitIincInsn(2, 1);
    mv.visitVarInsn(Opcodes.RET, 6);
    mv.visitLabel(next);
    mv.visitIincInsn(3, 1);
    mv.visitJumpInsn(Opcodes.GOTO, head);
    mv.visitLabel(exit);
    mv.visitVarInsn(Opcodes.ILOAD, 1);
    mv.visitVarInsn(Opcodes.ILOAD, 2);
    mv.visitInsn(Opcodes.IADD);
    mv.visitInsn(Opcodes.IRETURN);
    mv.visitMaxs(4, 7);
    mv.visitEnd();
  }

  private static void jsrLoop(ClassWriter w) {
    MethodVisitor mv =
        w.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, "jsrLoop", "(I)I", null, null);
    mv.visitCode();
    mv.visitInsn(Opcodes.ICONST_0);
    mv.visitVarInsn(Opcodes.ISTORE, 1); // s
    mv.visitInsn(Opcodes.ICONST_0);
    mv.visitVarInsn(Opcodes.ISTORE, 2); // i
    Label head = new Label();
    Label exit = new Label();
    Label sub = new Label();
    mv.visitLabel(head);
    mv.visitVarInsn(Opcodes.ILOAD, 2);
    mv.visitVarInsn(Opcodes.ILOAD, 0);
    mv.visitJumpInsn(Opcodes.IF_ICMPGE, exit);
    mv.visitJumpInsn(Opcodes.JSR, sub);
    mv.visitIincInsn(2, 1);
    mv.visitJumpInsn(Opcodes.GOTO, head);
    mv.visitLabel(exit);
    mv.visitVarInsn(Opcodes.ILOAD, 1);
    mv.visitInsn(Opcodes.IRETURN);
    mv.visitLabel(sub);
    mv.visitVarInsn(Opcodes.ASTORE, 3);
    mv.visitIincInsn(1, 1);
    mv.visitVarInsn(Opcodes.RET, 3);
    mv.visitMaxs(2, 4);
    mv.visitEnd();
  }
}
