package io.gmp4j.agent.poll;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import org.junit.jupiter.api.Test;

/**
 * 'Fast reject' in BackEdges against the slow path it stands in for: on every class file of
 * java.base's java.util, java.io and java.lang.invoke packages, the methods it finds with a
 * backward branch are exactly those in which LoopScanner plans something (or which it leaves
 * alone for their subroutines).
 */
class BackEdgesTest {
  @Test
  void agreesWithLoopScannerOnJdkClassFiles() throws IOException {
    int classes = 0;
    int rejected = 0;
    List<String> wrong = new ArrayList<>();
    try (FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"))) {
      for (String pkg : new String[] {"java/util", "java/io", "java/lang/invoke"}) {
        try (Stream<Path> files = Files.list(jrt.getPath("/modules/java.base", pkg))) {
          for (Path f : files.filter(p -> p.toString().endsWith(".class")).toList()) {
            byte[] b = Files.readAllBytes(f);
            BitSet fast = BackEdges.methods(b);
            BitSet slow = methodsWithBackwardBranch(b);
            classes++;
            rejected += BackEdges.any(b) ? 0 : 1;
            if (!slow.equals(fast)) {
              wrong.add(f + " fast=" + fast + " slow=" + slow);
            }
            Set<String> names = BackEdges.methodNames(b);
            if (!namesOf(b, slow).equals(names)) {
              wrong.add(f + " names=" + names + " slow=" + namesOf(b, slow));
            }
          }
        }
      }
    } catch (UnsupportedOperationException closeOfTheBuiltInJrt) {
      // the jrt file system of the running image cannot be closed; nothing leaks
    }
    assertTrue(classes > 500, "read only " + classes + " classes");
    assertTrue(rejected > classes / 10, rejected + " of " + classes + " rejected");
    assertEquals(List.of(), wrong);
  }

  @Test
  void aLoopAnywhereIsSeenAndATruncatedFileTakesTheSlowPath() throws IOException {
    byte[] withLoop = classFile("io/gmp4j/agent/poll/BackEdgesTest"); // the for loops above
    assertTrue(BackEdges.any(withLoop));
    assertTrue(scannerFindsBackwardBranch(withLoop));
    byte[] noLoop = classFile("java/lang/Void");
    assertFalse(BackEdges.any(noLoop));
    assertTrue(BackEdges.any(java.util.Arrays.copyOf(noLoop, noLoop.length / 2)));
    assertTrue(BackEdges.any(new byte[] {1, 2, 3}));
  }

  /** Whether ASM's pass with a LoopScanner per method finds a backward branch anywhere. */
  private static boolean scannerFindsBackwardBranch(byte[] b) {
    return !methodsWithBackwardBranch(b).isEmpty();
  }

  /** The methods, by index, in which a LoopScanner plans something or leaves the method alone. */
  private static BitSet methodsWithBackwardBranch(byte[] b) {
    List<MethodPlan> plans = plans(b);
    BitSet out = new BitSet();
    for (int i = 0; i < plans.size(); i++) {
      if (plans.get(i).hasWork() || plans.get(i).leftAlone != null) {
        out.set(i);
      }
    }
    return out;
  }

  /** One plan per method, in the method table's order, each filled by a LoopScanner. */
  private static List<MethodPlan> plans(byte[] b) {
    boolean frameless = new ClassReader(b).readUnsignedShort(6) < Opcodes.V1_6;
    List<MethodPlan> plans = new ArrayList<>();
    new ClassReader(b)
        .accept(
            new ClassVisitor(Opcodes.ASM9) {
              @Override
              public MethodVisitor visitMethod(
                  int access, String name, String desc, String sig, String[] exceptions) {
                MethodPlan plan = new MethodPlan(name, desc, false, frameless);
                plans.add(plan);
                return new LoopScanner(plan);
              }
            },
            ClassReader.SKIP_DEBUG | ClassReader.EXPAND_FRAMES);
    return plans;
  }

  /** The names of the methods at {@code indexes} in the method table, read by ASM. */
  private static Set<String> namesOf(byte[] b, BitSet indexes) {
    List<MethodPlan> plans = plans(b);
    Set<String> out = new HashSet<>();
    indexes.stream().forEach(i -> out.add(plans.get(i).name));
    return out;
  }

  private static byte[] classFile(String internal) throws IOException {
    try (var in = ClassLoader.getSystemResourceAsStream(internal + ".class")) {
      return in.readAllBytes();
    }
  }
}
