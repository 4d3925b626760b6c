package io.gmp4j.agent.poll;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gmp4j.agent.poll.Disassembly.Method;
import io.gmp4j.agent.poll.PollInjector.Stats;
import java.lang.reflect.InvocationTargetException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Per loop shape: a poll is placed where 'Poll placement' in PollInjector says, every cycle of the
 * transformed method either polls or is a strip-mined inner loop, and the transformed class
 * verifies, runs and computes what the original does.
 */
class PollInjectorTest {
  static final String SHAPES =
      """
      package app;
      import java.util.List;
      import java.util.function.IntUnaryOperator;
      public class Shapes {
        static final int CLINIT_SUM;
        static { int s = 0; int i = 0; while (s < 100) { s += ++i; } CLINIT_SUM = s; }

        public static int whileLoop(int n) { int s = 0, i = 0; while (s < n) { s += ++i; } return s; }

        public static int doWhile(int n) { int i = 0; do { i += 2; } while (i < n); return i; }

        public static int forBreakContinue(int[] a, int cap) {
          int s = 0;
          for (int i = 0; i < a.length; i++) {
            if (a[i] < 0) continue;
            if (s > cap) break;
            s += Math.abs(a[i]);
          }
          return s;
        }

        public static int labeledContinue(int n) {
          int c = 0;
          outer:
          for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
              if (j > i) continue outer;
              c += j;
            }
          }
          return c;
        }

        public static long enhancedArray(long[] a) { long s = 0; for (long x : a) s += x; return s; }

        public static int enhancedIterable(List<Integer> xs) { int s = 0; for (int x : xs) s += x; return s; }

        public static int stateMachine(int n) {
          int state = 0, c = 0;
          while (true) {
            switch (state) {
              case 0: c++; state = c < n ? 0 : 1; continue;
              case 1: return c;
              default: state = 0;
            }
          }
        }

        static final class Node {
          final int v; final Node next;
          Node(int v, Node next) { this.v = v; this.next = next; }
        }

        public static int listWalk(int n) {
          Node h = null;
          for (int i = 0; i < n; i++) h = new Node(i, h);
          int s = 0;
          for (Node p = h; p != null; p = p.next) s += p.v;
          return s;
        }

        public static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

        public static int lambdaLoop(int n) {
          IntUnaryOperator f = m -> { int s = 0, k = m; while (k > 0) { s += k; k -= 1; } return s; };
          return f.applyAsInt(n);
        }

        public static int clinitSum() { return CLINIT_SUM; }
      }
      """;

  static final String KERNELS =
      """
      package app;
      public class Kernels {
        public static long rangeSum(int from, int to) { long s = 0; for (int i = from; i < to; i++) s += i; return s; }
        public static long step7(int from, int to) { long s = 0; for (int i = from; i < to; i += 7) s += i; return s; }
        public static long step30000(int from, int to) { long s = 0; for (int i = from; i < to; i += 30000) s += i ^ (s >>> 7); return s; }
        public static long whileCounted(int n) { long s = 0; int i = 0; while (i < n) { s += 3L * i; i++; } return s; }
        public static int arraySum(int[] a) { int s = 0; for (int i = 0; i < a.length; i++) s += a[i]; return s; }
        public static void axpy(float[] x, float[] y, float a) { for (int i = 0; i < y.length; i++) y[i] += a * x[i]; }
        public static int breakAt(int[] a, int v) { int i = 0; for (; i < a.length; i++) { if (a[i] == v) break; } return i; }
        public static int oddSum(int[] a) { int s = 0; for (int i = 0; i < a.length; i++) { if ((a[i] & 1) == 0) continue; s += a[i]; } return s; }
        public static long rows(int[][] m) {
          long s = 0;
          for (int r = 0; r < m.length; r++) { int[] row = m[r]; for (int c = 0; c < row.length; c++) s += row[c] * (long) r; }
          return s;
        }
        public static double dot(double[] a, double[] b, int n) { double s = 0; for (int i = 0; i < n; i++) s += a[i] * b[i]; return s; }
        public static int wideLocals(long x, double y, int n) {
          long acc = x; double d = y; int c = 0;
          for (int i = 0; i < n; i++) { acc += i; if ((i & 3) == 0) { d += 1.0; } c++; }
          return c + (int) acc + (int) d;
        }
        public static int fillFrom(int[] a, int i) { for (; i < a.length; i++) a[i] = i; return a.length; }
        public static int early(int n) { return new Early(n).v; }
        static class Base { int m() { return 1; } }
        static final class A extends Base { int m() { return 2; } }
        static final class B extends Base {}
        // b is Base at the loop head only because javac knew the common superclass: frames
        // recomputed with "java/lang/Object" for every merge would fail b.m() in the verifier.
        public static int merged(boolean f, int n) {
          Base b = f ? new A() : new B();
          int s = 0;
          for (int i = 0; i < n; i++) s += i;
          return s + b.m();
        }
        public static final class Early {
          public final int v;
          public Early(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; super(); this.v = s; }
        }
      }
      """;

  static final String OTHER =
      """
      package other;
      public class Skipped { public static int loop(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; return s; } }
      """;

  static Map<String, byte[]> original;

  @BeforeAll
  static void compile() {
    original =
        TestClasses.compile(
            Map.of("app.Shapes", SHAPES, "app.Kernels", KERNELS, "other.Skipped", OTHER));
  }

  /** Transforms every class with {@code injector}; a null result keeps the original bytes. */
  static Map<String, byte[]> transformAll(PollInjector injector, Map<String, byte[]> classes) {
    Map<String, byte[]> out = new HashMap<>();
    classes.forEach(
        (name, bytes) -> {
          byte[] t = injector.transform(null, name, bytes);
          out.put(name, t == null ? bytes : t);
        });
    return out;
  }

  static Object call(ClassLoader loader, String cls, String method, Object... args)
      throws Exception {
    Class<?> c = Class.forName(cls, true, loader);
    for (java.lang.reflect.Method m : c.getMethods()) {
      if (m.getName().equals(method) && m.getParameterCount() == args.length) {
        try {
          return m.invoke(null, args);
        } catch (InvocationTargetException e) {
          throw new AssertionError(cls + "." + method, e.getCause());
        }
      }
    }
    throw new AssertionError("no " + cls + "." + method);
  }

  private static void assertEveryCyclePolls(Method m) {
    assertTrue(m.everyCyclePolls(m.strips()), m.name() + ": a cycle without a poll");
  }

  /**
   * The poll is the instruction right before each backward branch that is not part of a strip
   * (whose inner back-edge has none and whose outer one is checked by {@link Method#strips}).
   */
  private static void assertPolledBackEdges(Method m, int expected) {
    List<Integer> back = m.backwardBranches();
    List<int[]> strips = m.strips();
    int polled = 0;
    for (int k : back) {
      if (strips.stream().noneMatch(e -> e[0] == k || e[2] == k)) {
        assertTrue(m.insns().get(k - 1).isPoll(), m.name() + ": no poll before back-edge " + k);
        polled++;
      }
    }
    assertEquals(expected, polled, m.name() + ": polled back-edges");
  }

  private static byte[] shapes(PollInjector injector) {
    byte[] t = injector.transform(null, "app/Shapes", original.get("app/Shapes"));
    assertNotNull(t);
    return t;
  }

  /**
   * A method longer than the scanner's first buffer (64 instructions), whose 65th instruction is
   * a local-variable access: the buffer must grow before that access is recorded. Seen in the
   * wild on a plain main() method, which the agent then left uninstrumented.
   */
  @Test
  void longMethodGrowsTheScannerBuffers() throws Exception {
    // 8 instructions here, then 8 per line: the 65th (index 64) is an ILOAD.
    StringBuilder body = new StringBuilder("int a = n, b = 1, s = 0, z = 0;\n");
    for (int i = 0; i < 40; i++) {
      body.append("a = a + b; b = a - b;\n"); // ILOAD ILOAD IADD ISTORE, ILOAD ILOAD ISUB ISTORE
    }
    body.append("for (int i = 0; i < n; i++) { s += a ^ i; }\nreturn s + b + z;\n");
    String src = "package app; public class Long { public static int f(int n) {\n" + body
        + "} }";
    Map<String, byte[]> orig = TestClasses.compile(Map.of("app.Long", src));
    byte[] t = new PollInjector(null, null, false).transform(null, "app/Long", orig.get("app/Long"));
    assertNotNull(t);
    Object want = call(new TestClasses.Loader(orig), "app.Long", "f", 100);
    assertEquals(want, call(new TestClasses.Loader(Map.of("app/Long", t)), "app.Long", "f", 100));
  }

  @Test
  void whileLoopPollsItsBackEdge() {
    Method m = Disassembly.method(shapes(new PollInjector(null, null, false)), "whileLoop");
    assertPolledBackEdges(m, 1);
    assertEveryCyclePolls(m);
  }

  @Test
  void doWhilePollsItsConditionalBackEdge() {
    Method m = Disassembly.method(shapes(new PollInjector(null, null, false)), "doWhile");
    assertPolledBackEdges(m, 1);
    assertEquals(Opcodes.IF_ICMPLT, m.insns().get(m.backwardBranches().get(0)).op());
    assertEveryCyclePolls(m);
  }

  @Test
  void forWithCallBreakAndContinueIsPolledPerIteration() {
    Method m = Disassembly.method(shapes(new PollInjector(null, null, false)), "forBreakContinue");
    assertTrue(m.strips().isEmpty(), "a loop that calls is not strip-mined");
    assertPolledBackEdges(m, 1);
    assertEveryCyclePolls(m);
  }

  @Test
  void labeledContinueStripMinesInnerAndPollsOuter() {
    Method m = Disassembly.method(shapes(new PollInjector(null, null, false)), "labeledContinue");
    assertEquals(1, m.strips().size(), "inner loop strip-mined");
    assertPolledBackEdges(m, 1); // the outer loop
    assertEveryCyclePolls(m);
  }

  @Test
  void enhancedForOverArrayIsStripMined() {
    Method m = Disassembly.method(shapes(new PollInjector(null, null, false)), "enhancedArray");
    assertEquals(1, m.strips().size());
    assertPolledBackEdges(m, 0);
    assertEveryCyclePolls(m);
  }

  @Test
  void enhancedForOverIterablePollsItsBackEdge() {
    Method m = Disassembly.method(shapes(new PollInjector(null, null, false)), "enhancedIterable");
    assertPolledBackEdges(m, 1);
    assertEveryCyclePolls(m);
  }

  @Test
  void switchStateMachinePollsEveryBackwardGoto() {
    Method m = Disassembly.method(shapes(new PollInjector(null, null, false)), "stateMachine");
    assertPolledBackEdges(m, 2); // `continue` and the fall-out of `default`
    assertEveryCyclePolls(m);
  }

  @Test
  void linkedListWalkPollsItsBackEdge() {
    Method m = Disassembly.method(shapes(new PollInjector(null, null, false)), "listWalk");
    assertPolledBackEdges(m, 2); // the building loop allocates, the walk is not counted
    assertTrue(m.strips().isEmpty());
    assertEveryCyclePolls(m);
  }

  @Test
  void lambdaBodyLoopIsPolled() {
    Method m =
        Disassembly.methods(shapes(new PollInjector(null, null, false))).values().stream()
            .filter(x -> x.name().startsWith("lambda$lambdaLoop$"))
            .findFirst()
            .orElseThrow();
    assertPolledBackEdges(m, 1);
    assertEveryCyclePolls(m);
  }

  @Test
  void recursionGetsProloguePollOnlyWhenAskedFor() {
    Method off = Disassembly.method(shapes(new PollInjector(null, null, false)), "fib");
    assertEquals(0, off.polls());
    PollInjector on = new PollInjector(null, null, true);
    byte[] t = shapes(on);
    Method fib = Disassembly.method(t, "fib");
    assertTrue(fib.insns().get(0).isPoll(), "fib starts with a poll");
    assertEquals(1, fib.polls());
    Method init = Disassembly.methods(t).get("<init>()V");
    assertEquals(0, init.polls(), "no prologue poll in a constructor");
    assertTrue(on.lastStats().prologuePolls() > 0);
  }

  @Test
  void classInitialiserIsNeverPolled() {
    byte[] t = shapes(new PollInjector(null, null, true));
    assertEquals(0, Disassembly.method(t, "<clinit>").polls());
    Method orig = Disassembly.method(original.get("app/Shapes"), "<clinit>");
    assertFalse(orig.backwardBranches().isEmpty(), "the test's <clinit> has a loop");
  }

  @Test
  void everyMethodOfEveryTestClassIsPreemptible() {
    for (String name : List.of("app/Shapes", "app/Kernels")) {
      byte[] t = new PollInjector(null, null, false).transform(null, name, original.get(name));
      for (Method m : Disassembly.methods(t).values()) {
        if (!m.name().equals("<clinit>")) {
          assertEveryCyclePolls(m);
        }
      }
    }
  }

  @Test
  void countedKernelsAreStripMined() {
    PollInjector injector = new PollInjector(null, null, false);
    byte[] t = injector.transform(null, "app/Kernels", original.get("app/Kernels"));
    Map<String, Integer> strips =
        Map.ofEntries(
            Map.entry("rangeSum", 1),
            Map.entry("step7", 1),
            Map.entry("step30000", 1),
            Map.entry("whileCounted", 1),
            Map.entry("arraySum", 1),
            Map.entry("axpy", 1),
            Map.entry("breakAt", 1),
            Map.entry("oddSum", 1),
            Map.entry("rows", 1),
            Map.entry("dot", 1),
            Map.entry("wideLocals", 1),
            Map.entry("fillFrom", 1),
            Map.entry("merged", 1));
    int total = 0;
    for (var e : strips.entrySet()) {
      Method m = Disassembly.method(t, e.getKey());
      assertEquals(e.getValue(), m.strips().size(), e.getKey() + ": strip-mined loops");
      assertEveryCyclePolls(m);
      total += e.getValue();
    }
    Method rows = Disassembly.method(t, "rows");
    assertPolledBackEdges(rows, 1); // the row loop is not innermost
    assertEquals(new Stats(1, total, 0), injector.lastStats());
  }

  @Test
  void loopBeforeSuperInAConstructorIsStripMined() {
    PollInjector injector = new PollInjector(null, null, true);
    byte[] t = injector.transform(null, "app/Kernels$Early", original.get("app/Kernels$Early"));
    assertEquals(new Stats(0, 1, 0), injector.lastStats(), "no prologue poll in <init>");
    assertEquals(1, Disassembly.method(t, "<init>").strips().size());
  }

  @Test
  void stripStructureHasNoPollOnTheInnerBackEdge() {
    byte[] t =
        new PollInjector(null, null, false)
            .transform(null, "app/Kernels", original.get("app/Kernels"));
    Method m = Disassembly.method(t, "arraySum");
    int[] edge = m.strips().get(0);
    assertFalse(m.insns().get(edge[0] - 1).isPoll(), "inner back-edge is not polled");
    // The only poll sits in the outer block, after the original exit test.
    assertEquals(1, m.polls());
    int poll = 0;
    while (!m.insns().get(poll).isPoll()) {
      poll++;
    }
    assertTrue(poll > edge[0], "poll is outside the inner loop");
    assertEquals(Opcodes.IF_ICMPGE, m.insns().get(poll - 1).op());
    assertEquals(Opcodes.GOTO, m.insns().get(poll + 1).op());
    assertTrue(m.insns().get(poll + 1).targets()[0] < edge[1], "outer loop has its own header");
  }

  @Test
  void transformedClassesVerifyAndComputeTheSame() throws Exception {
    for (boolean prologue : new boolean[] {false, true}) {
      ClassLoader before = new TestClasses.Loader(original);
      ClassLoader after =
          new TestClasses.Loader(transformAll(new PollInjector("app.*", null, prologue), original));
      for (String c :
          List.of(
              "app.Shapes",
              "app.Kernels",
              "app.Kernels$Early",
              "app.Shapes$Node",
              "other.Skipped")) {
        Class.forName(c, true, after); // links, so verifies every method
      }
      Object[][] shapeCalls = {
        {"whileLoop", 1000},
        {"doWhile", 7},
        {"forBreakContinue", new int[] {1, -2, 3, -4, 5, 600, 7}, 500},
        {"labeledContinue", 300},
        {"enhancedArray", new long[] {1, 2, 3, Long.MAX_VALUE}},
        {"enhancedIterable", List.of(1, 2, 3, 4)},
        {"stateMachine", 5000},
        {"listWalk", 3000},
        {"fib", 20},
        {"lambdaLoop", 4000},
        {"clinitSum"},
      };
      for (Object[] c : shapeCalls) {
        assertSame(
            "app.Shapes",
            before,
            after,
            (String) c[0],
            java.util.Arrays.copyOfRange(c, 1, c.length));
      }
      for (int n : new int[] {0, 1, 1023, 1024, 1025, 5000}) {
        int[] a = new int[n];
        float[] x = new float[n];
        double[] d = new double[n];
        for (int i = 0; i < n; i++) {
          a[i] = i * 31 - 7;
          x[i] = i * 0.5f;
          d[i] = i * 0.25;
        }
        assertSame("app.Kernels", before, after, "arraySum", (Object) a);
        assertSame("app.Kernels", before, after, "oddSum", (Object) a);
        assertSame("app.Kernels", before, after, "breakAt", a, n > 0 ? a[n - 1] : 0);
        assertSame("app.Kernels", before, after, "breakAt", a, 12345678);
        assertSame("app.Kernels", before, after, "whileCounted", n);
        assertSame("app.Kernels", before, after, "dot", d, d, n);
        assertSame("app.Kernels", before, after, "wideLocals", 1L << 40, 0.5, n);
        assertSame(
            "app.Kernels", before, after, "rows", (Object) new int[][] {a, new int[n / 3], a});
        assertSame("app.Kernels", before, after, "early", n);
        assertSame("app.Kernels", before, after, "merged", true, n);
        assertSame("app.Kernels", before, after, "merged", false, n);
        int[] f1 = new int[n];
        int[] f2 = new int[n];
        call(before, "app.Kernels", "fillFrom", f1, n / 2);
        call(after, "app.Kernels", "fillFrom", f2, n / 2);
        assertArrayEquals(f1, f2);
        float[] y1 = new float[n];
        float[] y2 = new float[n];
        call(before, "app.Kernels", "axpy", x, y1, 1.5f);
        call(after, "app.Kernels", "axpy", x, y2, 1.5f);
        assertArrayEquals(y1, y2);
        for (int from : new int[] {0, -3000, -1, Integer.MIN_VALUE, Integer.MAX_VALUE - n}) {
          assertSame("app.Kernels", before, after, "rangeSum", from, from + n);
          int to7 = (int) Math.min((long) from + n, Integer.MAX_VALUE - 6); // i += 7 cannot wrap
          assertSame("app.Kernels", before, after, "step7", from, to7);
        }
      }
      // Limits at the ends of the int range; the original loops here do not overflow.
      int max = Integer.MAX_VALUE;
      int min = Integer.MIN_VALUE;
      assertSame("app.Kernels", before, after, "rangeSum", max - 5000, max);
      assertSame("app.Kernels", before, after, "rangeSum", max - 1, max);
      assertSame("app.Kernels", before, after, "rangeSum", max, max);
      assertSame("app.Kernels", before, after, "rangeSum", max, min); // zero trips
      assertSame("app.Kernels", before, after, "rangeSum", 10, -10);
      assertSame("app.Kernels", before, after, "rangeSum", 10, min + 5); // limit - i overflows int
      assertSame("app.Kernels", before, after, "rangeSum", max - 3, min + 2000);
      assertSame("app.Kernels", before, after, "rangeSum", min, min + 5000);
      assertSame("app.Kernels", before, after, "rangeSum", -2500, 2500);
      assertSame("app.Kernels", before, after, "step7", max - 7006, max - 6);
      assertSame("app.Kernels", before, after, "step7", min, min + 7 * 1025);
      assertSame("app.Kernels", before, after, "step30000", min, max - 30000);
      assertSame("app.Kernels", before, after, "step30000", 5, 4);
      assertSame("other.Skipped", before, after, "loop", 100);
    }
  }

  private static void assertSame(
      String cls, ClassLoader before, ClassLoader after, String method, Object... args)
      throws Exception {
    Object want = call(before, cls, method, args);
    Object got = call(after, cls, method, args);
    assertTrue(
        Objects.deepEquals(want, got),
        cls + "." + method + java.util.Arrays.deepToString(args) + ": " + want + " != " + got);
  }

  @Test
  void excludedAndRefusedClassesAreLeftAlone() {
    byte[] skipped = original.get("other/Skipped");
    assertNotNull(new PollInjector(null, null, false).transform(null, "other/Skipped", skipped));
    assertNull(new PollInjector(null, "other.*", false).transform(null, "other/Skipped", skipped));
    assertNull(
        new PollInjector("app.*|com.acme.*", null, false)
            .transform(null, "other/Skipped", skipped));
    assertNotNull(
        new PollInjector("com.acme.*;other.Sk*", null, false)
            .transform(null, "other/Skipped", skipped));
    PollInjector all = new PollInjector("*", null, true);
    for (String refused :
        List.of(
            "java/util/X",
            "javax/X",
            "jdk/internal/X",
            "sun/misc/X",
            "com/sun/X",
            "io/gmp4j/runtime/Sched",
            "io/gmp4j/agent/X",
            "net/bytebuddy/X")) {
      assertNull(all.transform(null, refused, skipped), refused);
      assertEquals(Stats.NONE, all.lastStats());
    }
  }

  @Test
  void classWithoutLoopsIsUnchanged() {
    byte[] node = original.get("app/Shapes$Node");
    PollInjector injector = new PollInjector(null, null, false);
    assertNull(injector.transform(null, "app/Shapes$Node", node));
    assertTrue(injector.lastStats().isEmpty());
  }

  // ---- hand-written class files --------------------------------------------------------------

  /**
   * {@code static int table(int n)}: a loop whose only back-edge is a tableswitch case, and {@code
   * static int lookup(int n)}: one whose back-edge is a lookupswitch default. Both count i up to n.
   * javac never emits backward switch targets.
   */
  static byte[] switchLoops(int version) {
    ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_FRAMES | ClassWriter.COMPUTE_MAXS);
    cw.visit(version, Opcodes.ACC_PUBLIC, "app/SwitchLoops", null, "java/lang/Object", null);
    for (String name : List.of("table", "lookup")) {
      MethodVisitor mv =
          cw.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, name, "(I)I", null, null);
      mv.visitCode();
      Label top = new Label();
      Label exit = new Label();
      mv.visitInsn(Opcodes.ICONST_0);
      mv.visitVarInsn(Opcodes.ISTORE, 1);
      mv.visitLabel(top);
      mv.visitIincInsn(1, 1);
      // key = (i - n) >>> 31: 1 while i < n, else 0
      mv.visitVarInsn(Opcodes.ILOAD, 1);
      mv.visitVarInsn(Opcodes.ILOAD, 0);
      mv.visitInsn(Opcodes.ISUB);
      mv.visitIntInsn(Opcodes.BIPUSH, 31);
      mv.visitInsn(Opcodes.IUSHR);
      if (name.equals("table")) {
        mv.visitTableSwitchInsn(0, 1, exit, exit, top);
      } else {
        mv.visitLookupSwitchInsn(top, new int[] {0}, new Label[] {exit});
      }
      mv.visitLabel(exit);
      mv.visitVarInsn(Opcodes.ILOAD, 1);
      mv.visitInsn(Opcodes.IRETURN);
      mv.visitMaxs(0, 0);
      mv.visitEnd();
    }
    cw.visitEnd();
    return cw.toByteArray();
  }

  @Test
  void switchCaseBackEdgeIsPolledBeforeTheSwitch() throws Exception {
    byte[] orig = switchLoops(Opcodes.V17);
    PollInjector injector = new PollInjector(null, null, false);
    byte[] t = injector.transform(null, "app/SwitchLoops", orig);
    assertEquals(new Stats(2, 0, 0), injector.lastStats());
    for (String name : List.of("table", "lookup")) {
      Method m = Disassembly.method(t, name);
      assertPolledBackEdges(m, 1);
      int sw = m.backwardBranches().get(0);
      assertTrue(
          m.insns().get(sw).op() == Opcodes.TABLESWITCH
              || m.insns().get(sw).op() == Opcodes.LOOKUPSWITCH);
      assertEveryCyclePolls(m);
    }
    ClassLoader before = new TestClasses.Loader(Map.of("app/SwitchLoops", orig));
    ClassLoader after = new TestClasses.Loader(Map.of("app/SwitchLoops", t));
    for (int n : new int[] {0, 1, 2, 5000}) {
      assertSame("app.SwitchLoops", before, after, "table", n);
      assertSame("app.SwitchLoops", before, after, "lookup", n);
    }
  }

  @Test
  void classFilesOlderThanJava6AreLeftAlone() {
    assertNull(
        new PollInjector(null, null, true)
            .transform(null, "app/SwitchLoops", switchLoops(Opcodes.V1_5)));
    assertNotNull(
        new PollInjector(null, null, false)
            .transform(null, "app/SwitchLoops", switchLoops(Opcodes.V1_6)));
  }
}
