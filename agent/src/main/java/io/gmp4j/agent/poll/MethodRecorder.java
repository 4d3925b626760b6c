package io.gmp4j.agent.poll;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import net.bytebuddy.jar.asm.AnnotationVisitor;
import net.bytebuddy.jar.asm.Attribute;
import net.bytebuddy.jar.asm.Handle;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.TypePath;

/**
 * The one pass of {@link PollInjector} over a method with loops: keeps the method's code as the
 * reader visits it, then replays it twice, into a {@link LoopScanner} and into the method
 * that writes it ({@link PollEmitter}'s, or the writer's own when there is nothing to do). See
 * 'One pass' in PollInjector.
 *
 * <p>What comes before {@code visitCode} (parameters, annotations, attributes) goes to the writer
 * at once; it is no instruction and the scanner ignores it. From {@code visitCode} to {@code
 * visitMaxs} every call is kept in order. Frames are copied, because the reader reuses its
 * arrays; labels are the reader's own, which both replays see alike, so instruction indices and
 * label identities agree between the plan and the emitter, as they did between two passes.
 *
 * <p>Used by one thread for one method.
 */
final class MethodRecorder extends MethodVisitor {
  /** Replays {@code code} into a scanner, then the writer; see {@link #visitEnd}. */
  interface Replay {
    /**
     * Called at the method's end: {@code code} replays the kept calls, from {@code visitCode}
     * to {@code visitMaxs}, into a visitor (not {@code visitEnd}, which the writer gets after
     * this returns).
     */
    void end(Consumer<MethodVisitor> code);
  }

  private final List<Consumer<MethodVisitor>> code = new ArrayList<>();
  private final Replay replay;
  private boolean inCode;

  /** {@code writer} gets what comes before the code, and {@code visitEnd}. */
  MethodRecorder(MethodVisitor writer, Replay replay) {
    super(Opcodes.ASM9, writer);
    this.replay = replay;
  }

  private void keep(Consumer<MethodVisitor> call) {
    code.add(call);
  }

  @Override
  public void visitCode() {
    inCode = true;
    keep(MethodVisitor::visitCode);
  }

  @Override
  public void visitFrame(int type, int nLocal, Object[] local, int nStack, Object[] stack) {
    Object[] l = local == null ? null : Arrays.copyOf(local, nLocal);
    Object[] s = stack == null ? null : Arrays.copyOf(stack, nStack);
    keep(mv -> mv.visitFrame(type, nLocal, l, nStack, s));
  }

  @Override
  public void visitInsn(int opcode) {
    keep(mv -> mv.visitInsn(opcode));
  }

  @Override
  public void visitIntInsn(int opcode, int operand) {
    keep(mv -> mv.visitIntInsn(opcode, operand));
  }

  @Override
  public void visitVarInsn(int opcode, int varIndex) {
    keep(mv -> mv.visitVarInsn(opcode, varIndex));
  }

  @Override
  public void visitTypeInsn(int opcode, String type) {
    keep(mv -> mv.visitTypeInsn(opcode, type));
  }

  @Override
  public void visitFieldInsn(int opcode, String owner, String name, String descriptor) {
    keep(mv -> mv.visitFieldInsn(opcode, owner, name, descriptor));
  }

  @Override
  public void visitMethodInsn(
      int opcode, String owner, String name, String descriptor, boolean isInterface) {
    keep(mv -> mv.visitMethodInsn(opcode, owner, name, descriptor, isInterface));
  }

  @Override
  public void visitInvokeDynamicInsn(String name, String desc, Handle bsm, Object... bsmArgs) {
    keep(mv -> mv.visitInvokeDynamicInsn(name, desc, bsm, bsmArgs));
  }

  @Override
  public void visitJumpInsn(int opcode, Label label) {
    keep(mv -> mv.visitJumpInsn(opcode, label));
  }

  @Override
  public void visitLabel(Label label) {
    keep(mv -> mv.visitLabel(label));
  }

  @Override
  public void visitLdcInsn(Object value) {
    keep(mv -> mv.visitLdcInsn(value));
  }

  @Override
  public void visitIincInsn(int varIndex, int increment) {
    keep(mv -> mv.visitIincInsn(varIndex, increment));
  }

  @Override
  public void visitTableSwitchInsn(int min, int max, Label dflt, Label... labels) {
    Label[] l = labels.clone();
    keep(mv -> mv.visitTableSwitchInsn(min, max, dflt, l));
  }

  @Override
  public void visitLookupSwitchInsn(Label dflt, int[] keys, Label[] labels) {
    int[] k = keys.clone();
    Label[] l = labels.clone();
    keep(mv -> mv.visitLookupSwitchInsn(dflt, k, l));
  }

  @Override
  public void visitMultiANewArrayInsn(String descriptor, int numDimensions) {
    keep(mv -> mv.visitMultiANewArrayInsn(descriptor, numDimensions));
  }

  @Override
  public AnnotationVisitor visitInsnAnnotation(
      int typeRef, TypePath typePath, String descriptor, boolean visible) {
    // Kept nowhere: PollInjector.onePass catches this and takes the two passes ('One pass').
    throw new UnsupportedOperationException("visitInsnAnnotation");
  }

  @Override
  public void visitTryCatchBlock(Label start, Label end, Label handler, String type) {
    keep(mv -> mv.visitTryCatchBlock(start, end, handler, type));
  }

  @Override
  public AnnotationVisitor visitTryCatchAnnotation(
      int typeRef, TypePath typePath, String descriptor, boolean visible) {
    throw new UnsupportedOperationException("visitTryCatchAnnotation");
  }

  @Override
  public void visitLocalVariable(
      String name, String descriptor, String signature, Label start, Label end, int index) {
    keep(mv -> mv.visitLocalVariable(name, descriptor, signature, start, end, index));
  }

  @Override
  public AnnotationVisitor visitLocalVariableAnnotation(
      int typeRef,
      TypePath typePath,
      Label[] start,
      Label[] end,
      int[] index,
      String descriptor,
      boolean visible) {
    throw new UnsupportedOperationException("visitLocalVariableAnnotation");
  }

  @Override
  public void visitAttribute(Attribute attribute) {
    if (inCode) { // an attribute of the Code attribute: the reader visits it before visitMaxs
      keep(mv -> mv.visitAttribute(attribute));
    } else {
      super.visitAttribute(attribute);
    }
  }

  @Override
  public void visitLineNumber(int line, Label start) {
    keep(mv -> mv.visitLineNumber(line, start));
  }

  @Override
  public void visitMaxs(int maxStack, int maxLocals) {
    keep(mv -> mv.visitMaxs(maxStack, maxLocals));
  }

  @Override
  public void visitEnd() {
    if (inCode) {
      replay.end(mv -> code.forEach(call -> call.accept(mv)));
    }
    super.visitEnd();
  }
}
