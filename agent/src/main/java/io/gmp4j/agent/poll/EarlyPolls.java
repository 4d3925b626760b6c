package io.gmp4j.agent.poll;

import java.util.Arrays;
import java.util.BitSet;

/**
 * The polls a class gets at load while {@code preempt.defer} holds its rewrite back: a check at
 * the head of every loop, written into the class file's bytes without ASM.
 *
 * <h2>Implementation overview: 'Early polls'</h2>
 *
 * Nearly all of what the agent adds to a framework application's start-up is {@link
 * PollInjector}'s rewrite of the classes with loops, run by ASM and the injector while HotSpot
 * still interprets them (issue 17). {@code preempt.defer} (on by default) takes that rewrite off
 * the start-up path and does it later by retransformation; until then the class used to load
 * with no poll, so a G in one of its loops could not be time-sliced. This class gives such a
 * class a poll in every loop at load, at about a tenth of the rewrite's cost: one walk of each
 * method with a backward branch to find the loops, one to lay out the new code, one to write it.
 *
 * <p>The poll is a check at each loop head, that is, at each target of a backward branch (a
 * {@code goto}, an {@code if*}, a {@code tableswitch} or {@code lookupswitch} case or default):
 * {@code GETSTATIC Preempt.pending; IFEQ past; INVOKESTATIC Preempt.poll()V; past:}, the poll's
 * own fast path inline, so the interpreter runs two bytecodes a pass rather than a call (a call
 * per pass cost the cold phase: BENCHMARKS.md, 'Early polls'). It leaves the stack as it found
 * it, so every existing frame stays true at its instruction, and {@code past} needs a frame,
 * the head's own: the head is a branch target, so the StackMapTable declares one there, and the
 * added frame follows it as {@code same_frame} or {@code same_locals_1_stack_item}, so the next
 * frame, declared relative to the head's, stays true too. Where the head has no frame or two
 * values or more on its stack (no javac loop does), the branch instead gets {@code INVOKESTATIC
 * Preempt.poll()V} right before it, which needs no frame. Class files below version 50 declare
 * no frames and take the check everywhere. The rewrite is therefore a relocation:
 *
 * <ol>
 *   <li>The constant pool gains ten entries at its end (the Methodref of {@code poll()V}, the
 *       Fieldref of {@code pending}, and what they name); every existing index stays.
 *   <li>In a method with a backward branch (not {@code <clinit>}, where a poll would park a G
 *       that holds a class initialisation, nor a bridge, as in PollInjector), each loop head
 *       gets the check ({@value #HEAD} bytes), or its branches the call ({@value #CALL}). An old
 *       offset {@code x} that starts an instruction maps to {@code at[x]}, where the bytes
 *       inserted before it (if any) now start: a branch to a loop head lands on its check, a
 *       frame declared there describes the check, and an exception range that ends there does
 *       not cover it. max_stack grows by one for the check's load.
 *   <li>Switches are re-padded to the 4-byte alignment of their new position, so an instruction's
 *       new length depends on where it lands; the layout is computed in one forward walk.
 *   <li>Branch offsets, switch targets, the exception table, the StackMapTable (offset deltas,
 *       with {@code same_frame} and {@code same_locals_1_stack_item} widened to their extended
 *       forms where a delta passes 63, and the added frames), LineNumberTable,
 *       LocalVariableTable, LocalVariableTypeTable and the local-variable ranges of type
 *       annotations in code are rewritten through {@code at}. What names one instruction rather
 *       than a place that control reaches, an {@code Uninitialized} type's {@code NEW} and a type
 *       annotation's offset target, is moved past the bytes inserted before it: the {@code NEW}
 *       opening a do-while body is a loop head with its check before it, and the verifier
 *       refuses an {@code Uninitialized} that names the check (the class failed to load: a
 *       {@code ClassFormatError} until this was found in issue 17).
 * </ol>
 *
 * It answers null, and the caller rewrites the class through PollInjector at once, for what it
 * does not handle: a short branch whose new offset leaves 16 bits, code past 65535 bytes, a pool
 * with no room for ten entries, and anything malformed (an offset that is no instruction start,
 * an unknown opcode, frame type or type-annotation target). The one shape it leaves by choice,
 * an array loop without calls, is in 'Array loops'. Other attributes of Code are copied: the JVM
 * ignores those it does not know. Type annotations in code were once left to the rewrite too;
 * Spring Framework 7's JSpecify {@code @Nullable} on local variables puts them in 31 of the
 * classes with loops that Spring Boot's start loads, and the rewrite of those 31 at load, with
 * ASM still interpreted, cost that start more than the patch of the other 720 (BENCHMARKS.md,
 * 'Type annotations patched').
 *
 * <h2>Array loops</h2>
 *
 * The check is a volatile load and a branch on every pass, where PollInjector would count down or
 * strip-mine, and in a loop that C2 would vectorize that costs several times over (2.5x to 6.1x on
 * the loop kernels that read and write arrays: BENCHMARKS.md, 'Early polls'), because the barrier
 * and the branch turn SuperWord off (agent-notes §3.2). Loops that C2 does not vectorize pay too,
 * against their placed polls: a search that returns from its loop 1.8x (indexOfByte), the same over
 * a reference array 3.1x (indexOfRef), the lexer's switch 1.6x (BENCHMARKS.md, 'Array loops that do
 * not vectorize'). Such a class would run that slowly until its rewrite, and in a process that is
 * never quiet that is for good. So a method with a loop whose bytes, from its head to its backward
 * branch, hold an array load or store and no invoke instruction is not patched. {@link
 * #patch(byte[])} then answers null, and the class is rewritten at load, placed polls and all;
 * {@link #patch(byte[], BitSet)} leaves that method as it is, names it, and patches the others,
 * and the injector gives the named methods their placed polls, the rest of the class copied
 * (PollInjector's deferredPolls). On Spring Boot's start-up 48 of the 784 classes with loops have
 * such a method. Rewriting those 48 whole at load cost the start 0.1 to 0.3 s more than
 * patching all their methods (two runs of ten start-ups); rewriting their array methods alone saves
 * 0.05 to 0.1 s of that (BENCHMARKS.md, 'Array loops by method'). Leaving to the rewrite only the
 * loops that may vectorize (javac's counted shape over primitive arrays, with no other way out), 9
 * of those 48 classes, saved that start about 0.1 s of CPU: not kept, for the costs above ('Array
 * loops that do not vectorize'). Of the loop kernels, those it leaves to the early form touch no
 * array and cost about what their placed polls cost (listWalk 0.91x, collatz 1.04x); a loop that
 * calls pays the check beside its calls until its rewrite (the kernels have none that the rule
 * would leave alone).
 *
 * <p>The agent's deferral now takes those methods with the early form too, and gives them their
 * placed polls at a quiet moment as any other; those whose loop C2 may vectorize ({@code
 * mayVectorize}, which {@link #patch(byte[], BitSet, boolean)} names) get them by a deadline if no
 * quiet moment comes first ('The deadline' in the agent's DeferredPolls). Their rewrite at load
 * cost the Spring Boot app's start-up 0.27 s, while their early form did not show in its CPU per
 * request once warm. After the deadline, a class with such a method loads as above.
 *
 * <p>Go has it the other way round: its compiler puts a check in every loop from the start, and
 * since Go 1.14 a signal preempts a loop with none. The JVM has neither, so a loop is
 * preemptible only once a poll is in its bytecode, and this is the cheapest poll to put there.
 *
 * <p>Any thread; stateless.
 */
final class EarlyPolls {
  private EarlyPolls() {}

  private static final int INVOKESTATIC = 0xB8;
  private static final int GETSTATIC = 0xB2;
  private static final int IFEQ = 0x99;

  /** The loop-head check: {@code GETSTATIC pending; IFEQ +6; INVOKESTATIC poll}. */
  static final int HEAD = 9;

  /** The poll before a branch: {@code INVOKESTATIC poll}. */
  static final int CALL = 3;

  /** {@code Patch.jumpOffset}'s answer for an instruction that is not a jump. */
  private static final int NO_JUMP = Integer.MIN_VALUE;

  /** {@code Patch.arrayLoop}'s answer: an array loop without calls. */
  private static final int ARRAY_LOOP = 1;

  /** {@code Patch.arrayLoop}'s answer: an array loop without calls that C2 may vectorize. */
  private static final int VECTOR_LOOP = 2;

  /** What no frame, in {@code Patch.frames}: no frame declared at that offset. */
  private static final int NO_FRAME = 0;

  /** A frame with an empty stack, in {@code Patch.frames}. */
  private static final int EMPTY_STACK = -1;

  /** A frame with two or more stack items, in {@code Patch.frames}. */
  private static final int DEEP_STACK = -2;

  /**
   * {@code classfile} with every loop of every method but {@code <clinit>} and bridges polled;
   * {@code classfile} itself if there is none; null if it cannot, or for an array loop without
   * calls (see 'Early polls' and 'Array loops').
   */
  static byte[] patch(byte[] classfile) {
    return patch(classfile, false);
  }

  /**
   * As {@link #patch(byte[])}; with {@code arrayLoops}, an array loop without calls is patched
   * too rather than left to the rewrite ('Array loops'): for tests of the patch itself.
   */
  static byte[] patch(byte[] classfile, boolean arrayLoops) {
    try {
      return new Patch(classfile, arrayLoops, null).run();
    } catch (RuntimeException cannot) { // Unpatchable, or a truncated file
      return null;
    }
  }

  /**
   * As {@link #patch(byte[])}, but a method with an array loop without calls is left as it is,
   * its index in class-file order set in {@code arrayMethods}, rather than the whole class
   * refused: the caller gives those methods their placed polls ('Array loops'). Returns {@code
   * classfile} itself when no other method changed.
   */
  static byte[] patch(byte[] classfile, BitSet arrayMethods) {
    return patch(classfile, arrayMethods, false);
  }

  /**
   * As {@link #patch(byte[], BitSet)}; with {@code patchArrays}, a method with an array loop
   * without calls is patched like the others, and named in {@code arrayMethods} only if that
   * loop may be vectorized: the deferral's early form, until its deadline for those ('Array
   * loops', and 'The deadline' in the agent's DeferredPolls).
   */
  static byte[] patch(byte[] classfile, BitSet arrayMethods, boolean patchArrays) {
    try {
      return new Patch(classfile, patchArrays, arrayMethods).run();
    } catch (RuntimeException cannot) { // Unpatchable, or a truncated file
      return null;
    }
  }

  /** Thrown inside a patch for what 'Early polls' leaves to PollInjector. */
  private static final class Unpatchable extends RuntimeException {
    Unpatchable(String why) {
      super(why, null, false, false);
    }
  }

  /** One class file's patch. Confined to the calling thread. */
  private static final class Patch {
    private final byte[] b;
    private final Bytes out;

    /** Offset of each constant's tag, by constant-pool index. */
    private int[] cp;

    /** Constant-pool index of the Methodref {@code Preempt.poll()V}, once appended. */
    private int pollRef;

    /** Constant-pool index of the Fieldref {@code Preempt.pending I}, once appended. */
    private int pendingRef;

    /** Whether the class declares frames: version 50 and up (PollInjector, 'Old class files'). */
    private boolean framed;

    /**
     * Whether array loops without calls are patched ('Array loops'): for the deferral until its
     * deadline, and in tests.
     */
    private final boolean arrayLoops;

    /**
     * Where a method with an array loop without calls is named, by index, and left unpatched
     * unless {@link #arrayLoops} (null: such a method refuses the whole class unless {@link
     * #arrayLoops}); see {@link EarlyPolls#patch(byte[], BitSet, boolean)}.
     */
    private final BitSet arrayMethods;

    /** The index of the method being written, in class-file order. */
    private int method;

    /**
     * The loop heads that get the check and the branches that get the call, by old offset, in
     * the method being written; set by {@link #code} before it writes the method's attributes.
     */
    private BitSet heads;

    private BitSet calls;

    Patch(byte[] b, boolean arrayLoops, BitSet arrayMethods) {
      this.b = b;
      this.arrayLoops = arrayLoops;
      this.arrayMethods = arrayMethods;
      this.out = new Bytes(b.length + 256);
    }

    byte[] run() {
      if (u4(b, 0) != 0xCAFEBABE) {
        throw new Unpatchable("not a class file");
      }
      framed = u2(b, 6) >= 50;
      int count = u2(b, 8);
      if (count + 10 > 0xFFFF) {
        throw new Unpatchable("constant pool full");
      }
      cp = new int[count];
      int p = 10;
      for (int i = 1; i < count; i++) {
        cp[i] = p;
        int tag = b[p] & 0xFF;
        int len = BackEdges.constantLength(b, p);
        if (len < 0) {
          throw new Unpatchable("constant tag " + tag);
        }
        p += len;
        i += tag == 5 || tag == 6 ? 1 : 0; // Long, Double: two slots
      }
      int poolEnd = p;
      p += 6; // access_flags, this_class, super_class
      p += 2 + 2 * u2(b, p); // interfaces
      int fields = u2(b, p);
      p += 2;
      for (int f = 0; f < fields; f++) {
        p = skipAttributes(p + 6);
      }
      out.write(b, 0, 8);
      out.u2(count + 10);
      out.write(b, 10, poolEnd - 10);
      appendPoll(count);
      out.write(b, poolEnd, p - poolEnd); // access_flags .. fields
      int methods = u2(b, p);
      out.u2(methods);
      p += 2;
      boolean changed = false;
      for (int m = 0; m < methods; m++) {
        method = m;
        boolean bridge = (u2(b, p) & 0x0040) != 0;
        boolean clinit = utf8Is(u2(b, p + 2), "<clinit>");
        int attributes = u2(b, p + 6);
        out.write(b, p, 8);
        p += 8;
        for (int a = 0; a < attributes; a++) {
          int len = u4(b, p + 2);
          if (bridge || clinit || !utf8Is(u2(b, p), "Code") || !code(p)) {
            out.write(b, p, 6 + len);
          } else {
            changed = true;
          }
          p += 6 + len;
        }
      }
      if (!changed) {
        return b;
      }
      out.write(b, p, b.length - p); // the class's attributes
      return out.toByteArray();
    }

    /**
     * Appends the constants of {@code Preempt.poll()V} and {@code Preempt.pending I} at index
     * {@code count} and on.
     */
    private void appendPoll(int count) {
      utf8(PollInjector.PREEMPT_OWNER); // count
      out.u1(7); // Class, count + 1
      out.u2(count);
      pollRef = member(10, count + 1, PollInjector.POLL_NAME, "()V", count + 2);
      pendingRef = member(9, count + 1, PollInjector.PENDING_NAME, "I", count + 6);
    }

    /**
     * Appends, from index {@code at}, the Utf8s of {@code name} and {@code descriptor}, their
     * NameAndType and a member reference of {@code tag} (9 Fieldref, 10 Methodref) in class
     * {@code owner}; returns the reference's index, {@code at + 3}.
     */
    private int member(int tag, int owner, String name, String descriptor, int at) {
      utf8(name); // at
      utf8(descriptor); // at + 1
      out.u1(12); // NameAndType, at + 2
      out.u2(at);
      out.u2(at + 1);
      out.u1(tag); // at + 3
      out.u2(owner);
      out.u2(at + 2);
      return at + 3;
    }

    private void utf8(String ascii) {
      out.u1(1);
      out.u2(ascii.length());
      for (int i = 0; i < ascii.length(); i++) {
        out.u1(ascii.charAt(i));
      }
    }

    /** Whether constant {@code index} is the Utf8 {@code ascii}. */
    private boolean utf8Is(int index, String ascii) {
      if (index <= 0 || index >= cp.length || cp[index] == 0 || b[cp[index]] != 1) {
        return false;
      }
      int q = cp[index];
      if (u2(b, q + 1) != ascii.length()) {
        return false;
      }
      for (int i = 0; i < ascii.length(); i++) {
        if (b[q + 3 + i] != ascii.charAt(i)) {
          return false;
        }
      }
      return true;
    }

    /**
     * {@link #VECTOR_LOOP} if a loop of the method whose code starts at {@code start} may be
     * vectorized ({@link #mayVectorize}), else {@link #ARRAY_LOOP} if one holds an array load or
     * store between its head and its backward branch and no invoke instruction ('Array loops'),
     * else 0. {@code mine} is scratch space.
     */
    private int arrayLoop(int start, BitSet edges, BitSet arrays, BitSet invokes, BitSet mine) {
      int kind = 0;
      for (int pc = edges.nextSetBit(0); pc >= 0; pc = edges.nextSetBit(pc + 1)) {
        mine.clear();
        backwardTargets(start, pc, mine);
        for (int t = mine.nextSetBit(0); t >= 0; t = mine.nextSetBit(t + 1)) {
          int call = invokes.nextSetBit(t);
          int array = arrays.nextSetBit(t);
          if (array >= 0 && array <= pc && (call < 0 || call > pc)) {
            if (mayVectorize(start, t, loopEnd(start, edges, t, pc))) {
              return VECTOR_LOOP;
            }
            kind = ARRAY_LOOP;
          }
        }
      }
      return kind;
    }

    /**
     * The last backward branch to head {@code t}, the one at {@code pc} or one after it: a
     * {@code continue} is a backward branch to the head before the loop's own.
     */
    private int loopEnd(int start, BitSet edges, int t, int pc) {
      int end = pc;
      BitSet to = new BitSet();
      for (int e = edges.nextSetBit(pc + 1); e >= 0; e = edges.nextSetBit(e + 1)) {
        to.clear();
        backwardTargets(start, e, to);
        if (to.get(t)) {
          end = e;
        }
      }
      return end;
    }

    /**
     * Whether the loop from head {@code t} to its last backward branch at {@code pc}, an array loop
     * without calls, is one that C2 may vectorize ('The deadline' in the agent's DeferredPolls):
     * it reads or writes a primitive array and no reference array, and its body is straight: no
     * switch and no branch but the backward one and exits past it. A search that returns from
     * its loop, a reference walk and a lexer's switch are not (1.8x, 1.0x and 1.6x their placed
     * polls with the early check, against 2.5x to 6.1x for the kernels that are).
     */
    private boolean mayVectorize(int start, int t, int pc) {
      boolean primitive = false;
      for (int q = t; q <= pc; q = next(start, q)) {
        int i = start + q;
        int op = b[i] & 0xFF;
        if (op == 50 || op == 83 || op == 170 || op == 171 || op == 168 || op == 201) {
          return false; // aaload, aastore, tableswitch, lookupswitch, jsr, jsr_w
        }
        primitive |= (op >= 46 && op <= 53) || (op >= 79 && op <= 86);
        int offset = jumpOffset(i, op);
        if (offset != NO_JUMP && q != pc && q + offset <= pc) {
          return false; // a branch into the loop, a continue, or to another loop's head
        }
      }
      return primitive;
    }

    private int skipAttributes(int p) {
      int attributes = u2(b, p);
      p += 2;
      for (int a = 0; a < attributes; a++) {
        p += 6 + u4(b, p + 2);
      }
      return p;
    }

    /**
     * The Code attribute at {@code p}: writes it with its polls and returns true, or returns
     * false and writes nothing if no branch in it is backward.
     */
    private boolean code(int p) {
      int start = p + 14;
      int length = u4(b, p + 10);
      if (length <= 0 || start + length > b.length) {
        throw new Unpatchable("code length");
      }
      BitSet starts = new BitSet(length);
      BitSet edges = new BitSet(length); // the backward branches
      BitSet targets = new BitSet(length); // their backward targets
      BitSet arrays = new BitSet(length); // array loads and stores
      BitSet invokes = new BitSet(length);
      for (int pc = 0; pc < length; pc = next(start, pc)) { // step 2
        starts.set(pc);
        int op = b[start + pc] & 0xFF;
        if ((op >= 46 && op <= 53) || (op >= 79 && op <= 86)) { // xaload, xastore
          arrays.set(pc);
        } else if (op >= 182 && op <= 186) { // invokevirtual .. invokedynamic
          invokes.set(pc);
        }
        if (backwardTargets(start, pc, targets)) {
          edges.set(pc);
        }
      }
      if (edges.isEmpty()) {
        return false;
      }
      BitSet mine = new BitSet(length);
      int kind =
          arrayMethods != null || !arrayLoops ? arrayLoop(start, edges, arrays, invokes, mine) : 0;
      if (kind != 0) { // 'Array loops'
        if (arrayMethods == null) {
          throw new Unpatchable("an array loop without calls");
        }
        if (!arrayLoops) {
          arrayMethods.set(method);
          return false; // the caller's rewrite polls the method
        }
        if (kind == VECTOR_LOOP) {
          arrayMethods.set(method); // patched, and named for the deferral's deadline
        }
      }
      int attributesAt = start + length + 2 + 8 * u2(b, start + length);
      int[] frames = framed ? frames(attributesAt, length) : null;
      BitSet heads = new BitSet(length); // step 2: the loop heads that get the check
      for (int t = targets.nextSetBit(0); t >= 0; t = targets.nextSetBit(t + 1)) {
        if (!framed || (frames != null && frames[t] != NO_FRAME && frames[t] != DEEP_STACK)) {
          heads.set(t);
        }
      }
      BitSet calls = new BitSet(length); // step 2: the branches polled where they are
      for (int pc = edges.nextSetBit(0); pc >= 0; pc = edges.nextSetBit(pc + 1)) {
        mine.clear();
        backwardTargets(start, pc, mine);
        mine.andNot(heads);
        if (!mine.isEmpty()) {
          calls.set(pc);
        }
      }
      this.heads = heads;
      this.calls = calls;
      int[] at = new int[length + 1]; // step 2's map, -1 where no instruction starts
      Arrays.fill(at, -1);
      int pos = 0;
      for (int pc = starts.nextSetBit(0); pc >= 0; pc = starts.nextSetBit(pc + 1)) { // step 3
        at[pc] = pos;
        pos += (heads.get(pc) ? HEAD : 0) + (calls.get(pc) ? CALL : 0);
        pos += newLength(start, pc, pos);
      }
      at[length] = pos;
      if (pos > 0xFFFF) {
        throw new Unpatchable("code past 65535 bytes");
      }
      // max_stack: a head's GETSTATIC pushes one int on what the loop keeps on the stack
      int maxStack = u2(b, p + 6) + (heads.isEmpty() ? 0 : 1);
      if (maxStack > 0xFFFF) {
        throw new Unpatchable("max_stack at its limit");
      }
      int headerAt = out.size();
      out.write(b, p, 6); // name, length (filled in below)
      out.u2(maxStack);
      out.write(b, p + 8, 2); // max_locals
      out.u4(pos);
      int codeAt = out.size();
      for (int pc = starts.nextSetBit(0); pc >= 0; pc = starts.nextSetBit(pc + 1)) {
        if (heads.get(pc)) {
          out.u1(GETSTATIC);
          out.u2(pendingRef);
          out.u1(IFEQ);
          out.u2(HEAD - CALL); // past the call
        }
        if (heads.get(pc) || calls.get(pc)) {
          out.u1(INVOKESTATIC);
          out.u2(pollRef);
        }
        instruction(start, pc, out.size() - codeAt, at);
      }
      assert out.size() - codeAt == pos : "layout and code disagree";
      int q = start + length;
      int handlers = u2(b, q);
      out.u2(handlers);
      q += 2;
      for (int h = 0; h < handlers; h++, q += 8) {
        out.u2(map(at, u2(b, q)));
        out.u2(map(at, u2(b, q + 2)));
        out.u2(map(at, u2(b, q + 4)));
        out.u2(u2(b, q + 6));
      }
      assert q == attributesAt;
      int attributes = u2(b, q);
      out.u2(attributes);
      q += 2;
      for (int a = 0; a < attributes; a++) {
        int name = u2(b, q);
        int len = u4(b, q + 2);
        if (utf8Is(name, "StackMapTable")) {
          stackMapTable(q, at, framed ? heads : new BitSet(), frames);
        } else if (utf8Is(name, "LineNumberTable")) {
          table(q, len, 4, at, false);
        } else if (utf8Is(name, "LocalVariableTable") || utf8Is(name, "LocalVariableTypeTable")) {
          table(q, len, 10, at, true);
        } else if (utf8Is(name, "RuntimeVisibleTypeAnnotations")
            || utf8Is(name, "RuntimeInvisibleTypeAnnotations")) {
          typeAnnotations(q, len, at);
        } else {
          out.write(b, q, 6 + len);
        }
        q += 6 + len;
      }
      out.setU4(headerAt + 2, out.size() - headerAt - 6);
      return true;
    }

    /**
     * The frames the StackMapTable among the Code attributes at {@code q} declares, by old
     * offset: {@link #NO_FRAME}, {@link #EMPTY_STACK}, {@link #DEEP_STACK}, or for a frame with
     * one stack item the position of its verification_type_info in the class file. Null if there
     * is no StackMapTable (then no backward target has a frame).
     */
    private int[] frames(int q, int length) {
      int attributes = u2(b, q);
      q += 2;
      for (int a = 0; a < attributes; a++, q += 6 + u4(b, q + 2)) {
        if (!utf8Is(u2(b, q), "StackMapTable")) {
          continue;
        }
        int[] frames = new int[length];
        int n = u2(b, q + 6);
        int e = q + 8;
        int offset = -1;
        for (int i = 0; i < n; i++) {
          int type = b[e] & 0xFF;
          int delta = type < 128 ? type & 63 : u2(b, e + 1);
          offset += delta + 1;
          if (offset >= length) {
            throw new Unpatchable("frame past the code");
          }
          if (type < 64 || (type >= 248 && type <= 251)) { // same, chop, same_frame_extended
            frames[offset] = EMPTY_STACK;
            e += type < 64 ? 1 : 3;
          } else if (type < 128 || type == 247) { // same_locals_1_stack_item (extended)
            e += type < 128 ? 1 : 3;
            frames[offset] = e;
            e = skipVerificationType(e);
          } else if (type >= 252 && type <= 254) { // append
            e += 3;
            for (int k = 0; k < type - 251; k++) {
              e = skipVerificationType(e);
            }
            frames[offset] = EMPTY_STACK;
          } else if (type == 255) { // full_frame
            e += 3;
            int locals = u2(b, e);
            e += 2;
            for (int k = 0; k < locals; k++) {
              e = skipVerificationType(e);
            }
            int stack = u2(b, e);
            e += 2;
            frames[offset] = stack == 0 ? EMPTY_STACK : stack == 1 ? e : DEEP_STACK;
            for (int k = 0; k < stack; k++) {
              e = skipVerificationType(e);
            }
          } else {
            throw new Unpatchable("frame type " + type);
          }
        }
        return frames;
      }
      return null;
    }

    private int skipVerificationType(int e) {
      int tag = b[e] & 0xFF;
      return tag == 7 || tag == 8 ? e + 3 : e + 1;
    }

    /** The new offset of old offset {@code x}: where the bytes inserted before it start. */
    private static int map(int[] at, int x) {
      if (x < 0 || x >= at.length || at[x] < 0) {
        throw new Unpatchable("offset " + x + " starts no instruction");
      }
      return at[x];
    }

    /**
     * The range at {@code e} ({@code start_pc}, {@code length}: a local variable's, in a
     * LocalVariable(Type)Table or a type annotation), written moved: from its start's new offset
     * to its end's.
     */
    private void range(int e, int[] at) {
      int from = u2(b, e);
      int to = map(at, from);
      out.u2(to);
      out.u2(map(at, from + u2(b, e + 2)) - to);
    }

    /**
     * Where the instruction at old offset {@code x} itself now starts: past the check or call
     * inserted before it, where {@link #map} names the first inserted byte. For what names one
     * instruction rather than a place control reaches: an {@code Uninitialized} type names its
     * {@code NEW} (a loop head when a loop's body opens with {@code new}), and a type
     * annotation's offset target its {@code new}, {@code instanceof}, cast or invoke.
     */
    private int own(int[] at, int x) {
      return map(at, x) + (heads.get(x) ? HEAD : 0) + (calls.get(x) ? CALL : 0);
    }

    /**
     * A RuntimeVisibleTypeAnnotations or RuntimeInvisibleTypeAnnotations attribute of Code at
     * {@code q} (JVMS 4.7.20), its offsets moved: a local variable's ranges as in the
     * LocalVariableTable, an offset target through {@link #own}. Every offset is a u2 written in
     * place, so the attribute keeps its length. A target type that Code may not hold is
     * malformed, and left to the rewrite.
     */
    private void typeAnnotations(int q, int len, int[] at) {
      out.write(b, q, 6);
      int n = u2(b, q + 6);
      out.u2(n);
      int e = q + 8;
      for (int i = 0; i < n; i++) {
        int target = b[e] & 0xFF;
        out.u1(target);
        e++;
        if (target == 0x40 || target == 0x41) { // localvar_target, resource_variable
          int ranges = u2(b, e);
          out.u2(ranges);
          e += 2;
          for (int r = 0; r < ranges; r++, e += 6) {
            range(e, at);
            out.write(b, e + 4, 2); // the local's index
          }
        } else if (target == 0x42) { // catch_target: an exception table index
          out.write(b, e, 2);
          e += 2;
        } else if (target >= 0x43 && target <= 0x46) { // offset_target
          out.u2(own(at, u2(b, e)));
          e += 2;
        } else if (target >= 0x47 && target <= 0x4B) { // type_argument_target
          out.u2(own(at, u2(b, e)));
          out.u1(b[e + 2]);
          e += 3;
        } else {
          throw new Unpatchable("type annotation target " + target + " in code");
        }
        int path = 1 + 2 * (b[e] & 0xFF); // type_path: path_length and its entries
        int end = skipAnnotation(e + path);
        out.write(b, e, end - e);
        e = end;
      }
      if (e != q + 6 + len) {
        throw new Unpatchable("type annotation length");
      }
    }

    /** The offset after the annotation (type_index, element-value pairs) at {@code e}. */
    private int skipAnnotation(int e) {
      int pairs = u2(b, e + 2);
      e += 4;
      for (int k = 0; k < pairs; k++) {
        e = skipElementValue(e + 2); // element_name_index
      }
      return e;
    }

    /** The offset after the element_value at {@code e}. */
    private int skipElementValue(int e) {
      int tag = b[e] & 0xFF;
      switch (tag) {
        case 'B', 'C', 'D', 'F', 'I', 'J', 'S', 'Z', 's', 'c' -> {
          return e + 3;
        }
        case 'e' -> {
          return e + 5;
        }
        case '@' -> {
          return skipAnnotation(e + 1);
        }
        case '[' -> {
          int values = u2(b, e + 1);
          e += 3;
          for (int k = 0; k < values; k++) {
            e = skipElementValue(e);
          }
          return e;
        }
        default -> throw new Unpatchable("element value tag " + tag);
      }
    }

    /**
     * A LineNumberTable ({@code entry} 4: start_pc, line_number) or a LocalVariable(Type)Table
     * ({@code entry} 10: start_pc, length, and three u2 copied; {@code ranged}).
     */
    private void table(int q, int len, int entry, int[] at, boolean ranged) {
      out.write(b, q, 6);
      int n = u2(b, q + 6);
      out.u2(n);
      for (int i = 0, e = q + 8; i < n; i++, e += entry) {
        if (ranged) {
          range(e, at);
          out.write(b, e + 4, 6);
        } else {
          out.u2(map(at, u2(b, e)));
          out.write(b, e + 2, 2);
        }
      }
      if (2 + n * entry != len) {
        throw new Unpatchable("table length");
      }
    }

    /**
     * The StackMapTable attribute at {@code q}, each frame at its mapped offset, and after the
     * frame of each of {@code heads} the frame where its check's {@code IFEQ} lands: the same
     * frame (step 2), so the frame after it, which is declared relative to it, stays true.
     */
    private void stackMapTable(int q, int[] at, BitSet heads, int[] frames) {
      int headerAt = out.size();
      out.write(b, q, 6);
      int n = u2(b, q + 6);
      out.u2(n + heads.cardinality());
      int e = q + 8;
      int old = -1;
      int now = -1;
      for (int i = 0; i < n; i++) {
        int type = b[e] & 0xFF;
        int delta;
        if (type < 128) {
          delta = type & 63;
          e++;
        } else if (type < 247) {
          throw new Unpatchable("frame type " + type);
        } else {
          delta = u2(b, e + 1);
          e += 3;
        }
        old += delta + 1;
        int offset = map(at, old);
        int d = offset - now - 1;
        now = offset;
        if (type < 64 || type == 251) { // same_frame, same_frame_extended
          if (d < 64) {
            out.u1(d);
          } else {
            out.u1(251);
            out.u2(d);
          }
        } else if (type < 128 || type == 247) { // same_locals_1_stack_item (extended)
          if (d < 64) {
            out.u1(64 + d);
          } else {
            out.u1(247);
            out.u2(d);
          }
          e = verificationType(e, at);
        } else if (type < 251) { // chop_frame
          out.u1(type);
          out.u2(d);
        } else if (type < 255) { // append_frame
          out.u1(type);
          out.u2(d);
          for (int k = 0; k < type - 251; k++) {
            e = verificationType(e, at);
          }
        } else { // full_frame
          out.u1(type);
          out.u2(d);
          for (int part = 0; part < 2; part++) { // locals, then stack
            int k = u2(b, e);
            out.u2(k);
            e += 2;
            for (; k > 0; k--) {
              e = verificationType(e, at);
            }
          }
        }
        if (heads.get(old)) { // past the check: HEAD - 1 after the frame just written
          if (frames[old] == EMPTY_STACK) {
            out.u1(HEAD - 1); // same_frame
          } else {
            out.u1(64 + HEAD - 1); // same_locals_1_stack_item
            verificationType(frames[old], at);
          }
          now += HEAD;
        }
      }
      if (e != q + 6 + u4(b, q + 2)) {
        throw new Unpatchable("StackMapTable length");
      }
      out.setU4(headerAt + 2, out.size() - headerAt - 6);
    }

    /** Copies the verification_type_info at {@code e}; returns the offset after it. */
    private int verificationType(int e, int[] at) {
      int tag = b[e] & 0xFF;
      out.u1(tag);
      if (tag == 7) { // Object: a constant-pool index
        out.u2(u2(b, e + 1));
        return e + 3;
      }
      if (tag == 8) { // Uninitialized: the offset of its NEW itself, past a check before it
        out.u2(own(at, u2(b, e + 1)));
        return e + 3;
      }
      if (tag > 8) {
        throw new Unpatchable("verification type " + tag);
      }
      return e + 1;
    }

    /**
     * Whether the instruction at {@code pc} branches backward, by BackEdges' rule; adds its
     * backward targets to {@code targets}.
     */
    private boolean backwardTargets(int start, int pc, BitSet targets) {
      int i = start + pc;
      int op = b[i] & 0xFF;
      int edges = targets.cardinality();
      boolean backward = false;
      int offset = jumpOffset(i, op);
      if (offset != NO_JUMP) {
        backward = backward(pc, offset, targets);
      } else if (op == 170 || op == 171) {
        int q = start + ((pc + 4) & ~3);
        backward = backward(pc, u4(b, q), targets);
        int n = op == 170 ? u4(b, q + 8) - u4(b, q + 4) + 1 : u4(b, q + 4);
        for (int k = 0; k < n; k++) {
          backward |= backward(pc, u4(b, op == 170 ? q + 12 + 4 * k : q + 12 + 8 * k), targets);
        }
      }
      assert backward || targets.cardinality() == edges;
      return backward;
    }

    /**
     * The offset of the jump {@code op} at byte {@code i} ({@code if*}, {@code goto}, {@code
     * ifnull}, {@code ifnonnull}, {@code goto_w}), or {@link #NO_JUMP} for any other instruction.
     */
    private int jumpOffset(int i, int op) {
      if ((op >= 153 && op <= 167) || op == 198 || op == 199) {
        return (short) u2(b, i + 1);
      }
      return op == 200 ? u4(b, i + 1) : NO_JUMP;
    }

    /** Whether {@code offset} from {@code pc} goes backward; if so, adds the target. */
    private static boolean backward(int pc, int offset, BitSet targets) {
      if (offset > 0) {
        return false;
      }
      if (pc + offset < 0) {
        throw new Unpatchable("branch before the code");
      }
      targets.set(pc + offset);
      return true;
    }

    /** The old offset of the instruction after the one at {@code pc}. */
    private int next(int start, int pc) {
      int i = start + pc;
      int op = b[i] & 0xFF;
      if (op == 170 || op == 171) {
        int q = (pc + 4) & ~3;
        return op == 170
            ? q + 12 + 4 * (u4(b, start + q + 8) - u4(b, start + q + 4) + 1)
            : q + 8 + 8 * u4(b, start + q + 4);
      }
      if ((op >= 153 && op <= 168) || op == 198 || op == 199) { // if*, goto, jsr, ifnull..
        return pc + 3;
      }
      if (op == 200 || op == 201) { // goto_w, jsr_w
        return pc + 5;
      }
      if (op == 196) { // wide: iinc has a 2-byte constant too
        return pc + ((b[i + 1] & 0xFF) == 132 ? 6 : 4);
      }
      int len = op < BackEdges.LENGTH.length ? BackEdges.LENGTH[op] : 0;
      if (len == 0) {
        throw new Unpatchable("opcode " + op);
      }
      return pc + len;
    }

    /** The length of the instruction at old {@code pc} once it starts at new offset {@code to}. */
    private int newLength(int start, int pc, int to) {
      int op = b[start + pc] & 0xFF;
      int len = next(start, pc) - pc;
      if (op == 170 || op == 171) {
        return len - (((pc + 4) & ~3) - pc) + (((to + 4) & ~3) - to); // the padding moves
      }
      return len;
    }

    /** Writes the instruction at old {@code pc}, which now starts at {@code to}. */
    private void instruction(int start, int pc, int to, int[] at) {
      int i = start + pc;
      int op = b[i] & 0xFF;
      if ((op >= 153 && op <= 168) || op == 198 || op == 199) { // if*, goto, jsr, ifnull..
        int d = map(at, pc + (short) u2(b, i + 1)) - to;
        if (d != (short) d) {
          throw new Unpatchable("branch past 16 bits");
        }
        out.u1(op);
        out.u2(d);
      } else if (op == 200 || op == 201) { // goto_w, jsr_w
        out.u1(op);
        out.u4(map(at, pc + u4(b, i + 1)) - to);
      } else if (op == 170 || op == 171) {
        out.u1(op);
        for (int k = to + 1; (k & 3) != 0; k++) {
          out.u1(0);
        }
        int q = start + ((pc + 4) & ~3);
        out.u4(map(at, pc + u4(b, q)) - to); // default
        if (op == 170) {
          int low = u4(b, q + 4);
          int high = u4(b, q + 8);
          out.u4(low);
          out.u4(high);
          for (int k = 0; k < high - low + 1; k++) {
            out.u4(map(at, pc + u4(b, q + 12 + 4 * k)) - to);
          }
        } else {
          int pairs = u4(b, q + 4);
          out.u4(pairs);
          for (int k = 0; k < pairs; k++) {
            out.u4(u4(b, q + 8 + 8 * k)); // match
            out.u4(map(at, pc + u4(b, q + 12 + 8 * k)) - to);
          }
        }
      } else {
        out.write(b, i, next(start, pc) - pc);
      }
    }
  }

  /** A growing byte array, big-endian. Confined to one thread. */
  private static final class Bytes {
    private byte[] a;
    private int n;

    Bytes(int capacity) {
      a = new byte[capacity];
    }

    int size() {
      return n;
    }

    private void room(int more) {
      if (n + more > a.length) {
        a = Arrays.copyOf(a, Math.max(a.length * 2, n + more));
      }
    }

    void u1(int v) {
      room(1);
      a[n++] = (byte) v;
    }

    void u2(int v) {
      room(2);
      a[n++] = (byte) (v >>> 8);
      a[n++] = (byte) v;
    }

    void u4(int v) {
      room(4);
      setU4(n, v);
      n += 4;
    }

    void setU4(int at, int v) {
      a[at] = (byte) (v >>> 24);
      a[at + 1] = (byte) (v >>> 16);
      a[at + 2] = (byte) (v >>> 8);
      a[at + 3] = (byte) v;
    }

    void write(byte[] from, int offset, int length) {
      room(length);
      System.arraycopy(from, offset, a, n, length);
      n += length;
    }

    byte[] toByteArray() {
      return Arrays.copyOf(a, n);
    }
  }

  private static int u2(byte[] b, int p) {
    return ((b[p] & 0xFF) << 8) | (b[p + 1] & 0xFF);
  }

  private static int u4(byte[] b, int p) {
    return (b[p] << 24) | ((b[p + 1] & 0xFF) << 16) | ((b[p + 2] & 0xFF) << 8) | (b[p + 3] & 0xFF);
  }
}
