package io.gmp4j.agent.poll;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.ConstantDynamic;
import net.bytebuddy.jar.asm.Handle;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.Type;

/**
 * The safety net of {@link PollInjector}: before a rewritten class goes to the JVM, checks every
 * stack-map frame of every method the emitter changed against what the rewritten code computes,
 * without loading a class. A mismatch throws {@link FrameCheckException}, and the class loads as
 * it was.
 *
 * <h2>Implementation overview: 'Frame check'</h2>
 *
 * The JVM's type-checking verifier (JVMS 4.10.1) is a single linear pass, because the class
 * declares a frame at every branch target: at each instruction, if a frame is declared there, the
 * incoming state must be assignable to it and then becomes it; each instruction pops and pushes
 * verification types; each branch's state must be assignable to its target's frame; and for every
 * instruction inside a try range, the locals must be assignable to the handler's frame. This class
 * runs the same pass over each rewritten method, with coarser types:
 *
 * <ol>
 *   <li>Read the rewritten bytes with {@code EXPAND_FRAMES}; record each instruction, the index of
 *       each label, each frame (one entry per slot: a long or double is {@code LONG} or {@code
 *       DOUBLE} then {@link #HIGH}) and each try range. Methods the emitter did not touch are not
 *       visited: they are the original bytes, copied.
 *   <li>Start from the descriptor: {@code this} (or {@code uninitializedThis} in a constructor),
 *       the parameters, then top.
 *   <li>Walk the instructions in order. Types are top, int, float, long, double (each with its high
 *       half), null, uninitializedThis, uninitialized (by the index of its {@code NEW}) and a
 *       reference by name. Operands must have the kind the opcode wants; loads must find the kind
 *       they load; stack depth and local indices must fit max_stack and max_locals; {@code DUP}s
 *       and {@code POP}s must not split a long.
 *   <li>Check assignability where the JVM does: falling through into a frame, at every branch and
 *       switch target (which must have a frame), after every unconditional transfer (the next
 *       instruction must have a frame), and, for each instruction inside a try range, its locals
 *       before it and, for stores and {@code IINC}, after it against the handler's frame.
 * </ol>
 *
 * <p>What "assignable" means without the class hierarchy: identical types are; everything is
 * assignable to top; null and any reference are assignable to any reference, since the names'
 * subtyping would need class loading. So the check cannot catch a wrong reference type, which the
 * emitter never invents (every frame it writes copies or narrows a frame the class declared; see
 * 'Handler frames' in LoopScanner). It catches what the emitter can get wrong: a local that is top
 * or missing where a frame wants a value (issue 16), a primitive of the wrong kind, a wrong stack
 * depth, a frame missing at a new label, an uninitialized value where a reference is due.
 *
 * <p>Only class files of version 51 and later are checked. Version 50 may omit frames, and for it
 * the JVM falls back to the inferring verifier when they do not match; the injector adds no frame
 * to a method without frames.
 *
 * <p>Rejected: defining the rewritten class in a throwaway loader and letting the JVM verify it.
 * That loads the class's supertypes and every type the verifier must compare, from inside a
 * transformer: the very class loading the injector promises never to do ('Rejected' in
 * PollInjector). ASM's own analyzer is not in Byte Buddy's repackaged ASM.
 *
 * <h2>Cost</h2>
 *
 * Thread CPU time of {@link PollInjector#transform} over every class of a jar, median of 9
 * passes after 3 warm-up passes, with the check and without ({@code PollInjectorCost} in the agent
 * tests; command and machine in BENCHMARKS.md, 'Poll injector frame check'):
 *
 * <pre>
 * jar                        classes rewritten  without      with         check
 * ecj-3.33.0.jar                 769       333  164 us/class 253 us/class +89 us/class (+55%),
 *                                                                         206 us per rewritten class
 * scala-library-2.13.18.jar     2897       280   48 us/class  65 us/class +16 us/class (+34%),
 *                                                                         167 us per rewritten class
 * </pre>
 *
 * So it costs about as much as the rewrite itself, and only where a class is rewritten: classes
 * without loops pay nothing. About a quarter of it is the second read of the class, the rest the
 * simulation. The first version measured +52-70% on ECJ (in wall time, at load 13-17) before two
 * fixes whose shares were not measured apart: it built the message of a branch check at every
 * branch, and every instruction in a try range re-checked the handler's frame even when no local
 * had changed ({@code localsVersion}).
 *
 * <p>Since issue 17 the agent's injector checks only the methods whose frames it derives rather
 * than copies ('Frame check only where frames are derived' in PollInjector); the figures above
 * are for every rewritten method.
 *
 * <p>Stateless; {@link #check} may run on many class-loading threads at once.
 */
final class FrameCheck {
  /** The high half of a long or double, in locals and on the stack. */
  static final Object HIGH = new Object();

  private FrameCheck() {}

  /**
   * Checks the methods of {@code classfile} named in {@code methods} (name + descriptor). Throws
   * {@link FrameCheckException} at the first mismatch. Any thread.
   */
  static void check(byte[] classfile, Set<String> methods) {
    ClassReader reader =
        new ClassReader(classfile) {
          @Override
          protected Label readLabel(int bytecodeOffset, Label[] labels) {
            if (labels[bytecodeOffset] == null) {
              labels[bytecodeOffset] = new At(bytecodeOffset);
            }
            return labels[bytecodeOffset];
          }
        };
    if (reader.readUnsignedShort(6) < Opcodes.V1_7) {
      return; // version 50: see the overview
    }
    String owner = reader.getClassName();
    reader.accept(
        new ClassVisitor(Opcodes.ASM9) {
          @Override
          public MethodVisitor visitMethod(
              int access, String name, String desc, String sig, String[] exceptions) {
            return methods.contains(name + desc) ? new Recorder(owner, access, name, desc) : null;
          }
        },
        ClassReader.SKIP_DEBUG | ClassReader.EXPAND_FRAMES);
  }

  /**
   * A label that knows its offset for messages: ASM resolves a label's offset only in a writer,
   * and the reader's labels never reach one here.
   */
  private static final class At extends Label {
    final int bci;

    At(int bci) {
      this.bci = bci;
    }
  }

  /**
   * An uninitialized value: the result of the {@code NEW} at instruction {@code insn}. {@code
   * equals} and {@code hashCode} are written out, as in Coverage's {@code Key}: a record's own
   * are linked by invokedynamic ({@code ObjectMethods}) at their first call and run through
   * method handles, and the constructor call of each {@code NEW} compares it with every local and
   * stack slot (a Spring Boot start profiled with JFR had 9 of the transformer's 161 samples in
   * the record's {@code equals}, interpreted, from the rewrites of its array-loop classes).
   */
  private record Uninit(int insn) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Uninit u && u.insn == insn;
    }

    @Override
    public int hashCode() {
      return insn;
    }
  }

  /** Records one method (step 1), then simulates it (steps 2 to 4) at its end. */
  private static final class Recorder extends MethodVisitor {
    private final String owner;
    private final int access;
    private final String name;
    private final String desc;

    // One entry per instruction.
    private int[] ops = new int[64];
    private int[] ints = new int[64]; // var index, int operand, IINC increment, dimensions
    private Object[] objs = new Object[64]; // Label, Label[], descriptor, type, constant
    private Object[][] frameLocals = new Object[64][];
    private Object[][] frameStack = new Object[64][];
    private int[] bci = new int[64]; // offset of a label right before, or -1
    private int n;

    private final Map<Label, Integer> labelIndex = new IdentityHashMap<>();
    private final List<Label[]> tryCatch = new ArrayList<>();
    private int pendingBci = -1;
    private Object[] pendingLocals;
    private Object[] pendingStack;
    private int maxStack;
    private int maxLocals;

    Recorder(String owner, int access, String name, String desc) {
      super(Opcodes.ASM9);
      this.owner = owner;
      this.access = access;
      this.name = name;
      this.desc = desc;
    }

    private void add(int op, int i, Object o) {
      if (n == ops.length) {
        int len = n * 2;
        ops = Arrays.copyOf(ops, len);
        ints = Arrays.copyOf(ints, len);
        objs = Arrays.copyOf(objs, len);
        frameLocals = Arrays.copyOf(frameLocals, len);
        frameStack = Arrays.copyOf(frameStack, len);
        bci = Arrays.copyOf(bci, len);
      }
      ops[n] = op;
      ints[n] = i;
      objs[n] = o;
      frameLocals[n] = pendingLocals;
      frameStack[n] = pendingStack;
      bci[n] = pendingBci;
      pendingLocals = pendingStack = null;
      pendingBci = -1;
      n++;
    }

    @Override
    public void visitLabel(Label label) {
      labelIndex.put(label, n);
      pendingBci = label instanceof At a ? a.bci : -1;
    }

    @Override
    public void visitFrame(int type, int nLocal, Object[] local, int nStack, Object[] stack) {
      pendingLocals = slots(local, nLocal);
      pendingStack = slots(stack, nStack);
    }

    /** Frame types as read (a long is one entry) to one entry per slot; labels stay labels. */
    private static Object[] slots(Object[] types, int count) {
      int size = count;
      for (int i = 0; i < count; i++) {
        size += types[i] == Opcodes.LONG || types[i] == Opcodes.DOUBLE ? 1 : 0;
      }
      Object[] out = new Object[size];
      int k = 0;
      for (int i = 0; i < count; i++) {
        out[k++] = types[i];
        if (types[i] == Opcodes.LONG || types[i] == Opcodes.DOUBLE) {
          out[k++] = HIGH;
        }
      }
      return out;
    }

    @Override
    public void visitTryCatchBlock(Label start, Label end, Label handler, String type) {
      tryCatch.add(new Label[] {start, end, handler});
    }

    @Override
    public void visitInsn(int opcode) {
      add(opcode, 0, null);
    }

    @Override
    public void visitIntInsn(int opcode, int operand) {
      add(opcode, operand, null);
    }

    @Override
    public void visitVarInsn(int opcode, int varIndex) {
      add(opcode, varIndex, null);
    }

    @Override
    public void visitTypeInsn(int opcode, String type) {
      add(opcode, 0, type);
    }

    @Override
    public void visitFieldInsn(int opcode, String fieldOwner, String fieldName, String fieldDesc) {
      add(opcode, 0, fieldDesc);
    }

    @Override
    public void visitMethodInsn(
        int opcode, String mOwner, String mName, String mDesc, boolean isInterface) {
      add(opcode, mName.equals("<init>") ? 1 : 0, mDesc);
    }

    @Override
    public void visitInvokeDynamicInsn(String iName, String iDesc, Handle bsm, Object... args) {
      add(Opcodes.INVOKEDYNAMIC, 0, iDesc);
    }

    @Override
    public void visitJumpInsn(int opcode, Label label) {
      add(opcode, 0, label);
    }

    @Override
    public void visitLdcInsn(Object value) {
      add(Opcodes.LDC, 0, value);
    }

    @Override
    public void visitIincInsn(int varIndex, int increment) {
      add(Opcodes.IINC, varIndex, null);
    }

    @Override
    public void visitTableSwitchInsn(int min, int max, Label dflt, Label... labels) {
      add(Opcodes.TABLESWITCH, 0, cases(dflt, labels));
    }

    @Override
    public void visitLookupSwitchInsn(Label dflt, int[] keys, Label[] labels) {
      add(Opcodes.LOOKUPSWITCH, 0, cases(dflt, labels));
    }

    private static Label[] cases(Label dflt, Label[] labels) {
      Label[] all = Arrays.copyOf(labels, labels.length + 1);
      all[labels.length] = dflt;
      return all;
    }

    @Override
    public void visitMultiANewArrayInsn(String descriptor, int numDimensions) {
      add(Opcodes.MULTIANEWARRAY, numDimensions, descriptor);
    }

    @Override
    public void visitMaxs(int maxStack, int maxLocals) {
      this.maxStack = maxStack;
      this.maxLocals = maxLocals;
    }

    @Override
    public void visitEnd() {
      if ((access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE)) != 0) {
        return;
      }
      for (int i = 0; i < n; i++) { // a frame names an uninitialized value by its NEW's label
        uninitByIndex(frameLocals[i]);
        uninitByIndex(frameStack[i]);
      }
      new Simulation(this).run();
    }

    private void uninitByIndex(Object[] frame) {
      for (int i = 0; frame != null && i < frame.length; i++) {
        if (frame[i] instanceof Label l) {
          frame[i] = new Uninit(labelIndex.get(l));
        }
      }
    }
  }

  /** Steps 2 to 4 of 'Frame check' over one recorded method. */
  private static final class Simulation {
    private final Recorder m;
    private final Object[] locals;
    private final Object[] stack;
    private int sp;
    private int at; // the instruction being simulated

    /** Handler instruction index per try range, and the range as instruction indices. */
    private final int[] rangeStart;

    private final int[] rangeEnd;
    private final int[] handler;

    /**
     * Bumped on every change of {@link #locals}; a range whose handler was checked at the current
     * version need not be checked again, as the handler's frame is fixed. Without this, a method
     * with many ranges paid ranges x instructions x locals, which made the check cost ECJ 70%.
     */
    private int localsVersion;

    private final int[] checkedVersion;

    Simulation(Recorder m) {
      this.m = m;
      this.locals = new Object[m.maxLocals];
      this.stack = new Object[m.maxStack];
      int ranges = m.tryCatch.size();
      rangeStart = new int[ranges];
      rangeEnd = new int[ranges];
      handler = new int[ranges];
      checkedVersion = new int[ranges];
      Arrays.fill(checkedVersion, -1);
      for (int r = 0; r < ranges; r++) {
        Label[] tc = m.tryCatch.get(r);
        rangeStart[r] = m.labelIndex.get(tc[0]);
        rangeEnd[r] = m.labelIndex.get(tc[1]);
        handler[r] = m.labelIndex.get(tc[2]);
      }
    }

    void run() {
      entryState();
      boolean reachable = true; // the previous instruction may fall through into this one
      for (at = 0; at < m.n; at++) {
        Object[] fl = m.frameLocals[at];
        if (fl != null) {
          if (reachable) {
            assignable(fl, m.frameStack[at], at);
          }
          Arrays.fill(locals, Opcodes.TOP);
          localsVersion++;
          if (fl.length > locals.length) {
            fail("frame has " + fl.length + " local slots > max_locals " + locals.length);
          }
          System.arraycopy(fl, 0, locals, 0, fl.length);
          Object[] fs = m.frameStack[at];
          if (fs.length > stack.length) {
            fail("frame has " + fs.length + " stack slots > max_stack " + stack.length);
          }
          System.arraycopy(fs, 0, stack, 0, fs.length);
          sp = fs.length;
        } else if (!reachable) {
          fail("no frame after an unconditional branch");
        }
        handlers(false);
        reachable = execute(m.ops[at], m.ints[at], m.objs[at]);
        int op = m.ops[at];
        if ((op >= Opcodes.ISTORE && op <= Opcodes.ASTORE) || op == Opcodes.IINC) {
          handlers(true);
        }
      }
      if (reachable) {
        at = m.n - 1;
        fail("falls off the end of the code");
      }
    }

    private void entryState() {
      Arrays.fill(locals, Opcodes.TOP);
      int k = 0;
      if ((m.access & Opcodes.ACC_STATIC) == 0) {
        boolean ctor = m.name.equals("<init>") && !m.owner.equals("java/lang/Object");
        k = setLocal(k, ctor ? Opcodes.UNINITIALIZED_THIS : m.owner);
      }
      for (Type t : Type.getArgumentTypes(m.desc)) {
        k = setLocal(k, type(t));
      }
    }

    /** Stores {@code t} at {@code slot}, as a store instruction would; returns the next slot. */
    private int setLocal(int slot, Object t) {
      int size = isWide(t) ? 2 : 1;
      localsVersion++;
      if (slot < 0 || slot + size > locals.length) {
        fail("local " + slot + " is beyond max_locals " + locals.length);
      }
      if (slot > 0 && (locals[slot - 1] == Opcodes.LONG || locals[slot - 1] == Opcodes.DOUBLE)) {
        locals[slot - 1] = Opcodes.TOP; // overwrites the high half of a long
      }
      Object last = locals[slot + size - 1];
      if ((last == Opcodes.LONG || last == Opcodes.DOUBLE) && slot + size < locals.length) {
        locals[slot + size] = Opcodes.TOP; // overwrites the low half of a long
      }
      locals[slot] = t;
      if (size == 2) {
        locals[slot + 1] = HIGH;
      }
      return slot + size;
    }

    /** Step 4 for handlers: the locals here against each covering handler's frame. */
    private void handlers(boolean after) {
      for (int r = 0; r < handler.length; r++) {
        if (rangeStart[r] <= at && at < rangeEnd[r] && checkedVersion[r] != localsVersion) {
          checkedVersion[r] = localsVersion;
          Object[] h = m.frameLocals[handler[r]];
          if (h == null) {
            fail("no frame at the handler at " + where(handler[r]));
          }
          for (int i = 0; i < Math.max(h.length, locals.length); i++) {
            Object want = i < h.length ? h[i] : Opcodes.TOP;
            Object have = i < locals.length ? locals[i] : Opcodes.TOP;
            if (!isAssignable(have, want)) {
              fail(
                  "locals["
                      + i
                      + "] is "
                      + name(have)
                      + (after ? " after this instruction" : "")
                      + ", not assignable to "
                      + name(want)
                      + " in the frame of the handler at "
                      + where(handler[r]));
            }
          }
        }
      }
    }

    /**
     * The current state against the frame at instruction {@code target} (the locals and the whole
     * stack); {@code target == at} is the frame here. The message is built only on failure: built
     * at every branch, it once was most of the check's cost.
     */
    private void assignable(Object[] fl, Object[] fs, int target) {
      for (int i = 0; i < Math.max(fl.length, locals.length); i++) {
        Object want = i < fl.length ? fl[i] : Opcodes.TOP;
        Object have = i < locals.length ? locals[i] : Opcodes.TOP;
        if (!isAssignable(have, want)) {
          fail(
              "locals["
                  + i
                  + "] is "
                  + name(have)
                  + ", not assignable to "
                  + name(want)
                  + " in "
                  + frameName(target));
        }
      }
      if (fs.length != sp) {
        fail("stack has " + sp + " slots, " + frameName(target) + " has " + fs.length);
      }
      for (int i = 0; i < sp; i++) {
        if (!isAssignable(stack[i], fs[i])) {
          fail(
              "stack["
                  + i
                  + "] is "
                  + name(stack[i])
                  + ", not assignable to "
                  + name(fs[i])
                  + " in "
                  + frameName(target));
        }
      }
    }

    private void jump(Label target) {
      int t = m.labelIndex.get(target);
      if (t >= m.n || m.frameLocals[t] == null) {
        fail("no frame at the branch target " + where(t));
      }
      assignable(m.frameLocals[t], m.frameStack[t], t);
    }

    private String frameName(int target) {
      return target == at ? "the frame here" : "the frame at the branch target " + where(target);
    }

    /**
     * Simulates one instruction; returns whether it may fall through to the next. Every opcode
     * that Java 7+ class files may hold is handled; JSR and RET are not allowed there.
     */
    private boolean execute(int op, int arg, Object obj) {
      switch (op) {
        case Opcodes.NOP -> {}
        case Opcodes.ACONST_NULL -> push(Opcodes.NULL);
        case Opcodes.ICONST_M1,
            Opcodes.ICONST_0,
            Opcodes.ICONST_1,
            Opcodes.ICONST_2,
            Opcodes.ICONST_3,
            Opcodes.ICONST_4,
            Opcodes.ICONST_5,
            Opcodes.BIPUSH,
            Opcodes.SIPUSH ->
            push(Opcodes.INTEGER);
        case Opcodes.LCONST_0, Opcodes.LCONST_1 -> push(Opcodes.LONG);
        case Opcodes.FCONST_0, Opcodes.FCONST_1, Opcodes.FCONST_2 -> push(Opcodes.FLOAT);
        case Opcodes.DCONST_0, Opcodes.DCONST_1 -> push(Opcodes.DOUBLE);
        case Opcodes.LDC -> push(constant(obj));
        case Opcodes.ILOAD -> load(arg, Opcodes.INTEGER);
        case Opcodes.LLOAD -> load(arg, Opcodes.LONG);
        case Opcodes.FLOAD -> load(arg, Opcodes.FLOAT);
        case Opcodes.DLOAD -> load(arg, Opcodes.DOUBLE);
        case Opcodes.ALOAD -> {
          Object t = arg < locals.length ? locals[arg] : null;
          if (t == null || !isAnyReference(t)) {
            fail("ALOAD " + arg + " of " + name(t));
          }
          push(t);
        }
        case Opcodes.IALOAD, Opcodes.BALOAD, Opcodes.CALOAD, Opcodes.SALOAD ->
            arrayLoad(Opcodes.INTEGER);
        case Opcodes.LALOAD -> arrayLoad(Opcodes.LONG);
        case Opcodes.FALOAD -> arrayLoad(Opcodes.FLOAT);
        case Opcodes.DALOAD -> arrayLoad(Opcodes.DOUBLE);
        case Opcodes.AALOAD -> {
          pop(Opcodes.INTEGER);
          Object array = popReference();
          push(
              array instanceof String s && s.startsWith("[")
                  ? type(Type.getType(s.substring(1)))
                  : array == Opcodes.NULL ? Opcodes.NULL : "java/lang/Object");
        }
        case Opcodes.ISTORE -> store(arg, pop(Opcodes.INTEGER));
        case Opcodes.LSTORE -> store(arg, pop(Opcodes.LONG));
        case Opcodes.FSTORE -> store(arg, pop(Opcodes.FLOAT));
        case Opcodes.DSTORE -> store(arg, pop(Opcodes.DOUBLE));
        case Opcodes.ASTORE -> store(arg, popAnyReference());
        case Opcodes.IASTORE, Opcodes.BASTORE, Opcodes.CASTORE, Opcodes.SASTORE ->
            arrayStore(Opcodes.INTEGER);
        case Opcodes.LASTORE -> arrayStore(Opcodes.LONG);
        case Opcodes.FASTORE -> arrayStore(Opcodes.FLOAT);
        case Opcodes.DASTORE -> arrayStore(Opcodes.DOUBLE);
        case Opcodes.AASTORE -> {
          popReference();
          pop(Opcodes.INTEGER);
          popReference();
        }
        case Opcodes.POP -> words(1, 1, 0, 0);
        case Opcodes.POP2 -> words(2, 2, 0, 0);
        case Opcodes.DUP -> words(1, 1, 1, 0);
        case Opcodes.DUP_X1 -> words(2, 1, 1, 1);
        case Opcodes.DUP_X2 -> words(3, 1, 1, 2);
        case Opcodes.DUP2 -> words(2, 2, 2, 0);
        case Opcodes.DUP2_X1 -> words(3, 2, 2, 1);
        case Opcodes.DUP2_X2 -> words(4, 2, 2, 2);
        case Opcodes.SWAP -> words(2, 1, -1, 1);
        case Opcodes.IADD,
            Opcodes.ISUB,
            Opcodes.IMUL,
            Opcodes.IDIV,
            Opcodes.IREM,
            Opcodes.ISHL,
            Opcodes.ISHR,
            Opcodes.IUSHR,
            Opcodes.IAND,
            Opcodes.IOR,
            Opcodes.IXOR ->
            binary(Opcodes.INTEGER, Opcodes.INTEGER);
        case Opcodes.LADD,
            Opcodes.LSUB,
            Opcodes.LMUL,
            Opcodes.LDIV,
            Opcodes.LREM,
            Opcodes.LAND,
            Opcodes.LOR,
            Opcodes.LXOR ->
            binary(Opcodes.LONG, Opcodes.LONG);
        case Opcodes.LSHL, Opcodes.LSHR, Opcodes.LUSHR -> binary(Opcodes.LONG, Opcodes.INTEGER);
        case Opcodes.FADD, Opcodes.FSUB, Opcodes.FMUL, Opcodes.FDIV, Opcodes.FREM ->
            binary(Opcodes.FLOAT, Opcodes.FLOAT);
        case Opcodes.DADD, Opcodes.DSUB, Opcodes.DMUL, Opcodes.DDIV, Opcodes.DREM ->
            binary(Opcodes.DOUBLE, Opcodes.DOUBLE);
        case Opcodes.INEG -> convert(Opcodes.INTEGER, Opcodes.INTEGER);
        case Opcodes.LNEG -> convert(Opcodes.LONG, Opcodes.LONG);
        case Opcodes.FNEG -> convert(Opcodes.FLOAT, Opcodes.FLOAT);
        case Opcodes.DNEG -> convert(Opcodes.DOUBLE, Opcodes.DOUBLE);
        case Opcodes.IINC -> {
          if (arg >= locals.length || locals[arg] != Opcodes.INTEGER) {
            fail("IINC " + arg + " of " + name(arg < locals.length ? locals[arg] : null));
          }
        }
        case Opcodes.I2L -> convert(Opcodes.INTEGER, Opcodes.LONG);
        case Opcodes.I2F -> convert(Opcodes.INTEGER, Opcodes.FLOAT);
        case Opcodes.I2D -> convert(Opcodes.INTEGER, Opcodes.DOUBLE);
        case Opcodes.L2I -> convert(Opcodes.LONG, Opcodes.INTEGER);
        case Opcodes.L2F -> convert(Opcodes.LONG, Opcodes.FLOAT);
        case Opcodes.L2D -> convert(Opcodes.LONG, Opcodes.DOUBLE);
        case Opcodes.F2I -> convert(Opcodes.FLOAT, Opcodes.INTEGER);
        case Opcodes.F2L -> convert(Opcodes.FLOAT, Opcodes.LONG);
        case Opcodes.F2D -> convert(Opcodes.FLOAT, Opcodes.DOUBLE);
        case Opcodes.D2I -> convert(Opcodes.DOUBLE, Opcodes.INTEGER);
        case Opcodes.D2L -> convert(Opcodes.DOUBLE, Opcodes.LONG);
        case Opcodes.D2F -> convert(Opcodes.DOUBLE, Opcodes.FLOAT);
        case Opcodes.I2B, Opcodes.I2C, Opcodes.I2S -> convert(Opcodes.INTEGER, Opcodes.INTEGER);
        case Opcodes.LCMP -> binaryTo(Opcodes.LONG, Opcodes.INTEGER);
        case Opcodes.FCMPL, Opcodes.FCMPG -> binaryTo(Opcodes.FLOAT, Opcodes.INTEGER);
        case Opcodes.DCMPL, Opcodes.DCMPG -> binaryTo(Opcodes.DOUBLE, Opcodes.INTEGER);
        case Opcodes.IFEQ, Opcodes.IFNE, Opcodes.IFLT, Opcodes.IFGE, Opcodes.IFGT, Opcodes.IFLE -> {
          pop(Opcodes.INTEGER);
          jump((Label) obj);
        }
        case Opcodes.IF_ICMPEQ,
            Opcodes.IF_ICMPNE,
            Opcodes.IF_ICMPLT,
            Opcodes.IF_ICMPGE,
            Opcodes.IF_ICMPGT,
            Opcodes.IF_ICMPLE -> {
          pop(Opcodes.INTEGER);
          pop(Opcodes.INTEGER);
          jump((Label) obj);
        }
        case Opcodes.IF_ACMPEQ, Opcodes.IF_ACMPNE -> {
          popReference();
          popReference();
          jump((Label) obj);
        }
        case Opcodes.IFNULL, Opcodes.IFNONNULL -> {
          popReference();
          jump((Label) obj);
        }
        case Opcodes.GOTO -> {
          jump((Label) obj);
          return false;
        }
        case Opcodes.TABLESWITCH, Opcodes.LOOKUPSWITCH -> {
          pop(Opcodes.INTEGER);
          for (Label l : (Label[]) obj) {
            jump(l);
          }
          return false;
        }
        case Opcodes.IRETURN -> {
          pop(Opcodes.INTEGER);
          return false;
        }
        case Opcodes.LRETURN -> {
          pop(Opcodes.LONG);
          return false;
        }
        case Opcodes.FRETURN -> {
          pop(Opcodes.FLOAT);
          return false;
        }
        case Opcodes.DRETURN -> {
          pop(Opcodes.DOUBLE);
          return false;
        }
        case Opcodes.ARETURN -> {
          popReference();
          return false;
        }
        case Opcodes.RETURN -> {
          return false;
        }
        case Opcodes.ATHROW -> {
          popReference();
          return false;
        }
        case Opcodes.GETSTATIC -> push(type(Type.getType((String) obj)));
        case Opcodes.PUTSTATIC -> pop(type(Type.getType((String) obj)));
        case Opcodes.GETFIELD -> {
          popReference();
          push(type(Type.getType((String) obj)));
        }
        case Opcodes.PUTFIELD -> {
          pop(type(Type.getType((String) obj)));
          popAnyReference(); // uninitializedThis may take fields before super()
        }
        case Opcodes.INVOKEVIRTUAL,
            Opcodes.INVOKESPECIAL,
            Opcodes.INVOKESTATIC,
            Opcodes.INVOKEINTERFACE,
            Opcodes.INVOKEDYNAMIC ->
            invoke(op, arg == 1, (String) obj);
        case Opcodes.NEW -> push(new Uninit(at));
        case Opcodes.NEWARRAY -> {
          pop(Opcodes.INTEGER);
          push(primitiveArray(arg));
        }
        case Opcodes.ANEWARRAY -> {
          pop(Opcodes.INTEGER);
          String t = (String) obj;
          push(t.startsWith("[") ? "[" + t : "[L" + t + ";");
        }
        case Opcodes.ARRAYLENGTH -> {
          popReference();
          push(Opcodes.INTEGER);
        }
        case Opcodes.CHECKCAST -> {
          popReference();
          push(obj);
        }
        case Opcodes.INSTANCEOF -> {
          popReference();
          push(Opcodes.INTEGER);
        }
        case Opcodes.MONITORENTER, Opcodes.MONITOREXIT -> popReference();
        case Opcodes.MULTIANEWARRAY -> {
          for (int d = 0; d < arg; d++) {
            pop(Opcodes.INTEGER);
          }
          push(obj);
        }
        default -> fail("opcode " + op + " is not allowed in a class file with frames");
      }
      return true;
    }

    private void invoke(int op, boolean init, String mDesc) {
      Type[] args = Type.getArgumentTypes(mDesc);
      for (int i = args.length - 1; i >= 0; i--) {
        pop(type(args[i]));
      }
      if (op != Opcodes.INVOKESTATIC && op != Opcodes.INVOKEDYNAMIC) {
        Object receiver = popAnyReference();
        if (init) {
          if (!(receiver instanceof Uninit) && receiver != Opcodes.UNINITIALIZED_THIS) {
            fail("<init> called on " + name(receiver));
          }
          Object done = receiver instanceof Uninit u ? (Object) m.objs[u.insn()] : (Object) m.owner;
          localsVersion++;
          for (int i = 0; i < locals.length; i++) {
            locals[i] = receiver.equals(locals[i]) ? done : locals[i];
          }
          for (int i = 0; i < sp; i++) {
            stack[i] = receiver.equals(stack[i]) ? done : stack[i];
          }
        } else if (receiver instanceof Uninit || receiver == Opcodes.UNINITIALIZED_THIS) {
          fail("method called on " + name(receiver));
        }
      }
      Type ret = Type.getReturnType(mDesc);
      if (ret.getSort() != Type.VOID) {
        push(type(ret));
      }
    }

    /**
     * A stack shuffle of {@code take} words from the top: the top {@code copy} words are pushed
     * again below the {@code under} words beneath them (copy -1: SWAP). The top {@code take} words
     * are popped first for POP and POP2 (copy 0, under 0). A cut between words must not split a
     * long or double: the word above a cut must not be a high half.
     */
    private void words(int take, int top, int copy, int under) {
      if (sp < take) {
        fail("stack underflow: " + sp + " words, needs " + take);
      }
      Object[] w = new Object[take]; // w[0] is the top word
      for (int i = 0; i < take; i++) {
        w[i] = stack[sp - 1 - i];
      }
      // Cuts: below the top group, below the words it goes under, and at the bottom of take.
      checkCut(w, top);
      if (under > 0) {
        checkCut(w, top + under);
      }
      if (copy == 0) {
        sp -= take;
        return;
      }
      sp -= take;
      if (copy == -1) { // SWAP: two category-1 words
        push1(w[0]);
        push1(w[1]);
        return;
      }
      for (int i = copy - 1; i >= 0; i--) {
        push1(w[i]);
      }
      for (int i = take - 1; i >= 0; i--) {
        push1(w[i]);
      }
    }

    private void checkCut(Object[] w, int depth) {
      if (w[depth - 1] == HIGH) {
        fail("stack shuffle splits a long or double");
      }
    }

    private void push1(Object word) {
      if (sp == stack.length) {
        fail("stack overflow: max_stack " + stack.length);
      }
      stack[sp++] = word;
    }

    private void push(Object t) {
      push1(t);
      if (isWide(t)) {
        push1(HIGH);
      }
    }

    /** Pops a value of kind {@code t} (a reference if {@code t} is a reference). */
    private Object pop(Object t) {
      if (isWide(t)) {
        if (sp < 2 || stack[sp - 1] != HIGH || stack[sp - 2] != t) {
          fail("expects " + name(t) + " on the stack, has " + top());
        }
        sp -= 2;
        return t;
      }
      if (t instanceof String || t == Opcodes.NULL) {
        return popReference();
      }
      if (sp < 1 || stack[sp - 1] != t) {
        fail("expects " + name(t) + " on the stack, has " + top());
      }
      return stack[--sp];
    }

    /** Pops an initialized reference or null. */
    private Object popReference() {
      Object t = popAnyReference();
      if (t instanceof Uninit || t == Opcodes.UNINITIALIZED_THIS) {
        fail("expects an initialized reference on the stack, has " + name(t));
      }
      return t;
    }

    /** Pops a reference, null, or uninitialized value. */
    private Object popAnyReference() {
      if (sp < 1 || !isAnyReference(stack[sp - 1])) {
        fail("expects a reference on the stack, has " + top());
      }
      return stack[--sp];
    }

    private String top() {
      return sp == 0
          ? "nothing"
          : name(stack[sp - 1] == HIGH && sp > 1 ? stack[sp - 2] : stack[sp - 1]);
    }

    private void load(int slot, Object t) {
      if (slot >= locals.length
          || locals[slot] != t
          || (isWide(t) && (slot + 1 >= locals.length || locals[slot + 1] != HIGH))) {
        fail(
            "load of local "
                + slot
                + " as "
                + name(t)
                + ", which is "
                + name(slot < locals.length ? locals[slot] : null));
      }
      push(t);
    }

    private void store(int slot, Object t) {
      setLocal(slot, t);
    }

    private void arrayLoad(Object element) {
      pop(Opcodes.INTEGER);
      popReference();
      push(element);
    }

    private void arrayStore(Object element) {
      pop(element);
      pop(Opcodes.INTEGER);
      popReference();
    }

    private void binary(Object left, Object right) {
      pop(right);
      pop(left);
      push(left);
    }

    private void binaryTo(Object operands, Object result) {
      pop(operands);
      pop(operands);
      push(result);
    }

    private void convert(Object from, Object to) {
      pop(from);
      push(to);
    }

    private String where(int insn) {
      if (insn < m.n && m.bci[insn] >= 0) {
        return "bci " + m.bci[insn];
      }
      int k = insn;
      while (k > 0 && (k >= m.n || m.bci[k] < 0)) {
        k--;
      }
      return "instruction "
          + insn
          + " ("
          + (insn - k)
          + " after bci "
          + Math.max(0, m.bci[k])
          + ")";
    }

    private void fail(String reason) {
      throw new FrameCheckException(m.owner, m.name + m.desc, where(at), reason);
    }
  }

  /** Verification type of a field, argument or return type. */
  static Object type(Type t) {
    return switch (t.getSort()) {
      case Type.BOOLEAN, Type.CHAR, Type.BYTE, Type.SHORT, Type.INT -> Opcodes.INTEGER;
      case Type.FLOAT -> Opcodes.FLOAT;
      case Type.LONG -> Opcodes.LONG;
      case Type.DOUBLE -> Opcodes.DOUBLE;
      case Type.ARRAY -> t.getDescriptor();
      case Type.OBJECT -> t.getInternalName();
      default -> throw new IllegalArgumentException("type: " + t);
    };
  }

  private static Object constant(Object c) {
    if (c instanceof Integer) {
      return Opcodes.INTEGER;
    } else if (c instanceof Float) {
      return Opcodes.FLOAT;
    } else if (c instanceof Long) {
      return Opcodes.LONG;
    } else if (c instanceof Double) {
      return Opcodes.DOUBLE;
    } else if (c instanceof String) {
      return "java/lang/String";
    } else if (c instanceof Type t) {
      return t.getSort() == Type.METHOD ? "java/lang/invoke/MethodType" : "java/lang/Class";
    } else if (c instanceof Handle) {
      return "java/lang/invoke/MethodHandle";
    } else if (c instanceof ConstantDynamic d) {
      return type(Type.getType(d.getDescriptor()));
    }
    throw new IllegalArgumentException("constant: " + c);
  }

  private static String primitiveArray(int atype) {
    return switch (atype) {
      case Opcodes.T_BOOLEAN -> "[Z";
      case Opcodes.T_CHAR -> "[C";
      case Opcodes.T_FLOAT -> "[F";
      case Opcodes.T_DOUBLE -> "[D";
      case Opcodes.T_BYTE -> "[B";
      case Opcodes.T_SHORT -> "[S";
      case Opcodes.T_INT -> "[I";
      case Opcodes.T_LONG -> "[J";
      default -> throw new IllegalArgumentException("newarray type " + atype);
    };
  }

  static boolean isWide(Object t) {
    return t == Opcodes.LONG || t == Opcodes.DOUBLE;
  }

  /** A reference, null, or an uninitialized value: what ALOAD and ASTORE move. */
  private static boolean isAnyReference(Object t) {
    return t instanceof String
        || t == Opcodes.NULL
        || t instanceof Uninit
        || t == Opcodes.UNINITIALIZED_THIS;
  }

  /**
   * Whether a value of type {@code have} may stand where a frame declares {@code want}, coarsely:
   * see the overview.
   */
  private static boolean isAssignable(Object have, Object want) {
    if (want == Opcodes.TOP || have == want || have.equals(want)) {
      return true;
    }
    if (want instanceof String) {
      return have instanceof String || have == Opcodes.NULL;
    }
    return false;
  }

  /** Readable name of a verification type, for messages. */
  private static String name(Object t) {
    if (t == null) {
      return "nothing";
    } else if (t == HIGH) {
      return "the high half of a long or double";
    } else if (t instanceof String s) {
      return s;
    } else if (t instanceof Uninit u) {
      return "uninitialized(NEW at instruction " + u.insn() + ")";
    }
    return switch ((Integer) t) {
      case 0 -> "top";
      case 1 -> "int";
      case 2 -> "float";
      case 3 -> "double";
      case 4 -> "long";
      case 5 -> "null";
      case 6 -> "uninitializedThis";
      default -> "type " + t;
    };
  }
}
