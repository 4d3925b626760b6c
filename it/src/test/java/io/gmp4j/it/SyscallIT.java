package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import example.apps.GCFairness;
import example.apps.NotInGo;
import example.apps.SyscallSeedTable;
import example.apps.SystemGoroutines;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Blocking calls end to end (DESIGN.md section 5): unmodified programs in child JVMs with the
 * agent, whose advice on the JDK (Blocker, FileInputStream, FileOutputStream...) turns their
 * blocking calls into Go's entersyscall / exitsyscall, and {@code -Xverify:all}.
 */
@Timeout(180)
class SyscallIT {
  private static final Duration LIMIT = Duration.ofSeconds(60);
  private static final int N = 200;

  /**
   * Seed 000's table of OS threads by blocking kind. Go 1.27.3, 200 goroutines: sleep, TCP and
   * os.Pipe add 0 to 2 threads; a raw syscall.Read adds 198 (one M per blocked goroutine). Each
   * kind runs in a child with the agent at gomaxprocs=2 and in one on the JDK's scheduler at
   * parallelism 2; only gmp4j's numbers are asserted. On the JDK's scheduler a FileInputStream
   * read blocks its carrier with no compensation, so two FIFO readers take both carriers and a
   * virtual thread started afterwards never runs.
   */
  @ParameterizedTest
  @ValueSource(strings = {"sleep", "tcp", "pipe", "fifo"})
  void seedTable(String kind) throws Exception {
    assumeTrue(Files.isReadable(Path.of("/proc/self/status")), "needs Linux /proc");
    ChildJvm.Result gmp =
        ChildJvm.withAgent("gomaxprocs=2", SyscallSeedTable.class, LIMIT, kind, String.valueOf(N));
    ChildJvm.Result jdk =
        ChildJvm.run(
            List.of("-Xverify:all", "-Djdk.virtualThreadScheduler.parallelism=2"),
            Map.of(),
            SyscallSeedTable.class,
            LIMIT,
            kind,
            String.valueOf(N));
    System.out.println(
        "SyscallIT seed table: "
            + kind
            + " gmp4j "
            + signed(delta(gmp))
            + " threads, JDK default "
            + signed(delta(jdk))
            + " threads, late VT ran in "
            + late(gmp)
            + " (JDK default: "
            + late(jdk)
            + ")");

    assertEquals(0, gmp.exit(), gmp.toString());
    assertEquals(String.valueOf(N), gmp.value("waiting"), gmp.toString());
    assertNotNull(gmp.value("late_ms"), gmp.toString());
    assertTrue(Long.parseLong(gmp.value("late_ms")) < 1_000, gmp.toString());
    if (kind.equals("fifo")) {
      assertTrue(delta(gmp) >= N - 20, gmp.toString()); // about one M per blocked G
    } else {
      // Each hog hand-off may start one M (handoffP). On a loaded machine a slow class
      // initialisation under -Xverify:all is handed off too (seen: InetAddress.<clinit>, +5).
      assertTrue(delta(gmp) <= 4 + Long.parseLong(gmp.value("handoffs")), gmp.toString());
    }
  }

  /**
   * The same FIFO read through {@code Files.newByteChannel}: the open goes through
   * UnixNativeDispatcher.open and the read through FileChannelImpl's {@code Blocker.begin(false)}
   * bracket, which the JDK does not compensate for and the agent turns into a syscall.
   */
  @Test
  void fifoReadThroughAFileChannel() throws Exception {
    assumeTrue(Files.isReadable(Path.of("/proc/self/status")), "needs Linux /proc");
    ChildJvm.Result gmp =
        ChildJvm.withAgent(
            "gomaxprocs=2", SyscallSeedTable.class, LIMIT, "fifo-channel", String.valueOf(N));
    System.out.println(
        "SyscallIT fifo-channel: gmp4j "
            + signed(delta(gmp))
            + " threads, late VT ran in "
            + late(gmp));
    assertEquals(0, gmp.exit(), gmp.toString());
    assertEquals(String.valueOf(N), gmp.value("waiting"), gmp.toString());
    assertTrue(delta(gmp) >= N - 20, gmp.toString());
    assertTrue(Long.parseLong(gmp.value("late_ms")) < 1_000, gmp.toString());
  }

  /**
   * Go's TestGCFairness: at one P two virtual threads write bytes to /dev/null in tight loops,
   * and main's 10 ms sleep still comes back. This needs Go's sysretake rule: a P in a syscall
   * whose schedtick has not moved for a time slice is retaken even though its syscalltick moves
   * (each write is a new call), since sysmon nearly always samples a writer inside a write.
   */
  @Test
  void testGCFairness() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("gomaxprocs=1", GCFairness.class, LIMIT);
    System.out.println(
        "SyscallIT GCFairness: main's 10 ms sleep took " + r.value("sleep_ms") + " ms");
    assertTrue(r.out().contains("OK\n"), r.toString());
  }

  /**
   * Go's not-in-go gauge (metrics_test, "not-in-go" within [10, 14]) while 10 virtual threads sit
   * in blocking FIFO reads: the app calls no gmp4j API, the agent's FileInputStream advice
   * makes each read a syscall.
   */
  @Test
  void notInGoCountsBlockedFileReads() throws Exception {
    assumeTrue(Files.isReadable(Path.of("/proc/self/status")), "needs Linux mkfifo");
    ChildJvm.Result r = ChildJvm.withAgent("gomaxprocs=2", NotInGo.class, LIMIT, "10");
    assertEquals(0, r.exit(), r.toString());
    long notInGo = Long.parseLong(r.value("not_in_go"));
    assertTrue(notInGo >= 10 && notInGo <= 14, r.toString());
  }

  /**
   * Go's TestNumGoroutine, with system goroutines: numGoroutine and the goroutine dump count the
   * app's virtual threads only, not the JDK's I/O pollers that run as Gs beside them, while
   * /sched/goroutines:goroutines counts those too (Go's gcount(false) and gcount(true)). The
   * readers show Go's IO wait.
   */
  @Test
  void numGoroutineLeavesOutTheJdkPollers() throws Exception {
    assumeTrue(
        Files.isReadable(Path.of("/proc/self/status")),
        "JDK 25 runs pollers as virtual" + " threads on Linux");
    ChildJvm.Result r = ChildJvm.withAgent("gomaxprocs=2", SystemGoroutines.class, LIMIT, "5");
    assertEquals(0, r.exit(), r.toString());
    assertEquals("5", r.value("num_goroutine"), r.toString());
    assertEquals("5", r.value("dump"), r.toString());
    assertTrue(Long.parseLong(r.value("total")) > 5, "the pollers are Gs too: " + r);
    assertEquals("[IO wait]", r.value("reasons"), "socket reads wait in the netpoller: " + r);
  }

  /** Threads added while the Gs wait, or -1 if the child did not say. */
  private static int delta(ChildJvm.Result r) {
    String before = r.value("before");
    String after = r.value("after");
    return before == null || after == null
        ? -1
        : Integer.parseInt(after) - Integer.parseInt(before);
  }

  private static String signed(int n) {
    return n < 0 ? String.valueOf(n) : "+" + n;
  }

  private static String late(ChildJvm.Result r) {
    String ms = r.value("late_ms");
    return ms != null ? ms + " ms" : r.value("late") != null ? r.value("late") : "?";
  }
}
