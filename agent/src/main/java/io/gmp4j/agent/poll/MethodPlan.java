package io.gmp4j.agent.poll;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * What {@link PollEmitter} does to one method, decided by {@link LoopScanner}. Positions are
 * instruction indices: the n-th {@code visit*Insn} call of the method (labels, frames and line
 * numbers are not instructions), which both passes see alike because they read the same bytes.
 *
 * <p>Written by one LoopScanner, then only read by one PollEmitter on the same thread.
 */
final class MethodPlan {
  /** A poll at method entry ('Poll placement' rule 3). */
  final boolean prologue;

  /** Instructions (backward jumps and switches) that get a poll right before them. */
  final BitSet pollBefore = new BitSet();

  /** Strip-mined loops, in code order; disjoint, since each is innermost. */
  final List<StripLoop> stripLoops = new ArrayList<>();

  /** The method's max_locals as read; the strip local, if any, takes this slot. */
  int maxLocals;

  /** Instructions pass 1 counted; pass 2 checks it saw as many. */
  int instructions;

  MethodPlan(boolean prologue) {
    this.prologue = prologue;
  }

  int backEdgePolls() {
    return pollBefore.cardinality();
  }

  boolean isEmpty() {
    return !prologue && pollBefore.isEmpty() && stripLoops.isEmpty();
  }

  /**
   * One loop in javac's {@code for} shape, matched by {@link LoopScanner}:
   *
   * <pre>
   * cond:          ILOAD i            (a frame with an empty stack is here)
   *   cond+1:      ILOAD limit   | ALOAD array; ARRAYLENGTH
   *   test:        IF_ICMPGE exit
   *                body
   *   goto-1:      IINC i step        (step &gt; 0)
   *   back:        GOTO cond
   * exit:
   * </pre>
   *
   * @param cond index of {@code ILOAD i} at the loop head
   * @param test index of the {@code IF_ICMPGE}
   * @param back index of the back-edge {@code GOTO}
   * @param index local slot of {@code i}
   * @param limit local slot of the int limit, or of the array whose length is the limit
   * @param arrayLength whether {@code limit} names an array
   * @param step the constant increment
   */
  record StripLoop(
      int cond, int test, int back, int index, int limit, boolean arrayLength, int step) {}
}
