package io.gmp4j.runtime;

import java.util.concurrent.locks.LockSupport;

/**
 * Go's sysmon (proc.go sysmon, retake): the platform thread {@code gmp-sysmon}, which runs with
 * no P and watches the Ps.
 *
 * <h2>Implementation overview</h2>
 *
 * <ol>
 *   <li>Sleep: 20us at first; after 50 cycles in a row that woke nobody, double the sleep each
 *       cycle, up to 10ms. (On Linux a 20us park takes about 60us: the kernel's timer slack.
 *       Go's usleep pays the same.)
 *   <li>Deep sleep: while every P is idle or the world is stopped, and no schedtrace is due,
 *       park until {@link #wake} (a P starts running) or at most a second (for step 4). See
 *       'Deep sleep' below.
 *   <li>retake: a running P whose schedtick has not moved for a time slice (Go's forcePreemptNS,
 *       10ms unless {@code timeslice} says otherwise) gets its G asked to yield. A chain of Gs
 *       run through runnext shares one schedtick, so it shares one slice too. The request is
 *       repeated every cycle until the schedtick moves (a pinned G cannot yield at once). A G
 *       that ignores it for {@code preempt.handoff} loses its P to another M: 'Hog hand-off'
 *       in {@link HogHandoff}. A P in a syscall is handed off by Go's syscall rule.
 *   <li>Once a second, unless the user fixed GOMAXPROCS or set {@code updatemaxprocs=0},
 *       compare it with Go 1.25's default computed now ({@link MaxProcsLimit}: the JDK's CPU
 *       limit and the affinity) and resize on a change, as Go 1.25's updatemaxprocs does. Each
 *       change is counted, and printed when schedtrace is on.
 *   <li>Every {@code schedtrace} ms, print Go's schedtrace line (and detail) to stderr.
 * </ol>
 *
 * The per-P last-seen ticks ({@code pdSchedtick}, {@code pdSchedwhen}: Go's {@code sysmontick})
 * are confined to this thread.
 *
 * <h3>'Deep sleep'</h3>
 *
 * Not while the world is still stopping: a G that ignores the stop's preemption request gives
 * its P up only through the hog hand-off, which needs sysmon awake. (Go's sysmon sleeps then,
 * because Go's stop can always preempt.) Go's deep sleep also ends at the next timer, and its
 * timers live in the Ps, so a P that starts running without waking sysmon costs Go at most the
 * time to the next timer. Ours live in the Ps too with the agent ('Timers on the P' in {@link
 * Timers}), but the M that wakes for them takes an idle P like any other; without the agent they
 * are the JDK's, which sysmon cannot see. So a deep sleep lasts up to a second, and every P that
 * starts running must wake sysmon. One place does, Machine.acquireP,
 * which every P leaving the idle list goes through. Waking from startM alone (as before issue
 * 16) missed the M that takes a P back itself, in findRunnable's 'Delicate dance':
 *
 * <pre>
 *   T1 the M of the last P                 T2 sysmon                   T3 a timer, or main
 *   findRunnable: nothing; spinning
 *   pidleput: npidle == gomaxprocs
 *                                          sysmonwait = true
 *                                          npidle == gomaxprocs: park
 *                                                                      ready G: global queue;
 *                                                                      wakeP: an M spins, so
 *                                                                      no startM
 *   nmspinning--; sees the global G;
 *   pidleget, acquireP, runs the G
 *   (before: no wake. The G and every G
 *   after it on this P ran unwatched:
 *   a hog was neither preempted nor
 *   handed off, for up to a second)        (now: woken by acquireP)
 * </pre>
 *
 * The pair is a Dekker handshake on two volatiles: sysmon stores sysmonwait then loads npidle
 * (and gcwaiting); the M's pidleget stores npidle, then acquireP loads sysmonwait. Either
 * sysmon's re-check sees the P taken and does not park, or the M sees sysmonwait and unparks
 * it.
 *
 * <h3>'After a deep sleep'</h3>
 *
 * Go sets the sleep back to 20us after a deep sleep only when a syscall ended it ({@code
 * syscallWake}: entersyscall or exitsyscall woke it, a bet that it will soon retake a P from a
 * syscall again), and not when it woke for other work, "to avoid adding system load to
 * applications that spend most of their time sleeping". So here: a wake from {@code
 * enterSyscall}, or from acquireP on a G's behalf (the syscall's exit, a G taking back a
 * retaken P), sets it back; a P that starts for other work leaves the sleep where it was, at up
 * to 10ms, as a Go program's busy Ps do. Until issue 17 every wake set it back, and each time an
 * application's Ps all went idle and one started again, sysmon ran up to 50 cycles of 20us
 * (60us with the timer slack): a Spring Boot app, started and sent a cold burst, went into deep
 * sleep 35-60 times and slept under 100us in 52-70% of its cycles; with this rule sysmon's
 * wake-ups in the burst fell from 2,507 to 1,123 (BENCHMARKS.md, 'After a deep sleep').
 */
final class Sysmon extends Thread {
  private final Sched sched;

  /**
   * Go's forcePreemptNS, {@code timeslice}. Written by {@link #setTimeslice} (an attach that
   * changes it live), read by sysmon each cycle; volatile: the next cycle uses the new value.
   */
  private volatile long forcePreemptNs;

  /**
   * The hog hand-off ({@code preempt.handoff}); when that is off, the hand-off of blocked
   * carriers only ('Blocked carriers, with the hand-off off' in HogHandoff). Never null.
   * Confined to sysmon.
   */
  private HogHandoff hog;

  /**
   * The hand-off time wanted, 0 for off. Written by {@link #setHandoff}; sysmon rebuilds {@link
   * #hog} at the top of a cycle when it differs from the current one (volatile).
   */
  private volatile long handoffNs;

  /** {@code schedtrace} and {@code scheddetail}. Written by {@link #setSchedtrace}; volatile. */
  private volatile int schedtraceMs;

  private volatile boolean scheddetail;

  private final boolean followCpuLimit;

  /** Go's sched.sysmonwait: true while in deep sleep. Set by sysmon; cleared by its waker. */
  private volatile boolean sysmonwait;

  private int[] pdSchedtick = new int[0];
  private long[] pdSchedwhen = new long[0];
  private int[] pdSyscalltick = new int[0];
  private long[] pdSyscallwhen = new long[0];

  Sysmon(
      Sched sched,
      long forcePreemptNs,
      long handoffNs,
      int schedtraceMs,
      boolean scheddetail,
      boolean followCpuLimit) {
    super("gmp-sysmon");
    setDaemon(true);
    this.sched = sched;
    this.forcePreemptNs = forcePreemptNs;
    this.handoffNs = Math.max(0, handoffNs);
    this.hog = new HogHandoff(sched, this.handoffNs, true);
    this.schedtraceMs = schedtraceMs;
    this.scheddetail = scheddetail;
    this.followCpuLimit = followCpuLimit;
  }

  /** A live change of {@code timeslice}; the next cycle uses it. Any thread. */
  void setTimeslice(long ns) {
    forcePreemptNs = ns;
  }

  /** A live change of {@code preempt.handoff}, 0 for off; see {@link #handoffNs}. Any thread. */
  void setHandoff(long ns) {
    handoffNs = Math.max(0, ns);
    wake(false);
  }

  /** A live change of {@code schedtrace} and {@code scheddetail}. Any thread. */
  void setSchedtrace(int ms, boolean detail) {
    scheddetail = detail;
    schedtraceMs = ms;
    wake(false); // a deep sleep would delay the first line by up to a second
  }

  int schedtraceNow() {
    return schedtraceMs;
  }

  boolean scheddetailNow() {
    return scheddetail;
  }

  long timesliceNow() {
    return forcePreemptNs;
  }

  long handoffNow() {
    return handoffNs;
  }

  boolean followsCpuLimit() {
    return followCpuLimit;
  }

  /** Whether sysmon is in deep sleep (schedtrace detail). Any thread; racy. */
  boolean sleeping() {
    return sysmonwait;
  }

  /**
   * 'Overdue timers': a timer was put on a running P while no P is idle, to fire at {@code
   * when}. If sysmon sleeps past the moment it would be overdue, wake it to shorten its sleep;
   * only a timer due sooner than sysmon's current sleep (up to 10ms) does, so a stream of timed
   * parks costs about one wake-up per sysmon period at most. Any thread.
   */
  void timerAdded(long when) {
    long until = sleepUntil; // volatile
    if (until != 0 && until > when + OVERDUE_NS) {
      LockSupport.unpark(this);
    }
  }

  /**
   * Ends a deep sleep; {@code syscall}: for a G that enters or leaves a syscall, or takes its P
   * back, which sets the sleep back to 20us ('After a deep sleep'). Any thread; cheap when
   * sysmon is awake.
   */
  void wake(boolean syscall) {
    if (sysmonwait) {
      if (syscall) {
        syscallWake = true; // before the unpark, which publishes it to sysmon
      }
      sysmonwait = false;
      LockSupport.unpark(this);
    }
  }

  @Override
  public void run() {
    int idle = 0; // how many cycles in succession we had not woken somebody
    long delayUs = 0;
    long lasttrace = 0;
    long lastProcsCheck = System.nanoTime();
    try {
      for (; ; ) {
        if (idle == 0) { // start with 20us sleep...
          delayUs = 20;
        } else if (idle > 50) { // start doubling the sleep after 1ms...
          delayUs *= 2;
        }
        if (delayUs > 10_000) { // up to 10ms
          delayUs = 10_000;
        }
        long wantHandoff = handoffNs; // a live change (setHandoff)
        if (wantHandoff != hog.configuredNs()) {
          hog = new HogHandoff(sched, wantHandoff, true);
        }
        long sleepUs = Math.min(delayUs, timerDelayUs); // 'Overdue timers' below
        sleepUs = Math.min(sleepUs, Trace.sysmonSleepCapUs()); // 'The slice record' in Trace
        long slept = System.nanoTime();
        sleepUntil =
            Timers.nanotime() + sleepUs * 1000; // volatile, then the re-check in timerAdded
        LockSupport.parkNanos(sleepUs * 1000);
        sleepUntil = 0;
        long now = System.nanoTime();
        sched.coarseNow = now;
        hog.startCycle(sleepUs * 1000, now - slept); // see 'Pauses' in HogHandoff
        int traceMs = schedtraceMs;
        if (traceMs <= 0 && nothingToWatch()) {
          syscallWake = false; // before sysmonwait: a wake that sees it may set it again
          sysmonwait = true;
          // Re-check after publishing sysmonwait: a P that started meanwhile either sees it
          // (and wakes us) or is seen here.
          if (nothingToWatch()) {
            LockSupport.parkNanos(1_000_000_000L);
          }
          sysmonwait = false;
          if (syscallWake) { // Go's syscallWake: see 'After a deep sleep'
            syscallWake = false;
            idle = 0;
            delayUs = 20;
          }
          now = System.nanoTime();
          sched.coarseNow = now;
          hog.forgetAll();
        }
        if (followCpuLimit && now - lastProcsCheck >= 1_000_000_000L) {
          lastProcsCheck = now;
          int ncpu = MaxProcsLimit.defaultGomaxprocs(); // Go 1.25's rule over the JDK's count
          int was = sched.gomaxprocs;
          if (ncpu != was && !sched.customGomaxprocs) {
            MaxProcsLimit.UPDATES.increment();
            if (schedtraceMs > 0) {
              System.err.println(
                  "gmp4j: updatemaxprocs: gomaxprocs "
                      + was
                      + " -> "
                      + ncpu
                      + " ("
                      + MaxProcsLimit.lastReason
                      + ")");
            }
            sched.stw.updateMaxProcs(ncpu);
          }
        }
        if (retake(now) != 0) {
          idle = 0;
        } else {
          idle++;
        }
        checkOverdueTimers(now);
        hog.flushReports(now);
        Trace.sysmonTick(now);
        if (traceMs > 0 && now - lasttrace >= traceMs * 1_000_000L) {
          lasttrace = now;
          System.err.print(sched.schedtrace(scheddetail));
        }
      }
    } catch (Throwable t) {
      System.err.println("gmp4j: fatal error: sysmon died: " + t);
      t.printStackTrace();
    }
  }

  /**
   * A timer overdue by this much is one that no M ran. A due timer's own sleeper M normally runs
   * it within a few tens of microseconds (its park's timer slack), and a P that schedules runs
   * it at once; 1ms keeps sysmon from racing them, bounds a lost wake-up, and is the least slice
   * a G gets before a sleeper's timer may cut it short (Linux's CFS gives a woken task a
   * comparable 0.75-3ms minimum granularity).
   */
  private static final long OVERDUE_NS = 1_000_000L;

  /**
   * How long sysmon may sleep so as to be awake when the earliest timer on a running P becomes
   * overdue, in us (a large value when there is none). Confined to sysmon.
   */
  private long timerDelayUs = Long.MAX_VALUE;

  /**
   * Go's syscallWake: the deep sleep was ended for a syscall ({@link #wake(boolean)}), so the
   * sleep goes back to 20us ('After a deep sleep'). Set by a waker before its unpark; read and
   * cleared by sysmon. Volatile.
   */
  private volatile boolean syscallWake;

  /**
   * When sysmon's current sleep ends, in {@link Timers#nanotime()}; 0 while it is awake or in
   * deep sleep. Written by sysmon (volatile, before it parks); read by {@link #timerAdded}.
   */
  private volatile long sleepUntil;

  /**
   * 'Overdue timers': Go 1.14's sysmon, "There are timers that should have already run, perhaps
   * because there is an unpreemptible P. Try to start an M to run them." With an idle P, wakeP
   * starts a spinning M, which steals due timers on its last pass ('Timers on the P' in {@link
   * Timers}). With none, Go does nothing: every P runs, each runs its timers when it schedules,
   * and a sleeper beside CPU-bound Gs waits a whole time slice plus a sysmon period (Go's p50
   * overshoot of a 1ms sleep beside four hogs at 2 Ps: 19 ms). Beyond Go, sysmon then asks the G
   * of the running P whose slice is oldest to yield, once that slice has run OVERDUE_NS: its M
   * schedules, runs the due timers of every P ('Overdue timers on running Ps' in {@link
   * TimerSleeper}), and the sleeper runs next. The yielded G goes to the global queue as after
   * any preemption, having had at least OVERDUE_NS. sysmon's sleep is shortened to be awake
   * then, and woken early for a timer due sooner than it would wake ({@link #timerAdded}). Costs
   * one volatile load per P per cycle when there are no timers. Called only by sysmon, after
   * retake (which refreshed pdSchedwhen).
   *
   * <p>'Overdue wake-ups', beyond Go: a G that a JDK thread readied (a poller, the JDK's
   * unblocker, a platform thread's unpark) waits in the wake-up segment of the global queue for
   * a P to schedule ('Wake-ups from JDK threads' in {@link Sched}). With every P running a G
   * that is a whole time slice, as for a timer, so while no P is idle the segment counts here as
   * a timer due when it started ({@link GlobalRunq#wokenSince}), and the thread that started it
   * pokes sysmon as an adder of a timer does ({@link #timerAdded}). With an idle P its readying
   * woke an M already, and a wakeP here took the P from a pinned G waiting for one (in
   * PinnedWaiterFirstTest the initializer's wait went from 2-39 ms to 79-1,070 ms). Go's
   * netpoll-woken Gs wait in its global queue for the slice (a G that a platform thread unparked
   * every 5 ms beside four hogs at 2 Ps: p50 9.6-19.7 ms; with the rule, 1.1 ms).
   */
  private void checkOverdueTimers(long now) {
    assert Thread.currentThread() == this : "checkOverdueTimers: not on sysmon";
    Processor[] allp = sched.allp;
    long tnow = Timers.nanotime();
    long next = 0;
    for (Processor pp : allp) {
      long w = pp.timers.nobarrierWakeTime();
      if (w != 0 && (next == 0 || w < next)) {
        next = w;
      }
    }
    boolean idleP = sched.npidle > 0;
    // 'Overdue wake-ups': a G that a JDK thread readied waits like a due timer, but only while
    // every P runs: with an idle P, its readying woke an M already, and a wakeP here would take
    // that P from a pinned G waiting for one ('Pinned waiters first' in Sched.handoffP).
    long woken = idleP ? 0 : sched.runq.wokenSince();
    if (woken != 0 && (next == 0 || woken < next)) {
      next = woken;
    }
    timerDelayUs = Long.MAX_VALUE;
    if (next == 0) {
      return;
    }
    long overdue = tnow - next;
    int oldest = -1;
    if (overdue > OVERDUE_NS && !idleP) {
      for (int i = 0; i < allp.length && i < pdSchedwhen.length; i++) {
        if (allp[i].status() == Processor.RUNNING
            && (oldest < 0 || pdSchedwhen[i] < pdSchedwhen[oldest])) {
          oldest = i;
        }
      }
    }
    long wait = overdueWaitUs(overdue, idleP, oldest < 0 ? -1 : now - pdSchedwhen[oldest]);
    if (wait != 0) {
      timerDelayUs = wait;
      return;
    }
    if (idleP) {
      sched.overdueTimerWakeups.increment();
      sched.wakeP();
      return;
    }
    assert oldest >= 0 : "checkOverdueTimers: act with no running P"; // overdueWaitUs waits then
    Processor pp = allp[oldest];
    Machine mp = pp.m;
    Goroutine gp = mp == null ? null : mp.curg;
    if (gp != null && gp.running() && Preempt.request(gp, pp, 0, "timer")) {
      sched.overdueTimerPreempts.increment();
      if (mp.curg != gp) {
        Preempt.cancel(gp); // the run ended while we asked: as in Preempt.preemptOne
      }
    }
    // No shorter sleep from here on: a G that cannot yield (pinned, or code without polls)
    // keeps the request pending, and sysmon looks again at its own pace.
  }

  /**
   * checkOverdueTimers' decision, given how far past its when the earliest timer is ({@code
   * overdueNs}, negative if it is not due), whether a P is idle, and how long the oldest running
   * slice has run ({@code oldestRanNs}: since sysmon saw its schedtick move; -1 if no P runs a
   * G). Returns 0 to act now (wakeP with an idle P, else ask the oldest slice's G to yield), or
   * how long sysmon may sleep, in us, to be awake when it may act ({@link Long#MAX_VALUE}: no
   * timer needs it). 'A slice too young to cut': a timer that is overdue while every running
   * slice is younger than OVERDUE_NS (the Ps switched just before it was due, so none ran it)
   * wakes sysmon when the oldest turns OVERDUE_NS, not a whole sysmon period later (up to 10 ms:
   * a 20 ms sleep beside four hogs at 2 Ps overshot 11 ms at the median that way).
   */
  static long overdueWaitUs(long overdueNs, boolean idleP, long oldestRanNs) {
    if (overdueNs <= OVERDUE_NS) {
      return idleP ? Long.MAX_VALUE : usUntil(OVERDUE_NS - overdueNs);
    }
    if (idleP) {
      return 0;
    }
    if (oldestRanNs < 0) {
      return Long.MAX_VALUE; // every P in a syscall or handed off: sysmon's own pace
    }
    if (oldestRanNs < OVERDUE_NS) {
      return usUntil(OVERDUE_NS - oldestRanNs);
    }
    return 0;
  }

  /** A sleep in us that ends just after {@code ns} from now, and not under sysmon's 20 us. */
  private static long usUntil(long ns) {
    return Math.max(20, ns / 1000 + 1);
  }

  /**
   * Deep sleep's condition: every P idle, or the world stopped (not merely stopping: see the
   * overview). Called only by sysmon.
   */
  private boolean nothingToWatch() {
    return (sched.gcwaiting && sched.stopwait.get() == 0) || sched.npidle == sched.gomaxprocs;
  }

  /**
   * Go's retake: hands off Ps whose G sits in a syscall (see 'Syscall') or ignores preemption
   * (see 'Hog hand-off' in {@link HogHandoff}), and asks Gs that overran their time slice to
   * yield. Returns the number of Ps handed off. Called only by sysmon.
   */
  private int retake(long now) {
    assert Thread.currentThread() == this : "retake: not on sysmon";
    Processor[] allp = sched.allp;
    if (pdSchedtick.length != allp.length) {
      pdSchedtick = new int[allp.length];
      pdSchedwhen = new long[allp.length];
      pdSyscalltick = new int[allp.length];
      pdSyscallwhen = new long[allp.length];
    }
    int n = 0;
    for (int i = 0; i < allp.length; i++) {
      Processor pp = allp[i];
      int st = pp.status();
      boolean sysretake = false;
      if (st == Processor.RUNNING || st == Processor.SYSCALL) {
        // Preempt G if it's running on the same schedtick for too long. This could be from a
        // single long-running goroutine or a sequence of goroutines run via runnext, which
        // share a single schedtick time slice.
        int t = pp.schedtick();
        if (pdSchedtick[i] != t) {
          pdSchedtick[i] = t;
          pdSchedwhen[i] = now;
          hog.forget(i);
        } else if (now - pdSchedwhen[i] >= forcePreemptNs) {
          sched.timesliceOverruns.increment();
          Preempt.preemptOne(pp, now - pdSchedwhen[i], "timeslice");
          // If pp is in a syscall, preemptone doesn't work: retake the P instead. A G that
          // makes many short syscalls is nearly always caught mid-call.
          sysretake = true;
          // Beyond Go: a G that keeps ignoring the request loses its P.
          if (st == Processor.RUNNING && hog.retake(i, allp.length, pp, now)) {
            n++;
            continue;
          }
        }
      }
      if (st == Processor.SYSCALL) {
        // Retake P from syscall if it's there for more than 1 sysmon tick (at least 20us).
        int t = pp.syscalltick;
        if (!sysretake && pdSyscalltick[i] != t) {
          pdSyscalltick[i] = t;
          pdSyscallwhen[i] = now;
          continue;
        }
        // On the one hand we don't want to retake Ps if there is no other work to do, but on
        // the other hand we want to retake them eventually because they can prevent the
        // sysmon thread from deep sleep.
        if (pp.runqEmpty()
            && sched.nmspinning.get() + sched.npidle > 0
            && now - pdSyscallwhen[i] < 10_000_000L) {
          continue;
        }
        if (pp.casStatus(
            Processor.SYSCALL, Processor.IDLE, "Sysmon.retake")) { // pairs with exitSyscallFast
          n++;
          pp.syscalltick++; // as Go: a call the next M's G enters is new to the check above
          sched.syscallHandoffs.increment();
          Machine from = pp.syscallM; // written before the status that our CAS read
          Object handoff = Trace.on(Trace.PROC_HANDOFF) ? Trace.procHandoffBegin() : null;
          Machine to = sched.handoffP(pp);
          if (handoff != null) {
            Trace.procHandoff(handoff, pp, from == null ? -1 : from.id, to, "syscall", null);
          }
        }
      }
    }
    return n;
  }
}
