package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.MaxProcsWatch;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Go 1.25's GOMAXPROCS from the container, on the JDK's container support (MaxProcsLimit in the
 * runtime), with real kernel limits:
 *
 * <ul>
 *   <li>a cgroup v1 {@code cpu} child with a quota of half a CPU: the JDK says 1 CPU, Go's rule
 *       says 2 (never below 2 when the CPU count and the affinity are both at least 2);
 *   <li>{@code taskset -p -c 0 <pid>} while the JVM runs moves GOMAXPROCS to 1 within about 2 s
 *       (sysmon re-reads once a second), and back to 2 after {@code taskset -p -c 0-1}; each
 *       change is printed beside schedtrace and counted;
 *   <li>{@code GMPDEBUG=updatemaxprocs=0} and an explicit GOMAXPROCS stop the updates.
 * </ul>
 *
 * Skipped, with the reason, where the cgroup or the affinity cannot be changed (not root, no
 * cgroup v1 cpu controller, fewer than 2 CPUs, no taskset). The cgroup is removed after.
 */
@Timeout(180)
class MaxProcsIT {
  private static final Duration STEP = Duration.ofSeconds(60);
  private static final Path CPU = Path.of("/sys/fs/cgroup/cpu");

  @Test
  void halfCpuQuotaGivesTwoPsWhereTheJdkSaysOne() throws Exception {
    Assumptions.assumeTrue(
        Files.isWritable(CPU.resolve("cgroup.procs")),
        "needs a writable cgroup v1 cpu controller at " + CPU + " (root)");
    Assumptions.assumeTrue(Runtime.getRuntime().availableProcessors() >= 2, "needs 2 CPUs");
    Path cg = CPU.resolve("gmp4j-it-" + Long.toHexString(ThreadLocalRandom.current().nextLong()));
    Files.createDirectory(cg);
    try {
      Files.writeString(cg.resolve("cpu.cfs_period_us"), "100000");
      Files.writeString(cg.resolve("cpu.cfs_quota_us"), "50000");
      List<String> cmd =
          new ArrayList<>(
              List.of(
                  "sh", "-c", "echo $$ > " + cg.resolve("cgroup.procs") + " && exec \"$@\"", "sh"));
      cmd.addAll(javaCmd("schedtrace=0"));
      try (LiveChild c = LiveChild.start(cmd, Map.of())) {
        String line = c.awaitOut(l -> l.startsWith("jdk="), STEP);
        System.out.println(
            "MaxProcsIT: in a cgroup with cpu.cfs_quota_us=50000 of 100000: " + line);
        assertEquals("jdk=1 gomaxprocs=2", line, c.toString());
        c.send("finish");
        assertEquals(0, c.waitFor(STEP), c.toString());
        assertEquals("0", AttachIT.value(c.out(), "updates"), c.toString());
      }
    } finally {
      removeCgroup(cg);
    }
  }

  @Test
  void affinityChangeMovesGomaxprocsAndBack() throws Exception {
    assumeTaskset();
    try (LiveChild c = LiveChild.start(javaCmd("schedtrace=1000"), Map.of())) {
      assertEquals("jdk=2 gomaxprocs=2", c.awaitOut(l -> l.startsWith("jdk="), STEP), c.toString());
      long t0 = System.nanoTime();
      taskset("0", c.pid());
      c.awaitOut(l -> l.equals("gomaxprocs=1"), Duration.ofSeconds(4));
      long down = (System.nanoTime() - t0) / 1_000_000;
      t0 = System.nanoTime();
      taskset("0-1", c.pid());
      c.awaitOut(l -> l.equals("gomaxprocs=2"), Duration.ofSeconds(4));
      long up = (System.nanoTime() - t0) / 1_000_000;
      System.out.println(
          "MaxProcsIT: taskset -c 0 -> gomaxprocs=1 after "
              + down
              + " ms; taskset -c 0-1 -> gomaxprocs=2 after "
              + up
              + " ms");
      c.send("finish");
      assertEquals(0, c.waitFor(STEP), c.toString());
      assertEquals("2", AttachIT.value(c.out(), "updates"), c.toString());
      assertTrue(
          c.err()
              .contains(
                  "gmp4j: updatemaxprocs: gomaxprocs 2 -> 1 (affinity 1 CPU," + " no CPU limit)"),
          c.toString());
      assertTrue(c.err().contains("gmp4j: updatemaxprocs: gomaxprocs 1 -> 2"), c.toString());
    }
  }

  @Test
  void updatemaxprocsZeroStopsUpdates() throws Exception {
    assumeTaskset();
    try (LiveChild c = LiveChild.start(javaCmd(""), Map.of("GMPDEBUG", "updatemaxprocs=0"))) {
      noUpdate(c, "jdk=2 gomaxprocs=2");
    }
  }

  @Test
  void explicitGomaxprocsStopsUpdates() throws Exception {
    assumeTaskset();
    try (LiveChild c = LiveChild.start(javaCmd(""), Map.of("GOMAXPROCS", "2"))) {
      noUpdate(c, "jdk=2 gomaxprocs=2");
    }
  }

  /** Pins the child to CPU 0 for 2.5 s (sysmon checks once a second): GOMAXPROCS stays. */
  private static void noUpdate(LiveChild c, String start) throws Exception {
    assertEquals(start, c.awaitOut(l -> l.startsWith("jdk="), STEP), c.toString());
    taskset("0", c.pid());
    Thread.sleep(2500);
    taskset("0-1", c.pid());
    c.send("finish");
    assertEquals(0, c.waitFor(STEP), c.toString());
    assertTrue(c.out().lines().noneMatch(l -> l.startsWith("gomaxprocs=")), c.toString());
    assertEquals("0", AttachIT.value(c.out(), "updates"), c.toString());
  }

  private static List<String> javaCmd(String options) {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                ChildJvm.JAVA.toString(),
                "-Xverify:all",
                ChildJvm.javaagent(options),
                "-cp",
                System.getProperty("java.class.path"),
                MaxProcsWatch.class.getName()));
    return cmd;
  }

  private static void assumeTaskset() throws Exception {
    Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/taskset")), "no taskset");
    Assumptions.assumeTrue(
        Runtime.getRuntime().availableProcessors() == 2,
        "written for a 2-CPU machine (affinity 0-1), this one has "
            + Runtime.getRuntime().availableProcessors());
  }

  private static void taskset(String cpus, long pid) throws Exception {
    LiveChild.Run r =
        LiveChild.run(
            List.of("taskset", "-p", "-c", cpus, Long.toString(pid)), Duration.ofSeconds(10));
    Assumptions.assumeTrue(r.exit() == 0, "taskset cannot change the affinity here: " + r);
  }

  /** rmdir of a cgroup fails while a process is in it: wait for the child to be gone. */
  private static void removeCgroup(Path cg) throws IOException, InterruptedException {
    for (int i = 0; i < 100; i++) {
      try {
        Files.delete(cg);
        return;
      } catch (IOException e) {
        Thread.sleep(100);
      }
    }
    Files.delete(cg);
  }
}
