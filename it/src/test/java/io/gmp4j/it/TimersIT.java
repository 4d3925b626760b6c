package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.SleepBesideHogs;
import example.apps.TimedParks;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Timers on the P ('Timers on the P' in the runtime's Timers), end to end: child JVMs with the
 * agent and {@code -Xverify:all}, whose timed parks go to gmp4j's per-P timer heaps through the
 * agent's advice on {@code VirtualThread.schedule}. A failure prints the child's whole output,
 * with the scheduler's detail where the app prints it.
 */
@Timeout(120)
class TimersIT {
  private static final Duration LIMIT = Duration.ofSeconds(90);

  /**
   * Issue 11's row: 1 ms sleeps beside 4 polled CPU hogs at 2 Ps. Go 1.19 here: overshoot p50
   * 19 ms; gmp4j with the JDK's timer threads: 10-20 ms. The bound is generous (a shared,
   * loaded machine stretches every slice): 3x Go's p50.
   */
  @Test
  void aSleeperBesideFourHogsAtTwoPsComesBackPromptly() throws Exception {
    ChildJvm.Result r =
        ChildJvm.withAgent("gomaxprocs=2", SleepBesideHogs.class, LIMIT, "4", "100", "trace");
    System.out.println(
        "TimersIT beside 4 hogs at 2 Ps, overshoot: p50="
            + r.value("p50")
            + "ms p90="
            + r.value("p90")
            + "ms max="
            + r.value("max")
            + "ms");
    assertEquals("100", r.value("sleeps"), r.toString());
    assertTrue(Double.parseDouble(r.value("p50")) < 57, r.toString());
  }

  /** With nothing else to run, a 1 ms sleep overshoots by well under a millisecond. */
  @Test
  void anIdleSleeperIsPrecise() throws Exception {
    ChildJvm.Result r =
        ChildJvm.withAgent("gomaxprocs=2", SleepBesideHogs.class, LIMIT, "0", "200", "trace");
    System.out.println(
        "TimersIT idle, overshoot: p50="
            + r.value("p50")
            + "ms p90="
            + r.value("p90")
            + "ms max="
            + r.value("max")
            + "ms");
    assertEquals("200", r.value("sleeps"), r.toString());
    assertTrue(Double.parseDouble(r.value("p50")) < 5, r.toString());
  }

  /**
   * Every kind of timed park keeps the JDK's semantics with its timeout on a P: expiry, unpark,
   * notify, a hand-off and interrupt before it, thousands of sleepers, a GOMAXPROCS change
   * under them; and no JDK timer thread was ever started.
   */
  @Test
  void timedParksKeepTheirSemanticsOnThePs() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("gomaxprocs=2", TimedParks.class, LIMIT);
    assertEquals(0, r.exit(), r.toString());
    assertEquals("0", r.value("failures"), r.toString());
    assertEquals("0", r.value("unparkers"), "a JDK timer thread ran: " + r);
  }

  /** Option timers=jdk: the same semantics on the JDK's timer threads (the control). */
  @Test
  void timersJdkKeepsTheJdksTimerThreads() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("gomaxprocs=2,timers=jdk", TimedParks.class, LIMIT);
    assertEquals(0, r.exit(), r.toString());
    assertEquals("0", r.value("failures"), r.toString());
    assertTrue(Integer.parseInt(r.value("unparkers")) > 0, r.toString());
  }
}
