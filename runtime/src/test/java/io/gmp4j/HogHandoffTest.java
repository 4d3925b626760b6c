package io.gmp4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Beyond Go: the P of a G that ignores preemption is handed to another M ('Hog hand-off' in
 * io.gmp4j.runtime.HogHandoff). These tests run without the agent, so every loop here is
 * uninstrumented: a spinning G never polls, as a G inside JDK code never does. Child-JVM
 * scenarios (the option off, the stderr report) are in {@link ChildJvmTest}.
 */
@ExtendWith(SchedTraceOnFailure.class)
class HogHandoffTest {
  static final String HANDOFFS = "/sched/preemptions/handoffs:handoffs";

  /**
   * Seed 000's measurement with a spinner that has no polls, at one P: without the hand-off not
   * one sleep comes back while the spinner runs (Go before 1.14). With it, the P goes to another
   * M after the time slice plus preempt.handoff (10 + 20 ms), and all 50 sleeps come back while
   * the spinner still spins. Afterwards the spinner gets a P back: the Gs it starts run, and no
   * P is lost.
   */
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void sleepsComeBackBesideASpinnerWithoutPolls() throws Exception {
    GmpTesting.withProcs(
        1,
        () -> {
          long handoffs0 = metric(HANDOFFS);
          AtomicBoolean stop = new AtomicBoolean();
          CountDownLatch spinning = new CountDownLatch(1);
          AtomicLong spins = new AtomicLong();
          CountDownLatch startedAfter = new CountDownLatch(10);
          Thread hog =
              Gmp.go(
                  () -> {
                    spinning.countDown();
                    long deadline = System.nanoTime() + 20_000_000_000L;
                    long x = 0;
                    while (!stop.get() && System.nanoTime() - deadline < 0) {
                      x++; // no poll: this G ignores every preemption request
                    }
                    spins.set(x);
                    for (int i = 0; i < 10; i++) {
                      Gmp.go(startedAfter::countDown); // needs a P back, or the global queue
                    }
                  });
          GmpTesting.await(spinning, 10, "the spinner starts");
          long t0 = System.nanoTime();
          long[] lat = new long[50];
          long[] firstRun = new long[1];
          Thread sleeper =
              Gmp.go(
                  () -> {
                    firstRun[0] = System.nanoTime() - t0;
                    try {
                      for (int i = 0; i < lat.length; i++) {
                        long s = System.nanoTime();
                        Thread.sleep(1);
                        lat[i] = System.nanoTime() - s;
                      }
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  });
          try {
            GmpTesting.join(sleeper, 20, "the sleeper beside a spinner without polls");
            assertTrue(hog.isAlive(), "the spinner must still spin when the sleeps are done");
          } finally {
            stop.set(true);
          }
          GmpTesting.join(hog, 10, "the spinner");
          GmpTesting.await(startedAfter, 10, "the Gs the spinner started after its loop");
          long[] s = lat.clone();
          Arrays.sort(s);
          long handoffs = metric(HANDOFFS) - handoffs0;
          System.out.printf(
              "HogHandoffTest sleep(1) beside a spinner without polls at one P: first"
                  + " run after %.1fms, p50=%.1fms p90=%.1fms max=%.1fms, handoffs=%d%n",
              firstRun[0] / 1e6, s[24] / 1e6, s[44] / 1e6, s[49] / 1e6, handoffs);
          assertTrue(s[24] < 200_000_000L, "p50 " + s[24] / 1e6 + " ms, want < 200 ms");
          assertTrue(handoffs >= 1, "handoffs " + handoffs);
          assertNoPLost();
        });
  }

  /**
   * A stop-the-world (GOMAXPROCS(n)) waits for every P, and a G without polls never gives its P
   * up by itself (Go before 1.14 would hang here). The hand-off gives the P to the stop instead.
   */
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void gomaxprocsCompletesBesideASpinnerWithoutPolls() throws Exception {
    GmpTesting.withProcs(
        1,
        () -> {
          AtomicBoolean stop = new AtomicBoolean();
          CountDownLatch spinning = new CountDownLatch(1);
          Thread hog =
              Gmp.go(
                  () -> {
                    spinning.countDown();
                    long deadline = System.nanoTime() + 20_000_000_000L;
                    while (!stop.get() && System.nanoTime() - deadline < 0) {
                      Thread.onSpinWait(); // no poll
                    }
                  });
          try {
            GmpTesting.await(spinning, 10, "the spinner starts");
            long t0 = System.nanoTime();
            Thread stw =
                Thread.ofPlatform()
                    .daemon()
                    .start(
                        () -> {
                          Gmp.gomaxprocs(2);
                          Gmp.gomaxprocs(1);
                        });
            GmpTesting.join(stw, 10, "GOMAXPROCS(2) then (1) beside a spinner without polls");
            System.out.printf(
                "HogHandoffTest two GOMAXPROCS changes beside a spinner: %.1fms%n",
                (System.nanoTime() - t0) / 1e6);
            assertTrue(hog.isAlive(), "the spinner must still spin");
          } finally {
            stop.set(true);
          }
          GmpTesting.join(hog, 10, "the spinner");
          assertNoPLost();
        });
  }

  private static long metric(String name) {
    return (Long) Gmp.readMetrics().get(name);
  }

  /**
   * Once every G is parked, every P is idle, wired to no M, and no two Ms claim one P: nothing
   * was lost or duplicated by a retake.
   */
  static void assertNoPLost() throws InterruptedException {
    int procs = Gmp.gomaxprocs();
    boolean idle =
        GmpTesting.poll(
            5_000, () -> (Long) Gmp.readMetrics().get("/sched/procs/idle:procs") == procs);
    String trace = Gmp.schedtrace(true);
    assertTrue(idle, "not every P went idle\n" + trace);
    int plines = 0;
    Set<String> held = new HashSet<>();
    for (String line : trace.split("\n")) {
      String l = line.trim();
      if (l.startsWith("P")) {
        plines++;
        assertTrue(l.contains(" m=nil "), "an idle P still has an M: " + l + "\n" + trace);
      } else if (l.startsWith("M") && !l.contains(" p=nil ")) {
        String p = l.substring(l.indexOf(" p=") + 3, l.indexOf(' ', l.indexOf(" p=") + 3));
        assertTrue(held.add(p), "two Ms hold P" + p + "\n" + trace);
      }
    }
    assertEquals(procs, plines, trace);
  }
}
