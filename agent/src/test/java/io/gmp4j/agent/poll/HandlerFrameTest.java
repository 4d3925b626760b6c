package io.gmp4j.agent.poll;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import org.junit.jupiter.api.Test;

/**
 * Issue 16: a countdown that replaces a back-edge {@code GOTO} inside a try range must declare, at
 * its {@code skip} label, locals that the range's handler accepts ('Handler frames' in
 * LoopScanner). Before the fix it copied the loop head's frame, where the locals of the loop body
 * are still top, and the JVM rejected ECJ's {@code Scanner.jumpOverMethodBody} with "Stack map
 * does not match the one at exception handler".
 */
class HandlerFrameTest {
  /**
   * {@code app.TryLoop.scan(int[])}, the shape of jumpOverMethodBody: in Java,
   *
   * <pre>
   * int found = 0, i = 0;
   * while (true) {
   *   int c = a[i % a.length] &amp; 3;
   *   if (c == 2) found++;
   *   try {
   *     if (c == 0) { i++; continue; }
   *     found += a[i++];
   *   } catch (IndexOutOfBoundsException e) {
   *     return found * 4 + c;
   *   }
   *   if (found &lt; 0) return -1;
   * }
   * </pre>
   *
   * {@code c} is declared in the loop body before the try, so the handler's frame has it as an int
   * and the loop head's frame does not. javac splits the try range around the {@code continue}'s
   * {@code GOTO head}; ECJ does not, and neither does this class: one range covers the {@code
   * GOTO}. The {@code if (c == 2)} jumps into the loop, which keeps the {@code continue} from the
   * countdown form with its own back-edge: its countdown needs a frame inside the try range.
   */
  static byte[] tryLoop() {
    ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_FRAMES | ClassWriter.COMPUTE_MAXS);
    cw.visit(Opcodes.V17, Opcodes.ACC_PUBLIC, "app/TryLoop", null, "java/lang/Object", null);
    MethodVisitor mv =
        cw.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, "scan", "([I)I", null, null);
    mv.visitCode();
    Label head = new Label();
    Label start = new Label();
    Label body = new Label();
    Label end = new Label();
    Label handler = new Label();
    Label after = new Label();
    mv.visitTryCatchBlock(start, end, handler, "java/lang/IndexOutOfBoundsException");
    mv.visitInsn(Opcodes.ICONST_0);
    mv.visitVarInsn(Opcodes.ISTORE, 1); // found
    mv.visitInsn(Opcodes.ICONST_0);
    mv.visitVarInsn(Opcodes.ISTORE, 2); // i
    mv.visitLabel(head);
    mv.visitVarInsn(Opcodes.ALOAD, 0);
    mv.visitVarInsn(Opcodes.ILOAD, 2);
    mv.visitVarInsn(Opcodes.ALOAD, 0);
    mv.visitInsn(Opcodes.ARRAYLENGTH);
    mv.visitInsn(Opcodes.IREM);
    mv.visitInsn(Opcodes.IALOAD);
    mv.visitInsn(Opcodes.ICONST_3);
    mv.visitInsn(Opcodes.IAND);
    mv.visitVarInsn(Opcodes.ISTORE, 3); // c
    Label odd = new Label();
    mv.visitVarInsn(Opcodes.ILOAD, 3);
    mv.visitInsn(Opcodes.ICONST_2);
    mv.visitJumpInsn(Opcodes.IF_ICMPNE, odd);
    mv.visitIincInsn(1, 1);
    mv.visitLabel(odd);
    mv.visitLabel(start);
    mv.visitVarInsn(Opcodes.ILOAD, 3);
    mv.visitJumpInsn(Opcodes.IFNE, body);
    mv.visitIincInsn(2, 1);
    mv.visitJumpInsn(Opcodes.GOTO, head); // continue, inside the try range
    mv.visitLabel(body);
    mv.visitVarInsn(Opcodes.ILOAD, 1);
    mv.visitVarInsn(Opcodes.ALOAD, 0);
    mv.visitVarInsn(Opcodes.ILOAD, 2);
    mv.visitIincInsn(2, 1);
    mv.visitInsn(Opcodes.IALOAD);
    mv.visitInsn(Opcodes.IADD);
    mv.visitVarInsn(Opcodes.ISTORE, 1);
    mv.visitLabel(end);
    mv.visitJumpInsn(Opcodes.GOTO, after);
    mv.visitLabel(handler);
    mv.visitVarInsn(Opcodes.ASTORE, 4);
    mv.visitVarInsn(Opcodes.ILOAD, 1);
    mv.visitInsn(Opcodes.ICONST_4);
    mv.visitInsn(Opcodes.IMUL);
    mv.visitVarInsn(Opcodes.ILOAD, 3);
    mv.visitInsn(Opcodes.IADD);
    mv.visitInsn(Opcodes.IRETURN);
    mv.visitLabel(after);
    mv.visitVarInsn(Opcodes.ILOAD, 1);
    mv.visitJumpInsn(Opcodes.IFGE, head);
    mv.visitInsn(Opcodes.ICONST_M1);
    mv.visitInsn(Opcodes.IRETURN);
    mv.visitMaxs(0, 0);
    mv.visitEnd();
    cw.visitEnd();
    return cw.toByteArray();
  }

  /** javac's version of {@link #tryLoop}, for the Scanner to read. */
  static final String TRY_LOOP_SOURCE =
      """
      package app;
      public class TryLoop {
        public static int scan(int[] a) {
          int found = 0, i = 0;
          while (true) {
            int c = a[i % a.length] & 3;
            if (c == 2) found++;
            try {
              if (c == 0) { i++; continue; }
              found += a[i++];
            } catch (IndexOutOfBoundsException e) {
              return found * 4 + c;
            }
            if (found < 0) return -1;
          }
        }
      }
      """;

  static final String SCANNER = "org/eclipse/jdt/internal/compiler/parser/Scanner";

  /** Scanner and its subclasses: the subclasses failed to load because Scanner did. */
  static final List<String> SCANNERS =
      List.of(
          SCANNER,
          "org/eclipse/jdt/internal/compiler/parser/JavadocScanner",
          "org/eclipse/jdt/internal/compiler/parser/RecoveryScanner",
          SCANNER + "$VanguardScanner",
          SCANNER + "$ScanContextDetector$1");

  @Test
  void continueInsideTryRangeCountsDownWithTheHandlersLocals() throws Exception {
    byte[] orig = tryLoop();
    PollInjector injector = new PollInjector(null, null, false);
    byte[] t = injector.transform(null, "app/TryLoop", orig);
    assertNotNull(t);
    assertEquals(2, injector.lastStats().countdownPolls(), injector.lastStats().toString());
    Disassembly.Method m = Disassembly.method(t, "scan");
    assertEquals(2, m.countdowns().size(), "countdowns");
    for (int[] c : m.countdowns()) { // the IFGT skips to the GOTO: one back-edge, a new frame
      assertEquals(c[0] + 6, c[3], "countdown at " + c[0] + " has its own back-edge");
    }
    ClassLoader before = new TestClasses.Loader(Map.of("app/TryLoop", orig));
    ClassLoader after = new TestClasses.Loader(Map.of("app/TryLoop", t));
    for (int n : new int[] {0, 1, 5, 1000, 5000}) {
      int[] a = new int[n + 1];
      for (int i = 0; i < a.length; i++) {
        a[i] = i * 7 + 1;
      }
      Object want = PollInjectorTest.call(before, "app.TryLoop", "scan", (Object) a);
      Object got = PollInjectorTest.call(after, "app.TryLoop", "scan", (Object) a);
      assertEquals(want, got, "scan over " + a.length);
    }
  }

  /**
   * Every class of the ECJ jar, transformed, in one loader (Scanner's package-private helpers must
   * share its runtime package): the five scanners verify, everything else that links verifies, and
   * the transformed Scanner reads the same tokens as the original.
   */
  @Test
  void ecjScannerAndItsSubclassesVerifyAndScanAlike() throws Exception {
    Map<String, byte[]> jar = TestClasses.jarOf(HandlerFrameTest.class.getClassLoader(), SCANNER);
    Map<String, byte[]> transformed = new HashMap<>();
    PollInjector injector = new PollInjector(null, null, false);
    int changed = 0;
    for (Map.Entry<String, byte[]> e : jar.entrySet()) {
      byte[] t = injector.transform(null, e.getKey(), e.getValue());
      if (e.getKey().equals(SCANNER)) {
        assertNotNull(t, SCANNER);
        assertTrue(injector.lastStats().countdownPolls() > 0, injector.lastStats().toString());
      }
      changed += t == null ? 0 : 1;
      transformed.put(e.getKey(), t == null ? e.getValue() : t);
    }
    assertTrue(changed > 100, "transformed " + changed + " of " + jar.size());
    ClassLoader after = new TestClasses.Loader(transformed);
    for (String name : SCANNERS) {
      Class<?> c = Class.forName(name.replace('/', '.'), false, after);
      assertEquals(after, c.getClassLoader(), name);
      c.getDeclaredMethods(); // links the class, so verifies every method
    }
    List<String> unlinked = new ArrayList<>();
    for (String name : jar.keySet()) {
      try {
        Class.forName(name.replace('/', '.'), false, after).getDeclaredMethods();
      } catch (NoClassDefFoundError e) { // optional dependencies: Ant, OSGi, the JDT core
        unlinked.add(name);
      }
    }
    assertTrue(unlinked.size() < jar.size() / 10, "did not link: " + unlinked);
    char[] source = javaSource().toCharArray();
    List<String> want = tokens(HandlerFrameTest.class.getClassLoader(), source);
    List<String> got = tokens(after, source);
    assertTrue(want.size() > 500, "tokens: " + want.size());
    assertEquals(want, got);
  }

  /** Every token of {@code source} from a fresh Scanner of {@code loader}, then a method skip. */
  private static List<String> tokens(ClassLoader loader, char[] source) throws Exception {
    Class<?> c = Class.forName(SCANNER.replace('/', '.'), true, loader);
    Object scanner = c.getConstructor().newInstance();
    c.getMethod("setSource", char[].class).invoke(scanner, (Object) source);
    Method next = c.getMethod("getNextToken");
    Method text = c.getMethod("getCurrentTokenSource");
    List<String> out = new ArrayList<>();
    int eof =
        Class.forName("org.eclipse.jdt.internal.compiler.parser.TerminalTokens", false, loader)
            .getField("TokenNameEOF")
            .getInt(null);
    for (int tok = (int) next.invoke(scanner); tok != eof; tok = (int) next.invoke(scanner)) {
      out.add(tok + ":" + new String((char[]) text.invoke(scanner)));
    }
    // jumpOverMethodBody, the method that failed verification: skip a body from its '{'.
    c.getMethod("setSource", char[].class)
        .invoke(scanner, (Object) "{ a(); /* } */ { } } x".toCharArray());
    next.invoke(scanner);
    c.getMethod("jumpOverMethodBody").invoke(scanner);
    out.add(
        "after jump: " + next.invoke(scanner) + ":" + new String((char[]) text.invoke(scanner)));
    return out;
  }

  /** A Java source with comments, strings, text blocks and nested bodies: this test's own. */
  private static String javaSource() {
    return PollInjectorTest.SHAPES
        + TRY_LOOP_SOURCE
        + "class Z { String s = \"\"\"\n  x\n  \"\"\"; }";
  }
}
