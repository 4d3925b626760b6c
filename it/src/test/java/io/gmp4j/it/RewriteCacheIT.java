package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.MatrixHog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 'Rewrite cache' in the agent's RewriteCache, end to end under {@code -Xverify:all}: the first
 * start writes the classes it rewrote into {@code preempt.cache}, the second reads every one of
 * them back, counts the same coverage, and its hog in commons-math3 is still time-sliced by the
 * polls it read; a directory the agent must not use costs one line and nothing else.
 */
@Timeout(180)
class RewriteCacheIT {
  private static final Duration LIMIT = Duration.ofSeconds(90);

  /** {@code gmp4j: preemption polls: N classes instrumented, ...; preempt.cache DIR: R ... W}. */
  private static final Pattern REPORT =
      Pattern.compile(
          "gmp4j: preemption polls: (\\d+) classes instrumented, (.*); preempt\\.cache (.*): (\\d+)"
              + " rewrites? read, (\\d+) written");

  private Path dir;

  @BeforeEach
  void makeDirectory() throws Exception {
    dir = Files.createTempDirectory("gmp4j-rewrite-cache-it-");
  }

  @AfterEach
  void removeDirectory() throws Exception {
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private Matcher report(ChildJvm.Result r) {
    List<String> lines =
        r.err().lines().filter(l -> l.startsWith("gmp4j: preemption polls: ")).toList();
    assertEquals(1, lines.size(), r.toString());
    Matcher m = REPORT.matcher(lines.get(0));
    assertTrue(m.matches(), lines.get(0));
    assertEquals(dir.toString(), m.group(3), lines.get(0));
    return m;
  }

  @Test
  void secondStartReadsEveryRewriteBackAndItsHogIsStillPreempted() throws Exception {
    String options = "gomaxprocs=1,preempt.report=1,preempt.cache=" + dir;
    ChildJvm.Result first = ChildJvm.withAgent(options, MatrixHog.class, LIMIT, "1000");
    assertEquals(0, first.exit(), first.toString());
    Matcher a = report(first);
    long written = Long.parseLong(a.group(5));
    assertEquals("0", a.group(4), a.group());
    assertTrue(written >= 5, a.group()); // the app's classes with loops and commons-math3's
    long entries;
    try (Stream<Path> s = Files.walk(dir)) {
      entries = s.filter(p -> p.toString().endsWith(".rw")).count();
    }
    // The report's shutdown hook may run before the writer's: the directory has them all.
    assertTrue(entries >= written, entries + " entries, " + a.group());

    ChildJvm.Result second = ChildJvm.withAgent(options, MatrixHog.class, LIMIT, "1000");
    assertEquals(0, second.exit(), second.toString());
    Matcher b = report(second);
    System.out.println("RewriteCacheIT: first start " + a.group());
    System.out.println("RewriteCacheIT: second start " + b.group());
    assertEquals(a.group(1), b.group(1), "the same classes instrumented");
    assertEquals(a.group(2), b.group(2), "the same classes left alone, for the same reasons");
    assertEquals(entries, Long.parseLong(b.group(4)), b.group());
    assertEquals("0", b.group(5), b.group());
    // As OldClassFilesIT's hogInAJava5LibraryIsPreemptedByItsPolls: the sleeper keeps coming
    // back at one P, through the polls the second start read from the cache, and the hog is
    // never handed off.
    OldClassFilesIT.assertHogKeptItsP(second);
    long ticks = Long.parseLong(second.value("ticks"));
    long products = Long.parseLong(second.value("products"));
    assertTrue(ticks >= 5 && ticks > 2 * products, second.toString());
  }

  @Test
  void aDirectoryOthersMayWriteCostsOneLineAndTheAppRunsWithItsPolls() throws Exception {
    Files.setPosixFilePermissions(
        dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
    ChildJvm.Result r =
        ChildJvm.withAgent(
            "gomaxprocs=1,preempt.report=1,preempt.cache=" + dir, MatrixHog.class, LIMIT, "300");
    assertEquals(0, r.exit(), r.toString());
    List<String> lines = r.err().lines().filter(l -> l.contains("preempt.cache")).toList();
    assertEquals(1, lines.size(), r.toString());
    assertTrue(
        lines.get(0).startsWith("gmp4j: preempt.cache: cannot use " + dir + ": writable by"),
        lines.get(0));
    try (Stream<Path> s = Files.list(dir)) {
      assertEquals(0, s.count(), "nothing written");
    }
    OldClassFilesIT.assertHogKeptItsP(r);
  }
}
