package io.gmp4j.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * 'Nothing left behind' in {@link JitDirective}: the directives file is gone before HotSpot reads
 * it.
 */
class JitDirectiveTest {
  @Test
  void anOpenFileIsReadableByItsDescriptorsNameOnceDeleted(@TempDir Path dir) throws IOException {
    Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self/fd")), "no /proc here");
    Set<String> before = JitDirective.openFds();
    assertNotNull(before);
    Path file = Files.createFile(dir.toRealPath().resolve("d.json"));
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      String path = JitDirective.openedPath(file, before);
      assertNotNull(path, "no descriptor found for " + file);
      assertTrue(path.startsWith("/proc/self/fd/"), path);
      Files.delete(file);
      ch.write(ByteBuffer.wrap("[{}]".getBytes(StandardCharsets.US_ASCII)));
      assertFalse(Files.exists(file));
      assertEquals("[{}]", Files.readString(Path.of(path)), "read through " + path);
    }
    Path closed = Files.createFile(dir.toRealPath().resolve("closed.json"));
    assertNull(
        JitDirective.openedPath(closed, JitDirective.openFds()),
        "a file no descriptor holds has no such name");
  }

  /**
   * The way push opens the file: DELETE_ON_CLOSE, which the JDK carries out on Linux by unlinking
   * it right after the open, so that it has no name from then on, and its descriptor's link reads
   * the old name and " (deleted)".
   */
  @Test
  void aDeleteOnCloseFileHasNoNameOnceOpenAndIsReadableByItsDescriptor(@TempDir Path dir)
      throws IOException {
    Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self/fd")), "no /proc here");
    Set<String> before = JitDirective.openFds();
    Path file = dir.toRealPath().resolve("u.json");
    try (FileChannel ch =
        FileChannel.open(
            file,
            StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE,
            StandardOpenOption.DELETE_ON_CLOSE)) {
      assertFalse(Files.exists(file), "still named after its open: " + file);
      assertNull(JitDirective.openedPath(file, before), "a descriptor on a name that is gone");
      String path = JitDirective.openedPath(dir.toRealPath().resolve("u.json (deleted)"), before);
      assertNotNull(path, "no descriptor found for the unlinked " + file);
      ch.write(ByteBuffer.wrap("[{}]".getBytes(StandardCharsets.US_ASCII)));
      assertEquals("[{}]", Files.readString(Path.of(path)), "read through " + path);
    }
    try (Stream<Path> left = Files.list(dir)) {
      assertEquals(List.of(), left.toList());
    }
  }

  /** End to end on this JVM, by the MBean route: HotSpot takes the file by its descriptor. */
  @Test
  void theDirectivesAreAddedAndNoFileStays() throws IOException {
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    List<Path> before = jitFiles(tmp);
    assertNull(JitDirective.push(null), "HotSpot refused the directives");
    assertEquals(before, jitFiles(tmp), "a directives file stayed in " + tmp);
  }

  private static List<Path> jitFiles(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().startsWith("gmp4j-jit-")).sorted().toList();
    }
  }
}
