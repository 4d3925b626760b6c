package io.gmp4j.agent.poll;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import org.junit.jupiter.api.Test;

/**
 * 'Frame check': the checker rejects what the JVM's verifier rejects for the defects the emitter
 * could make, accepts every method of real and test classes before and after the rewrite, and a
 * rewritten class that fails it is left alone.
 */
class FrameCheckTest {
  /** One defect: the method body, its max stack and locals, and the checker's reason. */
  private record Defect(
      String what,
      String desc,
      int maxStack,
      int maxLocals,
      Consumer<MethodVisitor> body,
      String reason) {}

  private static final List<Defect> DEFECTS =
      List.of(
          new Defect(
              "a handler wants a local the try range dropped (issue 16)",
              "(I)I",
              2,
              2,
              null,
              "locals[1] is top, not assignable to int in the frame of the handler at bci"),
          new Defect(
              "a branch carries a value its target's frame does not",
              "(I)I",
              2,
              1,
              mv -> {
                Label l = new Label();
                mv.visitInsn(Opcodes.ICONST_0);
                mv.visitVarInsn(Opcodes.ILOAD, 0);
                mv.visitJumpInsn(Opcodes.IFEQ, l);
                mv.visitInsn(Opcodes.IRETURN);
                mv.visitLabel(l);
                mv.visitFrame(Opcodes.F_NEW, 1, new Object[] {Opcodes.INTEGER}, 0, null);
                mv.visitInsn(Opcodes.ICONST_1);
                mv.visitInsn(Opcodes.IRETURN);
              },
              "stack has 1 slots, the frame at the branch target bci 6 has 0"),
          new Defect(
              "a branch target has no frame",
              "(I)I",
              1,
              1,
              mv -> {
                Label l = new Label();
                mv.visitVarInsn(Opcodes.ILOAD, 0);
                mv.visitJumpInsn(Opcodes.IFEQ, l);
                mv.visitInsn(Opcodes.ICONST_0);
                mv.visitInsn(Opcodes.IRETURN);
                mv.visitLabel(l);
                mv.visitInsn(Opcodes.ICONST_1);
                mv.visitInsn(Opcodes.IRETURN);
              },
              "no frame at the branch target"),
          new Defect(
              "a load of a local that is top",
              "(I)I",
              1,
              2,
              mv -> {
                mv.visitVarInsn(Opcodes.ILOAD, 1);
                mv.visitInsn(Opcodes.IRETURN);
              },
              "load of local 1 as int, which is top"),
          new Defect(
              "a POP splits a long",
              "(I)I",
              2,
              1,
              mv -> {
                mv.visitInsn(Opcodes.LCONST_0);
                mv.visitInsn(Opcodes.POP);
                mv.visitInsn(Opcodes.POP);
                mv.visitInsn(Opcodes.ICONST_0);
                mv.visitInsn(Opcodes.IRETURN);
              },
              "splits a long"),
          new Defect(
              "an int where the frame wants a float",
              "(I)I",
              1,
              2,
              mv -> {
                Label l = new Label();
                mv.visitInsn(Opcodes.ICONST_0);
                mv.visitVarInsn(Opcodes.ISTORE, 1);
                mv.visitJumpInsn(Opcodes.GOTO, l);
                mv.visitLabel(l);
                mv.visitFrame(
                    Opcodes.F_NEW, 2, new Object[] {Opcodes.INTEGER, Opcodes.FLOAT}, 0, null);
                mv.visitInsn(Opcodes.ICONST_0);
                mv.visitInsn(Opcodes.IRETURN);
              },
              "locals[1] is int, not assignable to float"),
          new Defect(
              "a new local beyond max_locals",
              "(I)I",
              1,
              1,
              mv -> {
                mv.visitInsn(Opcodes.ICONST_1);
                mv.visitVarInsn(Opcodes.ISTORE, 1);
                mv.visitInsn(Opcodes.ICONST_0);
                mv.visitInsn(Opcodes.IRETURN);
              },
              "local 1 is beyond max_locals 1"),
          new Defect(
              "a push beyond max_stack",
              "(I)I",
              1,
              1,
              mv -> {
                mv.visitInsn(Opcodes.ICONST_0);
                mv.visitInsn(Opcodes.ICONST_1);
                mv.visitInsn(Opcodes.IADD);
                mv.visitInsn(Opcodes.IRETURN);
              },
              "stack overflow: max_stack 1"),
          new Defect(
              "a null where an int is due",
              "(I)I",
              1,
              1,
              mv -> {
                mv.visitInsn(Opcodes.ACONST_NULL);
                mv.visitInsn(Opcodes.IRETURN);
              },
              "expects int on the stack, has null"),
          new Defect(
              "an uninitialized object returned",
              "()Ljava/lang/Object;",
              1,
              0,
              mv -> {
                mv.visitTypeInsn(Opcodes.NEW, "java/lang/Object");
                mv.visitInsn(Opcodes.ARETURN);
              },
              "expects an initialized reference on the stack, has uninitialized"),
          new Defect(
              "code falls through into nothing after a poll-like call",
              "(I)V",
              0,
              1,
              mv ->
                  mv.visitMethodInsn(
                      Opcodes.INVOKESTATIC, "java/lang/Thread", "yield", "()V", false),
              "falls off the end of the code"));

  private static byte[] classOf(Defect d, String name) {
    return d.body() == null
        ? BrokenClasses.handlerWantsLocal(name, Opcodes.TOP)
        : BrokenClasses.method(name, d.desc(), d.maxStack(), d.maxLocals(), d.body());
  }

  @Test
  void rejectsWhatTheVerifierRejects() {
    int i = 0;
    for (Defect d : DEFECTS) {
      String name = "app/Broken" + i++;
      byte[] bytes = classOf(d, name);
      FrameCheckException e =
          assertThrows(
              FrameCheckException.class,
              () -> FrameCheck.check(bytes, allMethods(bytes)),
              d.what());
      assertTrue(e.getMessage().contains(d.reason()), d.what() + ": " + e.getMessage());
      assertTrue(
          e.getMessage()
              .startsWith("frame check failed in " + name + "." + "f" + d.desc() + " at "),
          e.getMessage());
      assertEquals(name, e.className());
      assertEquals("f" + d.desc(), e.method());
      // The JVM agrees, so the defect is real and the checker's rule is the verifier's.
      ClassLoader loader = new TestClasses.Loader(Map.of(name, bytes));
      assertThrows(
          VerifyError.class,
          () -> Class.forName(name.replace('/', '.'), false, loader).getDeclaredMethods(),
          d.what());
    }
  }

  @Test
  void handlerMismatchNamesBothOffsets() throws Exception {
    byte[] bytes = BrokenClasses.handlerWantsLocal("app/Shape16", Opcodes.TOP);
    FrameCheckException e =
        assertThrows(FrameCheckException.class, () -> FrameCheck.check(bytes, Set.of("f(I)I")));
    assertEquals(
        "frame check failed in app/Shape16.f(I)I at bci 13: locals[1] is top, not"
            + " assignable to int in the frame of the handler at bci 15",
        e.getMessage());
    byte[] fixed = BrokenClasses.handlerWantsLocal("app/Shape16", Opcodes.INTEGER);
    FrameCheck.check(fixed, Set.of("f(I)I"));
    ClassLoader loader = new TestClasses.Loader(Map.of("app/Shape16", fixed));
    assertEquals(0, PollInjectorTest.call(loader, "app.Shape16", "f", 5)); // n counts down to 0
  }

  @Test
  void aRewrittenMethodThatFailsLeavesTheClassAlone() {
    byte[] bytes = BrokenClasses.handlerWantsLocal("app/Shape16", Opcodes.TOP);
    // f's countdown derives no frame (its back-edge goes through a trampoline that copies the
    // head's frame), so the agent's injector does not check it; the frames that are wrong are
    // the input's own ('Frame check only where frames are derived' in PollInjector).
    assertNotNull(new PollInjector(null, null, false).transform(null, "app/Shape16", bytes));
    PollInjector checked = BrokenClasses.injectorCheckingEveryMethod();
    FrameCheckException e =
        assertThrows(
            FrameCheckException.class, () -> checked.transform(null, "app/Shape16", bytes));
    assertEquals("app/Shape16", e.className());
    assertEquals("f(I)I", e.method());
    assertTrue(checked.lastStats().isEmpty(), "stats of a class left alone");
    // Without the check the injector returns the class; the check is what stops it.
    assertNotNull(new PollInjector(null, null, false, false).transform(null, "app/Shape16", bytes));
  }

  @Test
  void acceptsEveryMethodOfTheInjectorCorpusBeforeAndAfter() {
    PollInjectorTest.compile();
    Map<String, byte[]> corpus = new java.util.TreeMap<>(PollInjectorTest.original);
    corpus.put("app/SwitchLoops", PollInjectorTest.switchLoops(Opcodes.V17));
    corpus.put("app/TryLoop", HandlerFrameTest.tryLoop());
    int rewritten = 0;
    for (boolean prologue : new boolean[] {false, true}) {
      PollInjector injector = new PollInjector("*", null, prologue, false);
      for (Map.Entry<String, byte[]> e : corpus.entrySet()) {
        FrameCheck.check(e.getValue(), allMethods(e.getValue()));
        byte[] t = injector.transform(null, e.getKey(), e.getValue());
        if (t != null) {
          FrameCheck.check(t, allMethods(t));
          rewritten++;
        }
      }
    }
    assertTrue(rewritten >= 2 * 8, "rewritten classes: " + rewritten);
  }

  /**
   * Every method of ECJ, as shipped and as rewritten (prologue polls on, so every method with
   * code is rewritten): no false alarm on a large body of real code from another compiler.
   */
  @Test
  void acceptsEveryMethodOfEcjBeforeAndAfter() {
    Map<String, byte[]> jar =
        TestClasses.jarOf(FrameCheckTest.class.getClassLoader(), HandlerFrameTest.SCANNER);
    PollInjector injector = new PollInjector(null, null, true, false);
    List<String> failed = new ArrayList<>();
    int rewritten = 0;
    for (Map.Entry<String, byte[]> e : jar.entrySet()) {
      try {
        FrameCheck.check(e.getValue(), allMethods(e.getValue()));
        byte[] t = injector.transform(null, e.getKey(), e.getValue());
        if (t != null) {
          FrameCheck.check(t, allMethods(t));
          rewritten++;
        }
      } catch (FrameCheckException x) {
        failed.add(x.getMessage());
      }
    }
    assertEquals(List.of(), failed);
    assertTrue(rewritten > jar.size() / 2, rewritten + " of " + jar.size());
  }

  /** Name + descriptor of every method of {@code classfile}. */
  static Set<String> allMethods(byte[] classfile) {
    return Disassembly.methods(classfile).keySet();
  }
}
