package io.gmp4j.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * The M of Go's GMP model (runtime2.go {@code type m}): a platform carrier thread named
 * {@code gmp-m<id>} that runs Gs while it holds a P.
 *
 * <h2>Implementation overview</h2>
 *
 * The M runs Go's {@code schedule} loop (proc.go schedule, findRunnable, stealWork, execute,
 * stopm, gcstopm):
 *
 * <ol>
 *   <li>findRunnable, in Go's order: stop for a stop-the-world; every 61st schedtick one G from
 *       the global queue (fairness: two Gs that respawn each other cannot starve the global
 *       queue); the local queue, runnext first; a global batch; stealing (if spinning is
 *       allowed); then, under sched.lock, a last global check before the P goes idle, and for a
 *       spinner the 'Delicate dance' recheck of every queue without a P; then stopM.
 *   <li>execute: the G goes runnable → running, schedtick counts a new time slice unless the G
 *       came from runnext, and the M calls the thread's {@code runContinuation}, which mounts
 *       the virtual thread on this carrier until it parks, yields or ends.
 *   <li>After the run: a terminated thread's G is destroyed; otherwise the G goes running →
 *       waiting, unless it was readied meanwhile (see 'Status' in {@link Goroutine}).
 * </ol>
 *
 * An M parks on its own note ({@link #parked}) in stopM and is handed a P and its spinning state
 * by whoever wakes it (Sched.startM). An M spins no longer than Go's spin phase, 4 steal passes,
 * unless JDK threads ready Gs (below); then it parks.
 *
 * <h3>Waiting for JDK threads</h3>
 *
 * Beyond Go. In Go every wake-up but a few comes from an M, so a G readied while its waker runs
 * lands on the waker's P (runnext), and an M that found nothing may park at once. On the JVM the
 * JDK's own threads (a platform thread's unpark, the JDK's unblocker, a poller, a server's
 * acceptor) ready Gs too, into the global queue ('Wake-ups from JDK threads' in Sched). When the
 * last M parked, each such wake-up is a wakeP that unparks an M: a futex wake and a context
 * switch per wake-up, about twice the JDK's time on its stress/ParkALot (a platform thread
 * unparking one virtual thread in a loop), whose ForkJoinPool workers spin about 256 checks
 * before they park. So a spinning M that found nothing, if a JDK thread readied a G since it last
 * did this, spins on for {@link #JDK_WAKE_SPINS} rounds, holding its P and still counted in
 * nmspinning: a readier's wakeP sees the spinner and wakes no M, and the spinner takes the G
 * from the global queue. The gate bounds the cost: a program whose wake-ups all come from Gs
 * never spins beyond Go's phase, and a wake-up from a JDK thread buys each M at most one spin.
 *
 * <p>Two more steps make the spinner be there when the wake-up comes. An M whose run ended with
 * no work in sight (its own queue and the global one empty), if a JDK thread readied a G since
 * it last did this, becomes a spinner at once (spinEarly, within Go's limit of half the busy
 * Ps), not only in findRunnable: a readier that came in between would otherwise see no spinner
 * and wake a second M. And Go's resetspinning, which makes the last spinner to find
 * work wake another, does so after a JDK thread's wake-up (caught by the spin, or taken from
 * the wake-up segment) only if work is in sight (the global queue, a P's local queue):
 * otherwise each catch would wake the other idle M, which would find nothing and park, and the
 * two Ms would trade the G at every wake-up, a futex wake each time. After any other find, it
 * wakes one as Go does (BenchmarkWakeupParallelSpinning's ramp-up). Skipping that wake-up
 * loses no queued G, by the 'Delicate dance': nmspinning is dropped (a full fence) before the
 * looks, so a G queued after them meets a readier's wakeP that sees no spinner and starts an M.
 * Nor a timer: a timer added while this M spun left its M to a spinner (wakeNetPoller), so the
 * wake-up is skipped only while no timer waits without a sleeper.
 *
 * <p>While a G runs, the M's hold on its P is the {@link #phold} word: the G may use {@code m.p}
 * only after claiming it there, and sysmon may take the P from a G that ignores preemption. The
 * word is 'The phold word' in {@link PHold}, sysmon's side 'Hog hand-off' in {@link HogHandoff};
 * the M's part is to open the word before the run and to close it after, finding out whether it
 * still has a P.
 *
 * <h3>No spin in j.u.c without the agent</h3>
 *
 * {@code LinkedTransferQueue}, {@code SynchronousQueue} and {@code Exchanger} spin about 128
 * rounds of onSpinWait before they park, unless {@code ForkJoinWorkerThread.hasKnownQueuedWork()}
 * says that the carrier has queued work, which it says only for a ForkJoinWorkerThread whose own
 * work queue is not empty. At one P the spin is pure loss (the partner cannot run while we spin):
 * library mode's {@code SynchronousQueue} ping-pong took 12.6x the JDK's time. Under the agent
 * the answer is woven ({@link Hooks#hasKnownQueuedWork}, Go's canSpin rule). Without it, an M is
 * a ForkJoinWorkerThread of a pool that never runs a task ({@link Sched#noSpinPool}, whose
 * factory makes no thread), and at its start, when the agent is not installed, it forks one task
 * that never runs into its own work queue ({@link NoSpin}): every question then gets "queued
 * work", and a G on a gmp4j carrier parks at once, as a Go G does on an unbuffered channel. The M
 * runs no ForkJoinPool code: its {@link #run} is the scheduler's, not the pool's; and the JDK's
 * carrier-specific paths ask for its own {@code CarrierThread}, which an M is not.
 */
final class Machine extends ForkJoinWorkerThread {
  private static final VarHandle PHOLD;
  private static final VarHandle P;
  private static final VarHandle CURG;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      PHOLD = l.findVarHandle(Machine.class, "phold", int.class);
      P = l.findVarHandle(Machine.class, "p", Processor.class);
      CURG = l.findVarHandle(Machine.class, "curg", Goroutine.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final Sched sched;

  /** sched.runq, held here so that findRunnable's racy looks take no extra load. Final. */
  private final GlobalRunq runq;

  /** Go's m.id. Final. */
  final int id;

  /**
   * This M's Linux thread id, or 0 until it has started or where unknown: see 'Carrier time' in
   * {@link HogHandoff}. Written once by this M as it starts (volatile publish); read by sysmon.
   */
  volatile int tid;

  /**
   * Held P (Go's m.p). Written by this M, or by its running G in a syscall bracket or after a
   * {@link #tryClaimP claim}; and once per retake by sysmon, which CASes it from the P it took to
   * null (see 'Hog hand-off' in {@link HogHandoff}). Racy reads by observers. Its running G may
   * use the P only while it holds a claim.
   */
  volatile Processor p;

  /**
   * The M's hold on {@link #p} while a G runs: (run number, state), decoded by {@link PHold}.
   * Written by this M (open and close, around each run), by its running G (claim, unclaim,
   * syscall, reacquire), and by sysmon (one CAS, G → RETAKEN), only through setPHoldRelease and
   * casPHold. Volatile, and loaded as the field, never through PHOLD ('Loads' in {@link
   * Processor}); the transition table and the invariants are 'The phold word' in {@link PHold}.
   * Here, not in PHold, so that the hot path has no indirection.
   */
  private volatile int phold;

  /** The P this M left in a syscall (Go's m.oldp). Written only by this M (its G). */
  private Processor oldp;

  /** The P to acquire on wake-up (Go's m.nextp). Written by the waker before unpark. */
  private volatile Processor nextp;

  /**
   * Go's m.nextp as startlockedm sets it: the P, and the entry of {@link #lockedg}, that the M
   * which dequeued that G forwards here ('Forwarding' in {@link LockOSThread}). Written under
   * {@link #lockedLock}, by the forwarder (null → a handoff, only while lockedg is its G), by
   * unwireLocked (→ null) and by relockWithEntry (null → the forward the G's unlock took); read
   * and cleared without the lock by this M in stopLockedM, which runs only while lockedg is
   * wired and its G is not running here, so no unwire races it. Volatile.
   */
  private volatile LockedHandoff lockedNext;

  /**
   * A forward that an unwire took (the locked G's own last unlock, or its end): settled by this M
   * at the end of execute, on this thread, because the G must not take sched.lock, which may
   * park it ('Forwarding' in {@link LockOSThread}). Written by that G on this M (unwiredByG,
   * relockWithEntry) and by execute when the G ended; read and cleared by this M in execute.
   * Confined to this thread (the G runs on it).
   */
  private LockedHandoff unwiredForward;

  /** Orders a forward against the unwire of lockedg: 'Forwarding' in {@link LockOSThread}. */
  private final Object lockedLock = new Object();

  /** A forward to a locked M: the P it runs on, and the entry of its G that came with it. */
  record LockedHandoff(Processor pp, Goroutine gp) {}

  /**
   * Go's m.spinning. Written by this M, or by its waker while it is parked (before unpark);
   * racy reads by schedtrace.
   */
  volatile boolean spinning;

  /**
   * The G being run (Go's m.curg). Written only by this M, by release stores: the G as a run
   * begins (openPHold's release store after it publishes it to sysmon), null as it ends, just
   * before closePHold's CAS. That CAS is the full fence the M's half of a Dekker pair with
   * sysmon's request needs ("clear curg, then look at gp.preempt" against "set gp.preempt, then
   * look at curg": step 6 of 'Preemption' in Preempt, and preemptOne's own cancel). Null while
   * the hold is still open means the run is over. Read by its G and observers (volatile).
   */
  volatile Goroutine curg;

  /**
   * Go's m.lockedg and m.lockedExt: the G wired to this M by lockOSThread, and its nesting
   * count. Set by that G on this M (volatile, before its status check: 'Forwarding' in {@link
   * LockOSThread}); cleared under {@link #lockedLock} by unwireLocked (that G's last unlock, or
   * this M at its end) and by relockWithEntry (a lock undone); read by this M, by forwarders
   * under lockedLock, and by others through Goroutine.lockedm.
   */
  volatile Goroutine lockedg;

  int lockedExt;

  /** Set when this M must exit after its run (its locked G ended). Confined to this M. */
  private boolean exiting;

  /** The idle-M list. Under sched.lock. */
  Machine schedlink;

  /** Go's note m.park: true while parked in stopM. Set under sched.lock; cleared by the waker. */
  private volatile boolean parked;

  /** findRunnable's second result: the G came from runnext. Confined to this M. */
  private boolean inheritTime;

  /**
   * The onSpinWait rounds of one idle spin ('Waiting for JDK threads'): about 10 us here, the
   * order of ForkJoinPool's own spin before a worker parks (2 x SPIN_WAITS checks).
   */
  static final int JDK_WAKE_SPINS = 256;

  /** runq.wokenPuts() when this M last spun for JDK threads. Confined to this M. */
  private int wokenPutsSeen;

  /** runq.wokenPuts() when this M last looked at spinning early. Confined to this M. */
  private int wokenPutsEarly;

  /** This M is spinning because it spun early (spinEarly). Confined to this M. */
  private boolean spunEarly;

  /**
   * This spinning M's G is a JDK thread's wake-up (from the spin or the wake-up segment), so
   * resetSpinning wakes another spinner only if work is in sight. Confined to this M.
   */
  private boolean foundJdkWake;

  // Counters for the metrics: written only by this M (plain writes, no fence on the hot path),
  // read racily by metric readers; a 64-bit JVM never tears a long.
  private long runnextHits;
  private long steals;
  private long stolen;
  private long jdkWakeSpinHits;

  /** Gs created by the Gs this M ran (Go's per-P goroutinesCreated); see newGoid. Plain. */
  private long created;

  /**
   * Go's p.goidcache and p.goidcacheend: goids this M took from Sched.goidgen in a batch, given
   * to the Gs that its own Gs create, [goidcache, goidcacheEnd). Per M rather than per P, and
   * plain: a G's code runs on its carrier's thread, so only that thread touches them, P or not.
   */
  private long goidcache;

  private long goidcacheEnd;

  // Tracing: see 'Tracing' in Trace. Confined to this M and the G mounted on it, which never run
  // at once; sysmon reads the traceRun fields only between its acquire of phold and its retake
  // CAS, when the run number pins them (a slice begins only before a phold release).

  /** The open GoRun slice's begin (System.nanoTime), or 0: see 'The slice record' in Trace. */
  long traceRunBegin;

  /** Sched.coarseNow at the slice's begin. */
  long traceRunCoarse;

  /** The slice's G, its schedLatency (ns) and its P; whether it came from runnext. */
  long traceRunGoid;

  long traceRunLatency;

  int traceRunP;

  boolean traceRunNext;

  /** When this M's own carrier-side submit readied the running G (a yield), or 0. */
  long traceRunStopOwn;

  /**
   * The open GoSyscall (a TraceEvents.GoSyscall) its G began in this run, or null: set by
   * Trace.syscallBegin, taken by the G's exitsyscall, which runs in the same run on this M
   * (after a park inside the bracket that run is over, the M's phold word says so, and its
   * exitsyscall does nothing), else ended by this M after the run that parked inside the
   * bracket, or that ended in it. A spurious submit can also take the G out of _Gsyscall with
   * no park (the JDK's stack walker): its exitsyscall still takes the event, by the M's phold
   * word ('A spurious submit inside the bracket' in Syscall). So none is left when the G's next
   * call begins, as syscallBegin asserts.
   */
  Object traceSyscall;

  /**
   * A readier's end of a slice of this M whose run had not returned yet (a Trace.StopStamp), or
   * null; written by that readier, read and cleared by this M: volatile.
   */
  volatile Object traceRunStoppedBy;

  /** Events the G ended on this carrier, committed by this M after the run (Trace.flush). */
  Object[] tracePending;

  int tracePendingCount;

  /**
   * Event objects this M commits again and again instead of allocating one per event (see
   * 'Reused event objects' in Trace): its GoRun and GoDestroy, and a stack of GoUnblocks that
   * its Gs fill and it commits. Null until first used.
   */
  Object traceRunEvent;

  Object traceDestroyEvent;

  Object[] traceUnblockFree;

  int traceUnblockFreeCount;

  /**
   * How the current run yielded (Trace.END_GOSCHED or END_PREEMPTED), or -1: written by
   * Sched.ready when this M's carrier-side code submits its own yielding G, which happens before
   * that G can run anywhere else, so the answer is this run's.
   */
  int traceYield = -1;

  /**
   * This M's counters, in Sched.mCounters' order: runnext hits, steals, Gs stolen, JDK
   * threads' wake-ups that only 'Waiting for JDK threads' caught (the spin for them, or an M that
   * spun early), and Gs created on it. Racy.
   */
  long[] counters() {
    return new long[] {runnextHits, steals, stolen, jdkWakeSpinHits, created};
  }

  /**
   * The goid of a G that the G running on this M creates, from this M's batch (Go's newproc1
   * with {@code _GoidCacheBatch}), and counts the creation. Called only on this M's thread, by
   * the G it runs.
   */
  long newGoid() {
    assert VirtualThreads.carrier(Thread.currentThread()) == this : "newGoid: not on " + getName();
    if (goidcache == goidcacheEnd) {
      long last = sched.goidgen.addAndGet(Sched.GOID_CACHE_BATCH); // the batch ends at last
      goidcache = last - Sched.GOID_CACHE_BATCH + 1;
      goidcacheEnd = last + 1;
    }
    created++;
    return goidcache++;
  }

  Machine(Sched sched, int id, Processor nextp, boolean spinning) {
    super(sched.noSpinPool); // see 'No spin in j.u.c without the agent'
    setName("gmp-m" + id);
    setDaemon(true);
    this.sched = sched;
    this.runq = sched.runq;
    this.id = id;
    this.nextp = nextp;
    this.spinning = spinning;
  }

  /** Whether this M is parked (schedtrace's "blocked"). Any thread; racy. */
  boolean blocked() {
    return parked;
  }

  /**
   * The task that an M forks into its own work queue without the agent, and that never runs:
   * 'No spin in j.u.c without the agent'.
   */
  static final class NoSpin extends ForkJoinTask<Void> {
    @Override
    public Void getRawResult() {
      return null;
    }

    @Override
    protected void setRawResult(Void value) {}

    @Override
    protected boolean exec() {
      throw new AssertionError("gmp4j: the NoSpin marker of an M ran");
    }
  }

  @Override
  public void run() {
    tid = CarrierCpu.currentTid();
    if (!Hooks.agentInstalled()) {
      new NoSpin().fork(); // this thread's own queue: 'No spin in j.u.c without the agent'
    }
    try {
      Processor pp = nextp;
      nextp = null;
      acquireP(pp);
      schedule(); // returns when this M exits: its locked G ended, or it was idle too long
    } catch (Throwable t) {
      System.err.println("gmp4j: fatal error: M" + id + " died: " + t);
      t.printStackTrace();
      if (spinning) {
        // (spinEarly can have set it in execute's epilogue): a dead spinner left counted would
        // make every later wakeP return at once
        spinning = false;
        sched.nmspinning.decrementAndGet();
      }
    }
  }

  /**
   * Go's schedule: one round per G run. Returns only when this M exits: after mexit (its locked
   * G ended), or when stopM reports that it was idle too long (Go's mexit for an idle M; stopM
   * has taken it off the idle list and counted it out, and it holds no P).
   */
  private void schedule() {
    for (; ; ) {
      if (exiting) {
        mexit();
        return;
      }
      Goroutine locked = lockedg;
      if (locked != null) {
        // A locked G blocked or yielded: this M runs nothing else (Go's stoplockedm).
        stopLockedM();
        execute(locked, false);
        continue;
      }
      // Its G's syscall outlived the P, or the G ignored preemption, and sysmon handed the P
      // off. As Go's exitsyscall0: take an idle P if the G (queued globally when it yielded)
      // or others wait there, else wait until handed one. Without this, at the thread limit
      // (maxthreads.exceeded=queue) an idle P and the global queue could wait for an M that
      // nobody starts.
      if (p == null && !(runq.runqsize() > 0 && tryAcquireIdleP(true)) && !stopM()) {
        return; // idle too long
      }
      Goroutine gp = findRunnable();
      if (gp == null) {
        return; // idle too long, in findRunnable's stopM
      }
      // This M is about to run a G; if it was the last spinner, another must take its place.
      if (spinning) {
        resetSpinning();
      }
      Machine owner = gp.lockedm;
      if (owner != null && owner != this) {
        int r = startLockedM(gp, owner);
        if (r == IDLE_TOO_LONG) {
          return;
        }
        if (r == FORWARDED) {
          continue;
        }
      }
      execute(gp, inheritTime);
    }
  }

  /**
   * Go's stoplockedm: gives the P away (handoffp) and parks until the M that dequeues the
   * locked G hands it a P. Called only by this M.
   */
  private void stopLockedM() {
    assert Thread.currentThread() == this : "stopLockedM: not on M" + id;
    parked = true; // before the G can be found by anyone: see startLockedM
    Processor pp = p;
    if (pp != null) {
      sched.handoffP(releaseP());
    }
    sched.nmidlelocked.incrementAndGet();
    LockedHandoff h;
    while ((h = lockedNext) == null) {
      LockSupport.park(this);
      Thread.interrupted();
    }
    lockedNext = null;
    sched.nmidlelocked.decrementAndGet();
    parked = false;
    assert h.gp == lockedg : "stopLockedM: M" + id + " got G" + h.gp.goid + "'s entry";
    acquireP(h.pp);
  }

  /** Whether a forward to this M waits to be taken (tests: LockedForwardTest). Any thread. */
  boolean lockedForwardPending() {
    return lockedNext != null;
  }

  /** startLockedM's answers. */
  private static final int FORWARDED = 0, IDLE_TOO_LONG = 1, NOT_LOCKED = 2;

  /**
   * Go's startlockedm: hands this M's P to the M that gp is locked to (gp, dequeued here, runs
   * there) and stops; FORWARDED when stopM hands it a P again, IDLE_TOO_LONG when it must exit.
   * NOT_LOCKED, keeping the P, when {@code owner} no longer has gp wired: gp unlocked or ended
   * after the caller read gp.lockedm, and the caller runs the entry itself ('Forwarding' in
   * {@link LockOSThread}). Called only by this M.
   */
  private int startLockedM(Goroutine gp, Machine owner) {
    assert Thread.currentThread() == this : "startLockedM: not on M" + id;
    synchronized (owner.lockedLock) {
      if (owner.lockedg != gp) {
        return NOT_LOCKED;
      }
      // One entry per runnable G (ready dedups): the owner's stopLockedM or an unwire takes
      // it before the G can be readied, and so forwarded, again.
      assert owner.lockedNext == null : "startLockedM: M" + owner.id + " has a forward already";
      owner.lockedNext = new LockedHandoff(releaseP(), gp); // pairs with stopLockedM's loop
    }
    LockSupport.unpark(owner);
    return stopM() ? FORWARDED : IDLE_TOO_LONG;
  }

  /**
   * Unwires lockedg (its last unlock, or its end) and returns a forward that came for it and was
   * not taken: the caller leaves it in {@link #unwiredForward}, which execute settles after the
   * run ('Forwarding' in {@link LockOSThread}). Called only by this M or its G, which is lockedg.
   */
  LockedHandoff unwireLocked(Goroutine gp) {
    assert onThisM() : "unwireLocked: not on M" + id + " or its G";
    assert lockedg == gp : "unwireLocked: G" + gp.goid + " is not M" + id + "'s locked G";
    LockedHandoff h;
    synchronized (lockedLock) {
      lockedg = null;
      gp.lockedm = null;
      h = lockedNext;
      lockedNext = null;
    }
    return h;
  }

  /**
   * The lock half of 'Forwarding' in {@link LockOSThread}, for a G that found itself runnable
   * just after it wired itself here (lockedg and gp.lockedm already written): true if the G's
   * entry is this M's to take, and the lock stands: a forwarder put it in lockedNext after
   * seeing the lock, or an unlock earlier in this run left it in unwiredForward, which goes
   * back to lockedNext. False, the lock undone, if the entry may be in a run queue or a
   * dequeuer's hands. Called only by this M's G.
   */
  boolean relockWithEntry(Goroutine gp) {
    assert onThisM() : "relockWithEntry: not on M" + id + "'s G";
    synchronized (lockedLock) {
      if (lockedNext != null) {
        return true;
      }
      LockedHandoff h = unwiredForward;
      if (h != null) {
        assert h.gp == gp : "relockWithEntry: M" + id + " holds G" + h.gp.goid + "'s entry";
        unwiredForward = null;
        lockedNext = h;
        return true;
      }
      lockedg = null;
      gp.lockedm = null;
      return false;
    }
  }

  /**
   * The G's half of its last unlock, when unwireLocked returned a forward: leaves it for this M
   * to settle after the run. Called only by this M's G.
   */
  void unwiredByG(LockedHandoff h) {
    assert onThisM() : "unwiredByG: not on M" + id + "'s G";
    // The G's one entry is in h, so no second forward can come before this M settles h.
    assert h != null && unwiredForward == null : "unwiredByG: M" + id + " has a forward";
    unwiredForward = h;
  }

  /**
   * Settles a forward that its locked M will not take: the entry goes back to the global queue,
   * unless its G is dead, and the P to handoffP, which then starts an M for the entry. Called
   * only by this M.
   */
  private void settleForward(LockedHandoff h) {
    assert Thread.currentThread() == this : "settleForward: not on M" + id;
    if (h.gp.status() != Goroutine.DEAD) {
      runq.globRunqPut(h.gp);
    }
    sched.handoffP(h.pp);
  }

  /** Go's mexit for an M whose locked G ended: the P goes to another M; the thread ends. */
  private void mexit() {
    assert Thread.currentThread() == this : "mexit: not on M" + id;
    if (p != null) {
      sched.handoffP(releaseP());
    }
    sched.mexit(this);
  }

  /** Go's execute plus the post-run half of gopark / goexit0. Called only by this M. */
  private void execute(Goroutine gp, boolean inheritTime) {
    assert Thread.currentThread() == this : "execute: not on M" + id;
    // Before the CAS, which publishes it: a readier that finds the G running reads its M from it
    // (Goroutine.afterRun: 'Readied while running').
    gp.setM(this);
    int dequeue = ++gp.dequeues; // published by the CAS too
    long ran = gp.casRunnableToRunning();
    if (ran < 0) {
      // The entry of a spurious readying (a late stack walker's, of a G mounted in a syscall
      // bracket: 'A spurious submit inside the bracket' in Syscall), left queued when its G
      // ended and was destroyed: nothing to run, and nothing to count (gdestroy did).
      return;
    }
    long stamp = gp.trackingStamp;
    long now = 0; // one clock read for timeToRun and the trace, when both want one
    if (stamp != 0) {
      gp.trackingStamp = 0;
      now = System.nanoTime();
      sched.timeToRun.record(now - stamp);
    }
    CURG.setRelease(this, gp); // no fence: openPHold's release publishes it to sysmon
    Processor pp = p;
    if (!inheritTime) {
      pp.incSchedtick();
      pp.clearPreempt(); // a new time slice (Go clears pp.preempt in schedule)
    } else {
      runnextHits++;
    }
    traceYield = -1;
    // A thread mounted elsewhere, or one that has ended, is a spurious submit (see below): this
    // is no run of it.
    if (Trace.on(Trace.GO_RUN)
        && VirtualThreads.carrier(gp.thread) == null
        && VirtualThreads.state(gp.thread) != VirtualThreads.TERMINATED) {
      long since = gp.traceRunnableSince;
      gp.traceRunnableSince = 0; // a stale stamp after a recording gap must not be read again
      if (now == 0) {
        now = System.nanoTime();
      }
      Trace.runBegin(this, gp, pp, inheritTime, now, since == 0 ? 0 : now - since);
    }
    openPHold();
    try {
      gp.runContinuation.run();
    } catch (Throwable t) {
      // The JDK hands a G's own exceptions to its uncaught-exception handler; anything that
      // reaches here is the JDK's, and the M must survive it.
      System.err.println("gmp4j: M" + id + ": runContinuation of G" + gp.goid + " threw " + t);
      t.printStackTrace();
    }
    // Before the close, with no fence of its own: closePHold's CAS is the full fence that orders
    // it before Preempt.cancel's load below (see curg), and sysmon takes a null curg for a run
    // that is over (HogHandoff.retake).
    CURG.setRelease(this, null);
    int closed = closePHold();
    if (closed == PHold.G && lockedg == null && !spinning) {
      spinEarly(gp); // 'Waiting for JDK threads'
    }
    Preempt.cancel(gp); // a request its G never polled must not outlive the run
    sched.leftWaitingForP(gp); // its wait for a P unmounted it: it was not pinned after all
    long traceStop = 0;
    if (closed == PHold.RETAKEN) {
      Trace.runDrop(this); // sysmon ended and committed the slice it took ('Tracing')
    } else if (traceRunBegin != 0) {
      // Before anyone can ready the G: 'The end of a run' in Trace. 0: dropped, surely short.
      traceStop = Trace.runStopTime(this);
    }
    Object sys = traceSyscall;
    if (sys != null) {
      traceSyscall = null;
      // Only a run inside the bracket ends in the word SYSCALL, and exitsyscall takes the event
      // whenever the run goes on, a spurious submit or not ('Syscall'): so the G parked, or
      // ended, inside the bracket, and the P is sysmon's to retake.
      assert closed == PHold.SYSCALL : "M" + id + ": a GoSyscall open after a run in " + closed;
      Trace.syscallStop(sys);
      Trace.syscallEnd(sys, this, true);
    }
    int js = VirtualThreads.state(gp.thread);
    if (js == VirtualThreads.TERMINATED) {
      if (traceRunBegin != 0) {
        // Readied since this run began: it parked or yielded here, and ran to its end on another
        // M before this one looked (its carrier may be descheduled right after the unmount),
        // whose execute set gp.m before the run that ended it; or it was readied while it ran
        // ('Readied while running' in Goroutine, SubmitWhileRunningTest), or a spurious readying
        // left an entry of it queued (in a syscall bracket) and no M has taken that entry yet:
        // gp.m is still this M, and this run was its last. An M that took the entry before this
        // read reports its run as block, as before.
        boolean exited = !gp.readiedSince(ran) || gp.m == this;
        Trace.runEnd(
            this,
            gp,
            ran,
            exited ? Trace.END_EXIT : traceYield < 0 ? Trace.END_BLOCK : traceYield,
            "",
            traceStop);
      }
      sched.gdestroy(gp);
      if (lockedg == gp) {
        // The goroutine may have locked this thread because it put it in an unusual state.
        // Kill it rather than returning it to the thread pool (Go's goexit0).
        assert unwiredForward == null : "execute: M" + id + " holds a forward and a locked G";
        unwiredForward = unwireLocked(gp); // settled below, with the unlocks' forwards
        exiting = true;
      }
    } else if (VirtualThreads.carrier(gp.thread) instanceof Machine other && other != this) {
      // It runs on another M. Mostly it yielded here and that M took it at once: that M wrote
      // gp.m before its dequeue, and its afterRun settles its run. Else this was a second entry of
      // the G, dequeued while the G ran there (none since 'Submits that ready nothing' in Sched;
      // the white-box tests make one with readyUnlooked), and the status word is this M's: name
      // that M for its afterRun, and if the thread has left it since (its afterRun may have
      // looked first and left the G), settle the run for it, unless someone dequeued the G since.
      if (gp.casM(this, other) && VirtualThreads.carrier(gp.thread) != other) {
        int after = gp.afterRun(ran, other, dequeue);
        if (after == Goroutine.WAITING) {
          gp.parked(WaitReasons.of(gp, VirtualThreads.state(gp.thread)), sched.coarseNow);
        } else if (after == Goroutine.RUNNABLE) {
          sched.readyAfterRun(this, gp);
        }
      }
      if (traceRunBegin != 0) {
        // It did run here (it was not mounted when we began): it parked or yielded, and the
        // other M took it at once.
        Trace.runEnd(this, gp, ran, traceYield < 0 ? Trace.END_BLOCK : traceYield, "", traceStop);
      }
    } else {
      int after = gp.afterRun(ran, this);
      if (after == Goroutine.WAITING) {
        gp.parked(WaitReasons.of(gp, js), sched.coarseNow);
      }
      if (traceRunBegin != 0) {
        // Waiting: it parked. Otherwise readied meanwhile: it yielded, or it parked and was woken
        // before we looked (queued below, or by the yield's submit).
        Trace.runEnd(
            this,
            gp,
            ran,
            traceYield < 0 ? Trace.END_BLOCK : traceYield,
            after == Goroutine.WAITING ? gp.waitReason() : "",
            traceStop);
      }
      if (after == Goroutine.RUNNABLE) {
        sched.readyAfterRun(this, gp); // after the GoRun: the unblock follows the run's end
      }
    }
    LockedHandoff h = unwiredForward;
    if (h != null) {
      unwiredForward = null;
      settleForward(h);
    }
    if (tracePendingCount != 0) {
      Trace.flush(this);
    }
  }

  /**
   * Ends a runnext chain whose shared slice ran out: {@code gp}, just taken from runnext, goes to
   * the global queue's tail, where gopreempt_m puts a preempted G, and the caller picks again, so
   * the next G starts a new slice. Go catches the chain's running G with a signal; a G here can
   * only be caught at a poll, and a chain's G often parks before it reaches one (or has none), so
   * the M catches the chain between two of its Gs instead. Called only by this M, in
   * findRunnable.
   */
  private void endRunnextChain(Goroutine gp) {
    assert Thread.currentThread() == this : "endRunnextChain: not on M" + id;
    runq.globRunqPut(gp);
  }

  /**
   * Go's findRunnable: the next G to run, or parks until there is one. Sets {@link
   * #inheritTime}. Returns null only when this M must exit (stopM: idle too long), holding no P.
   * Called only by this M, holding a P.
   */
  private Goroutine findRunnable() {
    assert Thread.currentThread() == this : "findRunnable: not on M" + id;
    foundJdkWake = false;
    top:
    for (; ; ) {
      Processor pp = p;
      if (sched.gcwaiting) {
        if (!gcstopM()) {
          return null;
        }
        continue;
      }
      inheritTime = false;
      // Go: pp.timers.check. Runs due timers; this can make Gs ready, into pp's runnext. One
      // volatile load when pp has no timers: see 'Timers on the P' in Timers. One clock read
      // for both checks, none while no timer waits anywhere, and none while every waiting timer
      // is far off ('Far timers skip the clock' in Timers).
      long now = pp.timers.clockForCheck();
      boolean timersRan = false; // 'A timer-woken G ends no chain'
      if (now != 0) {
        timersRan = pp.timers.checkTimers(now, true);
        // Beyond Go: the due timers of the other Ps too ('Overdue timers on running Ps').
        timersRan |= sched.timerSleeper.checkOverdue(pp, now);
      }
      // Check the global runnable queue once in a while to ensure fairness. Otherwise two
      // goroutines can completely occupy the local runqueue by constantly respawning each
      // other.
      if ((pp.schedtick() % 61 == 0 || pp.fairnessOwed) && runq.runqsize() > 0) {
        if (timersRan && !pp.fairnessOwed && pp.hasRunnext()) {
          // Beyond Go, 'A timer-woken G before the fairness check': the G a timer just woke
          // into runnext runs first, and the global queue's G comes at the next schedule, once.
          // Else, beside CPU-bound Gs, one sleep in 61 waits a whole slice behind it.
          pp.fairnessOwed = true;
        } else {
          pp.fairnessOwed = false;
          Goroutine gp;
          sched.lock.lock();
          try {
            gp = runq.globRunqGet();
          } finally {
            sched.lock.unlock();
          }
          if (gp != null) {
            return gp;
          }
        }
      }
      // Gs that JDK threads (pollers, timers, acceptors) readied go before the local queue, but
      // not every time: see 'Wake-ups from JDK threads' in Sched.
      if (runq.runqwoken() > 0 && pp.schedtick() % 61 != 30) {
        Goroutine gp;
        sched.lock.lock();
        try {
          gp = runq.globRunqGetWoken();
        } finally {
          sched.lock.unlock();
        }
        if (gp != null) {
          if (spunEarly && !foundJdkWake) {
            jdkWakeSpinHits++; // the early spinner was there when the JDK thread came
          }
          foundJdkWake = spinning;
          return gp;
        }
      }
      Goroutine gp = pp.runqGet();
      if (gp != null) {
        inheritTime = pp.lastGetInheritsTime();
        if (inheritTime && pp.preempt) {
          if (timersRan) {
            // 'A timer-woken G ends no chain' (Preempt, step 2): runnext holds the G a timer
            // just woke here, not the chain's next; it starts a new slice. (Should a chain's G
            // be there after all, the timer's G being awake already or sent to the local queue
            // by RANDOMIZE's coin, it gets the new slice: the chain runs one slice longer.)
            inheritTime = false;
            return gp;
          }
          // The slice ran out while a runnext chain shared it: the chain ends here, as if its
          // next G had been preempted at once ('Preemption' in Preempt, step 2).
          endRunnextChain(gp);
          continue;
        }
        return gp;
      }
      if (runq.runqsize() > 0) {
        sched.lock.lock();
        try {
          gp = runq.globRunqGetBatch(pp, Processor.RUNQ_SIZE / 2);
        } finally {
          sched.lock.unlock();
        }
        if (gp != null) {
          return gp;
        }
      }
      // Spinning Ms: steal work from other Ps. Limit the number of spinning Ms to half the
      // number of busy Ps. This is necessary to prevent excessive CPU consumption when
      // GOMAXPROCS>>1 but the program parallelism is low.
      if (spinning || 2 * sched.nmspinning.get() < sched.gomaxprocs - sched.npidle) {
        if (!spinning) {
          becomeSpinning();
        }
        gp = stealWork(pp);
        if (gp != null) {
          return gp;
        }
        if (sched.gcwaiting || spinForJdkThreads(pp)) {
          continue;
        }
      }

      // We have nothing to do. Snapshot allp before dropping the P: once it is dropped a
      // procresize may replace it.
      Processor[] allpSnapshot = sched.allp;
      sched.lock.lock();
      try {
        if (sched.gcwaiting) {
          continue;
        }
        if (runq.runqsize() > 0) {
          gp = runq.globRunqGetBatch(pp, Processor.RUNQ_SIZE / 2);
          if (gp != null) {
            return gp;
          }
        }
        if (!spinning && sched.needspinning.get() == 1) {
          // See "Delicate dance" below.
          becomeSpinning();
          continue;
        }
        if (releaseP() != pp) {
          throw new InternalError("findRunnable: wrong p");
        }
        sched.pidleput(pp);
      } finally {
        sched.lock.unlock();
      }

      // Delicate dance: thread transitions from spinning to non-spinning state, potentially
      // concurrently with submission of new work. We must drop nmspinning first and then check
      // all sources again (with a full fence in between). If we do it the other way around,
      // another thread can submit work after we've checked all sources but before we drop
      // nmspinning; as a result nobody will unpark a thread to run the work.
      foundJdkWake = false; // the dance's own finds are not JDK wake-ups
      if (spinning) {
        spinning = false;
        spunEarly = false;
        if (sched.nmspinning.decrementAndGet() < 0) { // full fence
          throw new InternalError("findRunnable: negative nmspinning");
        }
        // Note the for correctness, only the last M transitioning from spinning to
        // non-spinning must perform these rechecks; all of them do, as in Go.
        if (runq.runqsize() > 0) {
          sched.lock.lock();
          Processor p2 = null;
          try {
            // Re-check under the lock: another M may have emptied the queue since the racy look.
            if (runq.runqsize() > 0 && (p2 = sched.pidlegetSpinning()) != null) {
              gp = runq.globRunqGetBatch(p2, Processor.RUNQ_SIZE / 2);
              if (gp == null) {
                throw new InternalError("findRunnable: global runq empty with non-zero runqsize");
              }
            }
          } finally {
            sched.lock.unlock();
          }
          if (p2 != null) {
            acquireP(p2);
            becomeSpinning();
            return gp;
          }
        }
        Processor p2 = checkRunqsNoP(allpSnapshot);
        if (p2 != null) {
          acquireP(p2);
          becomeSpinning();
          continue top;
        }
      }
      // Timers on the P: the M that sleeps until the next timer, instead of for good ('Timer
      // sleep' in TimerSleeper). It comes back with an idle P only when a timer is due.
      if (timerSleep()) {
        continue;
      }
      foundJdkWake = false; // a catch that another M took first
      if (!stopM()) {
        return null;
      }
    }
  }

  /**
   * Go's blocking netpoll until the next timer ('Timer sleep' in {@link TimerSleeper}): returns
   * true holding a P, on which the due timers of every P ran. Called only by this M, holding no
   * P and not spinning.
   */
  private boolean timerSleep() {
    assert Thread.currentThread() == this : "timerSleep: not on M" + id;
    Processor pp = sched.timerSleeper.sleep(this);
    if (pp == null) {
      return false;
    }
    acquireP(pp);
    long now = Timers.nanotime();
    for (Processor p2 : sched.allp) { // stable while we hold a P: procresize needs every P
      p2.timers.checkTimers(now, p2 == pp);
    }
    return true;
  }

  /**
   * Go's stealWork: 4 passes over the other Ps in random order; runnext only on the last pass.
   * Called only by this M, holding {@code pp}.
   */
  private Goroutine stealWork(Processor pp) {
    assert Thread.currentThread() == this : "stealWork: not on M" + id;
    Processor[] allp = sched.allp; // stable while we hold a P: procresize needs every P
    RandomOrder order = sched.stealOrder;
    final int stealTries = 4;
    for (int i = 0; i < stealTries; i++) {
      boolean stealRunNextG = i == stealTries - 1;
      for (RandomOrder.Enum e = order.start(ThreadLocalRandom.current().nextInt());
          !e.done();
          e.next()) {
        if (sched.gcwaiting) {
          return null; // the caller goes back to the top and stops
        }
        Processor p2 = allp[e.position()];
        // Go: steal timers on the last pass, from idle Ps too ('Timers on the P' in Timers).
        // Running them may have readied Gs into our runq (runnext first); run one now.
        if (stealRunNextG && p2 != pp && p2.timers.checkTimers(0, false)) {
          Goroutine gp = pp.runqGet();
          if (gp != null) {
            inheritTime = pp.lastGetInheritsTime();
            return gp;
          }
        }
        // Don't bother to attempt to steal if p2 is idle.
        if (p2 != pp && p2.status() != Processor.IDLE) {
          boolean trace = Trace.on(Trace.RUNQ_STEAL);
          Goroutine next = trace && stealRunNextG ? p2.runnextRacy() : null;
          Goroutine gp = pp.runqSteal(p2, stealRunNextG);
          if (gp != null) {
            steals++;
            int n = 1 + pp.runqSize(); // our ring was empty: findRunnable got nothing there
            stolen += n;
            if (trace) {
              Trace.runqSteal(pp, p2, n, n == 1 && gp == next);
            }
            return gp;
          }
        }
      }
    }
    return null;
  }

  /**
   * Beyond Go: a spinning M that found nothing spins on, holding its P, while a JDK thread may
   * be about to ready a G ('Waiting for JDK threads'). Returns true when work appeared (the
   * caller looks again from the top), false when the spin ended or was not worth starting.
   * Called only by this M, spinning and holding {@code pp}.
   */
  private boolean spinForJdkThreads(Processor pp) {
    assert Thread.currentThread() == this && spinning && p == pp : "spinForJdkThreads: M" + id;
    int puts = runq.wokenPuts();
    if (puts == wokenPutsSeen) {
      return false; // no JDK thread readied a G since this M last spun: Go's spin phase only
    }
    wokenPutsSeen = puts;
    for (int i = 0; i < JDK_WAKE_SPINS; i++) {
      Thread.onSpinWait();
      if (sched.gcwaiting) {
        return true; // gcstopM clears foundJdkWake
      }
      if (runq.runqsize() > 0 || !pp.runqEmpty()) {
        foundJdkWake = true;
        jdkWakeSpinHits++;
        return true;
      }
    }
    return false;
  }

  /**
   * Beyond Go: after a run, become a spinner at once if Go's limit allows one, so that a JDK
   * thread which readies a G while this M is on its way to findRunnable sees a spinner and wakes
   * no other M ('Waiting for JDK threads'). {@code gp}: the G whose run just ended. Called only
   * by this M, holding its P.
   */
  private void spinEarly(Goroutine gp) {
    assert Thread.currentThread() == this && p != null : "spinEarly: M" + id;
    int puts = runq.wokenPuts();
    if (puts == wokenPutsEarly) {
      return; // no JDK thread readied a G since this M last spun early
    }
    wokenPutsEarly = puts;
    // Only an M that would look for work anyway: Go never has a spinner with work of its own,
    // which a G readied while it ran is (its afterRun queues it on this P).
    if (gp.status() != Goroutine.READIED
        && p.runqEmpty()
        && runq.runqsize() == 0
        && 2 * sched.nmspinning.get() < sched.gomaxprocs - sched.npidle) {
      becomeSpinning();
      spunEarly = true;
    }
  }

  /**
   * Go's checkRunqsNoP: after dropping the P, looks for a non-idle P with work; if one exists,
   * returns an idle P to take. Called only by this M, holding no P.
   */
  private Processor checkRunqsNoP(Processor[] allpSnapshot) {
    assert Thread.currentThread() == this : "checkRunqsNoP: not on M" + id;
    for (Processor p2 : allpSnapshot) {
      if (p2.status() != Processor.IDLE && !p2.runqEmpty()) {
        sched.lock.lock();
        try {
          return sched.pidlegetSpinning();
        } finally {
          sched.lock.unlock();
        }
      }
    }
    return null;
  }

  /** Go's m.becomeSpinning. Called only by this M. */
  private void becomeSpinning() {
    assert Thread.currentThread() == this : "becomeSpinning: not on M" + id;
    spinning = true;
    sched.nmspinning.incrementAndGet();
    sched.needspinning.set(0);
  }

  /**
   * Go's resetspinning: the last spinner to find work wakes another. After a G that the spin
   * for JDK threads caught, only if work is left in sight ('Waiting for JDK threads'). Called
   * only by this M.
   */
  private void resetSpinning() {
    assert Thread.currentThread() == this : "resetSpinning: not on M" + id;
    spinning = false;
    if (sched.nmspinning.decrementAndGet() < 0) { // full fence, before the looks below
      throw new InternalError("findRunnable: negative nmspinning");
    }
    spunEarly = false;
    boolean jdkWake = foundJdkWake;
    foundJdkWake = false;
    if (jdkWake && runq.runqsize() == 0 && !localWorkInSight() && !timerNeedsM()) {
      return; // beyond Go: nothing left for another spinner ('Waiting for JDK threads')
    }
    sched.wakeP();
  }

  /**
   * Whether a timer waits with no M asleep for it (TimerSleeper): wakeNetPoller and handoffP
   * leave such a timer to a spinner, so the skipped wake-up must not be the last chance. Racy;
   * the hint is lowered before the adder's fence.
   */
  private boolean timerNeedsM() {
    return sched.timerSleeper.hint() != 0 && sched.timerSleeper.sleeper() == null;
  }

  /**
   * Whether some P's local queue holds a G, which another spinner could steal. Racy, as Go's
   * checkRunqsNoP. Called only by this M, holding a P (allp is stable).
   */
  private boolean localWorkInSight() {
    for (Processor p2 : sched.allp) {
      if (!p2.runqEmpty()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Go's gcstopm: gives the P to a pending stop-the-world and parks. Returns stopM's answer.
   * Called only by this M.
   */
  private boolean gcstopM() {
    assert Thread.currentThread() == this : "gcstopM: not on M" + id;
    foundJdkWake = false;
    if (spinning) {
      spinning = false;
      spunEarly = false;
      if (sched.nmspinning.decrementAndGet() < 0) {
        throw new InternalError("gcstopm: negative nmspinning");
      }
    }
    Processor pp = releaseP();
    pp.setStatus(Processor.GCSTOP, "gcstopM");
    sched.stopOneP();
    return stopM();
  }

  /**
   * Go's stopm: parks on the idle-M list until startM hands this M a P, then acquires it, and
   * returns true. Returns false, holding no P, if the M stayed idle for idlethreadtimeout and
   * took itself off the list: it must exit, and every caller returns up to run(). A return value
   * rather than an Error thrown to run() (before issue 15): no catch in between can swallow it.
   * Called only by this M, holding no P and not spinning.
   */
  private boolean stopM() {
    assert Thread.currentThread() == this : "stopM: not on M" + id;
    if (p != null || spinning) {
      throw new InternalError("stopm: holding p or spinning");
    }
    sched.lock.lock();
    try {
      parked = true; // before the M is visible on the idle list
      sched.mput(this);
    } finally {
      sched.lock.unlock();
    }
    long deadline = System.nanoTime() + sched.idleThreadTimeoutNanos;
    boolean mayExit = true;
    while (parked) {
      if (mayExit) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          if (sched.mremoveIdle(this)) {
            return false; // idle too long: this thread ends (see schedule)
          }
          // A waker took this M meanwhile: it clears parked, then unparks us. Look at parked
          // again before parking: waiting for sched.lock in mremoveIdle may have used up that
          // unpark, and a park now would never return.
          mayExit = false;
          continue;
        }
        LockSupport.parkNanos(this, left);
      } else {
        LockSupport.park(this);
      }
      Thread.interrupted(); // a stale carrier interrupt must not turn this into a busy loop
    }
    Processor pp = nextp;
    nextp = null;
    acquireP(pp);
    return true;
  }

  /**
   * The M half of entersyscall: unwires pp and leaves it in {@code _Psyscall} for sysmon. Called
   * only by this M's G, holding the claim on pp ({@link #tryClaimP}), which becomes
   * PHold.SYSCALL. See 'Syscall'.
   */
  void enterSyscall(Processor pp) {
    assert onThisM() : "entersyscall: not on M" + id + " or its G";
    oldp = pp;
    pp.syscallM = this; // before the status write below, which publishes it to sysmon
    pp.m = null;
    p = null;
    int h = phold; // only this thread writes a busy word
    if (PHold.state(h) != PHold.G_BUSY) {
      throw new InternalError(
          "entersyscall: M" + id + " phold " + PHold.toString(h) + " not claimed");
    }
    setPHoldRelease(h, PHold.with(h, PHold.SYSCALL), "enterSyscall"); // sysmon ignores this M
    pp.setStatus(Processor.SYSCALL, "enterSyscall"); // publishes the unwiring to sysmon's CAS
    if (sched.gcwaiting && pp.casStatus(Processor.SYSCALL, Processor.GCSTOP, "enterSyscall")) {
      pp.syscalltick++; // Go's entersyscallHandleGCWait, which counts it too
      sched.stopOneP();
    }
    sched.wakeSysmon(true);
  }

  /** {@link #exitSyscallFast}: no P; the G must give itself up. */
  static final int EXIT_NO_P = 0;

  /** {@link #exitSyscallFast}: the M holds the P it left, which nobody took meanwhile. */
  static final int EXIT_KEPT_P = 1;

  /**
   * {@link #exitSyscallFast}: the M holds a P again, but lost the one it left during the call
   * (Go's lostP in exitsyscall: {@code oldp != m.p}, or a syscalltick that moved). Either it
   * holds another P, or it took its old one back from another G's syscall: sysmon had handed
   * it off, and the M that got it ran a G that entered a call of its own.
   */
  static final int EXIT_LOST_P = 2;

  /**
   * exitsyscall's fast path: the old P back, if it is in {@code _Psyscall}; returns one of the
   * {@code EXIT_} codes. Called only by this M's G, which must take no lock here (see
   * 'Syscall').
   *
   * <p>As in Go, a P in {@code _Psyscall} is anybody's to take, so the old P may be in another
   * G's syscall by now: sysmon handed it off during ours, the M that got it ran a G that entered
   * a syscall, and our CAS takes it from that call. Go tells the two apart by the M's copy of
   * the P's syscalltick; here the P's {@code syscallM}, the M that left it in {@code _Psyscall},
   * says the same. Go's tracer then writes a ProcSteal for the other call; gmp4j writes nothing
   * for it: that G's own GoSyscall ends with lostP, and our GoRun on the P shows who took it.
   */
  int exitSyscallFast() {
    assert onThisM() : "exitsyscall: not on M" + id + " or its G";
    Processor pp = oldp;
    oldp = null;
    if (p != null) {
      // Holds a P already (got one back inside the bracket): the old one stays _Psyscall for
      // sysmon, which retakes it at its next cycle, and must not be acquired on top.
      return EXIT_LOST_P;
    }
    if (pp != null
        && pp.status() == Processor.SYSCALL
        && pp.casStatus(Processor.SYSCALL, Processor.IDLE, "exitSyscallFast")) {
      // After the CAS: the status write that our CAS read published the M that wrote it.
      boolean retook = pp.syscallM != this;
      acquireP(pp);
      pp.syscalltick++; // its owner's write: this M, since the CAS
      traceRunResumes(pp);
      reopenPHold("exitSyscallFast");
      return retook ? EXIT_LOST_P : EXIT_KEPT_P;
    }
    return EXIT_NO_P;
  }

  /**
   * For a G whose M lost its P (a syscall that sysmon handed off, or a retake): takes an idle P,
   * if any, and makes the G its holder again. Returns whether the G holds a P now. Called only by
   * this M's running G, or by this M inside the G's run (the JDK's carrier-side code), right
   * after it saw {@link #lostP} on the M it runs on. See 'Hog hand-off' in {@link HogHandoff}.
   *
   * <p>{@code mayBlock}: whether the caller may wait for sched.lock. Only a caller that cannot
   * unmount may (the carrier's code, or a G inside the JDK's pinned submit): a G that parked on
   * the lock could come back on another M and would then wire the P to this one, which has
   * moved on. A G calling from its own code takes the lock only if it is free.
   */
  boolean tryReacquireP(boolean mayBlock) {
    assert onThisM() : "tryReacquireP: not on M" + id + " or its G";
    int h = phold;
    int st = PHold.state(h);
    if (st != PHold.RETAKEN && st != PHold.SYSCALL) {
      // Only the G (or its carrier's code, in its run) takes the word out of these two states
      // during a run, and the caller saw one of them on the M it runs on with no park since. So
      // the word is G: the caller holds m.p, and there is nothing to reacquire. (SCHED or
      // G_BUSY would mean a caller on an M it left: 'Reacquire after an unmount' in PHold.)
      assert st == PHold.G : "tryReacquireP: M" + id + " phold " + PHold.toString(h);
      return true;
    }
    // After a retake sysmon clears m.p too, but perhaps not yet: its CAS from the P it took
    // fails once this write lands, and it cannot meet that P here again before it hands it off.
    p = null;
    if (!tryAcquireIdleP(mayBlock)) {
      return false;
    }
    traceRunResumes(p);
    reopenPHold("tryReacquireP");
    return true;
  }

  /**
   * A new GoRun slice for the running G, which got P {@code pp} back without unmounting; before
   * the phold release that opens it to sysmon. Called only by this M's running G.
   */
  private void traceRunResumes(Processor pp) {
    assert onThisM() : "traceRunResumes: not on M" + id + " or its G";
    Goroutine gp = curg;
    if (gp != null && Trace.on(Trace.GO_RUN)) {
      Trace.runBegin(this, gp, pp, false, System.nanoTime(), 0);
    }
  }

  /**
   * Takes an idle P, if any, for this M; without {@code mayBlock}, only if sched.lock is free.
   * Called only by this M or its G.
   */
  private boolean tryAcquireIdleP(boolean mayBlock) {
    assert onThisM() : "tryAcquireIdleP: not on M" + id + " or its G";
    Processor pp;
    if (mayBlock) {
      sched.lock.lock();
    } else if (!sched.lock.tryLock()) {
      return false;
    }
    try {
      pp = sched.gcwaiting ? null : sched.pidleget();
    } finally {
      sched.lock.unlock();
    }
    if (pp == null) {
      return false;
    }
    acquireP(pp);
    return true;
  }

  // ------------------------------------------------------------------------------------------
  // The hold on m.p while a G runs: see 'The phold word' in PHold.

  /**
   * The one release store of the phold word: {@code h → next}, an edge of 'The phold word'
   * taken by function {@code fn} (checked under assert). Called only by this M's own thread
   * (the M, or the G mounted on it), which alone writes the word out of G_BUSY, SCHED, SYSCALL
   * and RETAKEN.
   */
  private void setPHoldRelease(int h, int next, String fn) {
    assert PHold.check(fn, this, h, next);
    PHOLD.setRelease(this, next);
  }

  /**
   * The one CAS of the phold word: {@code h → next}, an edge of 'The phold word' taken by
   * function {@code fn} (checked under assert). Full fence. Any thread (sysmon's tryRetakeP).
   */
  private boolean casPHold(int h, int next, String fn) {
    assert PHold.check(fn, this, h, next);
    return PHOLD.compareAndSet(this, h, next);
  }

  /** SCHED → G with a new run number, before a run. Called only by this M. */
  private void openPHold() {
    assert Thread.currentThread() == this : "openPHold: not on M" + id;
    int h = phold; // only this M writes a SCHED word
    if (PHold.state(h) != PHold.SCHED) {
      throw new InternalError("execute: M" + id + " phold " + PHold.toString(h) + " not closed");
    }
    // Release: curg, gp.m and p, written above, are what sysmon reads after its acquire.
    setPHoldRelease(h, PHold.nextRun(h, PHold.G), "openPHold");
  }

  /**
   * A new run number with G, after the G got a P back ({@code fn}: exitSyscallFast,
   * tryReacquireP). Called only by this M's G, which owns the word in SYSCALL and RETAKEN.
   */
  private void reopenPHold(String fn) {
    assert onThisM() : "reopenPHold: not on M" + id + " or its G";
    int h = phold;
    setPHoldRelease(h, PHold.nextRun(h, PHold.G), fn); // after acquireP
  }

  /**
   * Any state → PHold.SCHED, after a run; returns the state it closed. If sysmon retook the P
   * meanwhile, this M has none and its scheduler stops it (as after a syscall that outlived its
   * P). Called only by this M.
   */
  private int closePHold() {
    assert Thread.currentThread() == this : "closePHold: not on M" + id;
    for (; ; ) {
      int h = phold;
      int st = PHold.state(h);
      if (st == PHold.SCHED || st == PHold.G_BUSY) {
        throw new InternalError(
            "execute: M" + id + " phold " + PHold.toString(h) + " after the run");
      }
      // The run number stays: sysmon tells runs apart by it. Full fence, pairs with sysmon's CAS
      // in tryRetakeP: one of the two fails.
      if (casPHold(h, PHold.with(h, PHold.SCHED), "closePHold")) {
        if (st == PHold.RETAKEN) {
          p = null; // sysmon may not have cleared it yet: see tryReacquireP
        }
        return st; // SYSCALL: the G parked inside a bracket, and p is null already
      }
    }
  }

  /**
   * The claim: returns this M's P for one operation on it, or null if the running G has none
   * (it is in a syscall, or sysmon retook the P). A non-null result must be given back with
   * {@link #unclaimP}. With {@code reacquire}, a G whose P was retaken first tries to take an
   * idle P (Go's exitsyscall slow path). Called only by this M's running G, or by this M (inside
   * the run, or in its own scheduler code, where it holds the P outright).
   */
  Processor tryClaimP(boolean reacquire) {
    assert onThisM() : "tryClaimP: not on M" + id + " or its G";
    for (; ; ) {
      int h = phold;
      switch (PHold.state(h)) {
        case PHold.G -> {
          // Full fence: after it, a sysmon that has not retaken the P cannot any more.
          if (casPHold(h, PHold.with(h, PHold.G_BUSY), "tryClaimP")) {
            return p;
          }
          // sysmon retook it just now: look again
        }
        case PHold.SCHED -> {
          return p; // the M's own code: sysmon never takes a P from it
        }
        case PHold.RETAKEN -> {
          if (!reacquire || sched.npidle == 0 || !tryReacquireP(true)) {
            return null;
          }
        }
        case PHold.SYSCALL -> {
          return null;
        }
        default ->
            throw new InternalError(
                "tryClaimP: M" + id + " phold " + PHold.toString(h) + " is busy");
      }
    }
  }

  /** Gives back a claim that {@link #tryClaimP} granted. Same callers. */
  void unclaimP() {
    assert onThisM() : "unclaimP: not on M" + id + " or its G";
    int h = phold; // only this thread writes a busy word
    if (PHold.state(h) == PHold.G_BUSY) {
      // Release: the P operation happens-before sysmon's CAS that retakes the P.
      setPHoldRelease(h, PHold.with(h, PHold.G), "unclaimP");
    }
  }

  /**
   * Whether this M's running G has lost its P (in a syscall, or retaken). Exact for the running
   * G itself; racy for other readers (metrics).
   */
  boolean lostP() {
    int st = PHold.state(phold);
    return st == PHold.RETAKEN || st == PHold.SYSCALL;
  }

  /**
   * Whether the run of this M's G is still the one that entered a syscall: its word is in
   * PHold.SYSCALL, which only the G (exitsyscall) or the end of the run changes ('A spurious
   * submit inside the bracket' in Syscall). Called only by this M's running G, for which it is
   * exact.
   */
  boolean inSyscallRun() {
    assert onThisM() : "inSyscallRun: not on M" + id + " or its G";
    return PHold.state(phold) == PHold.SYSCALL;
  }

  /** The phold word, for sysmon's observation. Any thread. */
  int phold() {
    return phold; // pairs with the setRelease in openPHold
  }

  /**
   * sysmon's retake of pp from this M's running G: the CAS (run, G) → (run, RETAKEN), with
   * {@code run} from {@link PHold#run}, which fails if the run ended or the G is inside a P
   * operation; then m.p is
   * cleared. On success the caller owns pp, still marked running and wired to this M, and must
   * hand it off. Called only by sysmon.
   */
  boolean tryRetakeP(int run, Processor pp) {
    assert !onThisM() : "tryRetakeP: M" + id + " retaking its own P";
    // Full fence: pairs with closePHold's and tryClaimP's CASes; one of each pair fails.
    if (!casPHold(PHold.with(run, PHold.G), PHold.with(run, PHold.RETAKEN), "tryRetakeP")) {
      return false;
    }
    P.compareAndSet(this, pp, null); // fails if the victim cleared it first: see tryReacquireP
    return true;
  }

  /** Go's notewakeup half of startm. Called by Sched.startM after taking this M off the list. */
  void wake(Processor pp, boolean spinning) {
    this.spinning = spinning;
    this.nextp = pp;
    parked = false; // publishes nextp and spinning; pairs with the read in stopM
    LockSupport.unpark(this);
  }

  /**
   * Go's acquirep/wirep, and the waker's half of 'Deep sleep' in {@link Sysmon}: every P that
   * leaves the idle list comes through here, whoever took it (startM's waker, the M's own
   * re-check in findRunnable, exitsyscall, a G whose P was retaken). Called only by this M or
   * its G.
   */
  private void acquireP(Processor pp) {
    assert onThisM() : "acquireP: not on M" + id + " or its G";
    if (p != null || pp.m != null || pp.status() != Processor.IDLE) {
      throw new InternalError("wirep: invalid p state: " + pp + " for M" + id);
    }
    p = pp;
    pp.m = this;
    pp.setStatus(Processor.RUNNING, "acquireP");
    // After the volatile npidle-- in pidleget (or the status write above), a volatile load of
    // sysmonwait: sysmon stores sysmonwait, then loads npidle. One of the two sees the other, so
    // this one load decides, and an acquire while sysmon is awake costs nothing more.
    if (sched.sysmonwait()) {
      // sysmon slept deeply, and coarseNow with it: see Sched.coarseNow. Not at every acquire:
      // a clock read here would cost every wake-up, and a moved coarseNow makes the trace read
      // the clock at the end of each slice that spans it ('The slice record' in Trace).
      sched.coarseNow = System.nanoTime();
      // On the G's behalf: the exit of its syscall, or its retaken P taken back (Go's
      // exitsyscall wakes sysmon with syscallWake); the M's own scheduling is other work.
      sched.wakeSysmon(Thread.currentThread() != this);
    }
  }

  /** Go's releasep. Called only by this M. */
  private Processor releaseP() {
    assert Thread.currentThread() == this : "releaseP: not on M" + id;
    Processor pp = p;
    if (pp == null || pp.m != this || pp.status() != Processor.RUNNING) {
      throw new InternalError("releasep: invalid p state: " + pp + " for M" + id);
    }
    pp.m = null;
    pp.setStatus(Processor.IDLE, "releaseP");
    p = null;
    return pp;
  }

  /**
   * Whether the calling thread runs on this M: the M itself, or the virtual thread mounted on
   * it (a G, or the JDK's code around its mount). For the caller-line asserts ("Called only by
   * this M or its G"); never on a production path.
   */
  private boolean onThisM() {
    Thread ct = Thread.currentThread();
    return ct == this || (ct.isVirtual() && VirtualThreads.carrier(ct) == this);
  }

  @Override
  public String toString() {
    Processor pp = p;
    Goroutine g = curg;
    return "M"
        + id
        + "{p="
        + (pp == null ? "nil" : pp.id)
        + " curg="
        + (g == null ? "nil" : g.goid)
        + " phold="
        + PHold.toString(phold)
        + " spinning="
        + spinning
        + " blocked="
        + parked
        + "}";
  }
}
