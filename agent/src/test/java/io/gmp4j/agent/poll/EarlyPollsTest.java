package io.gmp4j.agent.poll;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gmp4j.agent.poll.Disassembly.Insn;
import io.gmp4j.agent.poll.Disassembly.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * 'Early polls': every loop polled, at its head or right before its backward branch, and nothing
 * else changed; the classes verify and compute the same; what the patch does not handle is left
 * to the rewrite.
 */
class EarlyPollsTest {
  @BeforeAll
  static void compile() {
    if (PollInjectorTest.original == null) {
      PollInjectorTest.compile(); // the injector's test shapes and kernels
    }
  }

  /**
   * Every class of three real jars (ECJ: compiler code, large switches, the Scanner whose
   * rewrite once failed verification; jackson-databind; commons-math3, Java 5 class files
   * without frames) and of the injector's own test shapes: in every method but {@code <clinit>}
   * and bridges, every loop is polled and nothing else changes; each class links, so HotSpot's
   * verifier checks every patched method against its relocated and added frames.
   */
  @Test
  void everyBackwardBranchOfRealJarsGetsAPollAndVerifies() throws Exception {
    ClassLoader here = EarlyPollsTest.class.getClassLoader();
    List<Map<String, byte[]>> jars =
        List.of(
            TestClasses.jarOf(here, "org/eclipse/jdt/internal/compiler/parser/Scanner"),
            TestClasses.jarOf(here, "com/fasterxml/jackson/databind/ObjectMapper"),
            TestClasses.jarOf(here, "org/apache/commons/math3/linear/Array2DRowRealMatrix"),
            PollInjectorTest.original);
    int patched = 0;
    int polls = 0;
    int linked = 0;
    List<String> declined = new ArrayList<>();
    for (Map<String, byte[]> jar : jars) {
      Map<String, byte[]> out = new HashMap<>(jar);
      for (Map.Entry<String, byte[]> e : jar.entrySet()) {
        byte[] p = EarlyPolls.patch(e.getValue(), true); // every loop: 'Array loops' aside
        if (p == null) {
          declined.add(e.getKey());
        } else if (p != e.getValue()) {
          patched++;
          polls += assertEveryLoopPolledAndNothingElse(e.getKey(), e.getValue(), p);
          out.put(e.getKey(), p);
        } else {
          assertTrue(noPollableBackEdge(e.getValue()), e.getKey() + ": unchanged");
        }
      }
      ClassLoader loader = new TestClasses.Loader(out);
      for (String name : out.keySet()) {
        if (out.get(name) != jar.get(name)) {
          linked += link(loader, name.replace('/', '.')) ? 1 : 0;
        }
      }
    }
    System.out.printf(
        "early polls: %d classes patched, %d polls (%d before a branch), %d linked to the end,"
            + " declined %s%n",
        patched, polls, callsSeen, linked, declined);
    assertTrue(patched > 900, "patched " + patched);
    assertTrue(linked * 10 > patched * 9, "linked " + linked);
    assertTrue(declined.size() * 100 < patched, "declined " + declined);
  }

  /**
   * The patched shapes and kernels compute what the originals compute, switches re-padded and
   * frames moved included.
   */
  @Test
  void patchedClassesComputeTheSame() throws Exception {
    Map<String, byte[]> patched = new HashMap<>();
    PollInjectorTest.original.forEach((n, b) -> patched.put(n, EarlyPolls.patch(b, true)));
    ClassLoader before = new TestClasses.Loader(PollInjectorTest.original);
    ClassLoader after = new TestClasses.Loader(patched);
    Object[][] calls = {
      {"app.Shapes", "whileLoop", 1000},
      {"app.Shapes", "doWhile", 7},
      {"app.Shapes", "forBreakContinue", new int[] {1, -2, 3, -4, 5, 600, 7}, 500},
      {"app.Shapes", "labeledContinue", 300},
      {"app.Shapes", "enhancedArray", new long[] {1, 2, 3, Long.MAX_VALUE}},
      {"app.Shapes", "enhancedIterable", List.of(1, 2, 3, 4)},
      {"app.Shapes", "stateMachine", 5000},
      {"app.Shapes", "listWalk", 3000},
      {"app.Shapes", "lambdaLoop", 4000},
      {"app.Kernels", "arraySum", (Object) new int[] {3, 1, 4, 1, 5, 9, 2, 6}},
      {"app.Kernels", "whileCounted", 10_000},
      {"app.Kernels", "early", 777},
      {"app.Kernels", "merged", true, 99},
    };
    for (Object[] c : calls) {
      Object[] args = java.util.Arrays.copyOfRange(c, 2, c.length);
      Object want = PollInjectorTest.call(before, (String) c[0], (String) c[1], args);
      Object got = PollInjectorTest.call(after, (String) c[0], (String) c[1], args);
      assertTrue(Objects.deepEquals(want, got), c[1] + ": " + want + " != " + got);
    }
  }

  /**
   * 'Array loops': a class with a loop that reads or writes an array and calls nothing is left to
   * the rewrite (null), exactly those; every other class of the real jars is patched.
   */
  @Test
  void arrayLoopsWithoutCallsAreLeftToTheRewrite() {
    ClassLoader here = EarlyPollsTest.class.getClassLoader();
    int declined = 0;
    int patched = 0;
    int byMethod = 0;
    for (Map<String, byte[]> jar :
        List.of(
            TestClasses.jarOf(here, "org/eclipse/jdt/internal/compiler/parser/Scanner"),
            TestClasses.jarOf(here, "com/fasterxml/jackson/databind/ObjectMapper"))) {
      for (Map.Entry<String, byte[]> e : jar.entrySet()) {
        byte[] p = EarlyPolls.patch(e.getValue());
        List<String> arrayMethods = arrayLoopMethods(e.getValue());
        boolean arrayLoop = !arrayMethods.isEmpty();
        assertEquals(arrayLoop, p == null, e.getKey());
        if (arrayLoop) {
          declined++;
          // The agent's form: those methods left as they are and named, the others patched.
          java.util.BitSet left = new java.util.BitSet();
          byte[] q = EarlyPolls.patch(e.getValue(), left);
          assertNotNull(q, e.getKey());
          List<String> order = methodsInOrder(e.getValue());
          assertEquals(
              arrayMethods,
              left.stream().mapToObj(order::get).toList(),
              e.getKey() + ": the methods named");
          assertEveryLoopPolledAndNothingElse(e.getKey(), e.getValue(), q, arrayMethods);
          byMethod++;
        } else if (p != e.getValue()) {
          patched++;
        }
      }
    }
    System.out.printf(
        "early polls: %d classes patched, %d left to the rewrite, %d of those patched but"
            + " their array methods%n",
        patched, declined, byMethod);
    assertTrue(declined > 10 && patched > declined, declined + " vs " + patched);
    assertEquals(declined, byMethod);
    Map<String, byte[]> c =
        TestClasses.compile(
            Map.of(
                "app.Sum",
                "package app; public class Sum { static int f(int[] a) { int s = 0;"
                    + " for (int x : a) s += x; return s; } }",
                "app.Calls",
                "package app; public class Calls { static int f(int[] a) { int s = 0;"
                    + " for (int x : a) s += Integer.bitCount(x); return s; } }",
                "app.Search",
                "package app; public class Search { static int f(Object[] a, Object x) {"
                    + " for (int i = 0; i < a.length; i++) if (a[i] == x) return i;"
                    + " return -1; } }"));
    assertNull(EarlyPolls.patch(c.get("app/Sum")));
    assertNotNull(EarlyPolls.patch(c.get("app/Sum"), true));
    assertNotNull(EarlyPolls.patch(c.get("app/Calls")));
    // Not vectorized, but the check costs a search over a reference array 3x (BENCHMARKS.md,
    // 'Array loops that do not vectorize'): left to the rewrite too.
    assertNull(EarlyPolls.patch(c.get("app/Search")));
  }

  /**
   * The rule of 'Array loops', on ASM's view of the class, written again to check it: the
   * methods (name and descriptor) with such a loop, in class-file order.
   */
  private static List<String> arrayLoopMethods(byte[] classfile) {
    List<String> out = new ArrayList<>();
    Map<String, Method> methods = Disassembly.methods(classfile);
    for (String key : methodsInOrder(classfile)) {
      Method m = methods.get(key); // null: no code
      if (m != null && hasArrayLoopWithoutCalls(classfile, m)) {
        out.add(key);
      }
    }
    return out;
  }

  private static boolean hasArrayLoopWithoutCalls(byte[] classfile, Method m) {
    if (m.name().equals("<clinit>") || bridges(classfile).contains(m.name() + m.desc())) {
      return false;
    }
    List<Insn> insns = m.insns();
    for (int k : m.backwardBranches()) {
      for (int t : insns.get(k).targets()) {
        if (t > k) {
          continue;
        }
        boolean array = false;
        boolean call = false;
        for (int i = t; i <= k; i++) {
          int op = insns.get(i).op();
          array |=
              (op >= Opcodes.IALOAD && op <= Opcodes.SALOAD)
                  || (op >= Opcodes.IASTORE && op <= Opcodes.SASTORE);
          call |= op >= Opcodes.INVOKEVIRTUAL && op <= Opcodes.INVOKEDYNAMIC;
        }
        if (array && !call) {
          return true;
        }
      }
    }
    return false;
  }

  /** A class without loops, or with a loop only in {@code <clinit>}, comes back as it was. */
  @Test
  void classWithoutPollableLoopsIsReturnedAsItIs() {
    Map<String, byte[]> c =
        TestClasses.compile(
            Map.of(
                "app.Flat",
                "package app; public class Flat { static int f(int a) { return a + 1; } }",
                "app.Init",
                "package app; public class Init { static int s;"
                    + " static { for (int i = 0; i < 10; i++) s += i; } }"));
    for (byte[] b : c.values()) {
      assertSame(b, EarlyPolls.patch(b));
    }
  }

  /**
   * Left to the rewrite (null): a short branch pushed past 16 bits by its own poll, and bytes
   * that are no class file.
   */
  @Test
  void whatThePatchCannotDoIsLeftToTheRewrite() {
    // The loop-head check at the GOTO's target moves the GOTO 9 bytes further from it.
    assertNull(EarlyPolls.patch(longBackwardGoto(32_760)));
    assertNotNull(EarlyPolls.patch(longBackwardGoto(32_750)));
    assertNull(EarlyPolls.patch(new byte[] {1, 2, 3}));
    byte[] truncated = PollInjectorTest.original.get("app/Shapes");
    assertNull(EarlyPolls.patch(java.util.Arrays.copyOf(truncated, truncated.length / 2)));
  }

  /**
   * Type annotations in code, visible and invisible, of every kind javac writes there (a local
   * variable, a caught exception, {@code new}, {@code instanceof}, a cast, a generic call's type
   * argument), one of them on the {@code NEW} that opens a do-while body, the loop head that
   * takes the check: the class is patched, each annotation stays on the instruction or the
   * range of instructions it was on, and the class verifies and computes the same. Spring
   * Framework 7's JSpecify {@code @Nullable} puts such annotations in its classes.
   */
  @Test
  void typeAnnotationsInCodeStayOnTheirInstructions() throws Exception {
    Map<String, byte[]> c =
        TestClasses.compile(
            Map.of(
                "app.Annotated",
                """
                package app;
                import java.lang.annotation.*;
                import java.util.*;
                public class Annotated {
                  @Target(ElementType.TYPE_USE) @Retention(RetentionPolicy.RUNTIME)
                  @interface N { int value() default 0; String[] tags() default {}; }
                  @Target(ElementType.TYPE_USE) @interface M { Class<?> value(); }
                  static <T> T id(T t) { return t; }
                  public static int f(int n) {
                    @N(1) Object o = n;
                    int s = 0;
                    int i = 0;
                    do {
                      List<@N String> l = new @N(2) ArrayList<@M(String.class) String>();
                      l.add(Annotated.<@N(4) String>id("x"));
                      if (o instanceof @M(Integer.class) Integer) {
                        s += ((@N(6) Integer) o) > 0 ? 2 : 1;
                      }
                      s += l.size();
                      i++;
                    } while (i < n);
                    try {
                      s += ((@N(tags = {"a", "b"}) Integer) id(o));
                    } catch (@N(7) RuntimeException e) {
                      s--;
                    }
                    return s;
                  }
                }
                """));
    byte[] original = c.get("app/Annotated");
    byte[] patched = EarlyPolls.patch(original);
    assertNotNull(patched, "left to the rewrite");
    List<Insn> f = Disassembly.method(patched, "f").insns();
    int newAt = 0;
    while (f.get(newAt).op() != Opcodes.NEW) {
      newAt++;
    }
    assertTrue(f.get(newAt - 1).isPoll(), "the loop-head check before the do-while's NEW");
    List<String> before = typeAnnotationPlaces(original);
    assertTrue(before.size() >= 9, "javac wrote " + before);
    assertEquals(before, typeAnnotationPlaces(patched));
    assertEquals(
        PollInjectorTest.call(new TestClasses.Loader(c), "app.Annotated", "f", 5),
        PollInjectorTest.call(
            new TestClasses.Loader(Map.of("app/Annotated", patched)), "app.Annotated", "f", 5));
  }

  /**
   * An {@code Uninitialized} verification type names its {@code NEW}; a do-while whose body
   * opens with {@code new} and branches inside the constructor's arguments has a frame with
   * one, naming the loop head. The patch moved it to the head's check, and the class failed to
   * load ({@code ClassFormatError: bad offset for Uninitialized}); it names the {@code NEW}.
   */
  @Test
  void doWhileOpeningWithNewKeepsItsUninitializedFrame() throws Exception {
    Map<String, byte[]> c =
        TestClasses.compile(
            Map.of(
                "app.Boxes",
                """
                package app;
                public class Boxes {
                  final int v;
                  Boxes(int v) { this.v = v; }
                  public static int f(boolean odd, int n) {
                    int s = 0;
                    int i = 0;
                    do {
                      Boxes b = new Boxes(odd ? 1 : 2);
                      s += b.v;
                      i++;
                    } while (i < n);
                    return s;
                  }
                }
                """));
    byte[] patched = EarlyPolls.patch(c.get("app/Boxes"));
    assertNotNull(patched);
    assertEquals(1, Disassembly.method(patched, "f").polls());
    assertEquals(
        PollInjectorTest.call(new TestClasses.Loader(c), "app.Boxes", "f", true, 7),
        PollInjectorTest.call(
            new TestClasses.Loader(Map.of("app/Boxes", patched)), "app.Boxes", "f", true, 7));
  }

  /**
   * Where each type annotation in code sits ({@link Disassembly.TypeAnnotation}), its
   * instruction indices counted among the instructions that are not the patch's (its check's
   * GETSTATIC and IFEQ, and the poll call), and an annotated instruction's opcode beside.
   */
  private static List<String> typeAnnotationPlaces(byte[] classfile) {
    List<String> places = new ArrayList<>();
    for (Method m : Disassembly.methods(classfile).values()) {
      List<Insn> insns = m.insns();
      boolean[] patch = new boolean[insns.size()]; // the check's three, and call-site polls
      for (int k = 0; k < insns.size(); k++) {
        if (insns.get(k).isPoll()) {
          patch[k] = true;
        } else if (k + 2 < insns.size() && isHead(insns, k)) {
          patch[k] = patch[k + 1] = true;
        }
      }
      int[] unpatched = new int[insns.size() + 1]; // index -> the original's index
      for (int k = 0; k < insns.size(); k++) {
        unpatched[k + 1] = unpatched[k] + (patch[k] ? 0 : 1);
      }
      for (Disassembly.TypeAnnotation a : m.annotations()) {
        StringBuilder r = new StringBuilder(m.name()).append(' ').append(a.what());
        for (int k : a.at()) {
          r.append(' ').append(unpatched[k]);
        }
        if (a.what().startsWith("insn ")) {
          r.append(" op ").append(insns.get(a.at()[0]).op());
        }
        places.add(r.toString());
      }
    }
    return places;
  }

  /**
   * A loop whose head has two values on the stack cannot take the loop-head check (the frame
   * after it would be a full frame): its branch gets the poll instead, and it verifies and
   * computes the same. Without frames (Java 5) the same loop takes the check.
   */
  @Test
  void loopWithTwoValuesOnTheStackIsPolledBeforeItsBranch() throws Exception {
    for (int version : new int[] {Opcodes.V1_8, Opcodes.V1_5}) {
      byte[] original = deepLoop(version);
      byte[] patched = EarlyPolls.patch(original, true);
      assertNotNull(patched);
      List<Insn> f = Disassembly.method(patched, "f").insns();
      int gotoAt = f.size() - 2; // ... GOTO head; IRETURN
      assertEquals(Opcodes.GOTO, f.get(gotoAt).op());
      assertEquals(version == Opcodes.V1_8, f.get(gotoAt - 1).isPoll(), "a poll before GOTO");
      assertEquals(version == Opcodes.V1_5, isHead(f, 2), "the check at the head");
      assertEquals(1, Disassembly.method(patched, "f").polls());
      Object want =
          PollInjectorTest.call(
              new TestClasses.Loader(Map.of("app/Deep", original)), "app.Deep", "f", 5);
      Object got =
          PollInjectorTest.call(
              new TestClasses.Loader(Map.of("app/Deep", patched)), "app.Deep", "f", 5);
      assertEquals(5, want);
      assertEquals(want, got);
    }
  }

  /**
   * {@code static int f(int n)}: a counter and a spare int on the stack at the loop head; each
   * pass drops the spare, counts n down and, while it is not negative, adds one to the counter
   * and pushes a spare again: f(n) is n.
   */
  private static byte[] deepLoop(int version) {
    ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_MAXS | ClassWriter.COMPUTE_FRAMES);
    cw.visit(version, Opcodes.ACC_PUBLIC, "app/Deep", null, "java/lang/Object", null);
    MethodVisitor mv =
        cw.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, "f", "(I)I", null, null);
    mv.visitCode();
    Label head = new Label();
    Label end = new Label();
    mv.visitInsn(Opcodes.ICONST_0);
    mv.visitInsn(Opcodes.ICONST_0);
    mv.visitLabel(head);
    mv.visitInsn(Opcodes.POP);
    mv.visitIincInsn(0, -1);
    mv.visitVarInsn(Opcodes.ILOAD, 0);
    mv.visitJumpInsn(Opcodes.IFLT, end);
    mv.visitInsn(Opcodes.ICONST_1);
    mv.visitInsn(Opcodes.IADD);
    mv.visitInsn(Opcodes.ICONST_0);
    mv.visitJumpInsn(Opcodes.GOTO, head);
    mv.visitLabel(end);
    mv.visitInsn(Opcodes.IRETURN);
    mv.visitMaxs(0, 0);
    mv.visitEnd();
    cw.visitEnd();
    return cw.toByteArray();
  }

  /**
   * A Java 5 class ({@code V1_5}, no frames) whose one method is {@code gap} NOPs, then a {@code
   * GOTO} back to the first, then {@code RETURN}.
   */
  private static byte[] longBackwardGoto(int gap) {
    ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_MAXS);
    cw.visit(Opcodes.V1_5, Opcodes.ACC_PUBLIC, "app/Long", null, "java/lang/Object", null);
    MethodVisitor mv =
        cw.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, "spin", "()V", null, null);
    mv.visitCode();
    Label top = new Label();
    mv.visitLabel(top);
    for (int i = 0; i < gap; i++) {
      mv.visitInsn(Opcodes.NOP);
    }
    mv.visitJumpInsn(Opcodes.GOTO, top);
    mv.visitInsn(Opcodes.RETURN);
    mv.visitMaxs(0, 0);
    mv.visitEnd();
    cw.visitEnd();
    byte[] b = cw.toByteArray();
    assertEquals(Opcodes.GOTO, Disassembly.method(b, "spin").insns().get(gap).op(), "short goto");
    return b;
  }

  /**
   * Checks that {@code patched} is {@code original} with, in every method but {@code <clinit>}
   * and bridges, each backward branch's loop polled: each of its backward targets starts with the
   * loop-head check, or the branch has a poll right before it; and nothing else inserted. Returns
   * the number of checks and polls.
   */
  private static int callsSeen;

  private static int assertEveryLoopPolledAndNothingElse(
      String name, byte[] original, byte[] patched) {
    return assertEveryLoopPolledAndNothingElse(name, original, patched, List.of());
  }

  /** As above, but the methods in {@code unpolled} (name and descriptor) are left as they were. */
  private static int assertEveryLoopPolledAndNothingElse(
      String name, byte[] original, byte[] patched, List<String> unpolled) {
    new ClassReader(patched).accept(new net.bytebuddy.jar.asm.ClassVisitor(Opcodes.ASM9) {}, 0);
    Map<String, Method> before = Disassembly.methods(original);
    Map<String, Method> after = Disassembly.methods(patched);
    assertEquals(before.keySet(), after.keySet(), name);
    List<String> bridges = bridges(original);
    int inserted = 0;
    for (Method m : before.values()) {
      String where = name + "." + m.name() + m.desc();
      List<Insn> now = after.get(m.name() + m.desc()).insns();
      List<Integer> ops = new ArrayList<>();
      java.util.BitSet heads = new java.util.BitSet();
      java.util.BitSet calls = new java.util.BitSet();
      for (int k = 0; k < now.size(); k++) {
        if (isHead(now, k)) {
          heads.set(k);
          k += 2;
        } else if (now.get(k).isPoll()) {
          calls.set(k);
        } else {
          ops.add(now.get(k).op());
        }
      }
      assertEquals(m.insns().stream().map(Insn::op).toList(), ops, where);
      if (m.name().equals("<clinit>")
          || bridges.contains(m.name() + m.desc())
          || unpolled.contains(m.name() + m.desc())) {
        assertTrue(heads.isEmpty() && calls.isEmpty(), where + ": polled");
        continue;
      }
      for (int k : after.get(m.name() + m.desc()).backwardBranches()) {
        for (int t : now.get(k).targets()) {
          assertTrue(
              t > k || heads.get(t) || (k > 0 && calls.get(k - 1)),
              where + ": the backward branch at " + k + " to " + t + " has no poll");
        }
      }
      inserted += heads.cardinality() + calls.cardinality();
      callsSeen += calls.cardinality();
    }
    return inserted;
  }

  /** Whether {@code GETSTATIC Preempt.pending; IFEQ past the call; INVOKESTATIC poll} is at k. */
  private static boolean isHead(List<Insn> insns, int k) {
    Insn get = insns.get(k);
    return get.op() == Opcodes.GETSTATIC
        && PollInjector.PREEMPT_OWNER.equals(get.owner())
        && PollInjector.PENDING_NAME.equals(get.name())
        && insns.get(k + 1).op() == Opcodes.IFEQ
        && insns.get(k + 1).targets()[0] == k + 3
        && insns.get(k + 2).isPoll();
  }

  private static List<String> bridges(byte[] classfile) {
    return methodsWith(classfile, Opcodes.ACC_BRIDGE);
  }

  /** The methods' names and descriptors in class-file order, as the method indices count. */
  private static List<String> methodsInOrder(byte[] classfile) {
    return methodsWith(classfile, 0);
  }

  /** The methods with every flag of {@code access} (0: all), name and descriptor, in order. */
  private static List<String> methodsWith(byte[] classfile, int access) {
    List<String> out = new ArrayList<>();
    new ClassReader(classfile)
        .accept(
            new net.bytebuddy.jar.asm.ClassVisitor(Opcodes.ASM9) {
              @Override
              public MethodVisitor visitMethod(
                  int flags, String name, String desc, String sig, String[] ex) {
                if ((flags & access) == access) {
                  out.add(name + desc);
                }
                return null;
              }
            },
            ClassReader.SKIP_CODE);
    return out;
  }

  private static boolean noPollableBackEdge(byte[] classfile) {
    List<String> bridges = bridges(classfile);
    return Disassembly.methods(classfile).values().stream()
        .filter(m -> !m.name().equals("<clinit>") && !bridges.contains(m.name() + m.desc()))
        .allMatch(m -> m.backwardBranches().isEmpty());
  }

  /**
   * Loads and links {@code name}, so the verifier checks every method, without initialising it.
   * False if a missing optional dependency of the jar (a superclass, or a type the verifier or
   * reflection loads) ended it with NoClassDefFoundError, as it would without the patch; a
   * VerifyError goes through.
   */
  private static boolean link(ClassLoader loader, String name) throws ClassNotFoundException {
    try {
      Class<?> c = Class.forName(name, false, loader);
      if (c.isInterface()) {
        c.getDeclaredFields();
      } else {
        c.getDeclaredConstructors();
      }
      return true;
    } catch (NoClassDefFoundError optionalDependencyMissing) {
      return false; // not verified to the end; RealJarsIT compares such classes with and without
    }
  }
}
