package io.gmp4j.agent.poll;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
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
        public static long downSum(int from, int to) { long s = 0; for (int i = from; i > to; i--) s += i; return s; }
        public static long downIncl3(int from, int to) { long s = 0; for (int i = from; i >= to; i -= 3) s += i ^ (s >>> 7); return s; }
        public static long downStep30000(int from, int to) { long s = 0; for (int i = from; i > to; i -= 30000) s += i ^ (s >>> 7); return s; }
        public static void addDown(int[] a, int[] b, int[] c) { for (int i = a.length - 1; i >= 0; i--) c[i] = a[i] + b[i]; }
        public static long downToZero(int n) { long s = 0; for (int i = n; i > 0; i--) s += 5L * i; return s; }
        public static long upToZero(int from) { long s = 0; for (int i = from; i < 0; i++) s += i; return s; }
        public static final class Early {
          public final int v;
          public Early(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; super(); this.v = s; }
        }
      }
      """;

  /**
   * Loops that are not strip-mined, so poll under the countdown if they touch memory (T), or on
   * every pass if they only compute in registers (bits, collatz).
   */
  static final String COUNTDOWN =
      """
      package app;
      public class Countdown {
        static final int[] T = {3, 1, 4, 1, 5, 9, 2, 6};
        public static int bits(int n) { int c = 0, k = n; while (k != 0) { c += k & 1; k >>>= 1; c++; } return c; }
        public static int collatz(long x0, int n) {
          int steps = 0;
          for (int m = 0; m < n; m++) {
            long x = x0 + m;
            while (x != 1) { x = (x & 1) == 0 ? x >>> 1 : 3 * x + 1; steps++; }
          }
          return steps;
        }
        public static int spin(int n) { int k = n, s = 0; while (k != 0) { s += k * T[k & 7]; k--; } return s; }
        public static long wide(long x, double y, int n) {
          long acc = x; double d = y; int c = n;
          while (c != 0) { acc += T[c & 7]; if ((c & 3) == 0) { d += 1.0; } c--; }
          return acc + (long) d;
        }
        public static int withTry(int n) {
          int s = 0, k = n;
          while (k != 0) {
            try { s += T[k & 7] / (k % 7); } catch (ArithmeticException e) { s--; }
            k--;
          }
          return s;
        }
        public static int mixed(int[] a, int n) {
          int x = n, s = 0;
          while (x != 0) { s += T[x & 7]; x >>>= 1; }
          for (int i = 0; i < a.length; i++) s += a[i];
          return s;
        }
        public static int doWhile(int n) { int i = 0, s = 0; do { s += T[i & 7]; i += 2; } while (i != n && i < 1 << 20); return s; }
        public static int early(int n) { return new Early(n).v + new Both(n).v; }
        public static final class Early {
          public final int v;
          public Early(int n) { int s = 0, k = n; while (k != 0) { s += T[k & 7]; k--; } super(); this.v = s; }
        }
        public static final class Both {
          public final int v;
          public Both(int n) {
            int s = 0, k = n;
            while (k != 0) { s += T[k & 7] ^ 5; k--; }
            for (int i = n; i > 0; i--) s += i;
            super();
            this.v = s;
          }
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
            Map.of(
                "app.Shapes",
                SHAPES,
                "app.Kernels",
                KERNELS,
                "app.Countdown",
                COUNTDOWN,
                "other.Skipped",
                OTHER));
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
    assertTrue(m.everyCyclePolls(), m.name() + ": a cycle without a poll");
  }

  /**
   * The poll is the instruction right before each backward branch that is not part of a strip
   * (whose inner back-edge has none and whose outer one is checked by {@link Method#strips}). A
   * countdown's {@code GOTO} counts too: its poll, right before it, is skipped by the countdown's
   * {@code IFGT} ({@link Method#countdowns}); in the form with its own back-edge, that {@code
   * IFGT} is itself a backward branch, bounded by the budget, and not counted. {@code expected}
   * counts both kinds.
   */
  private static void assertPolledBackEdges(Method m, int expected) {
    List<Integer> back = m.backwardBranches();
    List<int[]> strips = m.strips();
    List<int[]> countdowns = m.countdowns();
    int polled = 0;
    for (int k : back) {
      if (strips.stream().anyMatch(e -> e[0] == k || e[2] == k)
          || countdowns.stream().anyMatch(c -> c[1] == k && c[3] == c[2])) {
        continue;
      }
      assertTrue(m.insns().get(k - 1).isPoll(), m.name() + ": no poll before back-edge " + k);
      polled++;
    }
    assertEquals(expected, polled, m.name() + ": polled back-edges");
  }

  private static void assertCountdowns(Method m, int expected) {
    assertEquals(expected, m.countdowns().size(), m.name() + ": countdown polls");
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
    String src = "package app; public class Long { public static int f(int n) {\n" + body + "} }";
    Map<String, byte[]> orig = TestClasses.compile(Map.of("app.Long", src));
    byte[] t =
        new PollInjector(null, null, false).transform(null, "app/Long", orig.get("app/Long"));
    assertNotNull(t);
    Object want = call(new TestClasses.Loader(orig), "app.Long", "f", 100);
    assertEquals(want, call(new TestClasses.Loader(Map.of("app/Long", t)), "app.Long", "f", 100));
  }

  /**
   * A type annotation inside code (here on a local and a cast) is not kept by the one pass's
   * {@link MethodRecorder}, so such a class takes the two passes ('One pass' in PollInjector), and
   * still gets its polls and computes the same.
   */
  @Test
  void typeAnnotationInCodeTakesTheTwoPasses() throws Exception {
    String src =
        "package app; import java.lang.annotation.*;\n"
            + "public class Annotated {\n"
            + "  @Target(ElementType.TYPE_USE) @interface N {}\n"
            + "  public static int f(int n) {\n"
            + "    @N Object o = Integer.valueOf(n); int s = 0;\n"
            + "    while (s < n * 3) { s += ((@N Integer) o).intValue() > 0 ? 2 : 1; }\n"
            + "    return s; } }";
    Map<String, byte[]> orig = TestClasses.compile(Map.of("app.Annotated", src));
    PollInjector injector = new PollInjector(null, null, false);
    byte[] t = injector.transform(null, "app/Annotated", orig.get("app/Annotated"));
    assertNotNull(t);
    assertEquals(1, injector.lastStats().backEdgePolls(), injector.lastStats().toString());
    assertEveryCyclePolls(Disassembly.method(t, "f"));
    Map<String, byte[]> rewritten = new java.util.HashMap<>(orig);
    rewritten.put("app/Annotated", t);
    assertEquals(
        call(new TestClasses.Loader(orig), "app.Annotated", "f", 7),
        call(new TestClasses.Loader(rewritten), "app.Annotated", "f", 7));
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
    assertPolledBackEdges(m, 1); // registers only, so polled on every pass
    assertEquals(Opcodes.IF_ICMPLT, m.insns().get(m.backwardBranches().get(0)).op());
    assertEveryCyclePolls(m);
  }

  @Test
  void doWhileCountsDownThroughATrampoline() {
    Method m =
        Disassembly.method(
            new PollInjector(null, null, false)
                .transform(null, "app/Countdown", original.get("app/Countdown")),
            "doWhile");
    assertPolledBackEdges(m, 1);
    assertCountdowns(m, 1);
    // The conditional back-edge now jumps forward, to the countdown block after the return.
    int[] c = m.countdowns().get(0);
    int cond = 0;
    while (m.insns().get(cond).op() != Opcodes.IF_ICMPLT) {
      cond++;
    }
    assertEquals(c[0], m.insns().get(cond).targets()[0], "IF_ICMPLT goes to the countdown");
    assertTrue(c[2] < cond, "the countdown jumps back to the loop head");
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
    assertEquals(1, m.strips().size(), "while (k > 0) { ...; k -= 1; } counts down");
    assertPolledBackEdges(m, 0);
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
    for (String name :
        List.of(
            "app/Shapes",
            "app/Kernels",
            "app/Countdown",
            "app/Countdown$Early",
            "app/Countdown$Both")) {
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
            Map.entry("merged", 1),
            Map.entry("downSum", 1),
            Map.entry("downIncl3", 1),
            Map.entry("downStep30000", 1),
            Map.entry("addDown", 1),
            Map.entry("downToZero", 1),
            Map.entry("upToZero", 1));
    int total = 0;
    for (var e : strips.entrySet()) {
      Method m = Disassembly.method(t, e.getKey());
      assertEquals(e.getValue(), m.strips().size(), e.getKey() + ": strip-mined loops");
      assertEveryCyclePolls(m);
      total += e.getValue();
    }
    Method rows = Disassembly.method(t, "rows");
    assertPolledBackEdges(rows, 1); // the row loop is not innermost
    assertEquals(new Stats(1, total, 0, 1), injector.lastStats());
  }

  @Test
  void loopsThatAreNotStripMinedCountDown() {
    PollInjector injector = new PollInjector(null, null, false);
    byte[] t = injector.transform(null, "app/Countdown", original.get("app/Countdown"));
    // {polled back-edges, countdowns, strips, countdowns with their own back-edge}
    Map<String, int[]> expect =
        Map.of(
            "bits", new int[] {1, 0, 0, 0}, // registers only: polled on every pass
            "collatz", new int[] {2, 0, 0, 0},
            "spin", new int[] {1, 1, 0, 1}, // the body only branches out of the loop
            "wide", new int[] {1, 1, 0, 0}, // an if in the body
            "withTry", new int[] {1, 1, 0, 0}, // the try's GOTO over its handler
            "mixed", new int[] {1, 1, 1, 1}, // frames carry budget and strip
            "doWhile", new int[] {1, 1, 0, 1}); // a trampoline with its own back-edge
    for (var e : expect.entrySet()) {
      Method m = Disassembly.method(t, e.getKey());
      assertPolledBackEdges(m, e.getValue()[0]);
      assertCountdowns(m, e.getValue()[1]);
      assertEquals(e.getValue()[2], m.strips().size(), e.getKey() + ": strips");
      assertEquals(
          e.getValue()[3],
          m.countdowns().stream().filter(c -> c[3] == c[2]).count(),
          e.getKey() + ": countdowns with their own back-edge");
      assertTrue(m.countdowns().stream().allMatch(c -> c[4] == 1), e.getKey() + ": weight 1");
      assertEveryCyclePolls(m);
      if (e.getValue()[1] > 0) {
        // The budget starts at 1: the first back-edge of each invocation polls.
        assertEquals(Opcodes.ICONST_1, m.insns().get(0).op(), e.getKey());
        assertEquals(Opcodes.ISTORE, m.insns().get(1).op(), e.getKey());
      } else {
        assertTrue(m.insns().stream().noneMatch(i -> i.op() == Opcodes.IINC && i.incr() == -1));
      }
    }
    assertEquals(new Stats(8, 1, 0, 5), injector.lastStats());
    // With a prologue poll, the poll comes first, then the budget.
    Method spin =
        Disassembly.method(
            new PollInjector(null, null, true)
                .transform(null, "app/Countdown", original.get("app/Countdown")),
            "spin");
    assertTrue(spin.insns().get(0).isPoll());
    assertCountdowns(spin, 1);
    assertEveryCyclePolls(spin);
  }

  @Test
  void outerLoopOfAStripMinedLoopCountsDownHeavily() {
    // Its passes can each run up to a strip without a poll, so each counts OUTER_WEIGHT
    // back-edges: at most BUDGET / OUTER_WEIGHT passes between polls.
    Method rows =
        Disassembly.method(
            new PollInjector(null, null, false)
                .transform(null, "app/Kernels", original.get("app/Kernels")),
            "rows");
    assertCountdowns(rows, 1);
    assertPolledBackEdges(rows, 1);
    int[] c = rows.countdowns().get(0);
    assertEquals(PollEmitter.OUTER_WEIGHT, c[4], "weight");
    assertNotEquals(c[2], c[3], "an inner loop: the single back-edge form");
    assertEquals(16, PollEmitter.BUDGET / PollEmitter.OUTER_WEIGHT);
  }

  @Test
  void loopsBeforeSuperCountDownAndStripMine() {
    for (String cls : List.of("app/Countdown$Early", "app/Countdown$Both")) {
      PollInjector injector = new PollInjector(null, null, true);
      byte[] t = injector.transform(null, cls, original.get(cls));
      Method init = Disassembly.method(t, "<init>");
      assertCountdowns(init, 1);
      assertEquals(cls.endsWith("Both") ? 1 : 0, init.strips().size(), cls);
      assertEveryCyclePolls(init);
      assertEquals(0, injector.lastStats().prologuePolls(), "no prologue poll in <init>");
    }
  }

  @Test
  void countingDownLoopIsStripMinedLikeCountingUp() {
    Method m =
        Disassembly.method(
            new PollInjector(null, null, false)
                .transform(null, "app/Kernels", original.get("app/Kernels")),
            "addDown");
    int[] edge = m.strips().get(0);
    assertEquals(Opcodes.ISUB, m.insns().get(edge[1] - 2).op(), "strip = i - span");
    assertEquals(Opcodes.IF_ICMPLT, m.insns().get(edge[1] + 2).op(), "i >= strip");
    assertEquals(1, m.polls());
    assertFalse(m.insns().get(edge[0] - 1).isPoll(), "inner back-edge is not polled");
  }

  @Test
  void loopBeforeSuperInAConstructorIsStripMined() {
    PollInjector injector = new PollInjector(null, null, true);
    byte[] t = injector.transform(null, "app/Kernels$Early", original.get("app/Kernels$Early"));
    assertEquals(new Stats(0, 1, 0, 0), injector.lastStats(), "no prologue poll in <init>");
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
              "app.Countdown",
              "app.Countdown$Early",
              "app.Countdown$Both",
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
      int strip = PollEmitter.STRIP;
      for (int n :
          new int[] {0, 1, 1023, 1024, 1025, 5000, strip - 1, strip, strip + 1, 2 * strip + 1}) {
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
        int[] down = new int[n];
        int[] up = new int[n];
        call(before, "app.Kernels", "addDown", a, a, down);
        call(after, "app.Kernels", "addDown", a, a, up);
        assertArrayEquals(down, up);
        assertSame("app.Kernels", before, after, "downToZero", n);
        assertSame("app.Kernels", before, after, "upToZero", -n);
        for (int from : new int[] {0, -3000, -1, Integer.MIN_VALUE + n, Integer.MAX_VALUE}) {
          assertSame("app.Kernels", before, after, "downSum", from, from - n);
          int to3 = (int) Math.max((long) from - n, Integer.MIN_VALUE + 3); // i -= 3 cannot wrap
          assertSame("app.Kernels", before, after, "downIncl3", from, to3);
        }
        for (int k : new int[] {n, n + 1, 2 * n + 3}) {
          assertSame("app.Countdown", before, after, "spin", k);
          assertSame("app.Countdown", before, after, "wide", 1L << 40, 0.5, k);
          assertSame("app.Countdown", before, after, "withTry", k);
          assertSame("app.Countdown", before, after, "mixed", a, k);
          assertSame("app.Countdown", before, after, "doWhile", 2 * k);
          assertSame("app.Countdown", before, after, "early", k);
        }
        assertSame("app.Countdown", before, after, "bits", n);
        assertSame("app.Countdown", before, after, "bits", -n - 1);
        assertSame("app.Countdown", before, after, "collatz", 1_000_001L, n / 10 + 1);
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
      assertSame("app.Kernels", before, after, "step7", min, min + 7 * (PollEmitter.STRIP + 1));
      assertSame("app.Kernels", before, after, "step30000", min, max - 30000);
      assertSame("app.Kernels", before, after, "step30000", 5, 4);
      // Counting down, at the ends of the int range.
      assertSame("app.Kernels", before, after, "downSum", min + 5000, min); // i > MIN_VALUE
      assertSame("app.Kernels", before, after, "downSum", min + 1, min);
      assertSame("app.Kernels", before, after, "downSum", min, min); // zero trips
      assertSame("app.Kernels", before, after, "downSum", max, max - 5000);
      assertSame("app.Kernels", before, after, "downSum", min + 5, 10); // zero trips
      assertSame("app.Kernels", before, after, "downSum", -10, max); // zero trips
      assertSame("app.Kernels", before, after, "downSum", 2500, -2500);
      assertSame("app.Kernels", before, after, "downIncl3", min + 3 + 3 * 1025 + 1, min + 3);
      int span3 = 3 * PollEmitter.STRIP;
      assertSame(
          "app.Kernels", before, after, "downIncl3", min + 3 + span3, min + 3); // 1 strip + 1
      assertSame("app.Kernels", before, after, "downIncl3", min + 2 + span3, min + 3);
      assertSame("app.Kernels", before, after, "downIncl3", max, max - span3 - 3);
      assertSame("app.Kernels", before, after, "downIncl3", max, max - 3 * 1024);
      assertSame("app.Kernels", before, after, "downIncl3", 5, 5); // one trip
      assertSame("app.Kernels", before, after, "downIncl3", 4, 5); // zero trips
      assertSame(
          "app.Kernels", before, after, "downStep30000", max, min + 30000); // i - to overflows int
      assertSame("app.Kernels", before, after, "downStep30000", max, max - 30000 * 1025);
      assertSame(
          "app.Kernels",
          before,
          after,
          "downStep30000",
          max,
          max - 30000 * (PollEmitter.STRIP + 1));
      assertSame("app.Kernels", before, after, "upToZero", min);
      assertSame("app.Kernels", before, after, "downToZero", max);
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
      // a memory access, so that the back-edge counts down
      mv.visitFieldInsn(Opcodes.GETSTATIC, "java/lang/Boolean", "TRUE", "Ljava/lang/Boolean;");
      mv.visitInsn(Opcodes.POP);
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
    assertEquals(new Stats(2, 0, 0, 2), injector.lastStats());
    for (String name : List.of("table", "lookup")) {
      Method m = Disassembly.method(t, name);
      assertPolledBackEdges(m, 1);
      assertCountdowns(m, 1);
      // The switch's backward target now goes to the countdown block, which jumps back.
      int[] c = m.countdowns().get(0);
      int sw = 0;
      while (m.insns().get(sw).op() != Opcodes.TABLESWITCH
          && m.insns().get(sw).op() != Opcodes.LOOKUPSWITCH) {
        sw++;
      }
      int[] swTargets = m.insns().get(sw).targets();
      int at = sw;
      assertTrue(java.util.Arrays.stream(swTargets).anyMatch(x -> x == c[0]), name);
      assertTrue(java.util.Arrays.stream(swTargets).allMatch(x -> x > at), name + ": forward");
      assertEveryCyclePolls(m);
    }
    ClassLoader before = new TestClasses.Loader(Map.of("app/SwitchLoops", orig));
    ClassLoader after = new TestClasses.Loader(Map.of("app/SwitchLoops", t));
    for (int n : new int[] {0, 1, 2, 5000}) {
      assertSame("app.SwitchLoops", before, after, "table", n);
      assertSame("app.SwitchLoops", before, after, "lookup", n);
    }
  }

  /** 'Old class files' in PollInjector; every version and shape is in OldClassFilesTest. */
  @Test
  void switchLoopsOlderThanJava6CountDownWithoutFrames() throws Exception {
    byte[] orig = switchLoops(Opcodes.V1_5);
    PollInjector injector = new PollInjector(null, null, false);
    byte[] t = injector.transform(null, "app/SwitchLoops", orig);
    assertEquals(new Stats(2, 0, 0, 2), injector.lastStats());
    for (String name : List.of("table", "lookup")) {
      assertEveryCyclePolls(Disassembly.method(t, name));
    }
    ClassLoader before = new TestClasses.Loader(Map.of("app/SwitchLoops", orig));
    ClassLoader after = new TestClasses.Loader(Map.of("app/SwitchLoops", t));
    for (int n : new int[] {0, 1, 2, 5000}) {
      assertSame("app.SwitchLoops", before, after, "table", n);
      assertSame("app.SwitchLoops", before, after, "lookup", n);
    }
  }
}
