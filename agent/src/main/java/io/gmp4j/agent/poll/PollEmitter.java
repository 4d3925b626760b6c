package io.gmp4j.agent.poll;

import io.gmp4j.agent.poll.MethodPlan.StripLoop;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.Handle;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;

/**
 * Pass 2 of {@link PollInjector}: replays the class into the writer and applies each method's
 * {@link MethodPlan}. See 'Poll placement' in PollInjector and 'Strip mining' in LoopScanner.
 *
 * <p>A strip-mined loop becomes (new parts marked {@code +}):
 *
 * <pre>
 *   head:  [original frame F]                      outer loop header; every entry comes here
 * +        strip = limit; if ((long) limit - i &gt; 1024 * step) strip = i + 1024 * step
 * + inner: [F + strip:int]                         inner loop header
 *          ILOAD i; ILOAD strip (was: limit); IF_ICMPGE outer (was: exit)
 *          body                                    its frames get strip:int as well
 *          IINC i step
 *          GOTO inner (was: head)                  no poll: a clean counted loop for C2
 * + outer: [F]
 * +        ILOAD i; limit; IF_ICMPGE exit          the original exit test
 * +        INVOKESTATIC Preempt.poll()V            once per strip
 * +        GOTO head
 *   exit:
 * </pre>
 *
 * The outer loop has its own header, so C2 sees two properly nested loops rather than one header
 * with two back-edges. {@code strip} lives in a new slot at the method's old max_locals, which no
 * original frame mentions; only frames between head and back-edge must declare it, because the
 * verifier checks the back-edge against the inner header's frame.
 *
 * <p>Used by one thread for one class.
 */
final class PollEmitter extends ClassVisitor {
  /**
   * Iterations per strip. HotSpot uses {@code LoopStripMiningIter=1000} for its own safepoint poll.
   * 1024 iterations of even a scalar body take microseconds, far below the 10ms time slice, while
   * the strip's own cost (a long min, one compare and a poll) is spread over 1024 iterations.
   */
  static final int STRIP = 1024;

  private static final Object[] NO_STACK = {};

  private final Iterator<MethodPlan> plans;

  PollEmitter(ClassVisitor next, List<MethodPlan> plans) {
    super(Opcodes.ASM9, next);
    this.plans = plans.iterator();
  }

  @Override
  public MethodVisitor visitMethod(
      int access, String name, String descriptor, String signature, String[] exceptions) {
    MethodVisitor mv = super.visitMethod(access, name, descriptor, signature, exceptions);
    MethodPlan plan = plans.next(); // pass 1 saw the same methods in the same order
    // Returning the writer's own visitor for an untouched method lets it copy the method's bytes.
    return mv == null || plan.isEmpty() ? mv : new PollMethod(mv, plan);
  }

  /** Applies one plan. Instruction indices count as in {@link LoopScanner}. */
  private static final class PollMethod extends MethodVisitor {
    private final MethodPlan plan;
    private final int stripSlot;
    private int index; // of the next instruction
    private int loopIndex;
    private StripLoop loop; // the current or next strip-mined loop, or null

    // Set at the loop head, used until its back-edge.
    private Object[] headLocals;
    private Label inner;
    private Label outer;
    private Label exit;

    PollMethod(MethodVisitor mv, MethodPlan plan) {
      super(Opcodes.ASM9, mv);
      this.plan = plan;
      this.stripSlot = plan.maxLocals;
      this.loop = plan.stripLoops.isEmpty() ? null : plan.stripLoops.get(0);
    }

    @Override
    public void visitCode() {
      super.visitCode();
      if (plan.prologue) {
        poll();
      }
    }

    private void poll() {
      super.visitMethodInsn(
          Opcodes.INVOKESTATIC,
          PollInjector.PREEMPT_OWNER,
          PollInjector.POLL_NAME,
          PollInjector.POLL_DESC,
          false);
    }

    /** Index of the instruction being visited; places its back-edge poll first. */
    private int next() {
      int k = index++;
      if (plan.pollBefore.get(k)) {
        poll();
      }
      return k;
    }

    /** True for the limit loads between {@code ILOAD i} and the test, which the head replaces. */
    private boolean inHeadTest(int k) {
      return loop != null && k > loop.cond() && k < loop.test();
    }

    @Override
    public void visitFrame(int type, int nLocal, Object[] local, int nStack, Object[] stack) {
      if (type != Opcodes.F_NEW) {
        throw new IllegalStateException("visitFrame: frames not expanded: " + type);
      }
      if (loop != null && index == loop.cond()) {
        headLocals = Arrays.copyOf(local, nLocal); // the reader reuses its arrays
      } else if (loop != null && index > loop.cond() && index <= loop.back()) {
        Object[] locals = withStrip(Arrays.copyOf(local, nLocal));
        super.visitFrame(type, locals.length, locals, nStack, stack);
        return;
      }
      super.visitFrame(type, nLocal, local, nStack, stack);
    }

    /** {@code locals} (long and double take one entry) with {@code stripSlot} set to int. */
    private Object[] withStrip(Object[] locals) {
      int slots = 0;
      for (Object t : locals) {
        slots += t == Opcodes.LONG || t == Opcodes.DOUBLE ? 2 : 1;
      }
      if (slots > stripSlot) {
        throw new IllegalStateException("withStrip: frame has " + slots + " > max_locals slots");
      }
      Object[] out = Arrays.copyOf(locals, locals.length + (stripSlot - slots) + 1);
      Arrays.fill(out, locals.length, out.length - 1, Opcodes.TOP);
      out[out.length - 1] = Opcodes.INTEGER;
      return out;
    }

    @Override
    public void visitVarInsn(int opcode, int varIndex) {
      int k = next();
      if (loop != null && k == loop.cond()) {
        head();
      } else if (!inHeadTest(k)) {
        super.visitVarInsn(opcode, varIndex);
      }
    }

    @Override
    public void visitInsn(int opcode) {
      if (!inHeadTest(next())) {
        super.visitInsn(opcode);
      }
    }

    @Override
    public void visitJumpInsn(int opcode, Label label) {
      int k = next();
      if (loop != null && k == loop.test()) {
        exit = label;
        super.visitJumpInsn(Opcodes.IF_ICMPGE, outer);
      } else if (loop != null && k == loop.back()) {
        tail(label);
      } else {
        super.visitJumpInsn(opcode, label);
      }
    }

    /** Emits the strip bound, the inner header and its test's first half (see class doc). */
    private void head() {
      if (headLocals == null) {
        throw new IllegalStateException("head: no frame at the loop head");
      }
      inner = new Label();
      outer = new Label();
      computeStrip();
      super.visitLabel(inner);
      Object[] locals = withStrip(headLocals);
      super.visitFrame(Opcodes.F_NEW, locals.length, locals, 0, NO_STACK);
      super.visitVarInsn(Opcodes.ILOAD, loop.index());
      super.visitVarInsn(Opcodes.ILOAD, stripSlot);
    }

    /** Emits the inner back-edge and the outer block; moves on to the next loop. */
    private void tail(Label head) {
      super.visitJumpInsn(Opcodes.GOTO, inner);
      super.visitLabel(outer);
      super.visitFrame(Opcodes.F_NEW, headLocals.length, headLocals, 0, NO_STACK);
      super.visitVarInsn(Opcodes.ILOAD, loop.index());
      loadLimit();
      super.visitJumpInsn(Opcodes.IF_ICMPGE, exit);
      poll();
      super.visitJumpInsn(Opcodes.GOTO, head);
      loopIndex++;
      loop = loopIndex < plan.stripLoops.size() ? plan.stripLoops.get(loopIndex) : null;
      headLocals = null;
      inner = outer = exit = null;
    }

    /**
     * {@code strip = limit; if ((long) limit - i > span) strip = i + span;} with {@code span =
     * STRIP * step}. The difference is taken in long, so neither a negative {@code i} nor a limit
     * near either end of the int range can overflow it, and {@code i + span} cannot overflow
     * because it is below limit. The branch lands on the inner header, whose frame already declares
     * strip. Peak stack 4 (two longs).
     *
     * <p>Rejected: {@code (int) Math.min((long) i + span, (long) limit)}, branch-free but measured
     * on JDK 25 to keep C2 from vectorizing the inner loop ({@code a[i] = b[i] + c[i]} over 4096
     * ints: 2430 ns against 450 ns uninstrumented; this form: 480 ns). The int-only {@code limit -
     * i > span ? i + span : limit} vectorizes as well but is wrong once {@code limit - i}
     * overflows: with {@code i = 10, limit = MIN_VALUE + 5} it would run the body.
     */
    private void computeStrip() {
      int span = STRIP * loop.step(); // step <= 32767 (wide IINC), so no overflow
      loadLimit();
      super.visitVarInsn(Opcodes.ISTORE, stripSlot);
      loadLimit();
      super.visitInsn(Opcodes.I2L);
      super.visitVarInsn(Opcodes.ILOAD, loop.index());
      super.visitInsn(Opcodes.I2L);
      super.visitInsn(Opcodes.LSUB);
      super.visitLdcInsn((long) span);
      super.visitInsn(Opcodes.LCMP);
      super.visitJumpInsn(Opcodes.IFLE, inner);
      super.visitVarInsn(Opcodes.ILOAD, loop.index());
      super.visitLdcInsn(span);
      super.visitInsn(Opcodes.IADD);
      super.visitVarInsn(Opcodes.ISTORE, stripSlot);
    }

    private void loadLimit() {
      if (loop.arrayLength()) {
        super.visitVarInsn(Opcodes.ALOAD, loop.limit());
        super.visitInsn(Opcodes.ARRAYLENGTH);
      } else {
        super.visitVarInsn(Opcodes.ILOAD, loop.limit());
      }
    }

    @Override
    public void visitIntInsn(int opcode, int operand) {
      next();
      super.visitIntInsn(opcode, operand);
    }

    @Override
    public void visitTypeInsn(int opcode, String type) {
      next();
      super.visitTypeInsn(opcode, type);
    }

    @Override
    public void visitFieldInsn(int opcode, String owner, String name, String descriptor) {
      next();
      super.visitFieldInsn(opcode, owner, name, descriptor);
    }

    @Override
    public void visitMethodInsn(
        int opcode, String owner, String name, String descriptor, boolean isInterface) {
      next();
      super.visitMethodInsn(opcode, owner, name, descriptor, isInterface);
    }

    @Override
    public void visitInvokeDynamicInsn(String name, String desc, Handle bsm, Object... bsmArgs) {
      next();
      super.visitInvokeDynamicInsn(name, desc, bsm, bsmArgs);
    }

    @Override
    public void visitLdcInsn(Object value) {
      next();
      super.visitLdcInsn(value);
    }

    @Override
    public void visitIincInsn(int varIndex, int increment) {
      next();
      super.visitIincInsn(varIndex, increment);
    }

    @Override
    public void visitTableSwitchInsn(int min, int max, Label dflt, Label... labels) {
      next();
      super.visitTableSwitchInsn(min, max, dflt, labels);
    }

    @Override
    public void visitLookupSwitchInsn(Label dflt, int[] keys, Label[] labels) {
      next();
      super.visitLookupSwitchInsn(dflt, keys, labels);
    }

    @Override
    public void visitMultiANewArrayInsn(String descriptor, int numDimensions) {
      next();
      super.visitMultiANewArrayInsn(descriptor, numDimensions);
    }

    @Override
    public void visitMaxs(int maxStack, int maxLocals) {
      if (index != plan.instructions) {
        throw new IllegalStateException(
            "visitMaxs: " + index + " instructions, pass 1 saw " + plan.instructions);
      }
      if (plan.stripLoops.isEmpty()) {
        super.visitMaxs(maxStack, maxLocals);
      } else {
        super.visitMaxs(Math.max(maxStack, 4), Math.max(maxLocals, stripSlot + 1));
      }
    }
  }
}
