package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.dump;
import static io.gmp4j.runtime.SchedTesting.poll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 'Reacquire after an unmount' in {@link PHold}, the Skynet100kWithMonitors hang: a G whose
 * P sysmon retook waits for an idle P in {@code Syscall.reacquireIfPinned} without being pinned
 * (as after a yield into a run that sysmon retook before the G was back), so its wait unmounts
 * it; it comes back on another M that holds a P. Before the fix it went on with the M it had
 * left, whose word was closed (or reopened for a new run) by then, and got {@code InternalError:
 * tryReacquireP: M.. phold .. holds a P} within the first three rounds in each of 4 runs. The
 * one P is kept busy by a G that never polls, so that no idle P turns up at once.
 * Scaled by {@code -Dgmp.stress=N}.
 */
class ReacquireAfterUnmountTest {
  private static final int STRESS = Integer.getInteger("gmp.stress", 1);

  @Test
  @Timeout(value = 120, threadMode = SEPARATE_THREAD)
  void aGWhoseWaitUnmountsItNeverActsOnTheMItLeft() throws Exception {
    Sched s = SchedTesting.newSched(1);
    s.startSysmon(1_000_000L, 1_000_000L, 0, false, false); // 1ms slice, 1ms hand-off
    Thread.Builder.OfVirtual builder = s.newBuilder();
    int rounds = 10 * STRESS;
    for (int r = 0; r < rounds; r++) {
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      AtomicReference<String> moved = new AtomicReference<>("");
      Thread[] hog = new Thread[1];
      Thread g =
          builder.start(
              () -> {
                try {
                  Goroutine gp = (Goroutine) VirtualThreads.scheduler(Thread.currentThread());
                  Machine m0 = gp.runningM();
                  // Queued on our P: once sysmon hands the P off, its new M runs this G, which
                  // holds it.
                  hog[0] =
                      builder.start(
                          () -> {
                            while (!stop.get()) {
                              Thread.onSpinWait();
                            }
                          });
                  long deadline = System.nanoTime() + 20_000_000_000L;
                  while (!m0.lostP() && System.nanoTime() < deadline) {
                    Thread.onSpinWait(); // no poll: this G ignores the request until sysmon retakes
                  }
                  assertTrue(m0.lostP(), "sysmon never retook the P: " + m0);
                  long handoffs = s.preemptHandoffs.sum();
                  Syscall.reacquireIfPinned(gp); // not pinned: the 50us wait unmounts it
                  Machine m1 = gp.runningM();
                  // This G never polls, so sysmon may retake its P again as soon as it has held
                  // it for a slice and a hand-off: a carrier descheduled for 2ms between the
                  // return and this line (CI saw it once). The P this G waited for came from the
                  // hog's retake, so a second retake since then is that one, not a return
                  // without a P; sysmon counts it after the word's CAS that lostP reads.
                  assertTrue(
                      m1 != null
                          && (!m1.lostP()
                              || poll(10_000, () -> s.preemptHandoffs.sum() - handoffs >= 2)),
                      "returned without a P: " + m1);
                  moved.set(m1 == m0 ? "same M" : "M" + m0.id + " → M" + m1.id);
                } catch (Throwable t) {
                  failure.set(t);
                } finally {
                  stop.set(true);
                }
              });
      assertTrue(
          g.join(Duration.ofSeconds(30)),
          "round " + r + ": the G did not finish\n" + s.schedtrace(true));
      assertTrue(
          hog[0] == null || hog[0].join(Duration.ofSeconds(30)),
          "round " + r + ": the hog did not finish\n" + s.schedtrace(true));
      if (failure.get() != null) {
        throw new AssertionError(
            "round " + r + ": " + failure.get() + "\n" + s.schedtrace(true), failure.get());
      }
      System.out.println("ReacquireAfterUnmountTest round " + r + ": " + moved.get());
    }
    boolean quiet = poll(10_000, () -> s.npidle == 1 && s.numGoroutine() == 0);
    assertTrue(quiet, "a P is lost: npidle=" + s.npidle + "\n" + dump(s));
    for (Processor pp : s.allp) {
      assertEquals(Processor.IDLE, pp.status(), pp.toString());
      assertEquals(null, pp.m, pp.toString());
    }
    assertTrue(poll(10_000, s.allm::isEmpty), "idle Ms did not exit\n" + s.schedtrace(true));
  }
}
