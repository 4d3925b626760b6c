package io.gmp4j.agent.poll;

import java.util.Arrays;
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
 * <p>A call is kept as a kind, its int operands and its other operands, in three arrays that grow
 * as needed, and replayed by a switch: no object per instruction. (Kept as one lambda per call, the
 * recording and its two replays were about a tenth of the injector's time at Spring Boot's
 * start-up; BENCHMARKS.md, 'Compressed frames'.)
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

  // The kinds of kept call. Each takes its int operands from ints and its others from refs, in
  // the order of the visit method's parameters.
  private static final byte CODE = 0;
  private static final byte FRAME = 1; // type, nLocal, nStack; local, stack
  private static final byte INSN = 2; // opcode
  private static final byte INT_INSN = 3; // opcode, operand
  private static final byte VAR_INSN = 4; // opcode, var
  private static final byte TYPE_INSN = 5; // opcode; type
  private static final byte FIELD_INSN = 6; // opcode; owner, name, descriptor
  private static final byte METHOD_INSN = 7; // opcode, isInterface; owner, name, descriptor
  private static final byte INDY_INSN = 8; // ; name, descriptor, bsm, bsmArgs
  private static final byte JUMP_INSN = 9; // opcode; label
  private static final byte LABEL = 10; // ; label
  private static final byte LDC_INSN = 11; // ; value
  private static final byte IINC_INSN = 12; // var, increment
  private static final byte TABLESWITCH = 13; // min, max; dflt, labels
  private static final byte LOOKUPSWITCH = 14; // ; dflt, keys, labels
  private static final byte MULTIANEWARRAY = 15; // dims; descriptor
  private static final byte TRY_CATCH = 16; // ; start, end, handler, type
  private static final byte LOCAL_VARIABLE = 17; // index; name, descriptor, signature, start, end
  private static final byte ATTRIBUTE = 18; // ; attribute
  private static final byte LINE_NUMBER = 19; // line; start
  private static final byte MAXS = 20; // maxStack, maxLocals

  private final Replay replay;
  private boolean inCode;
  private byte[] kinds = new byte[128];
  private int nKinds;
  private int[] ints = new int[128];
  private int nInts;
  private Object[] refs = new Object[128];
  private int nRefs;

  /** {@code writer} gets what comes before the code, and {@code visitEnd}. */
  MethodRecorder(MethodVisitor writer, Replay replay) {
    super(Opcodes.ASM9, writer);
    this.replay = replay;
  }

  private void keepKind(byte k) {
    if (nKinds == kinds.length) {
      kinds = Arrays.copyOf(kinds, nKinds * 2);
    }
    kinds[nKinds++] = k;
  }

  private void keepInt(int v) {
    if (nInts == ints.length) {
      ints = Arrays.copyOf(ints, nInts * 2);
    }
    ints[nInts++] = v;
  }

  private void keepRef(Object v) {
    if (nRefs == refs.length) {
      refs = Arrays.copyOf(refs, nRefs * 2);
    }
    refs[nRefs++] = v;
  }

  @Override
  public void visitCode() {
    inCode = true;
    keepKind(CODE);
  }

  @Override
  public void visitFrame(int type, int nLocal, Object[] local, int nStack, Object[] stack) {
    keepKind(FRAME);
    keepInt(type);
    keepInt(nLocal);
    keepInt(nStack);
    keepRef(local == null ? null : Arrays.copyOf(local, nLocal));
    keepRef(stack == null ? null : Arrays.copyOf(stack, nStack));
  }

  @Override
  public void visitInsn(int opcode) {
    keepKind(INSN);
    keepInt(opcode);
  }

  @Override
  public void visitIntInsn(int opcode, int operand) {
    keepKind(INT_INSN);
    keepInt(opcode);
    keepInt(operand);
  }

  @Override
  public void visitVarInsn(int opcode, int varIndex) {
    keepKind(VAR_INSN);
    keepInt(opcode);
    keepInt(varIndex);
  }

  @Override
  public void visitTypeInsn(int opcode, String type) {
    keepKind(TYPE_INSN);
    keepInt(opcode);
    keepRef(type);
  }

  @Override
  public void visitFieldInsn(int opcode, String owner, String name, String descriptor) {
    keepKind(FIELD_INSN);
    keepInt(opcode);
    keepRef(owner);
    keepRef(name);
    keepRef(descriptor);
  }

  @Override
  public void visitMethodInsn(
      int opcode, String owner, String name, String descriptor, boolean isInterface) {
    keepKind(METHOD_INSN);
    keepInt(opcode);
    keepInt(isInterface ? 1 : 0);
    keepRef(owner);
    keepRef(name);
    keepRef(descriptor);
  }

  @Override
  public void visitInvokeDynamicInsn(String name, String desc, Handle bsm, Object... bsmArgs) {
    keepKind(INDY_INSN);
    keepRef(name);
    keepRef(desc);
    keepRef(bsm);
    keepRef(bsmArgs);
  }

  @Override
  public void visitJumpInsn(int opcode, Label label) {
    keepKind(JUMP_INSN);
    keepInt(opcode);
    keepRef(label);
  }

  @Override
  public void visitLabel(Label label) {
    keepKind(LABEL);
    keepRef(label);
  }

  @Override
  public void visitLdcInsn(Object value) {
    keepKind(LDC_INSN);
    keepRef(value);
  }

  @Override
  public void visitIincInsn(int varIndex, int increment) {
    keepKind(IINC_INSN);
    keepInt(varIndex);
    keepInt(increment);
  }

  @Override
  public void visitTableSwitchInsn(int min, int max, Label dflt, Label... labels) {
    keepKind(TABLESWITCH);
    keepInt(min);
    keepInt(max);
    keepRef(dflt);
    keepRef(labels.clone());
  }

  @Override
  public void visitLookupSwitchInsn(Label dflt, int[] keys, Label[] labels) {
    keepKind(LOOKUPSWITCH);
    keepRef(dflt);
    keepRef(keys.clone());
    keepRef(labels.clone());
  }

  @Override
  public void visitMultiANewArrayInsn(String descriptor, int numDimensions) {
    keepKind(MULTIANEWARRAY);
    keepInt(numDimensions);
    keepRef(descriptor);
  }

  @Override
  public AnnotationVisitor visitInsnAnnotation(
      int typeRef, TypePath typePath, String descriptor, boolean visible) {
    // Kept nowhere: PollInjector.onePass catches this and takes the two passes ('One pass').
    throw new UnsupportedOperationException("visitInsnAnnotation");
  }

  @Override
  public void visitTryCatchBlock(Label start, Label end, Label handler, String type) {
    keepKind(TRY_CATCH);
    keepRef(start);
    keepRef(end);
    keepRef(handler);
    keepRef(type);
  }

  @Override
  public AnnotationVisitor visitTryCatchAnnotation(
      int typeRef, TypePath typePath, String descriptor, boolean visible) {
    throw new UnsupportedOperationException("visitTryCatchAnnotation");
  }

  @Override
  public void visitLocalVariable(
      String name, String descriptor, String signature, Label start, Label end, int index) {
    keepKind(LOCAL_VARIABLE);
    keepInt(index);
    keepRef(name);
    keepRef(descriptor);
    keepRef(signature);
    keepRef(start);
    keepRef(end);
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
      keepKind(ATTRIBUTE);
      keepRef(attribute);
    } else {
      super.visitAttribute(attribute);
    }
  }

  @Override
  public void visitLineNumber(int line, Label start) {
    keepKind(LINE_NUMBER);
    keepInt(line);
    keepRef(start);
  }

  @Override
  public void visitMaxs(int maxStack, int maxLocals) {
    keepKind(MAXS);
    keepInt(maxStack);
    keepInt(maxLocals);
  }

  @Override
  public void visitEnd() {
    if (inCode) {
      replay.end(this::replay);
    }
    super.visitEnd();
  }

  /** Makes the kept calls on {@code mv}, in order. */
  private void replay(MethodVisitor mv) {
    int[] in = ints;
    Object[] re = refs;
    int ii = 0;
    int ri = 0;
    for (int k = 0; k < nKinds; k++) {
      switch (kinds[k]) {
        case CODE -> mv.visitCode();
        case FRAME -> {
          int type = in[ii++];
          int nLocal = in[ii++];
          int nStack = in[ii++];
          Object[] local = (Object[]) re[ri++];
          mv.visitFrame(type, nLocal, local, nStack, (Object[]) re[ri++]);
        }
        case INSN -> mv.visitInsn(in[ii++]);
        case INT_INSN -> {
          int opcode = in[ii++];
          mv.visitIntInsn(opcode, in[ii++]);
        }
        case VAR_INSN -> {
          int opcode = in[ii++];
          mv.visitVarInsn(opcode, in[ii++]);
        }
        case TYPE_INSN -> mv.visitTypeInsn(in[ii++], (String) re[ri++]);
        case FIELD_INSN -> {
          String owner = (String) re[ri++];
          String name = (String) re[ri++];
          mv.visitFieldInsn(in[ii++], owner, name, (String) re[ri++]);
        }
        case METHOD_INSN -> {
          int opcode = in[ii++];
          boolean isInterface = in[ii++] != 0;
          String owner = (String) re[ri++];
          String name = (String) re[ri++];
          mv.visitMethodInsn(opcode, owner, name, (String) re[ri++], isInterface);
        }
        case INDY_INSN -> {
          String name = (String) re[ri++];
          String desc = (String) re[ri++];
          Handle bsm = (Handle) re[ri++];
          mv.visitInvokeDynamicInsn(name, desc, bsm, (Object[]) re[ri++]);
        }
        case JUMP_INSN -> mv.visitJumpInsn(in[ii++], (Label) re[ri++]);
        case LABEL -> mv.visitLabel((Label) re[ri++]);
        case LDC_INSN -> mv.visitLdcInsn(re[ri++]);
        case IINC_INSN -> {
          int varIndex = in[ii++];
          mv.visitIincInsn(varIndex, in[ii++]);
        }
        case TABLESWITCH -> {
          int min = in[ii++];
          int max = in[ii++];
          Label dflt = (Label) re[ri++];
          mv.visitTableSwitchInsn(min, max, dflt, (Label[]) re[ri++]);
        }
        case LOOKUPSWITCH -> {
          Label dflt = (Label) re[ri++];
          int[] keys = (int[]) re[ri++];
          mv.visitLookupSwitchInsn(dflt, keys, (Label[]) re[ri++]);
        }
        case MULTIANEWARRAY -> mv.visitMultiANewArrayInsn((String) re[ri++], in[ii++]);
        case TRY_CATCH -> {
          Label start = (Label) re[ri++];
          Label end = (Label) re[ri++];
          Label handler = (Label) re[ri++];
          mv.visitTryCatchBlock(start, end, handler, (String) re[ri++]);
        }
        case LOCAL_VARIABLE -> {
          String name = (String) re[ri++];
          String descriptor = (String) re[ri++];
          String signature = (String) re[ri++];
          Label start = (Label) re[ri++];
          mv.visitLocalVariable(name, descriptor, signature, start, (Label) re[ri++], in[ii++]);
        }
        case ATTRIBUTE -> mv.visitAttribute((Attribute) re[ri++]);
        case LINE_NUMBER -> mv.visitLineNumber(in[ii++], (Label) re[ri++]);
        case MAXS -> {
          int maxStack = in[ii++];
          mv.visitMaxs(maxStack, in[ii++]);
        }
        default -> throw new IllegalStateException("replay: kind " + kinds[k]);
      }
    }
    assert ii == nInts && ri == nRefs
        : "replay: operands left: " + (nInts - ii) + ", " + (nRefs - ri);
  }
}
