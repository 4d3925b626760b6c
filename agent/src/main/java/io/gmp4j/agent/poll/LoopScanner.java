package io.gmp4j.agent.poll;

import io.gmp4j.agent.poll.MethodPlan.StripLoop;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import net.bytebuddy.jar.asm.Handle;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;

/**
 * Pass 1 of {@link PollInjector}: reads one method and fills its {@link MethodPlan}. See 'Poll
 * placement' in PollInjector.
 *
 * <h2>Strip mining</h2>
 *
 * A loop is strip-mined only if all of these hold; anything else gets a back-edge poll instead
 * (under the countdown where possible), which is always correct:
 *
 * <ol>
 *   <li>It has javac's {@code for} shape (see {@link StripLoop}): the head {@code ILOAD i; ILOAD
 *       limit | ALOAD a; ARRAYLENGTH; IF_ICMPGE exit} (or {@code ILOAD i; IFGE exit} for a limit of
 *       0), the tail {@code IINC i step; GOTO head} with {@code step > 0}, and {@code exit} right
 *       after the {@code GOTO}. javac emits this for {@code for (...; i < n; i += c)}, for {@code
 *       while (i < n) {...; i++;}} and for the enhanced {@code for} over an array. Counting down,
 *       the mirror image: {@code step < 0} and the head {@code ILOAD i; ILOAD limit;
 *       IF_ICMPLE|IF_ICMPLT exit} ({@code i > limit}, {@code i >= limit}) or {@code ILOAD i;
 *       IFLE|IFLT exit} ({@code i > 0}, {@code i >= 0}).
 *   <li>The head has a stack-map frame with an empty stack; the rewrite derives its new frames from
 *       it. A frameless method (class file older than Java 6) is exempt: it declares no frame, the
 *       verifier infers the new local's type, and max_stack grows by the rewrite's whole peak
 *       because the depth at the head is not known ('Old class files' in PollInjector).
 *   <li>The body has no invoke, allocation, monitor, switch, JSR/RET or backward branch. A loop
 *       that calls or allocates is not vectorized anyway, so a poll costs it nothing measurable
 *       (agent notes §3.3); one with an inner loop is polled by that loop, or is itself not
 *       innermost.
 *   <li>Nothing in the loop stores to {@code i} (but the final IINC), to {@code limit} or to the
 *       array local: then {@code strip} stays a valid bound for the whole strip, and the inner loop
 *       is a counted loop to C2.
 *   <li>No branch from outside the loop lands inside it past the head, and no exception handler or
 *       try range starts or ends inside it: the new local is int only between head and back-edge,
 *       and only the frames of that range are extended with it.
 * </ol>
 *
 * <p>Why the rewrite keeps behaviour (counting up; counting down is the mirror image, with {@code
 * strip >= limit}): the body runs only when {@code i < strip}, and {@code strip <= limit}, so it
 * runs only when the original test would pass; the loop leaves only through the original test
 * {@code i < limit}; and a recomputed {@code strip} is greater than {@code i} whenever {@code i <
 * limit}, so every strip makes progress. The distance {@code limit - i} is taken in long, so no
 * {@code i} and no limit can overflow it ('computeStrip' in PollEmitter).
 *
 * <h2>Countdown polls</h2>
 *
 * A back-edge that is not strip-mined polls under a per-method countdown rather than on every
 * pass: {@code if (--budget <= 0) { budget = BUDGET; Preempt.poll(); }} (see PollEmitter). The
 * poll's volatile load is a compiler barrier (agent notes §3.2); paid on every pass of a branchy
 * loop it cost stateMachine 1.4-2.2x, while a register decrement and a never-taken branch cost
 * almost nothing. {@code budget} starts at 1 on method entry, so every invocation polls at its
 * first back-edge as the per-pass poll did (a recursion whose levels each run a short loop stays
 * preemptible), and then once every {@code BUDGET} back-edges of this invocation, nested loops
 * included. A back-edge keeps the per-pass poll if its loop only computes in registers (then the
 * barrier pins nothing and the plain poll measured cheaper), or if it needs a frame that is not
 * there ({@link #countDown}).
 *
 * <p>Two refinements, each measured on the loop kernels of BENCHMARKS.md:
 *
 * <ul>
 *   <li><b>Own back-edge.</b> If the loop's instructions branch only out of the loop (its exit
 *       tests; no if/else, switch, inner loop or {@code continue}), the poll path ends in its own
 *       jump to the loop head: {@code if (--budget > 0) goto head; budget = BUDGET; poll; goto
 *       head}. C2 then sees a loop with a hot and a cold back-edge and splits it into an inner loop
 *       without the poll, whose field loads it can hoist again: listWalk went from 1.11x to 0.94x,
 *       and sumIntList ({@code i < list.size}) from 2.5x to 1.0x. For a branchy body that split
 *       costs more than it saves (stateMachine: 1.15-1.26x against 0.8-1.0x), so such loops keep
 *       the single back-edge, with the poll as a rarely taken diamond in it.
 *   <li><b>Heavy loops.</b> A loop that contains a strip-mined loop can run up to a strip of
 *       iterations per pass without a poll. Each pass counts {@code OUTER_WEIGHT} (64) back-edges,
 *       so at most 16 passes run between two polls, whichever countdown of the method reset the
 *       budget last. A per-pass poll there cost matMul 1.0-1.6x from run to run; the countdown
 *       measured 0.97-1.03x.
 * </ul>
 *
 * <h2>Handler frames</h2>
 *
 * The verifier checks every instruction inside a try range against the frame of the range's
 * handler: the locals there must be assignable to the handler's. A {@code GOTO} back-edge that is
 * replaced in place by a countdown with a {@code skip} label puts a new frame inside any range that
 * covers the {@code GOTO}. That frame cannot simply be the target's: the loop head often knows
 * fewer locals than the handler (a local declared in the loop body before the {@code try} is top at
 * the head and an int in the handler's frame), and then the {@code GOTO L} after {@code skip} fails
 * the handler check. ECJ keeps such a {@code continue}'s {@code GOTO} inside the try range (javac
 * splits the range around it), which broke {@code Scanner.jumpOverMethodBody} (issue 16). So the
 * frame at {@code skip} takes the target's locals narrowed, slot by slot, by the frame of every
 * handler whose range covers the {@code GOTO} ({@link #skipLocals}): the state at the back-edge
 * is assignable to the target's frame and to each handler's, so it is assignable to their meet,
 * and the meet is assignable to both. Where the meet is not known without the class hierarchy (two
 * different class names), the back-edge takes the form with its own back-edge, which adds no frame.
 * Strip mining and the countdown blocks after the method's code need no such care: a strip-mined
 * loop has no range boundary inside it and its new frames are the head's (which lies in the same
 * ranges), and no range reaches past the method's last instruction.
 *
 * <p>Used by one thread for one method.
 */
final class LoopScanner extends MethodVisitor {
  private final MethodPlan plan;

  // One entry per instruction index.
  private int[] ops = new int[64];
  private int[] vars = new int[64]; // local slot of a var insn or IINC; IINC's increment in incr
  private int[] incr = new int[64];
  private Object[] targets = new Object[64]; // Label for jumps, Label[] for switches
  private int n;

  private final Map<Label, Integer> labelPos = new IdentityHashMap<>();

  /** Instruction index -> stack depth of the frame just before it. */
  private final Map<Integer, Integer> frameStack = new HashMap<>();

  /** Instruction index -> locals of the frame just before it, as read (a long takes one entry). */
  private final Map<Integer, Object[]> frameLocals = new HashMap<>();

  private final List<Label[]> tryCatch = new ArrayList<>(); // {start, end, handler}

  /** Backward jumps and switches; unlike plan.pollBefore, strip mining does not clear it. */
  private final BitSet backward = new BitSet();

  /**
   * A JSR or RET was read: the method is left alone, and PollInjector inlines the class's
   * subroutines and scans it again ('Subroutines' in SubroutineInliner).
   */
  private boolean subroutines;

  LoopScanner(MethodPlan plan) {
    super(Opcodes.ASM9);
    this.plan = plan;
  }

  private int add(int op) {
    if (n == ops.length) {
      int len = n * 2;
      ops = Arrays.copyOf(ops, len);
      vars = Arrays.copyOf(vars, len);
      incr = Arrays.copyOf(incr, len);
      targets = Arrays.copyOf(targets, len);
    }
    ops[n] = op;
    vars[n] = -1;
    return n++;
  }

  @Override
  public void visitLabel(Label label) {
    labelPos.put(label, n);
  }

  @Override
  public void visitFrame(int type, int nLocal, Object[] local, int nStack, Object[] stack) {
    frameStack.put(n, nStack);
    frameLocals.put(n, Arrays.copyOf(local, nLocal)); // the reader reuses its arrays
  }

  @Override
  public void visitTryCatchBlock(Label start, Label end, Label handler, String type) {
    tryCatch.add(new Label[] {start, end, handler});
  }

  @Override
  public void visitInsn(int opcode) {
    add(opcode);
  }

  @Override
  public void visitIntInsn(int opcode, int operand) {
    add(opcode);
  }

  @Override
  public void visitVarInsn(int opcode, int varIndex) {
    subroutines |= opcode == Opcodes.RET;
    int k = add(opcode); // not vars[add(..)]: Java reads vars before add() may grow it
    vars[k] = varIndex;
  }

  @Override
  public void visitTypeInsn(int opcode, String type) {
    add(opcode);
  }

  @Override
  public void visitFieldInsn(int opcode, String owner, String name, String descriptor) {
    add(opcode);
  }

  @Override
  public void visitMethodInsn(
      int opcode, String owner, String name, String descriptor, boolean isInterface) {
    add(opcode);
  }

  @Override
  public void visitInvokeDynamicInsn(String name, String desc, Handle bsm, Object... bsmArgs) {
    add(Opcodes.INVOKEDYNAMIC);
  }

  @Override
  public void visitJumpInsn(int opcode, Label label) {
    subroutines |= opcode == Opcodes.JSR;
    int k = add(opcode);
    targets[k] = label;
    if (labelPos.containsKey(label) && opcode != Opcodes.JSR) { // visited: offset <= this one
      backward.set(k);
    }
  }

  @Override
  public void visitLdcInsn(Object value) {
    add(Opcodes.LDC);
  }

  @Override
  public void visitIincInsn(int varIndex, int increment) {
    int k = add(Opcodes.IINC);
    vars[k] = varIndex;
    incr[k] = increment;
  }

  @Override
  public void visitTableSwitchInsn(int min, int max, Label dflt, Label... labels) {
    switchInsn(Opcodes.TABLESWITCH, dflt, labels);
  }

  @Override
  public void visitLookupSwitchInsn(Label dflt, int[] keys, Label[] labels) {
    switchInsn(Opcodes.LOOKUPSWITCH, dflt, labels);
  }

  private void switchInsn(int opcode, Label dflt, Label[] labels) {
    Label[] all = Arrays.copyOf(labels, labels.length + 1);
    all[labels.length] = dflt;
    int k = add(opcode);
    targets[k] = all;
    for (Label l : all) {
      if (labelPos.containsKey(l)) {
        backward.set(k);
        break;
      }
    }
  }

  @Override
  public void visitMultiANewArrayInsn(String descriptor, int numDimensions) {
    add(Opcodes.MULTIANEWARRAY);
  }

  @Override
  public void visitMaxs(int maxStack, int maxLocals) {
    plan.maxLocals = maxLocals;
  }

  @Override
  public void visitEnd() {
    plan.instructions = n;
    if (subroutines) {
      if (!backward.isEmpty() || plan.prologue) {
        plan.leftAlone = Coverage.Reason.OLD_VERSION;
      }
      return;
    }
    for (int k = backward.nextSetBit(0); k >= 0; k = backward.nextSetBit(k + 1)) {
      StripLoop loop = ops[k] == Opcodes.GOTO ? match(k) : null;
      if (loop != null) {
        plan.stripLoops.add(loop);
      } else {
        plan.pollBefore.set(k);
      }
    }
    for (int k = plan.pollBefore.nextSetBit(0); k >= 0; k = plan.pollBefore.nextSetBit(k + 1)) {
      countDown(k);
    }
  }

  /** The strip-minable loop whose back-edge is the GOTO at {@code back}, or null. */
  private StripLoop match(int back) {
    int cond = labelPos.get((Label) targets[back]);
    // Rule 1: the shape.
    if (back - cond < 3 || ops[cond] != Opcodes.ILOAD) {
      return null;
    }
    int i = vars[cond];
    int limit;
    int kind;
    int test;
    if (ops[cond + 1] == Opcodes.ILOAD && vars[cond + 1] != i) {
      kind = MethodPlan.LIMIT_LOCAL;
      limit = vars[cond + 1];
      test = cond + 2;
    } else if (ops[cond + 1] == Opcodes.ALOAD && ops[cond + 2] == Opcodes.ARRAYLENGTH) {
      kind = MethodPlan.LIMIT_ARRAY;
      limit = vars[cond + 1];
      test = cond + 3;
    } else {
      kind = MethodPlan.LIMIT_ZERO;
      limit = -1;
      test = cond + 1;
    }
    int step = back - 1;
    if (step <= test
        || !(targets[test] instanceof Label exit)
        || labelPos.get(exit) != back + 1
        || ops[step] != Opcodes.IINC
        || vars[step] != i
        || !testMatches(ops[test], kind, incr[step])) {
      return null;
    }
    // Rule 2: the head's frame; a frameless method has none to extend, nor needs one.
    Integer headStack = frameStack.get(cond);
    if (!plan.frameless && (headStack == null || headStack != 0)) {
      return null;
    }
    // Rules 3 and 4: the body.
    for (int k = test + 1; k < step; k++) {
      if (disqualifies(ops[k])
          || backward.get(k)
          || writes(k, i)
          || (kind == MethodPlan.LIMIT_LOCAL && writes(k, limit))
          || (kind == MethodPlan.LIMIT_ARRAY && ops[k] == Opcodes.ASTORE && vars[k] == limit)) {
        return null;
      }
    }
    // Rule 5: a single entry and no handlers inside.
    for (int k = 0; k < n; k++) {
      if ((k < cond || k > back) && targets[k] != null && jumpsInto(targets[k], cond, back)) {
        return null;
      }
    }
    for (Label[] tc : tryCatch) {
      for (Label l : tc) {
        int pos = labelPos.get(l);
        if (pos > cond && pos <= back) {
          return null;
        }
      }
    }
    return new StripLoop(cond, test, back, i, limit, kind, incr[step], ops[test]);
  }

  /**
   * Whether exit test {@code op} against a limit of {@code kind} with increment {@code step} is
   * one of the shapes of rule 1: {@code i < limit} counting up, {@code i > limit} or {@code i >=
   * limit} counting down.
   */
  private static boolean testMatches(int op, int kind, int step) {
    return switch (op) {
      case Opcodes.IF_ICMPGE -> kind != MethodPlan.LIMIT_ZERO && step > 0;
      case Opcodes.IFGE -> kind == MethodPlan.LIMIT_ZERO && step > 0;
      case Opcodes.IF_ICMPLE, Opcodes.IF_ICMPLT -> kind == MethodPlan.LIMIT_LOCAL && step < 0;
      case Opcodes.IFLE, Opcodes.IFLT -> kind == MethodPlan.LIMIT_ZERO && step < 0;
      default -> false;
    };
  }

  /**
   * Rule of 'Countdown polls': decides whether the polled back-edge {@code k} counts down instead
   * of polling on every pass, and in which form. Each of its backward targets must have a stack-map
   * frame (the countdown branches there, and a conditional back-edge or switch case is redirected
   * through a block that reuses that frame; a frameless method needs none), and its loop (from its
   * earliest backward target to {@code k}) must touch memory or call ({@link #touchesMemory}), or
   * the countdown buys nothing. A loop that contains a strip-mined loop is heavy: each of its
   * passes may run up to a strip of iterations without a poll, so a pass counts {@code
   * OUTER_WEIGHT} back-edges. A loop whose instructions branch only out of it (no inner loop, no
   * if/else, no switch, no {@code continue}) gets the form with its own back-edge.
   */
  private void countDown(int k) {
    if (plan.maxLocals > 0xFFFF - 2) { // no room for budget and strip locals
      return;
    }
    int lo = Integer.MAX_VALUE;
    Object t = targets[k];
    for (Label l : t instanceof Label one ? new Label[] {one} : (Label[]) t) {
      int pos = labelPos.get(l);
      if (pos > k) {
        continue; // forward switch case
      }
      if (!plan.frameless && !frameStack.containsKey(pos)) {
        return;
      }
      lo = Math.min(lo, pos);
    }
    boolean memory = false;
    boolean exitsOnly = !(t instanceof Label[]);
    for (int j = lo; j < k; j++) {
      memory |= touchesMemory(ops[j]);
      exitsOnly &= targets[j] == null || !jumpsInto(targets[j], lo - 1, k);
    }
    if (!memory) {
      return; // registers only: the barrier pins nothing, and the plain poll is cheaper
    }
    plan.countdown.set(k);
    for (StripLoop loop : plan.stripLoops) {
      if (loop.cond() >= lo && loop.cond() <= k) {
        plan.heavy.set(k);
      }
    }
    if (exitsOnly) {
      plan.ownBackEdge.set(k);
    } else if (ops[k] == Opcodes.GOTO && !plan.frameless) { // frameless: no skip frame at all
      Object[] skip = skipLocals(k, lo);
      if (skip == null) {
        plan.ownBackEdge.set(k); // needs no new frame; see 'Handler frames'
      } else {
        plan.skipLocals.put(k, skip);
      }
    }
  }

  /**
   * The locals of the frame at {@code skip} in the countdown that replaces the {@code GOTO} at
   * {@code k} (to instruction {@code target}): the target's locals, narrowed by the frame of every
   * handler whose try range covers {@code k}. Null if a slot has no type known, without loading
   * classes, to lie below both. See 'Handler frames'.
   */
  private Object[] skipLocals(int k, int target) {
    Object[] out = slots(frameLocals.get(target));
    for (Label[] tc : tryCatch) {
      if (labelPos.get(tc[0]) <= k && k < labelPos.get(tc[1])) {
        Object[] handler = frameLocals.get(labelPos.get(tc[2]));
        if (handler == null) {
          return null;
        }
        plan.narrowedSkip = true; // the frame check looks at it: 'Frame check only where ...'
        out = meet(out, slots(handler));
        if (out == null) {
          return null;
        }
      }
    }
    return locals(out);
  }

  /** Second slot of a long or double in {@link #slots} form. */
  private static final Object HIGH_HALF = new Object();

  /** Frame locals as read (a long or double is one entry) to one entry per slot. */
  private static Object[] slots(Object[] locals) {
    int n = 0;
    for (Object t : locals) {
      n += t == Opcodes.LONG || t == Opcodes.DOUBLE ? 2 : 1;
    }
    Object[] out = new Object[n];
    int k = 0;
    for (Object t : locals) {
      out[k++] = t;
      if (t == Opcodes.LONG || t == Opcodes.DOUBLE) {
        out[k++] = HIGH_HALF;
      }
    }
    return out;
  }

  /** The inverse of {@link #slots}; null if a half of a long or double stands alone. */
  private static Object[] locals(Object[] slots) {
    List<Object> out = new ArrayList<>(slots.length);
    for (int i = 0; i < slots.length; i++) {
      Object t = slots[i];
      boolean wide = t == Opcodes.LONG || t == Opcodes.DOUBLE;
      if (t == HIGH_HALF || (wide && (i + 1 == slots.length || slots[i + 1] != HIGH_HALF))) {
        return null;
      }
      out.add(t);
      i += wide ? 1 : 0;
    }
    return out.toArray();
  }

  /**
   * Slot by slot, a type assignable to both {@code a} and {@code b} that any value assignable to
   * both is assignable to (a missing slot is top); null where none is known without the class
   * hierarchy: two different class names, neither {@code java/lang/Object}, or two different
   * primitive or uninitialized types.
   */
  private static Object[] meet(Object[] a, Object[] b) {
    Object[] out = new Object[Math.max(a.length, b.length)];
    for (int i = 0; i < out.length; i++) {
      Object x = i < a.length ? a[i] : Opcodes.TOP;
      Object y = i < b.length ? b[i] : Opcodes.TOP;
      if (x.equals(y) || y == Opcodes.TOP) {
        out[i] = x;
      } else if (x == Opcodes.TOP) {
        out[i] = y;
      } else if (isReference(x) && isReference(y)) {
        if (x == Opcodes.NULL || "java/lang/Object".equals(y)) {
          out[i] = x;
        } else if (y == Opcodes.NULL || "java/lang/Object".equals(x)) {
          out[i] = y;
        } else {
          return null;
        }
      } else {
        return null;
      }
    }
    return out;
  }

  /** An initialized reference type or null; uninitialized types are not assignable to Object. */
  private static boolean isReference(Object t) {
    return t instanceof String || t == Opcodes.NULL;
  }

  /**
   * Opcodes whose memory access (or call) the poll's compiler barrier would order: a loop with
   * none of them loses nothing to a per-pass poll. Measured on collatz (a register-only loop of
   * ~0.7 ns a pass): per-pass poll ~1.0x, countdown 1.3x; on stateMachine (a byte load a pass):
   * per-pass poll 1.4-2.2x, countdown ~1.0x.
   */
  private static boolean touchesMemory(int op) {
    return (op >= Opcodes.IALOAD && op <= Opcodes.SALOAD)
        || (op >= Opcodes.IASTORE && op <= Opcodes.SASTORE)
        || (op >= Opcodes.GETSTATIC && op <= Opcodes.INVOKEDYNAMIC)
        || (op >= Opcodes.NEW && op <= Opcodes.ARRAYLENGTH)
        || op == Opcodes.MONITORENTER
        || op == Opcodes.MONITOREXIT
        || op == Opcodes.MULTIANEWARRAY;
  }

  private boolean jumpsInto(Object target, int cond, int back) {
    if (target instanceof Label l) {
      int pos = labelPos.get(l);
      return pos > cond && pos <= back;
    }
    for (Label l : (Label[]) target) {
      int pos = labelPos.get(l);
      if (pos > cond && pos <= back) {
        return true;
      }
    }
    return false;
  }

  /** Opcodes that keep a loop from being strip-mined (rule 3 of 'Strip mining'). */
  private static boolean disqualifies(int op) {
    return switch (op) {
      case Opcodes.INVOKEVIRTUAL,
          Opcodes.INVOKESPECIAL,
          Opcodes.INVOKESTATIC,
          Opcodes.INVOKEINTERFACE,
          Opcodes.INVOKEDYNAMIC,
          Opcodes.NEW,
          Opcodes.NEWARRAY,
          Opcodes.ANEWARRAY,
          Opcodes.MULTIANEWARRAY,
          Opcodes.MONITORENTER,
          Opcodes.MONITOREXIT,
          Opcodes.JSR,
          Opcodes.RET,
          Opcodes.TABLESWITCH,
          Opcodes.LOOKUPSWITCH ->
          true;
      default -> false;
    };
  }

  /** True if instruction k stores to local {@code slot} (a long or double store covers two). */
  private boolean writes(int k, int slot) {
    return switch (ops[k]) {
      case Opcodes.ISTORE, Opcodes.FSTORE, Opcodes.ASTORE, Opcodes.IINC -> vars[k] == slot;
      case Opcodes.LSTORE, Opcodes.DSTORE -> vars[k] == slot || vars[k] + 1 == slot;
      default -> false;
    };
  }
}
