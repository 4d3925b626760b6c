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
 * A loop is strip-mined only if all of these hold; anything else gets a back-edge poll per
 * iteration instead, which is always correct:
 *
 * <ol>
 *   <li>It has javac's {@code for} shape (see {@link StripLoop}): the head {@code ILOAD i; ILOAD
 *       limit | ALOAD a; ARRAYLENGTH; IF_ICMPGE exit}, the tail {@code IINC i step; GOTO head} with
 *       {@code step > 0}, and {@code exit} right after the {@code GOTO}. javac emits this for
 *       {@code for (...; i < n; i += c)}, for {@code while (i < n) {...; i++;}} and for the
 *       enhanced {@code for} over an array.
 *   <li>The head has a stack-map frame with an empty stack; the rewrite derives its new frames from
 *       it.
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
 * <p>Why the rewrite keeps behaviour: the body runs only when {@code i < strip}, and {@code strip
 * <= limit}, so it runs only when the original test would pass; the loop leaves only through the
 * original test {@code i < limit}; and a recomputed {@code strip} is greater than {@code i}
 * whenever {@code i < limit}, so every strip makes progress. The distance {@code limit - i} is
 * taken in long, so no {@code i} and no limit can overflow it ('computeStrip' in PollEmitter).
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

  private final List<Label[]> tryCatch = new ArrayList<>(); // {start, end, handler}

  /** Backward jumps and switches; unlike plan.pollBefore, strip mining does not clear it. */
  private final BitSet backward = new BitSet();

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
    for (int k = backward.nextSetBit(0); k >= 0; k = backward.nextSetBit(k + 1)) {
      StripLoop loop = ops[k] == Opcodes.GOTO ? match(k) : null;
      if (loop != null) {
        plan.stripLoops.add(loop);
      } else {
        plan.pollBefore.set(k);
      }
    }
  }

  /** The strip-minable loop whose back-edge is the GOTO at {@code back}, or null. */
  private StripLoop match(int back) {
    int cond = labelPos.get((Label) targets[back]);
    // Rule 1: the shape.
    if (back - cond < 4 || ops[cond] != Opcodes.ILOAD) {
      return null;
    }
    int i = vars[cond];
    int limit = vars[cond + 1];
    boolean array;
    int test;
    if (ops[cond + 1] == Opcodes.ILOAD && limit != i) {
      array = false;
      test = cond + 2;
    } else if (ops[cond + 1] == Opcodes.ALOAD && ops[cond + 2] == Opcodes.ARRAYLENGTH) {
      array = true;
      test = cond + 3;
    } else {
      return null;
    }
    int step = back - 1;
    if (step <= test
        || ops[test] != Opcodes.IF_ICMPGE
        || labelPos.get((Label) targets[test]) != back + 1
        || ops[step] != Opcodes.IINC
        || vars[step] != i
        || incr[step] <= 0) {
      return null;
    }
    // Rule 2: the head's frame.
    Integer headStack = frameStack.get(cond);
    if (headStack == null || headStack != 0) {
      return null;
    }
    // Rules 3 and 4: the body.
    for (int k = test + 1; k < step; k++) {
      if (disqualifies(ops[k])
          || backward.get(k)
          || writes(k, i)
          || (!array && writes(k, limit))
          || (array && ops[k] == Opcodes.ASTORE && vars[k] == limit)) {
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
    return new StripLoop(cond, test, back, i, limit, array, incr[step]);
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
