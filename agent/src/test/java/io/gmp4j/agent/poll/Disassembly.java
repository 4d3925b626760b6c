package io.gmp4j.agent.poll;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import net.bytebuddy.jar.asm.AnnotationVisitor;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.Handle;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.TypePath;

/**
 * A flat, test-only view of a class file's methods: one {@link Insn} per instruction, with jump
 * targets as instruction indices, and checks on the control-flow graph.
 */
final class Disassembly {
  private Disassembly() {}

  /** One instruction; {@code targets} holds instruction indices (switch default last). */
  record Insn(int op, String owner, String name, int var, int incr, int[] targets) {
    boolean isPoll() {
      return op == Opcodes.INVOKESTATIC
          && PollInjector.PREEMPT_OWNER.equals(owner)
          && PollInjector.POLL_NAME.equals(name);
    }

    boolean isCall(String owner, String name) {
      return op >= Opcodes.INVOKEVIRTUAL
          && op <= Opcodes.INVOKEINTERFACE
          && owner.equals(this.owner)
          && name.equals(this.name);
    }

    boolean unconditional() {
      return op == Opcodes.GOTO
          || op == Opcodes.ATHROW
          || (op >= Opcodes.IRETURN && op <= Opcodes.RETURN)
          || op == Opcodes.TABLESWITCH
          || op == Opcodes.LOOKUPSWITCH;
    }
  }

  /**
   * A type annotation in a method's code, where ASM reports it: {@code at} holds instruction
   * indices, the annotated instruction's for one on an instruction, each range's start and end
   * (exclusive) for one on a local variable, none for one on a caught exception; {@code what}
   * says which, with its type reference, path and descriptor.
   */
  record TypeAnnotation(String what, int... at) {}

  record Method(String name, String desc, List<Insn> insns, List<TypeAnnotation> annotations) {
    long polls() {
      return insns.stream().filter(Insn::isPoll).count();
    }

    /** Indices of jumps and switches with a target at or before themselves. */
    List<Integer> backwardBranches() {
      List<Integer> out = new ArrayList<>();
      for (int k = 0; k < insns.size(); k++) {
        for (int t : insns.get(k).targets()) {
          if (t <= k) {
            out.add(k);
            break;
          }
        }
      }
      return out;
    }

    /**
     * The strip-mined loops: a GOTO to a header that reads {@code ILOAD i; ILOAD strip; IF_ICMPxx
     * outer}, right after {@code IFLE header; ILOAD i; LDC span; IADD|ISUB; ISTORE strip}, where
     * {@code outer} holds {@code ILOAD i; limit; IF_ICMPxx; poll; GOTO before the header} with the
     * same compare ({@code IF_ICMPGE} counting up, {@code IF_ICMPLE} or {@code IF_ICMPLT} counting
     * down). Each entry is {inner GOTO, inner header, outer GOTO}; empty if there are none.
     */
    List<int[]> strips() {
      List<int[]> out = new ArrayList<>();
      for (int g = 0; g < insns.size(); g++) {
        Insn jump = insns.get(g);
        if (jump.op() != Opcodes.GOTO || jump.targets()[0] > g) {
          continue;
        }
        int h = jump.targets()[0];
        if (h < 5 || h + 2 >= insns.size()) {
          continue;
        }
        Insn store = insns.get(h - 1);
        Insn skip = insns.get(h - 5); // IFLE over `strip = i +- span`
        int addOrSub = insns.get(h - 2).op();
        boolean bound =
            skip.op() == Opcodes.IFLE
                && skip.targets()[0] == h
                && insns.get(h - 4).op() == Opcodes.ILOAD
                && insns.get(h - 3).op() == Opcodes.LDC
                && (addOrSub == Opcodes.IADD || addOrSub == Opcodes.ISUB)
                && store.op() == Opcodes.ISTORE;
        Insn test = insns.get(h + 2);
        int cmp = test.op();
        boolean cmpMatches =
            addOrSub == Opcodes.IADD
                ? cmp == Opcodes.IF_ICMPGE
                : cmp == Opcodes.IF_ICMPLE || cmp == Opcodes.IF_ICMPLT;
        if (!bound
            || !cmpMatches
            || insns.get(h).op() != Opcodes.ILOAD
            || insns.get(h + 1).op() != Opcodes.ILOAD
            || insns.get(h + 1).var() != store.var()
            || test.targets()[0] != g + 1) {
          continue;
        }
        int o = g + 1;
        int limitLen = insns.get(o + 1).op() == Opcodes.ALOAD ? 2 : 1;
        Insn exitTest = insns.get(o + 1 + limitLen);
        Insn poll = insns.get(o + 2 + limitLen);
        Insn outerBack = insns.get(o + 3 + limitLen);
        if (insns.get(o).op() == Opcodes.ILOAD
            && insns.get(o).var() == insns.get(h).var()
            && exitTest.op() == cmp
            && poll.isPoll()
            && outerBack.op() == Opcodes.GOTO
            && outerBack.targets()[0] < h
            && !insns.get(g - 1).isPoll()) {
          out.add(new int[] {g, h, o + 3 + limitLen});
        }
      }
      return out;
    }

    /**
     * The countdown polls: {@code IINC b -w; ILOAD b; IFGT skip; SIPUSH 1024; ISTORE b; poll;
     * skip: GOTO t} (or, with its own back-edge, {@code IFGT t} and no {@code skip}), where {@code
     * w} is 1 or {@link PollEmitter#OUTER_WEIGHT} and local {@code b} is written nowhere else but
     * by {@code ICONST_1; ISTORE b} as the method's first (or, after a prologue poll, second)
     * instruction. Each entry is {IINC index, IFGT index, target, IFGT target, w}.
     */
    List<int[]> countdowns() {
      List<int[]> out = new ArrayList<>();
      for (int k = 0; k + 6 < insns.size(); k++) {
        Insn dec = insns.get(k);
        Insn gt = insns.get(k + 2);
        Insn back = insns.get(k + 6);
        if (dec.op() == Opcodes.IINC
            && (dec.incr() == -1 || dec.incr() == -PollEmitter.OUTER_WEIGHT)
            && insns.get(k + 1).op() == Opcodes.ILOAD
            && insns.get(k + 1).var() == dec.var()
            && gt.op() == Opcodes.IFGT
            && insns.get(k + 3).op() == Opcodes.SIPUSH
            && insns.get(k + 3).incr() == PollEmitter.BUDGET
            && insns.get(k + 4).op() == Opcodes.ISTORE
            && insns.get(k + 4).var() == dec.var()
            && insns.get(k + 5).isPoll()
            && back.op() == Opcodes.GOTO
            && (gt.targets()[0] == k + 6 || gt.targets()[0] == back.targets()[0])) {
          out.add(new int[] {k, k + 2, back.targets()[0], gt.targets()[0], -dec.incr()});
        }
      }
      if (!out.isEmpty()) {
        int b = insns.get(out.get(0)[0]).var();
        int init = insns.get(0).isPoll() ? 1 : 0;
        for (int k = 0; k < insns.size(); k++) {
          Insn in = insns.get(k);
          boolean writes =
              in.var() == b
                  && (in.op() == Opcodes.IINC
                      || (in.op() >= Opcodes.ISTORE && in.op() <= Opcodes.ASTORE));
          if (!writes) {
            continue;
          }
          final int kk = k;
          boolean ok =
              (k == init + 1 && insns.get(init).op() == Opcodes.ICONST_1)
                  || out.stream().anyMatch(c -> c[0] == kk || c[0] + 4 == kk);
          if (!ok) {
            throw new AssertionError(name + ": budget local written at " + k);
          }
        }
      }
      return out;
    }

    /**
     * True if every cycle of the control-flow graph runs a poll, not counting the inner back-edges
     * of strips (bounded by their strip) and the taken branches of countdowns (bounded by the
     * budget).
     */
    boolean everyCyclePolls() {
      List<int[]> bounded = new ArrayList<>();
      for (int[] e : strips()) {
        bounded.add(new int[] {e[0], e[1]});
      }
      for (int[] c : countdowns()) {
        bounded.add(new int[] {c[1], c[3]}); // IFGT over the poll
      }
      return everyCyclePolls(bounded);
    }

    /**
     * True if every cycle of the control-flow graph runs a poll, not counting the edges {@code
     * bounded} ({from, to}). Exception edges are left out: a handler that loops back does so with
     * an ordinary jump, which is in the graph.
     */
    boolean everyCyclePolls(List<int[]> bounded) {
      int n = insns.size();
      List<List<Integer>> succ = new ArrayList<>();
      for (int k = 0; k < n; k++) {
        List<Integer> s = new ArrayList<>();
        Insn in = insns.get(k);
        if (!in.isPoll()) {
          if (!in.unconditional() && k + 1 < n) {
            s.add(k + 1);
          }
          for (int t : in.targets()) {
            final int kk = k;
            if (bounded.stream().noneMatch(e -> e[0] == kk && e[1] == t)) {
              s.add(t);
            }
          }
        }
        succ.add(s);
      }
      // Kahn: a graph (polls cut, their out-edges removed) is acyclic iff all nodes drain.
      int[] indeg = new int[n];
      succ.forEach(s -> s.forEach(t -> indeg[t]++));
      ArrayDeque<Integer> ready = new ArrayDeque<>();
      for (int k = 0; k < n; k++) {
        if (indeg[k] == 0) {
          ready.add(k);
        }
      }
      int drained = 0;
      while (!ready.isEmpty()) {
        int k = ready.poll();
        drained++;
        for (int t : succ.get(k)) {
          if (--indeg[t] == 0) {
            ready.add(t);
          }
        }
      }
      return drained == n;
    }
  }

  /** Methods by {@code name + desc}, in class-file order. */
  static Map<String, Method> methods(byte[] classfile) {
    Map<String, Method> out = new LinkedHashMap<>();
    new ClassReader(classfile)
        .accept(
            new ClassVisitor(Opcodes.ASM9) {
              @Override
              public MethodVisitor visitMethod(
                  int access, String name, String desc, String sig, String[] exceptions) {
                return new Recorder((m, a) -> out.put(name + desc, new Method(name, desc, m, a)));
              }
            },
            ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
    return out;
  }

  /** Finds a method by name alone; fails if there is none or more than one. */
  static Method method(byte[] classfile, String name) {
    List<Method> found =
        methods(classfile).values().stream().filter(m -> m.name().equals(name)).toList();
    if (found.size() != 1) {
      throw new AssertionError(name + ": " + found.size() + " methods");
    }
    return found.get(0);
  }

  private static final class Recorder extends MethodVisitor {
    private final BiConsumer<List<Insn>, List<TypeAnnotation>> done;
    private final List<Object[]> raw = new ArrayList<>(); // {op, owner, name, var, incr, Label[]}
    private final Map<Label, Integer> pos = new IdentityHashMap<>();
    private final List<TypeAnnotation> annotations = new ArrayList<>();

    Recorder(BiConsumer<List<Insn>, List<TypeAnnotation>> done) {
      super(Opcodes.ASM9);
      this.done = done;
    }

    @Override
    public AnnotationVisitor visitInsnAnnotation(
        int typeRef, TypePath path, String desc, boolean visible) {
      // ASM reports it right after the annotated instruction
      annotations.add(new TypeAnnotation("insn " + typeRef + " " + path + desc, raw.size() - 1));
      return null;
    }

    @Override
    public AnnotationVisitor visitTryCatchAnnotation(
        int typeRef, TypePath path, String desc, boolean visible) {
      annotations.add(new TypeAnnotation("catch " + typeRef + " " + path + desc));
      return null;
    }

    @Override
    public AnnotationVisitor visitLocalVariableAnnotation(
        int typeRef,
        TypePath path,
        Label[] start,
        Label[] end,
        int[] index,
        String desc,
        boolean visible) {
      int[] at = new int[2 * start.length];
      for (int k = 0; k < start.length; k++) {
        at[2 * k] = pos.get(start[k]);
        at[2 * k + 1] = pos.get(end[k]);
      }
      String what = "local " + Arrays.toString(index) + " " + typeRef + " " + path + desc;
      annotations.add(new TypeAnnotation(what, at));
      return null;
    }

    private void add(int op, String owner, String name, int var, int incr, Label... targets) {
      raw.add(new Object[] {op, owner, name, var, incr, targets});
    }

    @Override
    public void visitLabel(Label label) {
      pos.put(label, raw.size());
    }

    @Override
    public void visitInsn(int opcode) {
      add(opcode, null, null, -1, 0);
    }

    @Override
    public void visitIntInsn(int opcode, int operand) {
      add(opcode, null, null, -1, operand);
    }

    @Override
    public void visitVarInsn(int opcode, int varIndex) {
      add(opcode, null, null, varIndex, 0);
    }

    @Override
    public void visitTypeInsn(int opcode, String type) {
      add(opcode, type, null, -1, 0);
    }

    @Override
    public void visitFieldInsn(int opcode, String owner, String name, String descriptor) {
      add(opcode, owner, name, -1, 0);
    }

    @Override
    public void visitMethodInsn(int op, String owner, String name, String desc, boolean itf) {
      add(op, owner, name, -1, 0);
    }

    @Override
    public void visitInvokeDynamicInsn(String name, String desc, Handle bsm, Object... args) {
      add(Opcodes.INVOKEDYNAMIC, null, name, -1, 0);
    }

    @Override
    public void visitJumpInsn(int opcode, Label label) {
      add(opcode, null, null, -1, 0, label);
    }

    @Override
    public void visitLdcInsn(Object value) {
      add(Opcodes.LDC, null, null, -1, 0);
    }

    @Override
    public void visitIincInsn(int varIndex, int increment) {
      add(Opcodes.IINC, null, null, varIndex, increment);
    }

    @Override
    public void visitTableSwitchInsn(int min, int max, Label dflt, Label... labels) {
      Label[] all = Arrays.copyOf(labels, labels.length + 1);
      all[labels.length] = dflt;
      add(Opcodes.TABLESWITCH, null, null, -1, 0, all);
    }

    @Override
    public void visitLookupSwitchInsn(Label dflt, int[] keys, Label[] labels) {
      Label[] all = Arrays.copyOf(labels, labels.length + 1);
      all[labels.length] = dflt;
      add(Opcodes.LOOKUPSWITCH, null, null, -1, 0, all);
    }

    @Override
    public void visitMultiANewArrayInsn(String descriptor, int numDimensions) {
      add(Opcodes.MULTIANEWARRAY, descriptor, null, -1, 0);
    }

    @Override
    public void visitEnd() {
      List<Insn> insns = new ArrayList<>();
      for (Object[] r : raw) {
        Label[] ls = (Label[]) r[5];
        int[] t = new int[ls.length];
        for (int i = 0; i < ls.length; i++) {
          t[i] = pos.get(ls[i]);
        }
        insns.add(new Insn((int) r[0], (String) r[1], (String) r[2], (int) r[3], (int) r[4], t));
      }
      done.accept(insns, annotations);
    }
  }
}
