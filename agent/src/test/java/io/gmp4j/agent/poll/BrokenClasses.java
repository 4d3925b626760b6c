package io.gmp4j.agent.poll;

import java.util.function.Consumer;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;

/**
 * Class files with hand-written frames, some of which the JVM rejects, for FrameCheckTest and
 * the agent's PreemptPollTransformerTest. Public for the latter only.
 */
public final class BrokenClasses {
  private BrokenClasses() {}

  /**
   * A poll injector that checks the frames of every method it rewrites, not only those with
   * derived frames, so that {@link #handlerWantsLocal}'s wrong frames fail the check.
   */
  public static PollInjector injectorCheckingEveryMethod() {
    return new PollInjector(null, null, false, PollInjector.CHECK_ALL);
  }

  /**
   * {@code static int f(int n)} in class {@code internalName}: a countdown loop on {@code n}, then
   * a try range in which the frame at {@code mid} declares local 1 as {@code midLocal1} while the
   * handler's frame wants it as an int. With {@code Opcodes.TOP} this is the shape of issue 16,
   * which the JVM rejects; with {@code Opcodes.INTEGER} the class verifies.
   *
   * <pre>
   *   ICONST_0; ISTORE 1
   * head: [n:int, x:int]
   *   IINC 0 -1; ILOAD 0; IFGT head         a loop, so the injector rewrites f
   * start:                                  try {
   *   ILOAD 0; IFEQ mid
   * mid: [n:int, x:midLocal1]
   *   ILOAD 0; IRETURN
   * end:                                    } catch (Throwable t) {
   * handler: [n:int, x:int] [Throwable]
   *   POP; ILOAD 1; IRETURN                 return x; }
   * </pre>
   */
  public static byte[] handlerWantsLocal(String internalName, Object midLocal1) {
    return method(
        internalName,
        "(I)I",
        2,
        2,
        mv -> {
          Label head = new Label();
          Label start = new Label();
          Label mid = new Label();
          Label end = new Label();
          Label handler = new Label();
          mv.visitTryCatchBlock(start, end, handler, "java/lang/Throwable");
          mv.visitInsn(Opcodes.ICONST_0);
          mv.visitVarInsn(Opcodes.ISTORE, 1);
          mv.visitLabel(head);
          mv.visitFrame(Opcodes.F_NEW, 2, new Object[] {Opcodes.INTEGER, Opcodes.INTEGER}, 0, null);
          mv.visitIincInsn(0, -1);
          mv.visitVarInsn(Opcodes.ILOAD, 0);
          mv.visitJumpInsn(Opcodes.IFGT, head);
          mv.visitLabel(start);
          mv.visitVarInsn(Opcodes.ILOAD, 0);
          mv.visitJumpInsn(Opcodes.IFEQ, mid);
          mv.visitLabel(mid);
          mv.visitFrame(Opcodes.F_NEW, 2, new Object[] {Opcodes.INTEGER, midLocal1}, 0, null);
          mv.visitVarInsn(Opcodes.ILOAD, 0);
          mv.visitInsn(Opcodes.IRETURN);
          mv.visitLabel(end);
          mv.visitLabel(handler);
          mv.visitFrame(
              Opcodes.F_NEW,
              2,
              new Object[] {Opcodes.INTEGER, Opcodes.INTEGER},
              1,
              new Object[] {"java/lang/Throwable"});
          mv.visitInsn(Opcodes.POP);
          mv.visitVarInsn(Opcodes.ILOAD, 1);
          mv.visitInsn(Opcodes.IRETURN);
        });
  }

  /**
   * A class {@code internalName} with one {@code public static f} of {@code desc}, whose code
   * {@code body} writes with its own frames; no COMPUTE_* flag, so the frames stay as written.
   */
  static byte[] method(
      String internalName, String desc, int maxStack, int maxLocals, Consumer<MethodVisitor> body) {
    ClassWriter cw = new ClassWriter(0);
    cw.visit(Opcodes.V17, Opcodes.ACC_PUBLIC, internalName, null, "java/lang/Object", null);
    MethodVisitor mv =
        cw.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, "f", desc, null, null);
    mv.visitCode();
    body.accept(mv);
    mv.visitMaxs(maxStack, maxLocals);
    mv.visitEnd();
    cw.visitEnd();
    return cw.toByteArray();
  }
}
