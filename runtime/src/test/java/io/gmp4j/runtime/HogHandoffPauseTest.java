package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.dump;
import static io.gmp4j.runtime.SchedTesting.poll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 'Pauses' in HogHandoff: a hog that makes sysmon oversleep every cycle (a G that allocates
 * fast enough for a GC every cycle, or a loaded machine) is still handed off. Drives the
 * hand-off of a scheduler without sysmon by hand, with a clock of its own: every cycle sysmon
 * asked for 10ms and slept 25ms. Before issue 16 each such cycle started the count over, and
 * the hog kept its P forever; now each counts max(asked, slack) = 10ms, so the third cycle
 * hands the P off.
 */
class HogHandoffPauseTest {
  private static final long MS = 1_000_000L;

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void aPauseEveryCycleDelaysTheHandoffButNeverStopsIt() throws Exception {
    Sched s = new Sched(1);
    s.idleThreadTimeoutNanos = 20 * MS;
    AtomicBoolean stop = new AtomicBoolean();
    Thread hog =
        s.newBuilder()
            .start(
                () -> {
                  while (!stop.get()) {
                    Thread.onSpinWait(); // no poll
                  }
                });
    try {
      Processor pp = s.allp[0];
      assertTrue(
          poll(
              10_000,
              () ->
                  pp.status() == Processor.RUNNING
                      && pp.m != null
                      && PHold.state(pp.m.phold()) == PHold.G),
          dump(s));
      HogHandoff h = new HogHandoff(s, 20 * MS, false); // the test's clock, not the OS's
      long now = System.nanoTime();
      int cycle = 0;
      boolean handedOff = false;
      while (!handedOff && cycle < 10) {
        h.startCycle(10 * MS, 25 * MS); // 15ms over: more than pauseSlackNs (10ms)
        now += 25 * MS;
        handedOff = h.retake(0, 1, pp, now);
        cycle++;
      }
      // Cycle 1 notes the run; 2 and 3 count 10ms each.
      assertTrue(handedOff, "not handed off in " + cycle + " overslept cycles\n" + dump(s));
      assertEquals(3, cycle, dump(s));
      assertEquals(1, s.preemptHandoffs.sum());
    } finally {
      stop.set(true);
    }
    assertTrue(hog.join(java.time.Duration.ofSeconds(10)), dump(s));
    assertTrue(poll(10_000, () -> s.npidle == 1 && s.numGoroutine() == 0), dump(s));
    assertTrue(poll(10_000, s.allm::isEmpty), "idle Ms did not exit\n" + dump(s));
  }
}
