package io.gmp4j.agent.poll;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.bytebuddy.jar.asm.Opcodes;

/**
 * What {@link PollEmitter} does to one method, decided by {@link LoopScanner}. Positions are
 * instruction indices: the n-th {@code visit*Insn} call of the method (labels, frames and line
 * numbers are not instructions), which both passes see alike because they read the same bytes.
 *
 * <p>Written by one LoopScanner, then only read by one PollEmitter on the same thread.
 */
final class MethodPlan {
  /** The method's name and descriptor, to find its plan again ('Too large' in PollInjector). */
  final String name;

  final String descriptor;

  /** A poll at method entry ('Poll placement' rule 3). */
  final boolean prologue;

  /**
   * The class file has no stack-map frames (major version below 50): the JVM verifies it by type
   * inference, so the emitter declares no frame and the scanner needs none ('Old class files' in
   * PollInjector).
   */
  final boolean frameless;

  /**
   * Why the method is copied as it was although it has loops, or null: {@link
   * Coverage.Reason#OLD_VERSION} for a method with JSR/RET subroutines not inlined, {@link
   * Coverage.Reason#TOO_LARGE} for one whose code would pass 64 KB with its polls. Set by the
   * scanner or by PollInjector between the passes.
   */
  Coverage.Reason leftAlone;

  /** Instructions (backward jumps and switches) that get a poll right before them. */
  final BitSet pollBefore = new BitSet();

  /**
   * The subset of {@link #pollBefore} polled under the method's countdown ('Countdown polls' in
   * LoopScanner) instead of on every pass.
   */
  final BitSet countdown = new BitSet();

  /**
   * The subset of {@link #countdown} whose loop contains a strip-mined loop: each pass counts
   * {@code PollEmitter.OUTER_WEIGHT} back-edges, not one ('Countdown polls' in LoopScanner).
   */
  final BitSet heavy = new BitSet();

  /**
   * The subset of {@link #countdown} whose loop body branches only out of the loop: the poll path
   * gets its own back-edge, so that C2 keeps the poll out of the hot loop ('Countdown polls').
   */
  final BitSet ownBackEdge = new BitSet();

  /**
   * For each {@code GOTO} of {@link #countdown} that is replaced in place by a countdown with a
   * {@code skip} label (not {@link #ownBackEdge}): the locals of the frame at {@code skip}, as
   * read (before PollEmitter adds budget). 'Handler frames' in LoopScanner.
   */
  final Map<Integer, Object[]> skipLocals = new HashMap<>();

  /** Strip-mined loops, in code order; disjoint, since each is innermost. */
  final List<StripLoop> stripLoops = new ArrayList<>();

  /**
   * The method's max_locals as read. The countdown local, if any, takes this slot, and the strip
   * local the next free one ({@link #budgetSlot()}, {@link #stripSlot()}).
   */
  int maxLocals;

  /** Instructions pass 1 counted; pass 2 checks it saw as many. */
  int instructions;

  MethodPlan(String name, String descriptor, boolean prologue, boolean frameless) {
    this.name = name;
    this.descriptor = descriptor;
    this.prologue = prologue;
    this.frameless = frameless;
  }

  int backEdgePolls() {
    return pollBefore.cardinality();
  }

  /** True if the method keeps a countdown local. */
  boolean usesBudget() {
    return !countdown.isEmpty();
  }

  int budgetSlot() {
    return maxLocals;
  }

  int stripSlot() {
    return maxLocals + (usesBudget() ? 1 : 0);
  }

  /** True if the emitter copies the method as it was. */
  boolean isEmpty() {
    return leftAlone != null || !hasWork();
  }

  /**
   * True if the emitter writes a frame here that is not a copy of one the class declared, plus
   * {@code budget:int}: a strip-mined loop (its frames gain {@code strip}) or a {@code skip} frame
   * narrowed by handler frames ('Handler frames' in LoopScanner). Only such methods are checked
   * ('Frame check only where frames are derived' in PollInjector).
   */
  boolean derivesFrames() {
    return !stripLoops.isEmpty() || narrowedSkip;
  }

  /**
   * Some frame of {@link #skipLocals} was narrowed by a handler's frame, rather than copied from
   * its target's. Set by the scanner.
   */
  boolean narrowedSkip;

  /** True if the scanner found something to do, whether or not it is done. */
  boolean hasWork() {
    return prologue || !pollBefore.isEmpty() || !stripLoops.isEmpty();
  }

  /** {@link StripLoop#limitKind}: the limit is an int local. */
  static final int LIMIT_LOCAL = 0;

  /** {@link StripLoop#limitKind}: the limit is the length of an array local. */
  static final int LIMIT_ARRAY = 1;

  /** {@link StripLoop#limitKind}: the limit is the constant 0 ({@code IFxx} tests). */
  static final int LIMIT_ZERO = 2;

  /**
   * One loop in javac's {@code for} shape, matched by {@link LoopScanner}:
   *
   * <pre>
   * cond:          ILOAD i            (a frame with an empty stack is here)
   *   cond+1:      ILOAD limit | ALOAD array; ARRAYLENGTH | (nothing: limit 0)
   *   test:        IFxx exit          (testOp, see below)
   *                body
   *   goto-1:      IINC i step
   *   back:        GOTO cond
   * exit:
   * </pre>
   *
   * Counting up ({@code step > 0}): {@code IF_ICMPGE} against a local or an array length ({@code i
   * < limit}), or {@code IFGE} ({@code i < 0}). Counting down ({@code step < 0}): {@code IF_ICMPLE}
   * or {@code IF_ICMPLT} against a local ({@code i > limit}, {@code i >= limit}), or {@code IFLE},
   * {@code IFLT} ({@code i > 0}, {@code i >= 0}).
   *
   * @param cond index of {@code ILOAD i} at the loop head
   * @param test index of the exit test
   * @param back index of the back-edge {@code GOTO}
   * @param index local slot of {@code i}
   * @param limit local slot of the int limit, or of the array whose length is the limit; -1 for 0
   * @param limitKind {@link #LIMIT_LOCAL}, {@link #LIMIT_ARRAY} or {@link #LIMIT_ZERO}
   * @param step the constant increment, non-zero
   * @param testOp the exit test's opcode as read
   */
  record StripLoop(
      int cond, int test, int back, int index, int limit, int limitKind, int step, int testOp) {
    boolean down() {
      return step < 0;
    }

    /** The exit test as a two-operand compare (against the limit, 0 or the strip bound). */
    int cmpOp() {
      return switch (testOp) {
        case Opcodes.IFGE -> Opcodes.IF_ICMPGE;
        case Opcodes.IFLE -> Opcodes.IF_ICMPLE;
        case Opcodes.IFLT -> Opcodes.IF_ICMPLT;
        default -> testOp;
      };
    }
  }
}
