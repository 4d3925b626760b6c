package io.gmp4j.agent.poll;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gmp4j.agent.poll.Disassembly.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import org.junit.jupiter.api.Test;

/** 'Coverage' and 'Too large' in PollInjector: every class is counted once, with its reason. */
class CoverageTest {
  /**
   * {@code Big}: {@code big(n)} counts n down in a loop after {@code pad} NOPs, sized so that its
   * per-pass poll (3 bytes) takes it past 65535 bytes of code; {@code small(n)} has the same
   * loop without the padding.
   */
  static byte[] big(int version) {
    ClassWriter w = new ClassWriter(version >= Opcodes.V1_6 ? ClassWriter.COMPUTE_FRAMES : 0);
    w.visit(
        version, Opcodes.ACC_PUBLIC | Opcodes.ACC_SUPER, "app/Big", null, "java/lang/Object", null);
    countDown(w, "big", 65535 - 9 - 1); // 9 bytes of loop and return: 65534 as read
    countDown(w, "small", 0);
    w.visitEnd();
    return w.toByteArray();
  }

  private static void countDown(ClassWriter w, String name, int pad) {
    MethodVisitor mv =
        w.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, name, "(I)I", null, null);
    mv.visitCode();
    for (int i = 0; i < pad; i++) {
      mv.visitInsn(Opcodes.NOP);
    }
    Label loop = new Label();
    mv.visitLabel(loop);
    mv.visitIincInsn(0, -1); // 3 bytes
    mv.visitVarInsn(Opcodes.ILOAD, 0); // 1
    mv.visitJumpInsn(Opcodes.IFGT, loop); // 3: registers only, so a per-pass poll (3 bytes)
    mv.visitVarInsn(Opcodes.ILOAD, 0); // 1
    mv.visitInsn(Opcodes.IRETURN); // 1
    mv.visitMaxs(1, 1);
    mv.visitEnd();
  }

  @Test
  void methodPast64KbStaysAsItWasAndTheRestPolls() throws Exception {
    for (int version : new int[] {Opcodes.V1_4, Opcodes.V1_8, Opcodes.V25}) {
      byte[] orig = big(version);
      Coverage coverage = new Coverage();
      PollInjector injector = new PollInjector(null, null, false, coverage);
      byte[] t = injector.transform(null, "app/Big", orig);
      assertNotNull(t);
      assertEquals(1, injector.lastStats().backEdgePolls(), "only small polls");
      Method big = Disassembly.method(t, "big");
      assertEquals(0, big.polls());
      assertEquals(
          Disassembly.method(orig, "big").insns().stream().map(i -> i.op()).toList(),
          big.insns().stream().map(i -> i.op()).toList());
      assertTrue(Disassembly.method(t, "small").everyCyclePolls());
      assertEquals(1, coverage.instrumented());
      assertTrue(coverage.table().contains("too large: app.Big.big(I)I"), coverage.table());
      Class<?> c = Class.forName("app.Big", true, new TestClasses.Loader(Map.of("app/Big", t)));
      assertEquals(0, c.getMethod("big", int.class).invoke(null, 5000));
      assertEquals(0, c.getMethod("small", int.class).invoke(null, 5000));
    }
  }

  @Test
  void classWhoseOnlyLoopIsTooLargeIsCountedTooLarge() {
    ClassWriter w = new ClassWriter(ClassWriter.COMPUTE_FRAMES);
    w.visit(
        Opcodes.V17,
        Opcodes.ACC_PUBLIC | Opcodes.ACC_SUPER,
        "app/Big",
        null,
        "java/lang/Object",
        null);
    countDown(w, "big", 65535 - 9 - 1);
    w.visitEnd();
    Coverage coverage = new Coverage();
    assertNull(
        new PollInjector(null, null, false, coverage).transform(null, "app/Big", w.toByteArray()));
    assertEquals(1, coverage.skipped(Coverage.Reason.TOO_LARGE));
    assertEquals(0, coverage.instrumented());
  }

  /**
   * Three classes: {@code com.acme.Loops} with a loop, {@code com.acme.Flat} without, and {@code
   * com.acme.gen.Gen} with a loop, for an injector that excludes {@code com.acme.gen.*}.
   */
  private static Map<String, byte[]> loopsFlatAndGenerated() {
    Map<String, byte[]> classes =
        TestClasses.compile(
            Map.of(
                "com.acme.Loops",
                    "package com.acme; public class Loops {"
                        + " public static int f(int n) { int s = 0; while (s < n) s += 3; return s; } }",
                "com.acme.Flat",
                    "package com.acme; public class Flat { public int g() { return 1; } }",
                "com.acme.gen.Gen",
                    "package com.acme.gen; public class Gen {"
                        + " public static int f(int n) { int s = 0; while (s < n) s += 3; return s; } }"));
    return classes;
  }

  /**
   * 'Deferred polls': only a class that would be rewritten now is offered to the deferral (not
   * one without loops, not an excluded one), a deferred class loads with its early polls and is
   * not counted until it is rewritten, and one the deferral declines is rewritten as without it.
   */
  @Test
  void onlyAClassThatWouldBeRewrittenIsOfferedToTheDeferral() {
    Map<String, byte[]> classes = loopsFlatAndGenerated();
    Coverage coverage = new Coverage();
    PollInjector injector = new PollInjector(null, "com.acme.gen.*", false, coverage);
    List<String> offered = new ArrayList<>();
    boolean[] take = {true};
    PollInjector.Deferral deferral =
        (loader, name, arrays) -> {
          offered.add(name);
          return take[0];
        };
    classes.forEach(
        (name, bytes) -> {
          byte[] out = injector.transform(null, name, bytes, deferral);
          if (name.equals("com/acme/Loops")) { // 'Early polls' only: no countdown, no strip
            assertNotNull(out);
            assertTrue(Disassembly.method(out, "f").polls() > 0);
            assertArrayEquals(EarlyPolls.patch(bytes), out);
          } else {
            assertNull(out);
          }
        });
    assertEquals(List.of("com/acme/Loops"), offered);
    assertEquals(0, coverage.instrumented());
    assertEquals(1, coverage.skipped(Coverage.Reason.NO_LOOPS));
    assertEquals(1, coverage.skipped(Coverage.Reason.EXCLUDED));
    assertEquals(2, coverage.skipped()); // the deferred class is not counted yet
    assertEquals(1, coverage.early());
    assertTrue(
        coverage.summaryLine().contains("; 1 class with early polls, placed polls to come"),
        coverage.summaryLine());
    coverage.earlyRewritten(); // the deferral's end, once it retransformed them
    assertEquals(0, coverage.early());
    assertFalse(coverage.summaryLine().contains("early polls"), coverage.summaryLine());

    take[0] = false; // declined (the deferral has ended): the class is rewritten at once
    assertNotNull(
        injector.transform(null, "com/acme/Loops", classes.get("com/acme/Loops"), deferral));
    assertNotNull(injector.transform(null, "com/acme/Loops", classes.get("com/acme/Loops"), null));
    assertEquals(2, coverage.instrumented());
    assertEquals(List.of("com/acme/Loops", "com/acme/Loops"), offered);
    coverage.keptEarly(null, "com/acme/Loops"); // 'Running classes': a thread stayed in it
    assertEquals(3, coverage.instrumented());
    assertEquals(0, coverage.early());
  }

  /**
   * 'Array loops' under the deferral: a class with an array loop that calls nothing and a loop
   * that calls loads with the first method's placed polls, as the rewrite of the whole class
   * writes them, and the second's early check, as the patch writes it; it computes the same, and
   * it is offered to the deferral like any class with loops.
   */
  @Test
  void anArrayLoopGetsItsPlacedPollsBesideEarlyPolls() throws Exception {
    Map<String, byte[]> classes = TestClasses.compile(Map.of("com.acme.Mixed", MIXED));
    byte[] bytes = classes.get("com/acme/Mixed");
    Coverage coverage = new Coverage();
    PollInjector injector = new PollInjector(null, null, false, coverage);
    List<String> offered = new ArrayList<>();
    byte[] out =
        injector.transform(
            null, "com/acme/Mixed", bytes, (loader, name, arrays) -> offered.add(name));
    assertEquals(List.of("com/acme/Mixed"), offered);
    assertEquals(1, coverage.early());
    assertEquals(0, coverage.instrumented()); // counted when the deferral rewrites it

    byte[] whole = new PollInjector(null, null, false).transform(null, "com/acme/Mixed", bytes);
    byte[] early = EarlyPolls.patch(bytes, true);
    assertEquals(code(Disassembly.method(whole, "sum")), code(Disassembly.method(out, "sum")));
    assertEquals(code(Disassembly.method(early, "bits")), code(Disassembly.method(out, "bits")));
    assertTrue(Disassembly.method(out, "sum").polls() > 0);
    assertTrue(
        Disassembly.method(out, "sum").insns().stream()
            .noneMatch(i -> PollInjector.PENDING_NAME.equals(i.name())),
        "sum: an early check");

    assertComputesAsBefore(classes, out);
  }

  /**
   * 'The deadline' (the agent's DeferredPolls): while the deferral takes array loops, the class
   * of the test above loads with the early check in both methods, as the patch writes them with
   * array loops, and is offered as one with a loop that may vectorize; it computes the same. A
   * class without an array loop, or with one that does not (a search that returns from it, a
   * loop with a continue), is offered as one without. Declined (the deadline passed as it
   * loaded), it is rewritten whole.
   */
  @Test
  void untilTheDeadlineAnArrayLoopGetsEarlyPollsToo() throws Exception {
    Map<String, byte[]> classes =
        TestClasses.compile(
            Map.of(
                "com.acme.Mixed",
                MIXED,
                "com.acme.Calls",
                "package com.acme; public class Calls {"
                    + " public static int bits(int[] a) { int s = 0;"
                    + " for (int x : a) s += Integer.bitCount(x); return s; } }",
                "com.acme.Search",
                "package com.acme; public class Search {"
                    + " public static int find(byte[] a, byte b) {"
                    + " for (int i = 0; i < a.length; i++) { if (a[i] == b) return i; }"
                    + " return -1; } }",
                "com.acme.Skip",
                "package com.acme; public class Skip {"
                    + " public static int sum(int[] a) { int s = 0, i = 0;"
                    + " while (i < a.length) { int x = a[i++]; if (x == 0) continue; s += x; }"
                    + " return s; } }"));
    byte[] bytes = classes.get("com/acme/Mixed");
    Coverage coverage = new Coverage();
    PollInjector injector = new PollInjector(null, null, false, coverage);
    List<String> offered = new ArrayList<>();
    boolean[] take = {true};
    PollInjector.Deferral deferral =
        new PollInjector.Deferral() {
          @Override
          public boolean defer(ClassLoader loader, String name, boolean arrays) {
            offered.add(name + (arrays ? " arrays" : ""));
            return take[0];
          }

          @Override
          public boolean deferringArrays() {
            return true;
          }
        };
    byte[] out = injector.transform(null, "com/acme/Mixed", bytes, deferral);
    byte[] calls = classes.get("com/acme/Calls");
    assertArrayEquals(
        EarlyPolls.patch(calls), injector.transform(null, "com/acme/Calls", calls, deferral));
    byte[] search = classes.get("com/acme/Search");
    byte[] early = injector.transform(null, "com/acme/Search", search, deferral);
    assertArrayEquals(EarlyPolls.patch(search, true), early);
    byte[] skip = classes.get("com/acme/Skip"); // a continue: a second backward branch
    assertArrayEquals(
        EarlyPolls.patch(skip, true), injector.transform(null, "com/acme/Skip", skip, deferral));
    assertEquals(
        List.of("com/acme/Mixed arrays", "com/acme/Calls", "com/acme/Search", "com/acme/Skip"),
        offered);
    assertEquals(4, coverage.early());
    assertEquals(
        2,
        PollInjectorTest.call(
            new TestClasses.Loader(Map.of("com/acme/Search", early)),
            "com.acme.Search",
            "find",
            new byte[] {5, 6, 7},
            (byte) 7));
    assertArrayEquals(EarlyPolls.patch(bytes, true), out);
    for (String m : List.of("sum", "bits")) {
      assertTrue(
          Disassembly.method(out, m).insns().stream()
              .anyMatch(i -> PollInjector.PENDING_NAME.equals(i.name())),
          m + ": no early check");
    }
    assertComputesAsBefore(classes, out);

    take[0] = false;
    byte[] whole = new PollInjector(null, null, false).transform(null, "com/acme/Mixed", bytes);
    assertArrayEquals(whole, injector.transform(null, "com/acme/Mixed", bytes, deferral));
    assertEquals(1, coverage.instrumented());
    assertEquals(4, coverage.early());
  }

  /** A class with an array loop that calls nothing ({@code sum}) and a loop that calls. */
  private static final String MIXED =
      "package com.acme; public class Mixed {"
          + " public static int sum(int[] a) { int s = 0; for (int x : a) s += x;"
          + " return s; }"
          + " public static int bits(int[] a) { int s = 0;"
          + " for (int x : a) s += Integer.bitCount(x); return s; } }";

  /** {@link #MIXED}'s two methods compute in {@code out} what they compute in {@code classes}. */
  private static void assertComputesAsBefore(Map<String, byte[]> classes, byte[] out)
      throws Exception {
    ClassLoader before = new TestClasses.Loader(classes);
    ClassLoader after = new TestClasses.Loader(Map.of("com/acme/Mixed", out));
    int[] a = {3, -1, 4, 1, -5, 9, 2, 6};
    for (String m : List.of("sum", "bits")) {
      assertEquals(
          PollInjectorTest.call(before, "com.acme.Mixed", m, (Object) a),
          PollInjectorTest.call(after, "com.acme.Mixed", m, (Object) a),
          m);
    }
  }

  /** A method's instructions as text, constant-pool indices aside. */
  private static List<String> code(Method m) {
    return m.insns().stream()
        .map(
            i ->
                i.op()
                    + " "
                    + i.owner()
                    + "."
                    + i.name()
                    + " "
                    + i.var()
                    + " "
                    + i.incr()
                    + " "
                    + java.util.Arrays.toString(i.targets()))
        .toList();
  }

  /**
   * 'Class files read back': leavesAlone answers true, and counts the class as transform would,
   * only where transform would leave it alone without ASM (no loop, excluded, refused); where
   * it would rewrite, or where in doubt, false and nothing counted.
   */
  @Test
  void leavesAloneOnlyWhatTransformLeavesAloneWithoutReadingIt() {
    Map<String, byte[]> classes = loopsFlatAndGenerated();
    Coverage coverage = new Coverage();
    PollInjector injector = new PollInjector(null, "com.acme.gen.*", false, coverage);
    byte[] loops = classes.get("com/acme/Loops");
    byte[] flat = classes.get("com/acme/Flat");
    assertFalse(injector.leavesAlone(null, "com/acme/Loops", loops));
    assertEquals(0, coverage.skipped());
    assertTrue(injector.leavesAlone(null, "com/acme/Flat", flat));
    assertEquals(1, coverage.skipped(Coverage.Reason.NO_LOOPS));
    assertTrue(injector.leavesAlone(null, "com/acme/gen/Gen", classes.get("com/acme/gen/Gen")));
    assertEquals(1, coverage.skipped(Coverage.Reason.EXCLUDED));
    assertTrue(injector.leavesAlone(null, "java/lang/Whatever", flat)); // refused: not counted
    // In doubt: the bytes declare another class, or cannot be read.
    assertFalse(injector.leavesAlone(null, "com/acme/Other", flat));
    assertFalse(injector.leavesAlone(null, "com/acme/Bad", new byte[] {1, 2, 3}));
    assertFalse(injector.leavesAlone(null, "com/acme/Bad", new byte[0]));
    assertEquals(2, coverage.skipped());
    assertEquals(0, coverage.instrumented());
    // With prologue polls a method without loops gets one: never left alone unread.
    Coverage withPrologues = new Coverage();
    assertFalse(
        new PollInjector(null, null, true, withPrologues).leavesAlone(null, "com/acme/Flat", flat));
    assertEquals(0, withPrologues.skipped());
    // What transform does with the same bytes agrees.
    assertNull(injector.transform(null, "com/acme/Flat", flat));
    assertNotNull(injector.transform(null, "com/acme/Loops", loops));
  }

  @Test
  void everyClassIsCountedOnceWithItsReasonPerLoaderAndPackage() {
    Map<String, byte[]> classes = loopsFlatAndGenerated();
    Coverage coverage = new Coverage();
    PollInjector injector = new PollInjector(null, "com.acme.gen.*", false, coverage);
    ClassLoader a = new TestClasses.Loader(Map.of());
    ClassLoader b = new TestClasses.Loader(Map.of());
    for (ClassLoader l : new ClassLoader[] {a, b}) {
      classes.forEach((name, bytes) -> injector.transform(l, name, bytes));
    }
    assertNull(injector.transform(a, "java/lang/Whatever", new byte[0])); // refused: not counted
    assertThrows(
        RuntimeException.class, () -> injector.transform(a, "com/acme/Bad", new byte[] {1, 2, 3}));

    assertEquals(2, coverage.instrumented());
    assertEquals(2, coverage.skipped(Coverage.Reason.NO_LOOPS));
    assertEquals(2, coverage.skipped(Coverage.Reason.EXCLUDED));
    assertEquals(1, coverage.skipped(Coverage.Reason.FAILED));
    assertEquals(5, coverage.skipped());
    assertEquals(
        "gmp4j: preemption polls: 2 classes instrumented, 5 left alone"
            + " (2 excluded, 2 no loops, 1 failed) in 2 loaders",
        coverage.summaryLine());
    String table = coverage.table();
    String la = Coverage.loaderName(a);
    assertTrue(la.startsWith("poll-test@"), la);
    // One row per (loader, package): instrumented, then one column per reason in enum order.
    assertTrue(
        table
            .lines()
            .anyMatch(
                line ->
                    line.split(" +").length == 9
                        && String.join(" ", line.split(" +"))
                            .equals(la + " com.acme 1 0 1 0 0 1 0")),
        table);
    assertTrue(
        table
            .lines()
            .anyMatch(
                line ->
                    String.join(" ", line.split(" +"))
                        .equals(Coverage.loaderName(b) + " com.acme.gen 0 1 0 0 0 0 0")),
        table);
    assertTrue(table.contains("failed: com.acme.Bad (java.lang."), table);
  }

  @Test
  void frameCheckFailuresAreToldApart() {
    assertEquals(
        Coverage.Reason.FRAME_CHECK_FAILED,
        Coverage.reasonOf(new FrameCheckException("app/X", "m(I)V", "bci 3", "bad")));
    assertEquals(Coverage.Reason.FAILED, Coverage.reasonOf(new IllegalStateException()));
    Coverage coverage = new Coverage();
    coverage.failed(null, "app/X", new FrameCheckException("app/X", "m(I)V", "bci 3", "stack"));
    assertEquals(1, coverage.skipped(Coverage.Reason.FRAME_CHECK_FAILED));
    assertTrue(coverage.summaryLine().contains("(1 frame check failed)"), coverage.summaryLine());
    assertTrue(coverage.table().contains("frame check failed: app.X ("), coverage.table());
  }

  @Test
  void theListOfMethodsIsBounded() {
    Coverage coverage = new Coverage();
    for (int i = 0; i < Coverage.MAX_LISTED + 5; i++) {
      coverage.method("app/C" + i, "m", "()V", Coverage.Reason.TOO_LARGE);
    }
    assertTrue(coverage.table().endsWith("  ... and 5 more\n"), coverage.table());
  }
}
