package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.dump;
import static io.gmp4j.runtime.SchedTesting.poll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 'Timers on the P' in {@link Timers} and 'Timer sleep' in {@link TimerSleeper}, white-box: the
 * heap's order, lazy deletion and its sweep, cancel against run, the move in procresize, and the
 * Ms that sleep for, steal and run timers. The JDK's timeout tasks reach these heaps only through
 * the agent's advice (TimersIT); here the tasks are the test's own.
 */
class TimersTest {
  private static final long HOUR = 3_600_000_000_000L;

  /** A scheduler whose Ms (if any start) exit soon after the test. */
  private static Sched sched(int procs) {
    Sched s = SchedTesting.newSched(procs);
    return s;
  }

  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void dueTimersRunInWhenOrderAndOthersWait() {
    Timers ts = sched(1).allp[0].timers;
    assertFalse(ts.checkTimers(0, true), "no timers: nothing runs");
    Random rnd = new Random(11);
    List<Long> ran = new ArrayList<>();
    List<Timers.Timer> all = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      long[] when = new long[1];
      Timers.Timer t =
          ts.addtimer(() -> ran.add(when[0]), 1 + rnd.nextInt(1_000_000), TimeUnit.MICROSECONDS);
      when[0] = t.when;
      all.add(t);
    }
    Timers.Timer late = ts.addtimer(() -> ran.add(-1L), 1, TimeUnit.HOURS);
    assertEquals(1001, ts.numTimers());
    assertTrue(ts.checkTimers(Timers.nanotime() + 2_000_000_000L, true));
    assertEquals(1000, ran.size(), ts.toString());
    for (int i = 1; i < ran.size(); i++) {
      assertTrue(ran.get(i - 1) <= ran.get(i), "out of order at " + i);
    }
    for (Timers.Timer t : all) {
      assertTrue(t.isDone() && !t.isCancelled());
      assertFalse(t.cancel(false), "a timer that ran cannot be cancelled");
    }
    assertEquals(late.when, ts.nobarrierWakeTime(), "the heap's top is the hour timer");
    assertFalse(late.isDone());
  }

  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void cancelledTimersNeverRunAndTheOwnerSweepsThem() {
    Timers ts = sched(1).allp[0].timers;
    AtomicInteger ran = new AtomicInteger();
    List<Timers.Timer> all = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      all.add(ts.addtimer(ran::incrementAndGet, 10_000 + i, TimeUnit.MILLISECONDS));
    }
    for (int i = 0; i < 400; i += 2) {
      assertTrue(all.get(i).cancel(false));
      assertFalse(all.get(i).cancel(false), "a second cancel reports false");
      assertTrue(all.get(i).isCancelled() && all.get(i).isDone());
    }
    assertEquals(200, ts.deletedTimers.get());
    // Not due, but more than a quarter deleted: the owner sweeps; a thief would not.
    assertFalse(ts.checkTimers(Timers.nanotime(), false));
    assertEquals(400, ts.numTimers());
    assertFalse(ts.checkTimers(Timers.nanotime(), true));
    assertEquals(200, ts.numTimers(), ts.toString());
    assertEquals(0, ts.deletedTimers.get());
    assertTrue(ts.checkTimers(Timers.nanotime() + HOUR, true));
    assertEquals(200, ran.get(), "only the waiting half ran");
    assertEquals(0, ts.numTimers());
    assertEquals(0, ts.nobarrierWakeTime(), "an empty heap: timer0When 0");
  }

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void aCancelRacingTheRunLosesOrWinsButNeverBoth() throws Exception {
    Sched s = sched(2);
    Timers ts = s.allp[0].timers;
    for (int round = 0; round < 200; round++) {
      int n = 200;
      AtomicInteger[] runs = new AtomicInteger[n];
      Timers.Timer[] t = new Timers.Timer[n];
      for (int i = 0; i < n; i++) {
        AtomicInteger c = runs[i] = new AtomicInteger();
        t[i] = ts.addtimer(c::incrementAndGet, 0, TimeUnit.NANOSECONDS);
      }
      boolean[] cancelled = new boolean[n];
      CountDownLatch go = new CountDownLatch(1);
      Thread canceller =
          Thread.ofPlatform()
              .start(
                  () -> {
                    try {
                      go.await();
                    } catch (InterruptedException e) {
                      return;
                    }
                    for (int i = n - 1; i >= 0; i--) {
                      cancelled[i] = t[i].cancel(false);
                    }
                  });
      go.countDown();
      ts.checkTimers(Timers.nanotime() + HOUR, true);
      canceller.join();
      ts.checkTimers(Timers.nanotime() + HOUR, true); // removes what the canceller deleted
      for (int i = 0; i < n; i++) {
        assertEquals(cancelled[i] ? 0 : 1, runs[i].get(), "round " + round + " timer " + i);
      }
      assertEquals(0, ts.numTimers());
    }
  }

  /**
   * GOMAXPROCS 3 → 1 with 20 timers on the removed Ps, 8 of them cancelled: the 12 waiting ones
   * move to P0 (the deleted ones are dropped),
   * and the M that the restart wakes sleeps until the first and runs them all.
   */
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void timersSurviveAProcresizeAndStillFire() throws Exception {
    Sched s = sched(3);
    ConcurrentLinkedQueue<String> ran = new ConcurrentLinkedQueue<>();
    List<String> cancelled = new ArrayList<>();
    for (int p = 1; p < 3; p++) {
      for (int i = 0; i < 10; i++) {
        String name = "P" + p + "." + i;
        Timers.Timer t =
            s.allp[p].timers.addtimer(
                () -> ran.add(name + "@" + Thread.currentThread().getName()),
                // Due well after the count of P0's timers below: a test thread kept off a CPU
                // for a while (a loaded machine) must not find some already run.
                2_000 + i,
                TimeUnit.MILLISECONDS);
        if (i % 3 == 0) {
          assertTrue(t.cancel(false));
          cancelled.add(name + "@");
        }
      }
    }
    assertEquals(3, s.gomaxprocs(1));
    Timers p0 = s.allp[0].timers;
    assertEquals(12, p0.numTimers(), "the 12 waiting timers moved to P0: " + p0);
    assertTrue(
        poll(10_000, () -> ran.size() == 12), "moved timers did not fire: " + ran + "\n" + dump(s));
    for (String r : ran) {
      assertTrue(r.contains("@gmp-m"), "a timer ran off our Ms: " + r);
    }
    Thread.sleep(50); // a cancelled timer that ran anyway would show up by now
    for (String c : cancelled) {
      assertFalse(ran.stream().anyMatch(r -> r.startsWith(c)), c + " ran though cancelled");
    }
    assertEquals(12, ran.size(), ran.toString());
    assertEquals(0, p0.numTimers(), dump(s));
  }

  /**
   * A timer on an idle P with every M parked: wakeNetPoller starts an M, which sleeps until the
   * timer ('Timer sleep') and runs it on time; a G the task unparks runs next on that M (the
   * runnext of the P that ran the timer). One P, so no thief can take the G from runnext.
   */
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void theTimerSleeperWakesOnTimeAndTheWokenGRunsNextOnItsM() throws Exception {
    Sched s = sched(1);
    AtomicReference<Thread> vt = new AtomicReference<>();
    AtomicReference<String> wokenOn = new AtomicReference<>();
    AtomicReference<String> timerOn = new AtomicReference<>();
    CountDownLatch parked = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(1);
    Thread g =
        s.newBuilder()
            .start(
                () -> {
                  vt.set(Thread.currentThread());
                  parked.countDown();
                  while (timerOn.get() == null) {
                    LockSupport.park();
                  }
                  Thread carrier = VirtualThreads.carrier(Thread.currentThread());
                  wokenOn.set(carrier == null ? "none" : carrier.getName());
                  done.countDown();
                });
    parked.await();
    assertTrue(poll(5_000, () -> s.npidle == 1), "the P never went idle: " + dump(s));
    {
      long t0 = System.nanoTime();
      long[] firedAt = new long[1];
      Timers.Timer t =
          s.allp[0].timers.addtimer(
              () -> {
                firedAt[0] = System.nanoTime();
                timerOn.set(Thread.currentThread().getName());
                LockSupport.unpark(vt.get());
              },
              20,
              TimeUnit.MILLISECONDS);
      s.timerSleeper.wakeNetPoller(t.when);
      assertTrue(done.await(10, TimeUnit.SECONDS), "the timer never fired: " + dump(s));
      g.join();
      long late = (firedAt[0] - t0) / 1_000_000 - 20;
      assertTrue(late >= 0 && late < 2_000, "fired " + late + " ms late");
      assertEquals(timerOn.get(), wokenOn.get(), "the woken G ran elsewhere: " + dump(s));
      assertTrue(timerOn.get().startsWith("gmp-m"), "ran on " + timerOn.get());
    }
  }

  /**
   * Stealing: a timer on a P whose M never schedules (its G spins without polls) runs on
   * another P: the M that sleeps for it takes the idle P and runs it there.
   */
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void anIdlePStealsTheTimerOfABusyP() throws Exception {
    Sched s = sched(2);
    AtomicReference<Boolean> stop = new AtomicReference<>(false);
    AtomicReference<Processor> busy = new AtomicReference<>();
    Thread hog =
        s.newBuilder()
            .start(
                () -> {
                  Goroutine gp = (Goroutine) VirtualThreads.scheduler(Thread.currentThread());
                  busy.set(gp.runningM().p);
                  while (!stop.get()) {
                    Thread.onSpinWait(); // no poll: this P schedules again only when we stop
                  }
                });
    try {
      assertTrue(poll(5_000, () -> busy.get() != null && s.npidle == 1), dump(s));
      Processor pp = busy.get();
      AtomicReference<String> ranOn = new AtomicReference<>();
      long t0 = System.nanoTime();
      long[] firedAt = new long[1];
      Timers.Timer t =
          pp.timers.addtimer(
              () -> {
                firedAt[0] = System.nanoTime();
                ranOn.set(Thread.currentThread().getName());
              },
              30,
              TimeUnit.MILLISECONDS);
      s.timerSleeper.wakeNetPoller(t.when);
      assertTrue(poll(10_000, () -> ranOn.get() != null), "not stolen: " + dump(s));
      assertTrue(
          ranOn.get().startsWith("gmp-m") && !ranOn.get().equals(pp.m.getName()),
          "ran on " + ranOn.get() + ", the busy P's M is " + pp.m);
      long late = (firedAt[0] - t0) / 1_000_000 - 30;
      assertTrue(late >= 0 && late < 2_000, "fired " + late + " ms late");
    } finally {
      stop.set(true);
      hog.join();
    }
  }

  /**
   * 'Far timers skip the clock': findRunnable's clock read is skipped while the soonest timer is
   * more than FAR_NS after the freshest clock known, 64 times in a row at most; a near timer or
   * a coarseNow (sysmon's clock) past the timer makes it read. Each assertion fails if its rule
   * is dropped from clockForCheck.
   */
  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void farTimersSkipTheClockAndNearOnesDoNot() throws Exception {
    Sched s = sched(1);
    Timers ts = s.allp[0].timers;
    assertEquals(0, ts.clockForCheck(0, 0), "no timers: no clock read");
    long far = Timers.nanotime() + HOUR;
    assertTrue(ts.clockForCheck(far, 0) > 0, "the first check reads the clock");
    for (int i = 0; i < Timers.MAX_SKIPS; i++) {
      assertEquals(0, ts.clockForCheck(far, 0), "a timer an hour off: skipped, round " + i);
    }
    assertTrue(ts.clockForCheck(far, 0) > 0, "after MAX_SKIPS skips the clock is read");
    assertEquals(0, ts.clockForCheck(0, far));
    long near = Timers.nanotime() + Timers.FAR_NS / 2;
    assertTrue(ts.clockForCheck(0, near) > 0, "a near hint alone: read");
    for (int i = 0; i < 5; i++) {
      assertTrue(ts.clockForCheck(far, near) > 0, "a timer within FAR_NS: read, round " + i);
    }
    assertEquals(0, ts.clockForCheck(far, 0));
    s.coarseNow = System.nanoTime() + HOUR; // sysmon's clock has passed the timer's when
    assertTrue(ts.clockForCheck(far, 0) > 0, "due by sysmon's clock: read at once");
    s.coarseNow = s.initTime;
    // A timer just over FAR_NS after the last read, then time passes without a read of ours:
    // skipped while only our stale clock is known, read once sysmon's coarseNow has moved on.
    long read = ts.clockForCheck(far, near);
    long soon = read + Timers.FAR_NS + 5_000_000L;
    assertEquals(0, ts.clockForCheck(soon, 0));
    Thread.sleep(Timers.FAR_NS / 1_000_000L + 20);
    assertEquals(0, ts.clockForCheck(soon, 0), "coarseNow not moved: still skipped");
    s.coarseNow = System.nanoTime(); // as sysmon's next cycle does
    assertTrue(ts.clockForCheck(soon, 0) > 0, "due by sysmon's clock: read");
  }

  /**
   * For the tests of a timer-woken G on a busy P: a G that parks until the timer that {@link
   * #armOn} puts on a P wakes it, and then adds "timer's G" to {@code order}.
   */
  private record TimerWokenG(Thread g, AtomicReference<Thread> vt, AtomicInteger woken) {
    /** Starts it, and returns once it has parked and left the P idle. */
    static TimerWokenG start(Sched s, Queue<String> order) throws InterruptedException {
      AtomicReference<Thread> vt = new AtomicReference<>();
      AtomicInteger woken = new AtomicInteger();
      CountDownLatch parked = new CountDownLatch(1);
      Thread g =
          s.newBuilder()
              .start(
                  () -> {
                    vt.set(Thread.currentThread());
                    parked.countDown();
                    while (woken.get() == 0) {
                      LockSupport.park();
                    }
                    order.add("timer's G");
                  });
      parked.await();
      assertTrue(poll(5_000, () -> s.npidle == 1), "the P never went idle: " + dump(s));
      return new TimerWokenG(g, vt, woken);
    }

    /** Puts a 1 ms timer that wakes it on {@code pp}, and returns once that timer is 1 ms due. */
    void armOn(Processor pp) throws InterruptedException {
      Timers.Timer t =
          pp.timers.addtimer(
              () -> {
                woken.set(1);
                LockSupport.unpark(vt.get());
              },
              1,
              TimeUnit.MILLISECONDS);
      assertTrue(poll(5_000, () -> Timers.nanotime() > t.when + 1_000_000L));
    }

    /**
     * That both ran once, and (but under randomizeScheduler, which skips runnext by design) that
     * the timer's G ran before {@code other}.
     */
    static void assertRanFirst(Queue<String> order, String other, String why, Sched s) {
      assertEquals(2, order.size(), "both ran once: " + order);
      Assumptions.assumeFalse(Sched.RANDOMIZE, "randomizeScheduler: checked that both ran once");
      assertEquals(List.of("timer's G", other), new ArrayList<>(order), why + ": " + dump(s));
    }
  }

  /**
   * 'A timer-woken G ends no chain' (Preempt, step 2): at one P whose slice ran out ({@code
   * pp.preempt}, as sysmon's retake leaves it), the G that the M's own timer check wakes into
   * runnext runs next, on a new slice. Without the rule it is taken for the next G of a runnext
   * chain and sent to the global queue's tail, and the G it kicked out of runnext runs first.
   * No sysmon runs here: the spent slice is the test's doing.
   */
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void aTimerWokenGRunsFirstOnASpentSlice() throws Exception {
    Sched s = sched(1);
    Processor pp = s.allp[0];
    ConcurrentLinkedQueue<String> order = new ConcurrentLinkedQueue<>();
    TimerWokenG sleeper = TimerWokenG.start(s, order);
    AtomicInteger release = new AtomicInteger();
    AtomicReference<Thread> other = new AtomicReference<>();
    CountDownLatch running = new CountDownLatch(1);
    Thread hog =
        s.newBuilder()
            .start(
                () -> {
                  // A G started by a G goes to runnext (newproc); the timer's G kicks it out.
                  other.set(s.newBuilder().start(() -> order.add("runnext's G")));
                  running.countDown();
                  while (release.get() == 0) {
                    Thread.onSpinWait(); // no poll, no park: this P schedules when we let go
                  }
                });
    running.await();
    sleeper.armOn(pp);
    assertTrue(order.isEmpty(), "ran before the hog let go: " + order + dump(s));
    pp.preempt = true; // the slice ran out, as retake marks it
    release.set(1);
    hog.join();
    sleeper.g.join();
    other.get().join();
    TimerWokenG.assertRanFirst(
        order, "runnext's G", "the timer's G went behind the G it kicked out of runnext", s);
  }

  /**
   * 'A timer-woken G before the fairness check' (Machine.findRunnable): on the schedule where the
   * 1-in-61 check would take a G from the global queue, a G that the M's timer check just woke
   * into runnext runs first, and the global queue's G right after it. Go takes the global G
   * first, and beside CPU-bound Gs the sleeper then waits a whole slice.
   */
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void aTimerWokenGRunsBeforeTheFairnessCheck() throws Exception {
    Sched s = sched(1);
    Processor pp = s.allp[0];
    ConcurrentLinkedQueue<String> order = new ConcurrentLinkedQueue<>();
    TimerWokenG sleeper = TimerWokenG.start(s, order);
    AtomicInteger release = new AtomicInteger();
    AtomicInteger hogRuns = new AtomicInteger();
    AtomicReference<Thread> yielder = new AtomicReference<>();
    Thread hog =
        s.newBuilder()
            .start(
                () -> {
                  Thread me = Thread.currentThread();
                  // The yielder readies this hog into runnext and yields to the global queue's
                  // tail; the hog runs on, and the yielder waits there.
                  yielder.set(
                      s.newBuilder()
                          .start(
                              () -> {
                                LockSupport.unpark(me);
                                Thread.yield();
                                order.add("global queue's G");
                              }));
                  LockSupport.park();
                  hogRuns.incrementAndGet();
                  while (release.get() == 0) {
                    Thread.onSpinWait(); // no poll, no park: this P schedules when we let go
                  }
                });
    assertTrue(poll(5_000, () -> hogRuns.get() == 1 && s.runq.runqsize() == 1), dump(s));
    sleeper.armOn(pp);
    while (pp.schedtick() % 61 != 0) {
      pp.incSchedtick(); // the M is in the hog's run: only the test moves the tick now
    }
    release.set(1);
    hog.join();
    sleeper.g.join();
    yielder.get().join();
    TimerWokenG.assertRanFirst(
        order, "global queue's G", "the 1-in-61 check ran the global queue's G first", s);
  }

  /**
   * 'Overdue timers' in Sysmon, the decision: wait until the earliest timer is OVERDUE_NS past
   * its when; then act at once with an idle P; without one, ask the oldest running slice's G to
   * yield once that slice has run OVERDUE_NS, and until then sleep only until it has ('A slice
   * too young to cut'), not a sysmon period.
   */
  @Test
  void sysmonWaitsForAnOverdueTimerOnlyAsLongAsItMust() {
    long ms = 1_000_000L;
    assertEquals(5_001, Sysmon.overdueWaitUs(-4 * ms, false, 0), "due in 4 ms: wake 1 ms after");
    assertEquals(Long.MAX_VALUE, Sysmon.overdueWaitUs(-4 * ms, true, 0), "an idle P's M sleeps");
    assertEquals(0, Sysmon.overdueWaitUs(2 * ms, true, -1), "overdue, an idle P: wake it now");
    assertEquals(0, Sysmon.overdueWaitUs(2 * ms, false, 3 * ms), "the oldest slice ran 3 ms");
    assertEquals(
        701, Sysmon.overdueWaitUs(2 * ms, false, 300_000L), "a slice too young: until 1 ms old");
    assertEquals(20, Sysmon.overdueWaitUs(2 * ms, false, 999_990L), "at least 20 us");
    assertEquals(Long.MAX_VALUE, Sysmon.overdueWaitUs(2 * ms, false, -1), "no P runs a G");
  }
}
