package io.gmp4j.agent.poll;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * 'Rewrite cache' in RewriteCache: a start with the cache gives the bytes and the coverage of a
 * start without it, the next start reads every rewrite back, and a bad entry or directory costs
 * a rewrite, never a class.
 */
class RewriteCacheTest {
  private static final long SALT = 0x1234_5678_9abc_def0L;

  /** 250 classes of ECJ (the compiler whose Scanner once broke the injector): real loops. */
  private static Map<String, byte[]> classes() {
    Map<String, byte[]> out = new LinkedHashMap<>();
    for (Map.Entry<String, byte[]> e :
        TestClasses.jarOf(RewriteCacheTest.class.getClassLoader(), HandlerFrameTest.SCANNER)
            .entrySet()) {
      if (out.size() == 250) {
        break;
      }
      out.put(e.getKey(), e.getValue());
    }
    return out;
  }

  /** One start: every class through a fresh injector; internal name to bytes (null: left). */
  private static Map<String, byte[]> start(
      Map<String, byte[]> classes, Coverage coverage, RewriteCache cache) {
    PollInjector injector = new PollInjector(null, null, false, coverage, cache);
    Map<String, byte[]> out = new LinkedHashMap<>();
    classes.forEach((name, bytes) -> out.put(name, injector.transform(null, name, bytes)));
    try {
      assertTrue(cache == null || cache.awaitWritten(30_000), "writer still busy: " + cache);
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
    return out;
  }

  private static RewriteCache open(Path dir, List<String> lines) {
    RewriteCache c = RewriteCache.open(dir, SALT, lines::add);
    assertNotNull(c, lines.toString());
    return c;
  }

  private static void assertSameRewrites(Map<String, byte[]> want, Map<String, byte[]> got) {
    assertEquals(want.keySet(), got.keySet());
    want.forEach((name, bytes) -> assertArrayEquals(bytes, got.get(name), name));
  }

  /** The summary line without the cache's own counts. */
  private static String counts(Coverage c) {
    String s = c.summaryLine();
    int i = s.indexOf("; preempt.cache");
    return i < 0 ? s : s.substring(0, i);
  }

  /**
   * 'Prepared rewrites' in the agent's Retransformer: what {@code prepare} makes ahead, the
   * next transform of the same bytes takes, with the bytes and the counts it would have made
   * itself; what it drops is made again.
   */
  @Test
  void preparedRewritesGiveTheSameBytesAndCounts() {
    Map<String, byte[]> classes = classes();
    Coverage plain = new Coverage();
    Map<String, byte[]> want = start(classes, plain, null);

    Coverage coverage = new Coverage();
    PollInjector injector = new PollInjector(null, null, false, coverage, null);
    classes.forEach(injector::prepare);
    assertEquals(0, coverage.instrumented(), "prepare records nothing");
    long withLoops = classes.values().stream().filter(BackEdges::any).count();
    assertTrue(withLoops > 100, withLoops + " of " + classes.size());
    assertEquals(withLoops, PollInjector.preparedHere());
    Map<String, byte[]> got = new LinkedHashMap<>();
    classes.forEach((name, bytes) -> got.put(name, injector.transform(null, name, bytes)));
    assertEquals(0, PollInjector.preparedHere(), "every prepared rewrite taken");
    assertSameRewrites(want, got);
    assertEquals(counts(plain), counts(coverage));

    Coverage again = new Coverage();
    PollInjector dropped = new PollInjector(null, null, false, again, null);
    classes.forEach(dropped::prepare);
    dropped.forgetPrepared();
    assertEquals(0, PollInjector.preparedHere());
    got.clear();
    classes.forEach((name, bytes) -> got.put(name, dropped.transform(null, name, bytes)));
    assertSameRewrites(want, got);
    assertEquals(counts(plain), counts(again));
  }

  @Test
  void secondStartReadsEveryRewriteBackWithTheSameBytesAndCounts(@TempDir Path tmp)
      throws IOException {
    Map<String, byte[]> classes = classes();
    Coverage plain = new Coverage();
    Map<String, byte[]> want = start(classes, plain, null);
    assertTrue(plain.instrumented() > 50, plain.summaryLine());
    List<String> lines = new ArrayList<>();
    Path dir = tmp.resolve("cache"); // missing: open creates it, private
    Coverage first = new Coverage();
    RewriteCache c1 = open(dir, lines);
    assertSameRewrites(want, start(classes, first, c1));
    long withLoops = c1.writes();
    assertTrue(withLoops > 50, "entries written: " + withLoops);
    assertEquals(0, c1.hits());
    assertEquals(counts(plain), counts(first));

    Coverage second = new Coverage();
    RewriteCache c2 = open(dir, lines);
    assertSameRewrites(want, start(classes, second, c2));
    assertEquals(withLoops, c2.hits(), "every class with a loop read back");
    assertEquals(0, c2.writes());
    assertEquals(counts(plain), counts(second));
    assertTrue(
        second.summaryLine().endsWith(withLoops + " rewrites read, 0 written"),
        second.summaryLine());
    assertEquals(List.of(), lines);
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
  }

  @Test
  void aTornOrForeignEntryIsAMissAndIsWrittenAgain(@TempDir Path dir) throws IOException {
    Map<String, byte[]> classes = classes();
    Map<String, byte[]> want = start(classes, new Coverage(), null);
    List<String> lines = new ArrayList<>();
    RewriteCache c1 = open(dir, lines);
    start(classes, new Coverage(), c1);
    List<Path> entries;
    try (Stream<Path> s = Files.walk(dir)) {
      entries = s.filter(p -> p.toString().endsWith(".rw")).sorted().toList();
    }
    assertEquals(c1.writes(), entries.size());
    // Half torn (one byte flipped in the middle), half another class's entry under this name.
    for (int i = 0; i < entries.size(); i++) {
      Path p = entries.get(i);
      if (i % 2 == 0) {
        byte[] e = Files.readAllBytes(p);
        e[e.length / 2] ^= 0x40;
        Files.write(p, e);
      } else {
        Files.copy(entries.get(i - 1), p, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
    }
    RewriteCache c2 = open(dir, lines);
    assertSameRewrites(want, start(classes, new Coverage(), c2));
    assertEquals(0, c2.hits());
    assertEquals(entries.size(), c2.writes());
    RewriteCache c3 = open(dir, lines);
    assertSameRewrites(want, start(classes, new Coverage(), c3));
    assertEquals(entries.size(), c3.hits(), "the entries written again are read");
    assertEquals(List.of(), lines);
  }

  @Test
  void anotherSaltReadsNothingOfThisOne(@TempDir Path dir) {
    Map<String, byte[]> classes = classes();
    List<String> lines = new ArrayList<>();
    start(classes, new Coverage(), open(dir, lines));
    RewriteCache other = RewriteCache.open(dir, SALT + 1, lines::add);
    start(classes, new Coverage(), other);
    assertEquals(0, other.hits());
    assertTrue(other.writes() > 0);
  }

  @Test
  void aDirectoryOthersMayWriteIsRefusedWithOneLine(@TempDir Path tmp) throws IOException {
    Path dir = tmp.resolve("shared");
    Files.createDirectory(dir);
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwx---"));
    List<String> lines = new ArrayList<>();
    assertNull(RewriteCache.open(dir, SALT, lines::add));
    assertEquals(1, lines.size(), lines.toString());
    assertTrue(lines.get(0).startsWith("gmp4j: preempt.cache: cannot use " + dir), lines.get(0));
    assertTrue(lines.get(0).contains("writable by its group or others"), lines.get(0));

    // Another user's directory: only root can make one here, so the check runs where the
    // suite runs as root (CI) and is left out where it cannot be set up.
    Path theirs = tmp.resolve("theirs");
    Files.createDirectory(theirs);
    Files.setPosixFilePermissions(theirs, PosixFilePermissions.fromString("rwx------"));
    boolean chowned;
    try {
      Files.setOwner(
          theirs,
          theirs.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
      chowned = true;
    } catch (IOException | UnsupportedOperationException notRoot) {
      chowned = false;
    }
    if (chowned) {
      lines.clear();
      assertNull(RewriteCache.open(theirs, SALT, lines::add));
      assertTrue(
          lines.get(0).contains("owned by nobody, not by this JVM's user"), lines.toString());
    }

    Path file = tmp.resolve("a-file");
    Files.writeString(file, "x");
    lines.clear();
    assertNull(RewriteCache.open(file, SALT, lines::add));
    assertTrue(lines.get(0).contains("not a directory"), lines.toString());
  }

  @Test
  void aFailedWriteGivesOneLineAndEveryClassStillGetsItsPolls(@TempDir Path dir)
      throws IOException {
    Map<String, byte[]> classes = classes();
    Map<String, byte[]> want = start(classes, new Coverage(), null);
    List<String> lines = new ArrayList<>();
    RewriteCache c = open(dir, lines);
    // The salt's folder is a file: every entry's parent fails to be created (root ignores
    // permission bits, so a read-only folder would not do).
    Files.writeString(dir.resolve(String.format("%016x", SALT)), "in the way");
    Coverage coverage = new Coverage();
    assertSameRewrites(want, start(classes, coverage, c));
    assertEquals(1, lines.size(), lines.toString());
    assertTrue(lines.get(0).startsWith("gmp4j: preempt.cache: cannot write "), lines.get(0));
    assertTrue(coverage.summaryLine().endsWith("(writes stopped after a failure)"));
    assertEquals(0, c.writes());
  }
}
