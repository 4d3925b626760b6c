package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.LockOSThreadExit;
import example.apps.LockedBlock;
import example.apps.ThreadExhaustion;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Go's LockOSThread tests end to end (go-scheduler.md section 4 items 31 and 42): programs
 * that call {@code io.gmp4j.Gmp} directly, in child JVMs with the agent and {@code
 * -Xverify:all}. They compile against gmp4j-runtime (scope provided, it/pom.xml), and at run
 * time link to the agent's copy on the boot class path: the class path copy is never reached,
 * since the application loader asks the boot loader first. {@link #appsLinkToTheBootPathRuntime}
 * checks that. Carrier identity is the {@code gmp-m<id>} thread name, which is never reused.
 */
@Timeout(120)
class LockOSThreadIT {
  private static final Duration LIMIT = Duration.ofSeconds(60);
  private static final String EXHAUSTED =
      "runtime: program exceeds 10-thread limit\nfatal error: thread exhaustion";

  /**
   * {@code Gmp.class.getClassLoader()} is null in the child: the apps run on the runtime the
   * agent appended to the boot class path (the one whose scheduler runs their virtual threads),
   * not on the class-path copy they were compiled against.
   */
  @Test
  void appsLinkToTheBootPathRuntime() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("gomaxprocs=1", LockOSThreadExit.class, LIMIT);
    assertEquals(0, r.exit(), r.toString());
    assertEquals("boot", r.value("gmp_loader"), r.toString());
  }

  /**
   * Go's TestLockOSThreadExit (LockOSThreadMain at GOMAXPROCS=1 and LockOSThreadAlt): a virtual
   * thread that ends while locked never moved while it ran, and takes its carrier with it: the
   * thread is gone within 1 s, main (locked first, then unlocked, as in Alt) never runs there,
   * and none of 50 later virtual threads does.
   */
  @ParameterizedTest(name = "gomaxprocs={0}")
  @ValueSource(ints = {1, 2})
  void testLockOSThreadExit(int procs) throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("gomaxprocs=" + procs, LockOSThreadExit.class, LIMIT);
    System.out.println(
        "LockOSThreadIT exit (gomaxprocs="
            + procs
            + "): "
            + r.value("locked_carrier")
            + " gone in "
            + r.value("gone_ms")
            + " ms; later ran on "
            + r.value("later_carriers"));
    assertEquals(0, r.exit(), r.toString());
    assertEquals(null, r.value("error"), r.toString());
    String dead = r.value("locked_carrier");
    assertTrue(dead != null && dead.startsWith("gmp-m"), r.toString());
    assertNotEquals(r.value("main_carrier"), dead, r.toString());
    assertEquals("false", r.value("moved"), r.toString());
    assertTrue(
        r.value("gone_ms") != null && Long.parseLong(r.value("gone_ms")) <= 1_000,
        "the carrier of a G that ended locked still exists after 1 s: " + r);
    assertEquals("false", r.value("main_on_dead"), r.toString());
    assertEquals("0", r.value("later_on_dead"), r.toString());
    assertFalse(
        r.value("later_carriers").contains(dead + ",")
            || r.value("later_carriers").contains(dead + "]"),
        r.toString());
  }

  /**
   * LockOSThreadAlt's spirit (and Go's TestBlockLocked): a locked virtual thread that blocks on
   * a SynchronousQueue ten times always resumes on the same carrier. At one P the P itself has
   * to move between the locked carrier and the others each time.
   */
  @ParameterizedTest(name = "gomaxprocs={0}")
  @ValueSource(ints = {1, 2})
  void lockedThreadResumesOnItsCarrier(int procs) throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("gomaxprocs=" + procs, LockedBlock.class, LIMIT);
    assertEquals(0, r.exit(), r.toString());
    assertEquals("10", r.value("sent"), r.toString());
    String carriers = r.value("carriers");
    assertTrue(carriers.matches("\\[gmp-m\\d+\\]"), "one carrier expected: " + r);
  }

  /** Go's TestThreadExhaustion with debug.SetMaxThreads(10): Go's two lines, exit status 2. */
  @Test
  void testThreadExhaustion() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("", ThreadExhaustion.class, LIMIT, "api");
    assertEquals(2, r.exit(), r.toString());
    assertTrue(r.err().startsWith(EXHAUSTED), r.toString());
    assertFalse(r.out().contains("alive"), r.toString());
  }

  /** The same with the agent option maxthreads=10 instead of the call. */
  @Test
  void threadExhaustionWithTheMaxthreadsOption() throws Exception {
    ChildJvm.Result r =
        ChildJvm.withAgent("maxthreads=10", ThreadExhaustion.class, LIMIT, "option");
    assertEquals(2, r.exit(), r.toString());
    assertTrue(r.err().startsWith(EXHAUSTED), r.toString());
    assertFalse(r.out().contains("alive"), r.toString());
  }

  /**
   * {@code maxthreads.exceeded=queue}: past the limit no carrier starts and nobody dies. The
   * locked threads that got a carrier handed main their token; the rest wait for a carrier that
   * never frees up (every carrier is held by a locked, blocked thread). Main, a platform
   * thread, stops waiting after 2 s, prints alive and exits 0.
   */
  @Test
  void queueModeDoesNotDie() throws Exception {
    ChildJvm.Result r =
        ChildJvm.withAgent(
            "maxthreads=10,maxthreads.exceeded=queue",
            ThreadExhaustion.class,
            LIMIT,
            "option",
            "2000");
    System.out.println(
        "LockOSThreadIT queue mode: tokens="
            + r.value("tokens")
            + " carriers="
            + r.value("carriers"));
    assertEquals(0, r.exit(), r.toString());
    assertTrue(r.out().contains("alive\n"), r.toString());
    assertFalse(r.err().contains("thread exhaustion"), r.toString());
    int tokens = Integer.parseInt(r.value("tokens"));
    assertTrue(tokens >= 1 && tokens < 10, r.toString()); // sysmon counts as one of the 10
    assertTrue(Integer.parseInt(r.value("carriers")) <= 10, r.toString());
  }

  /** Without a limit the same program keeps all 100 tokens coming (one carrier each). */
  @Test
  void withoutALimitAllHundredRun() throws Exception {
    ChildJvm.Result r =
        ChildJvm.run(
            List.of("-Xverify:all", "-javaagent:" + ChildJvm.AGENT),
            Map.of(),
            ThreadExhaustion.class,
            LIMIT,
            "option",
            "10000");
    assertEquals(0, r.exit(), r.toString());
    assertEquals("100", r.value("tokens"), r.toString());
  }
}
