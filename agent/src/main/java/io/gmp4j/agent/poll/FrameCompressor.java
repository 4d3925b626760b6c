package io.gmp4j.agent.poll;

import java.util.Arrays;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.Type;

/**
 * Hands the class writer each frame of a rewritten method already compressed: the frame as
 * {@code F_SAME}, {@code F_SAME1}, {@code F_CHOP} or {@code F_APPEND} against the frame before it
 * where it can be, else {@code F_FULL}.
 *
 * <h2>Implementation overview: 'Compressed frames'</h2>
 *
 * The injector reads classes with expanded frames ({@code EXPAND_FRAMES}): the scanner and the
 * emitter need the whole frame at every label ('Poll placement' in {@link PollInjector}). ASM's
 * {@code MethodWriter} takes an expanded ({@code F_NEW}) frame as well, but then converts every
 * local and stack entry to its own type index (for a class, a string concatenation, a substring
 * and a hash lookup) and compresses the frame against the one before. That was 14% of the
 * injector's time on Spring Boot's start-up (BENCHMARKS.md, 'Compressed frames'). A compressed
 * frame goes to the StackMapTable as it is, with one constant-pool lookup per class named in the
 * entries it writes, and an {@code F_SAME} frame, the most common, writes one byte.
 *
 * <p>So this visitor, between the emitter and the writer, keeps the locals of the last frame it
 * passed on (before the first, those of the method's implicit first frame: {@code this} or
 * {@code UNINITIALIZED_THIS}, then the arguments) and compresses each frame by the rules of
 * {@code MethodWriter.putFrame}, entry for entry: the same frame type whenever the kept locals
 * are a prefix of the new ones or the other way round and the stack fits, else a full frame. The
 * StackMapTable is the one ASM writes from expanded frames, byte for byte, with one exception:
 * a one-stack-item frame 63 bytes after the one before, which ASM's putFrame writes in the
 * extended form and its compressed path in the short form; both are valid (JVMS 4.7.4). {@code
 * FrameCompressorTest} checks it on every class of {@code java.base}.
 *
 * <p>Every frame of the method must come through here (the writer cannot mix expanded and
 * compressed frames), and only for class files of version 50 or later: the writer refuses
 * compressed frames below it, where the injector declares none ('Old class files').
 *
 * <p>Used by one thread for one method.
 */
final class FrameCompressor extends MethodVisitor {
  /** The locals of the last frame passed on, in the API's format (long and double one entry). */
  private Object[] previous;

  /**
   * @param writer the class writer's visitor for the method
   * @param owner the internal name of the method's class
   * @param access the method's access flags
   */
  FrameCompressor(MethodVisitor writer, String owner, int access, String name, String descriptor) {
    super(Opcodes.ASM9, writer);
    this.previous = implicitLocals(owner, access, name, descriptor);
  }

  /**
   * The locals of the frame the JVM assumes at offset 0 (JVMS 4.10.1.6), as ASM's Frame {@code
   * setInputFrameFromDescriptor} builds them: {@code UNINITIALIZED_THIS} in a constructor, the
   * class itself in any other instance method, then one entry per argument.
   */
  static Object[] implicitLocals(String owner, int access, String name, String descriptor) {
    Type[] args = Type.getArgumentTypes(descriptor);
    boolean instance = (access & Opcodes.ACC_STATIC) == 0;
    Object[] locals = new Object[args.length + (instance ? 1 : 0)];
    int k = 0;
    if (instance) {
      locals[k++] = "<init>".equals(name) ? Opcodes.UNINITIALIZED_THIS : owner;
    }
    for (Type t : args) {
      locals[k++] =
          switch (t.getSort()) {
            case Type.BOOLEAN, Type.CHAR, Type.BYTE, Type.SHORT, Type.INT -> Opcodes.INTEGER;
            case Type.FLOAT -> Opcodes.FLOAT;
            case Type.LONG -> Opcodes.LONG;
            case Type.DOUBLE -> Opcodes.DOUBLE;
            default -> t.getInternalName(); // a class, or an array's descriptor
          };
    }
    return locals;
  }

  @Override
  public void visitFrame(int type, int nLocal, Object[] local, int nStack, Object[] stack) {
    if (type != Opcodes.F_NEW) {
      throw new IllegalStateException("visitFrame: frames not expanded: " + type);
    }
    Object[] prev = previous;
    int common = Math.min(prev.length, nLocal);
    int same = 0;
    // Integer constants by value, class names by content, uninitialized types (the reader's
    // Label of their NEW) by identity: what ASM's type indices tell apart.
    while (same < common && prev[same].equals(local[same])) {
      same++;
    }
    int delta = nLocal - prev.length;
    previous = Arrays.copyOf(local, nLocal);
    if (same == common) {
      if (nStack == 0 && delta == 0) {
        super.visitFrame(Opcodes.F_SAME, 0, null, 0, null);
        return;
      }
      if (nStack == 0 && delta < 0 && delta >= -3) {
        super.visitFrame(Opcodes.F_CHOP, -delta, null, 0, null);
        return;
      }
      if (nStack == 0 && delta > 0 && delta <= 3) {
        super.visitFrame(
            Opcodes.F_APPEND, delta, Arrays.copyOfRange(local, common, nLocal), 0, null);
        return;
      }
      if (nStack == 1 && delta == 0) {
        super.visitFrame(Opcodes.F_SAME1, 0, null, 1, stack);
        return;
      }
    }
    super.visitFrame(Opcodes.F_FULL, nLocal, local, nStack, stack);
  }
}
