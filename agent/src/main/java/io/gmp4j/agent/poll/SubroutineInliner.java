package io.gmp4j.agent.poll;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.commons.JSRInlinerAdapter;

/**
 * Rewrites the JSR/RET subroutines of an old class file (below major version 50) as inline code,
 * so that the loops of their methods can get polls ('Subroutines' in {@link PollInjector}). Go
 * has no counterpart: its compiler never had subroutines.
 *
 * <h2>Implementation overview: 'Subroutines'</h2>
 *
 * javac 1.4 and older compiled {@code finally} as a subroutine: {@code jsr L} pushes a return
 * address, and the subroutine ends in {@code ret} through the local it stored it in. The
 * scanner cannot place polls in such a method: a return address is not a value a loop can carry
 * through the countdown's block, and the strip-mined loop's blocks would sit between a {@code jsr}
 * and its {@code ret}. So before the scan, {@link PollInjector} hands a class that has such a
 * method with loops to {@link #inline}:
 *
 * <ol>
 *   <li>ASM's {@code JSRInlinerAdapter} (asm-commons, shaded beside Byte Buddy's ASM as {@code
 *       io.gmp4j.agent.shaded.asm}; Byte Buddy repackages only ASM's core, without the tree API
 *       the adapter builds on) copies each subroutine into every place that calls it: a {@code
 *       jsr} becomes {@code aconst_null; goto copy}, and the copy's {@code ret} a {@code goto} to
 *       the instruction after that {@code jsr}. Try ranges and local-variable entries are copied
 *       with the code, so a {@code finally} still covers what it covered.
 *   <li>max_stack and max_locals stay the method's own: the {@code aconst_null} takes the slot the
 *       return address took, and nothing else is pushed. No frame is written: the class stays
 *       below 50, where the JVM verifies by type inference.
 *   <li>The result is scanned and emitted as any other class. If it still holds a subroutine, or if
 *       the inliner throws (a subroutine that the adapter cannot follow, or code past 64 KB once
 *       copied, which ASM's writer reports as {@code MethodTooLargeException}), the original bytes
 *       are scanned instead and the methods with subroutines stay as they were, counted as {@code
 *       old version} ('Coverage').
 * </ol>
 *
 * <p>Only a class that needs it pays: the scan finds {@code jsr} on its way, and only then is the
 * class read a second time. In RealJarsIT's 23 jars (29,831 classes, 2,499 below version 50), 10
 * methods hold a subroutine, 6 of them with a loop (ANTLR 2.7.7 and JUnit 3.8.1, file copies and
 * reads). All 6 are inlined and poll, and every class still links under {@code -Xverify:all}
 * (RealJarsIT, {@code -Drealjars=all}: no class left alone as old version, no failure added).
 *
 * <p>Rejected: leaving every method with a subroutine alone, as this agent did first. It costs
 * nothing, but the user is told "old version" for a method whose loop cannot be preempted.
 * Rejected too: our own inliner over Byte Buddy's core ASM, which would need the instruction list
 * and the control-flow walk that asm-tree and the adapter already are.
 *
 * <p>Thread-safety: stateless; any thread.
 */
final class SubroutineInliner {
  private SubroutineInliner() {}

  /**
   * The class with every subroutine inlined. Throws on anything the adapter or the writer cannot
   * do; the caller keeps the original ('Subroutines' step 3). Only for major versions below 50:
   * no frame is computed. Any thread.
   */
  static byte[] inline(byte[] classfile) {
    ClassReader reader = new ClassReader(classfile);
    if (reader.readUnsignedShort(6) >= Opcodes.V1_6) {
      throw new IllegalArgumentException(
          "SubroutineInliner: class file version " + reader.readUnsignedShort(6) + " needs frames");
    }
    // No COMPUTE_* flag: the adapter keeps max_stack and max_locals valid (step 2), and nothing
    // here may load a class.
    ClassWriter writer = new ClassWriter(0);
    reader.accept(
        new ClassVisitor(Opcodes.ASM9, writer) {
          @Override
          public MethodVisitor visitMethod(
              int access, String name, String desc, String sig, String[] exceptions) {
            MethodVisitor next = super.visitMethod(access, name, desc, sig, exceptions);
            return next == null
                ? null
                : new JSRInlinerAdapter(next, access, name, desc, sig, exceptions);
          }
        },
        0); // keep line numbers and local names: the app's stack traces stay as they were
    return writer.toByteArray();
  }
}
