package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The targets {@code gmp4j attach} must refuse, each with one line starting {@code gmp4j: } and
 * exit status 2, and how {@code gmp4j list} shows them: a pid with no process, a process that is
 * not a JVM (which must survive: attaching sends SIGQUIT, which would kill it), a JDK 17 JVM, a
 * JVM started with {@code -XX:+DisableAttachMechanism}, and another user's JVM (run as {@code
 * nobody} with setpriv, possible only when the tests run as root).
 *
 * <p>The JVMs run a one-file program with the source launcher from a temporary folder that every
 * user may read, so that {@code nobody} can run it too.
 */
@Timeout(180)
class AttachErrorsIT {
  private static final Duration STEP = Duration.ofSeconds(60);
  private static final Path JDK17 = Path.of("/usr/lib/jvm/java-17-openjdk-amd64/bin/java");

  private static Path dir;
  private static Path sleeper;

  @BeforeAll
  static void program() throws IOException {
    dir = Files.createTempDirectory("gmp4j-attach-errors");
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    sleeper = dir.resolve("Sleeper.java");
    Files.writeString(
        sleeper,
        """
        public class Sleeper {
          public static void main(String[] args) throws Exception {
            System.out.println("up");
            Thread.sleep(120_000);
          }
        }
        """);
    Files.setPosixFilePermissions(sleeper, PosixFilePermissions.fromString("rw-r--r--"));
  }

  @AfterAll
  static void clean() throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(f);
      }
    }
  }

  private static LiveChild sleeper(List<String> prefix, String java, String... flags)
      throws Exception {
    List<String> cmd = new ArrayList<>(prefix);
    cmd.add(java);
    cmd.add("-Djava.io.tmpdir=/tmp");
    cmd.addAll(List.of(flags));
    cmd.add(sleeper.toString());
    LiveChild c = LiveChild.start(cmd, Map.of());
    c.awaitOut(l -> l.equals("up"), STEP);
    return c;
  }

  private static void assertRefused(LiveChild.Run r, String expected) {
    System.out.println("AttachErrorsIT: " + r.err().strip());
    assertEquals(2, r.exit(), r.toString());
    List<String> lines = r.err().lines().toList();
    assertEquals(1, lines.size(), r.toString());
    assertTrue(lines.get(0).startsWith("gmp4j: ") && lines.get(0).contains(expected), r.toString());
  }

  @Test
  void noSuchProcess() throws Exception {
    Process p = new ProcessBuilder("true").start();
    p.waitFor();
    assertRefused(LiveChild.gmp4j(STEP, "attach", Long.toString(p.pid())), "no process with pid");
  }

  @Test
  void notAJvmIsRefusedAndSurvives() throws Exception {
    try (LiveChild c = LiveChild.start(List.of("sleep", "60"), Map.of())) {
      assertRefused(LiveChild.gmp4j(STEP, "attach", Long.toString(c.pid())), "is not a Java VM");
      Thread.sleep(200);
      assertTrue(c.process.isAlive(), "the sleep process died");
    }
  }

  @Test
  void jdk17IsRefusedByVersion() throws Exception {
    Assumptions.assumeTrue(Files.isExecutable(JDK17), "no JDK 17 at " + JDK17);
    try (LiveChild c = sleeper(List.of(), JDK17.toString())) {
      assertRefused(
          LiveChild.gmp4j(STEP, "attach", Long.toString(c.pid())), "gmp4j needs JDK 25 or newer");
      LiveChild.Run list = LiveChild.gmp4j(STEP, "list");
      assertTrue(
          row(list, c.pid()).matches(c.pid() + "\\s+17\\.\\S+\\s+- \\(needs JDK 25\\).*"),
          list.toString());
    }
  }

  @Test
  void disabledAttachMechanismIsRefused() throws Exception {
    try (LiveChild c =
        sleeper(List.of(), ChildJvm.JAVA.toString(), "-XX:+DisableAttachMechanism")) {
      assertRefused(LiveChild.gmp4j(STEP, "attach", Long.toString(c.pid())), "refuses attach");
      LiveChild.Run list = LiveChild.gmp4j(STEP, "list");
      assertTrue(row(list, c.pid()).contains("? (refuses attach)"), list.toString());
    }
  }

  @Test
  void anotherUsersJvmIsRefused() throws Exception {
    Assumptions.assumeTrue(
        System.getProperty("user.name").equals("root"),
        "needs root to start a JVM as another user (setpriv)");
    Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/setpriv")), "no setpriv");
    try (LiveChild c =
        sleeper(
            List.of("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"),
            ChildJvm.JAVA.toString())) {
      long jvm = javaChild(c);
      assertRefused(
          LiveChild.gmp4j(STEP, "attach", Long.toString(jvm)),
          "belongs to user nobody, and gmp4j runs as root");
      LiveChild.Run list = LiveChild.gmp4j(STEP, "list");
      assertTrue(row(list, jvm).contains("? (user nobody)"), list.toString());
    }
  }

  /** setpriv execs the JVM in place, so the pid is the JVM's. */
  private static long javaChild(LiveChild c) {
    return c.pid();
  }

  private static String row(LiveChild.Run list, long pid) {
    assertEquals(0, list.exit(), list.toString());
    return list.out()
        .lines()
        .filter(l -> l.startsWith(pid + " "))
        .findFirst()
        .orElseThrow(() -> new AssertionError("pid " + pid + " not listed\n" + list));
  }
}
