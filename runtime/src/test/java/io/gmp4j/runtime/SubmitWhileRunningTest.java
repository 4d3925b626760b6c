package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.dump;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A spurious submit (JDK 25's stack walker resubmits a thread it suspended) that lands while the G
 * runs, and the G then ends without parking. Up to issue 17 the submit queued a second entry of
 * the G (running → runnable), its M destroyed the G with the entry still queued, and the M that
 * popped the entry had to drop it (before that, it threw InternalError out of its scheduler loop
 * and lost its P). Now Sched.ready drops a submit of a mounted thread ('Submits that ready
 * nothing'): the G stays running and nothing is queued. A late walker's readying that got past
 * that look (it looked before the M mounted the thread) marks the G readied and queues nothing
 * either ('Readied while running' in Goroutine); the M finds the thread terminated and ends the
 * G. Here both come from a platform thread, as the walker's do.
 */
class SubmitWhileRunningTest {
  private static final int ROUNDS = 50;

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void aSubmitOfAMountedThreadQueuesNothing() throws Exception {
    Sched s = SchedTesting.newSched(1);
    AtomicInteger runningAtTheEnd = new AtomicInteger();
    for (int i = 0; i < ROUNDS; i++) {
      Thread g =
          s.newBuilder()
              .start(
                  () -> {
                    if (submittedWhileRunning()) {
                      runningAtTheEnd.incrementAndGet();
                    }
                  });
      assertTrue(g.join(Duration.ofSeconds(20)), "round " + i + ": the G did not end\n" + dump(s));
      Thread next = s.newBuilder().start(() -> {});
      assertTrue(
          next.join(Duration.ofSeconds(20)),
          "round " + i + ": the scheduler stopped after the submit\n" + dump(s));
    }
    assertEquals(ROUNDS, runningAtTheEnd.get(), "every G running, then readied, never queued");
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (s.allgs.size() != 0 && System.nanoTime() - deadline < 0) {
      Thread.sleep(10); // the Ms destroy the last Gs after their joiners wake
    }
    assertEquals(0, s.allgs.size(), "Gs destroyed once each\n" + dump(s));
  }

  /**
   * The trace of that case: each such G's last GoRun ends "exit" (it was a case of its own while
   * the submit moved the status on: the M had to tell an exit from a park readied meanwhile). In
   * a child JVM, whose process-wide scheduler (sysmon, JFR hooks) records gmp4j.GoRun.
   */
  @Test
  @Timeout(value = 120, threadMode = SEPARATE_THREAD)
  void itsLastRunEndsExitInTheTrace(@TempDir Path dir) throws Exception {
    String out =
        SchedTesting.runChildJvm(
            dir,
            List.of(
                "-Dgmp.gomaxprocs=1",
                // Each G spins until the walker thread has started, submitted it and ended; on a
                // loaded machine that thread may wait tens of milliseconds for a CPU, and a G that
                // spins past a slice and the hand-off time (30 ms by default) loses its P to
                // sysmon, which ends its last run "handoff". The longest slice keeps sysmon from
                // counting the G as a hog at all; nothing here wants a preemption.
                "-Dgmp.timeslice=3600s"),
            TracedChild.class,
            dir.toString());
    assertTrue(out.contains("last runs: {exit=" + ROUNDS + "}"), out);
  }

  /** The child of itsLastRunEndsExitInTheTrace: prints how each G's last GoRun ended. */
  static final class TracedChild {
    public static void main(String[] args) throws Exception {
      Sched s = Sched.get();
      Path file = Path.of(args[0], "ended.jfr");
      List<Long> goids = new ArrayList<>();
      try (Recording r = new Recording()) {
        r.enable("gmp4j.GoRun").withThreshold(Duration.ZERO).withoutStackTrace();
        r.start();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (!Trace.on(Trace.GO_RUN)) { // on at start (TraceRefreshTest); a margin
          if (System.nanoTime() - deadline > 0) {
            System.out.println("GoRun never came on");
            System.exit(3);
          }
          Thread.sleep(10);
        }
        for (int i = 0; i < ROUNDS; i++) {
          Thread g = s.newBuilder().start(SubmitWhileRunningTest::submittedWhileRunning);
          goids.add(((Goroutine) VirtualThreads.scheduler(g)).goid);
          if (!g.join(Duration.ofSeconds(20))) {
            System.out.println("round " + i + ": the G did not end\n" + dump(s));
            System.exit(4);
          }
        }
        // The M of the last run commits its GoRun before it destroys the G, and at one P goes
        // idle only after that, in findRunnable: then the recording holds every last run.
        if (!SchedTesting.poll(20_000, () -> s.numGoroutine() == 0 && s.npidle == 1)) {
          System.out.println("the last M never went idle\n" + dump(s));
          System.exit(5);
        }
        r.stop();
        r.dump(file);
      }
      Map<Long, RecordedEvent> last = new TreeMap<>();
      for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
        if (!e.getEventType().getName().equals("gmp4j.GoRun")) {
          continue; // ProcHandoff, on by default, has no goid
        }
        long goid = e.getLong("goid");
        if (goids.contains(goid)
            && (!last.containsKey(goid) || e.getEndTime().isAfter(last.get(goid).getEndTime()))) {
          last.put(goid, e);
        }
      }
      Map<String, Integer> ends = new TreeMap<>();
      last.values().forEach(e -> ends.merge(e.getString("end"), 1, Integer::sum));
      System.out.println("last runs: " + ends);
      System.exit(0);
    }
  }

  /**
   * A G's body: a platform thread submits it while it runs, then readies it as a late walker
   * does, and it ends without parking. Returns whether the submit left it running and the
   * readying left it readied, neither of them queued.
   */
  private static boolean submittedWhileRunning() {
    Goroutine me = (Goroutine) VirtualThreads.scheduler(Thread.currentThread());
    SchedTesting.submitLikeTheStackWalker(me);
    boolean untouched = me.status() == Goroutine.RUNNING;
    SchedTesting.readyUnlooked(me);
    return untouched && me.status() == Goroutine.READIED;
  }
}
