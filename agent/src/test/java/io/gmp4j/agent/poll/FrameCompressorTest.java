package io.gmp4j.agent.poll;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import org.junit.jupiter.api.Test;

/**
 * 'Compressed frames' in FrameCompressor: on every class file of java.base, a writer fed the
 * compressor's frames writes the class ASM writes from the expanded frames, byte for byte, but
 * for the one encoding the overview names (a one-stack-item frame 63 bytes after the one before),
 * and there the frames decode alike.
 */
class FrameCompressorTest {
  @Test
  void writesTheStackMapTablesAsmWritesFromExpandedFrames() throws IOException {
    int classes = 0;
    int sameButShortForm = 0;
    List<String> wrong = new ArrayList<>();
    Path base = Path.of(URI.create("jrt:/java.base"));
    try (Stream<Path> files = Files.walk(base)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".class")).toList()) {
        byte[] in = Files.readAllBytes(f);
        if (f.getFileName().toString().equals("module-info.class")) {
          continue;
        }
        classes++;
        byte[] expanded = rewrite(in, false);
        byte[] compressed = rewrite(in, true);
        if (Arrays.equals(expanded, compressed)) {
          continue;
        }
        List<String> want = frames(expanded);
        if (want.equals(frames(compressed))
            && want.stream().anyMatch(s -> s.contains(" same1@63"))) {
          sameButShortForm++;
        } else {
          wrong.add(f.toString());
        }
      }
    }
    assertTrue(classes > 5_000, "read only " + classes + " classes");
    assertEquals(List.of(), wrong.subList(0, Math.min(wrong.size(), 10)), wrong.size() + " differ");
    assertTrue(sameButShortForm < classes / 100, sameButShortForm + " of " + classes);
  }

  @Test
  void theImplicitFrameIsThisOrUninitializedThisThenTheArguments() {
    assertEquals(
        List.of(Opcodes.UNINITIALIZED_THIS, "java/lang/String", Opcodes.LONG),
        List.of(FrameCompressor.implicitLocals("a/B", 0, "<init>", "(Ljava/lang/String;J)V")));
    assertEquals(
        List.of("a/B", "[I", Opcodes.INTEGER, Opcodes.FLOAT, Opcodes.DOUBLE, "[[La/C;"),
        List.of(FrameCompressor.implicitLocals("a/B", 0, "m", "([IZFD[[La/C;)V")));
    assertEquals(
        List.of(Opcodes.INTEGER, Opcodes.INTEGER, Opcodes.INTEGER),
        List.of(FrameCompressor.implicitLocals("a/B", Opcodes.ACC_STATIC, "m", "(BCS)I")));
  }

  /**
   * The class written method by method (a visitor between reader and writer keeps the writer from
   * copying a method's bytes), its frames handed on expanded, or through the compressor.
   */
  private static byte[] rewrite(byte[] in, boolean compress) {
    return through(
        in,
        (mv, owner, access, name, desc) ->
            compress
                ? new FrameCompressor(mv, owner, access, name, desc)
                : new MethodVisitor(Opcodes.ASM9, mv) {});
  }

  /** What {@link #through} puts between the reader and the writer's visitor for a method. */
  private interface MethodWrap {
    MethodVisitor wrap(MethodVisitor mv, String owner, int access, String name, String desc);
  }

  /** {@code in} read with expanded frames into a writer, each method through {@code wrap}. */
  private static byte[] through(byte[] in, MethodWrap wrap) {
    ClassReader reader = new ClassReader(in);
    ClassWriter writer = new ClassWriter(reader, 0);
    reader.accept(
        new ClassVisitor(Opcodes.ASM9, writer) {
          private String owner;

          @Override
          public void visit(int v, int a, String name, String sig, String sup, String[] itf) {
            owner = name;
            super.visit(v, a, name, sig, sup, itf);
          }

          @Override
          public MethodVisitor visitMethod(
              int access, String name, String desc, String sig, String[] exceptions) {
            MethodVisitor mv = super.visitMethod(access, name, desc, sig, exceptions);
            return wrap.wrap(mv, owner, access, name, desc);
          }
        },
        ClassReader.EXPAND_FRAMES);
    return writer.toByteArray();
  }

  /**
   * Each method's frames as read back expanded: its name, each frame's offset, locals and stack
   * (uninitialized types by their NEW's offset), and " same1@63" on a frame whose locals are the
   * last one's, with one stack item, 63 bytes after it. The writer behind resolves the labels.
   */
  private static List<String> frames(byte[] classFile) {
    List<String> out = new ArrayList<>();
    through(
        classFile,
        (mv, owner, access, name, desc) -> {
          out.add(name + desc);
          Object[] implicit = FrameCompressor.implicitLocals(owner, access, name, desc);
          return new MethodVisitor(Opcodes.ASM9, mv) {
            private int offset = -1;
            private int lastOffset = -1; // the first frame's delta is its offset
            private List<String> lastLocals = names(implicit, implicit.length);

            @Override
            public void visitLabel(Label label) {
              super.visitLabel(label);
              offset = label.getOffset();
            }

            @Override
            public void visitFrame(int t, int nLocal, Object[] l, int nStack, Object[] s) {
              List<String> locals = names(l, nLocal);
              boolean same1 =
                  nStack == 1 && locals.equals(lastLocals) && offset - lastOffset - 1 == 63;
              out.add(offset + " " + locals + " " + names(s, nStack) + (same1 ? " same1@63" : ""));
              lastOffset = offset;
              lastLocals = locals;
              super.visitFrame(t, nLocal, l, nStack, s);
            }
          };
        });
    return out;
  }

  private static List<String> names(Object[] types, int n) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(types[i] instanceof Label l ? "new@" + offset(l) : String.valueOf(types[i]));
    }
    return out;
  }

  /** A NEW's offset, or "?" for one after the frame, whose label is not resolved yet. */
  private static String offset(Label label) {
    try {
      return String.valueOf(label.getOffset());
    } catch (IllegalStateException notYet) {
      return "?";
    }
  }
}
