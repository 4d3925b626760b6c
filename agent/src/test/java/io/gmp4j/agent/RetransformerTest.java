package io.gmp4j.agent;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.util.HashMap;
import java.util.Map;
import java.util.jar.JarFile;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.Opcodes;
import org.junit.jupiter.api.Test;

/** 'Class files read back' in Retransformer: the bytes a loaded class was defined from. */
class RetransformerTest {
  private static byte[] resource(Class<?> c) throws Exception {
    try (InputStream in = c.getResourceAsStream(c.getSimpleName() + ".class")) {
      return in.readAllBytes();
    }
  }

  @Test
  void readsAClassFromItsDirectoryAndFromItsJar() throws Exception {
    Map<String, JarFile> jars = new HashMap<>();
    try {
      assertArrayEquals(
          resource(RetransformerTest.class),
          Retransformer.classFile(
              RetransformerTest.class, "io/gmp4j/agent/RetransformerTest", jars));
      assertEquals(0, jars.size()); // a directory: no jar opened
      assertArrayEquals(
          resource(Test.class),
          Retransformer.classFile(Test.class, "org/junit/jupiter/api/Test", jars));
      assertEquals(1, jars.size());
      assertArrayEquals(
          resource(Opcodes.class),
          Retransformer.classFile(Opcodes.class, "net/bytebuddy/jar/asm/Opcodes", jars));
      assertEquals(2, jars.size()); // each jar opened once, kept for the next class
      Retransformer.classFile(Test.class, "org/junit/jupiter/api/Test", jars);
      assertEquals(2, jars.size());
    } finally {
      for (JarFile j : jars.values()) {
        j.close();
      }
    }
  }

  /** Where the class did not come from a file of its own name, no bytes: it is retransformed. */
  @Test
  void noBytesWhereTheClassFileIsNotThere() throws Exception {
    Map<String, JarFile> jars = new HashMap<>();
    assertNull(Retransformer.classFile(String.class, "java/lang/String", jars)); // boot loader
    // Defined at run time in this package: its code source is the test classes' directory,
    // which holds no file of that name.
    ClassWriter w = new ClassWriter(0);
    w.visit(
        Opcodes.V17,
        Opcodes.ACC_PUBLIC | Opcodes.ACC_SUPER,
        "io/gmp4j/agent/ReadBackMadeAtRunTime",
        null,
        "java/lang/Object",
        null);
    w.visitEnd();
    Class<?> made = MethodHandles.lookup().defineClass(w.toByteArray());
    assertEquals("io.gmp4j.agent.ReadBackMadeAtRunTime", made.getName());
    assertNull(Retransformer.classFile(made, "io/gmp4j/agent/ReadBackMadeAtRunTime", jars));
    // Asked under another name than its own: that name's file, which is not there.
    assertNull(Retransformer.classFile(RetransformerTest.class, "io/gmp4j/agent/NoSuch", jars));
    assertEquals(0, jars.size());
  }
}
