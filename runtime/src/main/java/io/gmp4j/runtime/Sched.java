package io.gmp4j.runtime;

import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Go's scheduler state ({@code type schedt}, the global {@code sched}) and the operations that
 * span Ps and Ms: readying Gs (ready, newproc), the idle P and M lists, and waking Ms (wakeP,
 * startM, handoffP). The M's own loop is in {@link Machine}; the global run queue is {@link
 * GlobalRunq}; stop-the-world and procresize are {@link StopTheWorld}: one protocol per file,
 * all in this package (see docs/DESIGN.md).
 *
 * <h2>Implementation overview</h2>
 *
 * gmp4j is Go 1.26's proc.go on the JVM. A G is a JDK virtual thread ({@link Goroutine}), an M a
 * platform carrier thread ({@link Machine}), a P a {@link Processor}. Three alternatives were
 * rejected: extending ForkJoinPool (its queues, compensation and parking are not Go's, and the
 * JDK special-cases it in ways we could not follow); a single shared queue with a thread pool
 * (no locality: ping-pong pairs would bounce between carriers); and Kotlin's CoroutineScheduler
 * design (a LIFO slot that only its owner may take, which Tokio found gives 20x pathologies).
 *
 * <h3>Readying a G</h3>
 *
 * The JDK tells us a thread is runnable by calling its scheduler's {@code execute}. Where the G
 * goes follows Go's {@code ready(gp, next=true)}, decided by who calls:
 *
 * <ol>
 *   <li>A G running on one of our Ms (it holds that M's P): that P's runnext, then wakeP. This is
 *       newproc for a new G, and goready for a wake-up (channel hand-off, unlock, unpark).
 *   <li>The M itself, after the G it ran unmounted: if that G yielded ({@code Thread.yield}, i.e.
 *       Gosched or a preemption), the global queue tail, as goschedImpl does; otherwise (a G that
 *       parked and was unparked during the unmount, or a joiner woken by a G's exit) the M's P's
 *       runnext, as goready from that G would.
 *   <li>Any other thread (JDK timer "unparker" threads, the JDK's socket pollers, platform
 *       threads such as a server's acceptor): the global queue, in its wake-up segment, then
 *       wakeP. See 'Wake-ups from JDK threads'.
 * </ol>
 *
 * In cases 1 and 2 the P is used under a claim on the M's {@code phold} word, since sysmon may
 * have retaken it from a G that ignored preemption; a G without a P takes an idle one if there
 * is one, and otherwise readies into the global queue. See 'Hog hand-off' in {@link HogHandoff}.
 *
 * {@code execute} never runs a task inline and never waits for anything but sched.lock.
 *
 * <h3>Submits that ready nothing</h3>
 *
 * ready first looks at the thread: a submit of a thread that is mounted, or whose JDK state is
 * not one that {@code runContinuation} runs (started, unparked, yielded, unblocked), is dropped.
 * The JDK makes every submit right after it put the thread in such a state, unmounted, and only
 * a G's own queue entry can take it out of it; but JDK 25's stack walker (VirtualThread.
 * tryGetStackTrace: Thread.getStackTrace, thread dumps, the agent's look at running classes)
 * submits an unmounted runnable thread once more after walking it, and may do so late, when the
 * thread has run since and is mounted or parked again. Queued, such a submit was a second entry
 * of the G.
 *
 * <p>The look comes between a read of the G's state word and the CAS, which is from that word
 * and looks again if it fails: a thread mounted after the look was dequeued, which moved the
 * word, unless the G was already running (dequeued, not yet mounted) when the word was read. So
 * a readying that passes the look and wins its CAS either finds the G waiting, idle or parked in
 * a syscall bracket, and queues it, or finds it running (maybe mounted by now) and leaves it to
 * its M ('Readied while running' in Goroutine): no G ever has a second entry. readyUnlooked,
 * without the look, is for the white-box tests of the defences that second entries needed.
 *
 * <h3>Wake-ups from JDK threads</h3>
 *
 * In Go the netpoller and the timers are run by the Ms themselves: findRunnable polls the
 * network and runs due timers, so a G woken by I/O lands on the waking M's P. On the JVM the
 * pollers, the timer threads and a server's acceptor are the JDK's threads, with no P. Put at the
 * global queue's tail, such a G waited behind every G that used up its slice there (goschedImpl
 * puts preempted Gs at the tail too) and, since a P drains its local queue before the global
 * one, behind the Gs that a global batch had moved to each P: measured on the JDK's HttpServer
 * at 2 Ps with 8 CPU-bound handlers (ServersIT), a new handler's G waited p50 58 ms, 6 slices.
 *
 * <ol>
 *   <li>ready queues such a G in the wake-up segment at the head of the global queue
 *       (globRunqPutWoken): after the Gs already there, FIFO, ahead of the Gs queued at the tail.
 *   <li>findRunnable takes from that segment before the P's own queue (runnext included), except
 *       at schedtick % 61 == 30.
 * </ol>
 *
 * With it the same G waits p50 4 ms (the rest of the current slice) and the light requests' p99
 * drops about 5x more. It is still fair: a G gets ahead only once per wake-up, having blocked
 * before its slice ran out, and if it then runs past its slice it is preempted to the tail like
 * any other, so a CPU-bound G cannot use it to keep a P; this is the sleeper's bonus that Go's
 * runnext gives a G woken by another G, for the Gs no G can wake. The one starvation left, a
 * flood of wake-ups that alone keeps every P busy, is bounded as Go bounds the global queue's: a
 * P skips the segment once every 61 schedticks (at 30, away from the global check at 0), so its
 * local queue still runs.
 *
 * <p>"The rest of the current slice" is up to a whole slice beside CPU-bound Gs. While no P is
 * idle, sysmon cuts it: a segment that has waited 1 ms counts as an overdue timer, and the G of
 * the oldest slice is asked to yield ('Overdue wake-ups' in {@link Sysmon}).
 *
 * <h3>Adoption</h3>
 *
 * A virtual thread built by {@link #newBuilder} starts with {@link #adopter} as its scheduler;
 * one created by a G's code without a scheduler inherits that G. Either way its first
 * {@code execute} carries a task that is not the receiving G's own. {@link #adopt} then makes a
 * G for the thread, makes that G the thread's scheduler (VirtualThreads.setScheduler), counts it
 * (newproc1) and readies it. So every virtual thread that a G creates runs on gmp4j.
 *
 * <h3>Spinning ("Worker thread parking/unparking" in proc.go)</h3>
 *
 * An M is spinning while it holds a P and looks for work. wakeP starts an M only if there is an
 * idle P and no spinning M; at most half the busy Ps may spin ({@code 2*nmspinning <
 * gomaxprocs-npidle}); the last spinner to find work wakes another (resetSpinning). The
 * "Delicate dance": a spinner that gives up first drops nmspinning, then (after a full fence)
 * checks every queue again; a submitter first publishes work, then (after a full fence, which
 * runnext's CAS and the global queue's volatile runqsize already are: {@link #wakeP(boolean)})
 * checks nmspinning. One of the two always sees the other.
 *
 * <h3>Stop-the-world and procresize</h3>
 *
 * {@code gomaxprocs(n)} stops the world as Go does, and procresize makes the new Ps:
 * 'Stop-the-world' in {@link StopTheWorld}.
 *
 * <h3>Locks</h3>
 *
 * One lock, sched.lock, as in Go: the global queue, the idle lists, stopwait and procresize. It
 * is never held while a G's code runs or while anything parks except on the lock itself.
 */
public final class Sched {
  /** Go's randomizeScheduler (on with -race): perturbs run-queue order to flush out order bugs. */
  static final boolean RANDOMIZE = Boolean.getBoolean("gmp.randomizeScheduler");

  /** Go's sched.maxmcount: the thread limit (setMaxThreads, option maxthreads). Racy reads. */
  volatile int maxmcount = 10000;

  /** Option maxthreads.exceeded=queue: past the limit, start no M instead of dying. */
  volatile boolean queueOnThreadLimit;

  /** How long an idle M waits before it exits (option idlethreadtimeout). */
  volatile long idleThreadTimeoutNanos = 30_000_000_000L;

  /** Ms parked with a locked G (Go's nmidlelocked), for schedtrace. */
  final AtomicInteger nmidlelocked = new AtomicInteger();

  private static volatile Sched instance;

  final SchedLock lock = new SchedLock();

  /** Makes the Gs of threads built by {@link #newBuilder}; see 'Adoption'. */
  final Executor adopter = this::adopt;

  /** Go's sched.runq: see {@link GlobalRunq}. Final. */
  final GlobalRunq runq = new GlobalRunq(this, lock);

  /** Stop-the-world and procresize: see {@link StopTheWorld}. Final. */
  final StopTheWorld stw = new StopTheWorld(this);

  // --- Ps ---
  /** All Ps, indexed by id. Replaced only by procresize during stop-the-world; racy reads. */
  volatile Processor[] allp;

  /** Steal order over allp; replaced together with allp. */
  volatile RandomOrder stealOrder;

  /** Go's gomaxprocs. Written by procresize under lock; racy reads. */
  volatile int gomaxprocs;

  /** Idle-P stack, linked through Processor.link. Under lock. */
  private Processor pidle;

  /** Idle P count. Written under lock; read racily by the spinning cap and wakeP. */
  volatile int npidle;

  // --- Ms ---
  /** Spinning Ms. CAS 0→1 by wakeP; decremented by Ms that stop spinning. Volatile order. */
  final AtomicInteger nmspinning = new AtomicInteger();

  /** Set when wakeP found no idle P: the next M that would drop its P spins instead. */
  final AtomicInteger needspinning = new AtomicInteger();

  /** Idle-M stack, linked through Machine.schedlink. Under lock. */
  private Machine midle;

  /** Idle M count. Written under lock; racy reads by schedtrace. */
  volatile int nmidle;

  /** Next M id; Ms created so far. Under lock. */
  private int mnext;

  /** Ms that exited (Go's nmfreed). Under lock. */
  private int nmfreed;

  /**
   * The per-M counters of the Ms that exited (runnext hits, steals, Gs stolen, JDK wake-ups
   * caught, Gs created), kept so that the metrics' counters never go back when an idle M exits.
   * Written under lock inside an odd {@link #retireSeq}; read by mCounters without the lock.
   */
  private final long[] exitedCounters = new long[5];

  /**
   * A seqlock over an M's retirement (its removal from allm and the add of its counters to
   * exitedCounters): odd while one is under way. Written under lock; read by mCounters, which
   * retries until it saw one even value before and after its sums (readMetrics takes no lock).
   */
  private volatile int retireSeq;

  /** Every live M, newest first (Go's allm). Written under lock; readers iterate a snapshot. */
  final java.util.concurrent.CopyOnWriteArrayList<Machine> allm =
      new java.util.concurrent.CopyOnWriteArrayList<>();

  // --- stop-the-world ---
  /** Go's sched.gcwaiting: a stop-the-world wants every P. Written under lock; racy reads. */
  volatile boolean gcwaiting;

  /**
   * Ps still to stop. Set under lock by stopTheWorld; decremented atomically by whoever stops a
   * P (gcstopm, handoffp, and entersyscall, which runs on a G and so must not take sched.lock:
   * a contended lock would unmount the G in the middle of the protocol).
   */
  final AtomicInteger stopwait = new AtomicInteger();

  /** Released by the M that stops the last P. */
  final Semaphore stopnote = new Semaphore(0);

  // --- Gs ---
  /** Live Gs (Go's allgs, without the dead). Any thread; see {@link AllGs}. */
  final AllGs allgs = new AllGs();

  /**
   * Gs pinned on an M that lost its P, waiting for an idle one in Syscall.reacquireIfPinned
   * ('Pinned waiters first' in handoffP). Incremented by those Gs, decremented by them or by
   * their M (Goroutine.waitingForP); read by handoffP. Atomic: the two halves of a Dekker pair
   * with npidle (see handoffP).
   */
  final AtomicInteger npinnedwaiting = new AtomicInteger();

  /** Go's sched.ngsys: live system Gs (Goroutine.system), counted in allgs too. Any thread. */
  final AtomicInteger ngsys = new AtomicInteger();

  /**
   * Go's sched.goidgen: the last goid handed out. A G's code takes goids from its M's batch
   * ({@link Machine#newGoid}), {@link #GOID_CACHE_BATCH} at a time; any other thread takes one.
   * So goids are unique but, across Ms, not in creation order, as in Go. Any thread; atomic.
   */
  final AtomicLong goidgen = new AtomicLong();

  /** Go's _GoidCacheBatch: goids an M takes from goidgen at once. */
  static final int GOID_CACHE_BATCH = 16;

  /**
   * Go's goroutinesCreated, for the Gs that threads other than our Gs create (platform threads,
   * another scheduler's Gs); the Gs our Gs create are counted per M ({@link Machine#newGoid},
   * summed by mCounters), as Go counts them per P. Any thread.
   */
  final LongAdder goroutinesCreatedOutside = new LongAdder();

  /** Go's sched.timeToRun: /sched/latencies:seconds. */
  final TimeHistogram timeToRun = new TimeHistogram();

  /** STW pauses: /sched/pauses/stopping/other and /sched/pauses/total/other. */
  final TimeHistogram stwStopping = new TimeHistogram();

  final TimeHistogram stwTotal = new TimeHistogram();

  /** GOMAXPROCS changes (gmp4j extra metric). */
  final LongAdder gomaxprocsChanges = new LongAdder();

  /** Preemption requests made by sysmon, and those the G's poll honoured (extra metrics). */
  final LongAdder preemptRequested = new LongAdder();

  final LongAdder preemptHonored = new LongAdder();

  /** Times sysmon found a slice overrun (extra metric); Go's retake preemptone calls. */
  final LongAdder timesliceOverruns = new LongAdder();

  /** Ps handed off from syscalls (extra metric). */
  final LongAdder syscallHandoffs = new LongAdder();

  /** Ps retaken from Gs that ignored preemption and handed off (extra metric; HogHandoff). */
  final LongAdder preemptHandoffs = new LongAdder();

  /** Gs in a syscall: /sched/goroutines/not-in-go (Go's nGsyscallNoP, plus those with a P). */
  final LongAdder nGsyscall = new LongAdder();

  /** Go's sched.customGOMAXPROCS: the user chose GOMAXPROCS, so sysmon does not follow CPUs. */
  volatile boolean customGomaxprocs;

  // --- timers: 'Timers on the P' in Timers ---
  /** The M that sleeps until the next timer: 'Timer sleep' in {@link TimerSleeper}. Final. */
  final TimerSleeper timerSleeper = new TimerSleeper(this);

  /**
   * Option {@code timers}: true (p, the default) puts the timeouts of Gs' timed parks on the Ps'
   * heaps (with the agent); false (jdk) leaves them on the JDK's timer threads. Set once by
   * init; read by Hooks.schedule.
   */
  volatile boolean timersOnP = true;

  /** Times sysmon found a timer overdue with a P idle and woke a P (extra counter). */
  final LongAdder overdueTimerWakeups = new LongAdder();

  /**
   * Times sysmon asked a G to yield for an overdue timer or wake-up ('Overdue wake-ups' in
   * Sysmon), no P being idle (extra counter).
   */
  final LongAdder overdueTimerPreempts = new LongAdder();

  /**
   * sysmon, or null for a scheduler that has none (white-box tests). Set once, before the first
   * G or M starts (which publishes it).
   */
  private Sysmon sysmon;

  /**
   * Go's runtimeInitTime: when this scheduler was made (nanoTime), which schedtrace's {@code
   * SCHED <n>ms} counts from. Final.
   */
  final long initTime = System.nanoTime();

  /**
   * A nanoTime clock at sysmon's resolution, for stamps that need no better than 10 ms (a G's
   * waitSince, written at every park, where a clock read would cost a tenth of the park). Go
   * keeps waitsince as coarse: the GC stamps it at first sight. Written by sysmon every cycle
   * (at most 10 ms apart while any P runs, since it sleeps only when every P is idle) and by
   * Machine.acquireP (an M that starts running a P after sysmon's deep sleep); plain volatile
   * reads by anyone.
   */
  volatile long coarseNow = initTime;

  /**
   * The ForkJoinPool that every M, a ForkJoinWorkerThread, names as its pool, and that never
   * runs a task: its factory makes no thread ('No spin in j.u.c without the agent' in Machine).
   * Final.
   */
  final ForkJoinPool noSpinPool = new ForkJoinPool(1, pool -> null, null, false);

  Sched(int nprocs) {
    lock.lock();
    try {
      stw.procresize(nprocs);
    } finally {
      lock.unlock();
    }
  }

  /** The process-wide scheduler, created on first use. Throws if gmp4j cannot run here. */
  public static Sched get() {
    Sched s = instance;
    return s != null ? s : init();
  }

  private static synchronized Sched init() {
    if (instance == null) {
      VirtualThreads.checkAvailable();
      Sched s = new Sched(Config.gomaxprocs());
      s.customGomaxprocs = Config.customGomaxprocs();
      s.maxmcount = Config.maxThreads();
      s.queueOnThreadLimit = Config.queueOnThreadLimit();
      s.idleThreadTimeoutNanos = Config.idleThreadTimeoutNanos();
      s.timersOnP = Config.timersOnP();
      s.startSysmon(
          Config.timesliceNanos(),
          Config.handoffNanos(),
          Config.schedtraceMillis(),
          Config.scheddetail(),
          Config.updateMaxProcs());
      Trace.install(s);
      instance = s;
    }
    return instance;
  }

  /**
   * Starts this scheduler's sysmon (Go's newm(sysmon) in schedinit's caller). Called once, before
   * the first G: by {@link #get} for the process-wide scheduler, and by white-box tests for a
   * scheduler of their own.
   */
  void startSysmon(
      long forcePreemptNs,
      long handoffNs,
      int schedtraceMs,
      boolean scheddetail,
      boolean followCpuLimit) {
    if (sysmon != null) {
      throw new InternalError("startSysmon: sysmon already running");
    }
    sysmon = new Sysmon(this, forcePreemptNs, handoffNs, schedtraceMs, scheddetail, followCpuLimit);
    sysmon.start();
  }

  /** This scheduler's sysmon, or null (white-box tests); for {@link LiveOptions}. Any thread. */
  Sysmon sysmon() {
    return sysmon;
  }

  /** A builder of virtual threads that run on this scheduler. Any thread. */
  public Thread.Builder.OfVirtual newBuilder() {
    return VirtualThreads.newBuilder(adopter);
  }

  // ------------------------------------------------------------------------------------------
  // Readying Gs

  /** Go's newproc for a thread seen for the first time; see 'Adoption'. Any thread. */
  void adopt(Runnable task) {
    Thread vthread = VirtualThreads.threadOf(task);
    Thread ct = Thread.currentThread();
    long goid;
    if (ct.isVirtual()
        && VirtualThreads.carrier(ct) instanceof Machine mp // exact: ct itself asks
        && mp.sched == this) {
      goid = mp.newGoid(); // counts the creation too
    } else {
      goid = goidgen.incrementAndGet();
      goroutinesCreatedOutside.increment();
    }
    Goroutine gp = new Goroutine(this, goid, vthread, task);
    VirtualThreads.setScheduler(vthread, gp);
    allgs.add(gp);
    if (gp.system) {
      ngsys.incrementAndGet();
    }
    if (Trace.on(Trace.GO_CREATE)) {
      Trace.goCreate(gp);
    }
    ready(gp);
  }

  /** Go's ready: see 'Readying a G'. Any thread; never blocks but on sched.lock. */
  void ready(Goroutine gp) {
    Thread vthread = gp.thread;
    Thread ct = Thread.currentThread();
    Machine mt = ct instanceof Machine m ? m : null;
    int was;
    boolean yielded;
    do {
      // The word before the look, and the CAS from that word: 'Submits that ready nothing'.
      long s = gp.word();
      int js = VirtualThreads.state(vthread);
      if (VirtualThreads.carrier(vthread) != null || !VirtualThreads.runnable(js)) {
        return;
      }
      // The M's own G's Thread.yield, submitted on the carrier after the unmount: Go's GoStop.
      yielded = mt != null && mt.sched == this && mt.curg == gp && js == VirtualThreads.YIELDED;
      was = gp.casToRunnable(s, yielded);
    } while (was == Goroutine.LOST);
    readied(gp, was, yielded, mt, ct, -1);
  }

  /**
   * A readying without ready's look at the thread, for the white-box tests of the defences
   * against a second entry of a G that runs (LockOSThread's 'Forwarding', 'A spurious submit
   * inside the bracket' in Syscall): since 'Submits that ready nothing', no JDK submit makes
   * one. Any thread.
   */
  void readyUnlooked(Goroutine gp) {
    Thread ct = Thread.currentThread();
    readied(gp, gp.casToRunnable(false), false, ct instanceof Machine m ? m : null, ct, -1);
  }

  /**
   * The rest of ready, after its CAS answered {@code was}, on the readier's thread {@code ct}
   * ({@code mt} if an M); {@code byGoid} names the readier in the trace, -1 for the caller's G.
   */
  private void readied(Goroutine gp, int was, boolean yielded, Machine mt, Thread ct, long byGoid) {
    if (was < 0) {
      return; // already queued: the queued entry will run it
    }
    if (!yielded && (was == Goroutine.RUNNING || was == Goroutine.READIED)) {
      return; // its M queues it after the run, or finds it parked: 'Readied while running'
    }
    if (was == Goroutine.SYSCALL) {
      nGsyscall.decrement(); // it parked inside a syscall bracket; its P was left for sysmon
    }
    long now = 0; // one clock read for the tracking stamp and the trace, when both want one
    if ((gp.trackingSeq++ & 7) == 0) {
      now = System.nanoTime();
      gp.trackingStamp = now;
    }
    if (Trace.on(Trace.GO_RUN)) {
      if (now == 0 && (yielded || !Trace.latencySampled())) {
        now = System.nanoTime(); // else 0: this readying's latency is not measured
      }
      gp.traceRunnableSince = now;
      if (yielded) {
        Trace.runStoppedBy(gp, now); // its M is not back yet: 'The end of a run' in Trace
      }
    }
    Machine mp = null;
    boolean reacquire = true;
    boolean outside = false; // case 3 of 'Readying a G'
    if (mt != null) {
      if (mt.sched != this) {
        outside = true; // another scheduler's M (white-box tests): a platform thread to us
      } else if (!yielded) {
        mp = mt; // not a yield: the M's P (the JDK's carrier-side code, inside the run)
      } else {
        mt.traceYield = gp.tracePreempted ? Trace.END_PREEMPTED : Trace.END_GOSCHED;
      }
    } else if (ct.isVirtual()
        && VirtualThreads.scheduler(ct) instanceof Goroutine cur
        && cur.sched == this) {
      mp = cur.runningM();
      // A G without a P inside a syscall bracket takes no idle P: it is about to block, and a P
      // it held there would not be _Psyscall, so sysmon could not hand it off at once.
      reacquire = cur.syscallDepth == 0;
    } else {
      outside = true;
    }
    // The P is the running G's only under a claim: sysmon may have retaken it ('Hog hand-off').
    Processor pp = mp == null ? null : mp.tryClaimP(reacquire);
    boolean toRunnext = false;
    boolean fenced = false; // gp published by a volatile write: see wakeP(boolean)
    // Timed before the put: once queued, the G may run on another M before this line returns.
    Object unblock =
        !yielded && was != Goroutine.IDLE && Trace.on(Trace.GO_UNBLOCK)
            ? Trace.unblockBegin(gp, now, byGoid < 0 ? Trace.currentGoid() : byGoid)
            : null;
    if (pp == null) {
      if (outside) {
        // case 3: see 'Wake-ups from JDK threads'; sysmon wakes for it ('Overdue wake-ups')
        long started = runq.globRunqPutWoken(gp);
        if (started != 0 && npidle == 0 && sysmon != null) {
          sysmon.timerAdded(started);
        }
      } else {
        runq.globRunqPut(gp);
      }
      fenced = true; // by the put's volatile write of runqsize, which a spinner reads last
    } else {
      try {
        fenced = pp.runqPut(gp, true);
        // for the trace only: not under Sched.RANDOMIZE's coin, or kicked out
        toRunnext = unblock != null && pp.runnextIs(gp);
      } finally {
        mp.unclaimP();
      }
    }
    if (unblock != null) {
      Trace.unblockCommit(unblock, pp == null ? "global" : toRunnext ? "runnext" : "local");
    }
    wakeP(fenced);
  }

  /**
   * Queues gp, readied while it ran on mp and found runnable after the run ('Readied while
   * running' in Goroutine): on mp's P's runnext, as case 2 of 'Readying a G' puts a G woken
   * during its M's unmount, or on the global queue if the run lost the P (a retake, or a park
   * inside a syscall bracket). The GoUnblock names the readier but is mp's, at mp's time: the
   * readying may have come before this run began (a stale walker's, its thread suspended when
   * the run tried to mount it), and the G's next run must not seem to follow a readying that
   * came before its last. Called only by mp, after the run.
   */
  void readyAfterRun(Machine mp, Goroutine gp) {
    assert Thread.currentThread() == mp : "readyAfterRun: not on M" + mp.id;
    // As a woken G, by mp in its own scheduler code (case 2): its P outright, or none.
    readied(gp, Goroutine.WAITING, false, mp, mp, gp.readiedBy); // readiedBy: afterRun read it
  }

  /** Go's gdestroy, for a G whose thread terminated. Called only by the M that ran it. */
  void gdestroy(Goroutine gp) {
    assert Thread.currentThread() instanceof Machine : "gdestroy: not on an M";
    int was = gp.setDead();
    if (was < 0) {
      return; // the other M of a duplicate submit destroyed it (and counted ngsys down)
    }
    if (was == Goroutine.SYSCALL) {
      nGsyscall.decrement(); // it ended inside a syscall bracket (an exit the JDK never ran)
    }
    if (Trace.on(Trace.GO_RUN) && Trace.destroyStamped()) {
      // The M of the exit may not be back yet: 'The end of a run' in Trace.
      gp.traceRunnableSinceVolatile(System.nanoTime());
    }
    if (Trace.on(Trace.GO_DESTROY)) {
      Trace.goDestroy(gp);
    }
    allgs.remove(gp);
    if (gp.system) {
      ngsys.decrementAndGet();
    }
  }

  // ------------------------------------------------------------------------------------------
  // Waking Ms

  /**
   * Go's wakep: starts a spinning M on an idle P, unless an M already spins. Any thread. See
   * 'Spinning'.
   */
  void wakeP() {
    wakeP(false);
  }

  /**
   * wakeP for a caller whose work went in by a volatile write that a spinner reads after it
   * drops nmspinning ({@code published}: runnext's CAS, or the global queue's {@code runqsize},
   * written last under sched.lock). The submitter's half of the 'Delicate dance' is "publish the
   * work, then read nmspinning"; the spinner's is "decrement nmspinning, then look at every
   * runnext and at runqsize", and all four accesses are volatile, so the Java memory model's
   * total order over them already forbids both threads missing each other (on x86 the CAS, and
   * the fence HotSpot puts after a volatile store, are full barriers). Work published by a
   * release store (the ring's tail) needs the fence. Any thread.
   */
  void wakeP(boolean published) {
    if (!published) {
      // Full fence: the work published just before must be visible before nmspinning is read
      // (the submitter's half of the 'Delicate dance').
      java.lang.invoke.VarHandle.fullFence();
    }
    if (nmspinning.get() != 0) {
      return;
    }
    // No idle P, and the next M to drop its P will spin anyway (needspinning): the locked path
    // below could only find pidle empty and set needspinning again, so skip it. A gmp4j fast
    // path (Go takes the lock; at 1 P, or with every P busy, that is half a ready's cost). Safe
    // because needspinning is set only under sched.lock, which a dropping M holds from its
    // needspinning check to its pidleput: reading needspinning == 1 happens after that set, so
    // after any pidleput that the setter's lock saw, and the npidle load below sees it.
    if (npidle == 0 && needspinning.get() == 1) {
      return;
    }
    if (!nmspinning.compareAndSet(0, 1)) {
      return;
    }
    Processor pp;
    lock.lock();
    try {
      pp = pidlegetSpinning();
      if (pp == null) {
        if (nmspinning.decrementAndGet() < 0) {
          throw new InternalError("wakep: negative nmspinning");
        }
        return;
      }
    } finally {
      lock.unlock();
    }
    startM(pp, true);
  }

  /**
   * Go's startm: runs P {@code pp} on an idle M, or on a new one, and returns that M (null at
   * the thread limit with maxthreads.exceeded=queue). Any thread; must not hold sched.lock.
   */
  Machine startM(Processor pp, boolean spinning) {
    assert !lock.isHeldByCurrentThread() : "startm: holds sched.lock";
    Machine nmp;
    lock.lock();
    try {
      nmp = mget();
      if (nmp == null) {
        int id = mReserveId();
        if (id < 0) {
          // maxthreads.exceeded=queue: no M for the P. Its Gs (a P handed off from a syscall or
          // a G that ignores preemption usually has some) go to the global queue, where any M
          // finds them, and the P waits on the idle list for an M to free up.
          for (Goroutine gp; (gp = pp.runqGet()) != null; ) {
            runq.globRunqPut(gp);
          }
          pidleput(pp);
          if (spinning) {
            nmspinning.decrementAndGet();
          }
          return null;
        }
        nmp = new Machine(this, id, pp, spinning);
        allm.add(0, nmp);
      }
    } finally {
      lock.unlock();
    }
    if (spinning && !pp.runqEmpty()) {
      throw new InternalError("startm: p has runnable gs");
    }
    if (nmp.getState() == Thread.State.NEW) {
      nmp.start();
    } else {
      nmp.wake(pp, spinning); // its acquireP wakes sysmon: see 'Deep sleep' in Sysmon
    }
    return nmp;
  }

  /**
   * Ends sysmon's deep sleep: a P is about to run (Machine.acquireP), or a G enters a syscall;
   * {@code syscall}: for a syscall's entry or exit ('After a deep sleep' in {@link Sysmon}). Any
   * thread; one volatile load when sysmon is awake. See 'Deep sleep' in {@link Sysmon}.
   */
  void wakeSysmon(boolean syscall) {
    Sysmon sm = sysmon;
    if (sm != null) {
      sm.wake(syscall);
    }
  }

  /** A timer was added while every P runs: see 'Overdue timers' in Sysmon. Any thread. */
  void timerOnBusyPs(long when) {
    Sysmon sm = sysmon;
    if (sm != null) {
      sm.timerAdded(when);
    }
  }

  /**
   * Go's handoffp: gives P {@code pp} (idle, on no list, no M) to an M if there is anything for
   * it to do, else puts it on the idle list. Returns the M it started, or null (for the trace).
   * Any thread; must not hold sched.lock.
   *
   * <p><b>Pinned waiters first.</b> A G pinned on an M that lost its P cannot be queued, as Go
   * queues a G back from a syscall without one: it waits for an idle P (reacquireIfPinned). If
   * handoffP gave each P to queued work first, a stream of new Gs would starve it, and it may
   * hold what they wait for: a cold Spring Boot app's Gs wait, pinned, for the class loader
   * locks that such a G holds, and every hand-off then went to the next of them
   * (PinnedWaiterFirstTest). So while a pinned G waits, a P with an empty local queue goes idle
   * even when the global queue has work, and the waiter takes it within its 50us poll. Lost
   * wake-ups: the last waiter to leave wakes an M if Ps are idle with work queued; handoffP,
   * after its pidleput, looks at the waiters again. One of the two sees the other (volatile
   * npidle, atomic npinnedwaiting).
   */
  Machine handoffP(Processor pp) {
    assert !lock.isHeldByCurrentThread() : "handoffp: holds sched.lock";
    // if it has local work, start it straight away
    if (!pp.runqEmpty()) {
      return startM(pp, false);
    }
    boolean pinnedWaiting = npinnedwaiting.get() > 0;
    if (!pinnedWaiting && runq.runqsize() != 0) {
      return startM(pp, false);
    }
    // no local work, check that there are no spinning/idle M's, otherwise our help is not
    // required
    if (!pinnedWaiting && nmspinning.get() + npidle == 0 && nmspinning.compareAndSet(0, 1)) {
      return startM(pp, true);
    }
    long when = -1; // ≥ 0 once pp is idle: its next timer, 0 for none
    lock.lock();
    try {
      if (gcwaiting) {
        pp.setStatus(Processor.GCSTOP, "handoffP");
        stopOneP();
        return null;
      }
      if (runq.runqsize() == 0 || pinnedWaiting) {
        // Go also starts an M here for the last running P when nobody polls the network; the
        // JDK polls sockets itself, so there is no network poller to keep alive.
        pidleput(pp);
        when = pp.timers.nobarrierWakeTime();
      }
    } finally {
      lock.unlock();
    }
    if (pinnedWaiting && npinnedwaiting.get() == 0) {
      wakePForIdleWork(); // the waiters left before our pidleput: 'Pinned waiters first'
    }
    if (when >= 0) {
      // Go: an idle P with timers needs an M that wakes for them ('Timer sleep').
      if (when > 0) {
        timerSleeper.wakeNetPoller(when);
      }
      return null;
    }
    return startM(pp, false);
  }

  /**
   * Counts gp out of npinnedwaiting if it is still counted: it stopped waiting, or its wait
   * unmounted it ('Pinned waiters first' in handoffP). The last one out wakes an M for idle Ps
   * with work queued. Called by gp, or by its M after a run.
   */
  void leftWaitingForP(Goroutine gp) {
    if (gp.clearWaitingForP() && npinnedwaiting.decrementAndGet() == 0) {
      wakePForIdleWork();
    }
  }

  /**
   * Starts an M if a P is idle while the global queue has work: the lost wake-up check of
   * 'Pinned waiters first' in handoffP. Any thread.
   */
  void wakePForIdleWork() {
    if (npidle > 0 && runq.runqsize() != 0) {
      wakeP();
    }
  }

  /** A P stopped for a pending stop-the-world. Any thread; takes no lock. */
  void stopOneP() {
    if (stopwait.decrementAndGet() == 0) {
      stopnote.release();
    }
  }

  /** Whether sysmon is in deep sleep; schedtrace's sysmonwait. */
  boolean sysmonwait() {
    Sysmon sm = sysmon;
    return sm != null && sm.sleeping();
  }

  /**
   * Go's mReserveID with checkmcount: the next M id, or -1 past the limit when the user chose
   * to queue. Past the limit Go dies, and so do we by default. Requires sched.lock.
   */
  private int mReserveId() {
    assert lock.isHeldByCurrentThread() : "requires sched.lock";
    if (mcount() + 1 > maxmcount) {
      if (queueOnThreadLimit) {
        return -1;
      }
      threadExhaustion();
    }
    return mnext++;
  }

  /** Go's checkmcount failure: the exact messages, then exit status 2 as Go's throw. */
  private void threadExhaustion() {
    System.err.println("runtime: program exceeds " + maxmcount + "-thread limit");
    System.err.println("fatal error: thread exhaustion");
    System.err.flush();
    Runtime.getRuntime().halt(2);
  }

  /** Go's debug.SetMaxThreads: returns the previous limit and checks the new one at once. */
  public int setMaxThreads(int n) {
    lock.lock();
    try {
      int prev = maxmcount;
      maxmcount = Math.max(1, n);
      if (mcount() > maxmcount && !queueOnThreadLimit) {
        threadExhaustion();
      }
      return prev;
    } finally {
      lock.unlock();
    }
  }

  /** Go's mcount: Ms created and not exited, plus sysmon (a system M in Go). Racy. */
  int mcount() {
    return mnext - nmfreed + (sysmon != null ? 1 : 0);
  }

  /**
   * Takes {@code mp} off allm and adds its counters to exitedCounters, inside an odd retireSeq.
   * Requires lock.
   */
  private void retire(Machine mp) {
    assert lock.isHeldByCurrentThread() : "retire: requires sched.lock";
    retireSeq++; // odd: readers retry
    allm.remove(mp);
    long[] c = mp.counters();
    for (int i = 0; i < c.length; i++) {
      exitedCounters[i] += c[i];
    }
    retireSeq++; // even again, after the plain writes (a volatile store releases them)
  }

  /**
   * The per-M counters summed over every M, live or exited: runnext hits, steals, Gs stolen, JDK
   * wake-ups caught while spinning, Gs created by Gs. Any thread; takes no lock: a retirement in
   * between makes it sum again, so an M that exits meanwhile counts once.
   */
  long[] mCounters() {
    for (; ; ) {
      int seq = retireSeq;
      if ((seq & 1) == 0) {
        long[] sum = exitedCounters.clone();
        for (Machine mp : allm) {
          long[] c = mp.counters();
          for (int i = 0; i < c.length; i++) {
            sum[i] += c[i];
          }
        }
        java.lang.invoke.VarHandle.acquireFence(); // the reads above before the re-check
        if (retireSeq == seq) {
          return sum;
        }
      }
      Thread.onSpinWait();
    }
  }

  /** Go's mexit bookkeeping: M {@code mp} is gone. Takes sched.lock. */
  void mexit(Machine mp) {
    lock.lock();
    try {
      retire(mp);
      nmfreed++;
    } finally {
      lock.unlock();
    }
  }

  /**
   * An idle M gives up: takes it off the idle list and counts it out, unless a waker took it
   * first. Takes sched.lock.
   */
  boolean mremoveIdle(Machine mp) {
    lock.lock();
    try {
      Machine prev = null;
      for (Machine m = midle; m != null; prev = m, m = m.schedlink) {
        if (m == mp) {
          if (prev == null) {
            midle = m.schedlink;
          } else {
            prev.schedlink = m.schedlink;
          }
          m.schedlink = null;
          nmidle--;
          retire(mp);
          nmfreed++;
          return true;
        }
      }
      return false;
    } finally {
      lock.unlock();
    }
  }

  /** Go's mput: puts an M on the idle list. Requires sched.lock. */
  void mput(Machine mp) {
    assert lock.isHeldByCurrentThread() : "requires sched.lock";
    mp.schedlink = midle;
    midle = mp;
    nmidle++;
  }

  /** Go's mget: takes an idle M, or null. Requires sched.lock. */
  private Machine mget() {
    assert lock.isHeldByCurrentThread() : "requires sched.lock";
    Machine mp = midle;
    if (mp != null) {
      midle = mp.schedlink;
      mp.schedlink = null;
      nmidle--;
    }
    return mp;
  }

  /** Go's pidleput. Requires sched.lock. */
  void pidleput(Processor pp) {
    assert lock.isHeldByCurrentThread() : "requires sched.lock";
    if (!pp.runqEmpty()) {
      throw new InternalError("pidleput: P has non-empty run queue");
    }
    pp.setStatus(Processor.IDLE, "pidleput");
    pp.link = pidle;
    pidle = pp;
    npidle++;
    if (Trace.on(Trace.PROC_IDLE)) {
      Trace.procIdleBegin(pp);
    }
  }

  /** procresize's reset of the idle-P list before it lists the new Ps. Requires sched.lock. */
  void pidleReset() {
    assert lock.isHeldByCurrentThread() : "requires sched.lock";
    pidle = null;
    npidle = 0;
  }

  /** Go's pidleget. Requires sched.lock. */
  Processor pidleget() {
    assert lock.isHeldByCurrentThread() : "requires sched.lock";
    Processor pp = pidle;
    if (pp != null) {
      pidle = pp.link;
      pp.link = null;
      npidle--;
      if (pp.traceIdle != null) {
        Trace.procIdleEnd(pp);
      }
    }
    return pp;
  }

  /**
   * Go's pidlegetSpinning: pidleget, and with no idle P asks the next dropping M to spin.
   * Requires sched.lock.
   */
  Processor pidlegetSpinning() {
    assert lock.isHeldByCurrentThread() : "requires sched.lock";
    Processor pp = pidleget();
    if (pp == null) {
      needspinning.set(1);
    }
    return pp;
  }

  // ------------------------------------------------------------------------------------------
  // Stop-the-world and GOMAXPROCS

  /**
   * Go's GOMAXPROCS(n): returns the previous value; n < 1 only reads. A change by the user also
   * stops sysmon from following the CPU limit (Go's customGOMAXPROCS). Any thread.
   */
  public int gomaxprocs(int n) {
    int ret = gomaxprocs;
    if (n < 1) {
      return ret;
    }
    customGomaxprocs = true;
    return n == ret ? ret : stw.resize(n, true);
  }

  // ------------------------------------------------------------------------------------------
  // Misc

  /** Go's gcount(false): live Gs but the JDK's own (system Gs). Any thread. */
  public int numGoroutine() {
    return Math.max(0, allgs.size() - ngsys.get());
  }

  /** Go's schedtrace line, and with {@code detailed} its P, M and G lines. Any thread. */
  public String schedtrace(boolean detailed) {
    return SchedTrace.format(this, detailed);
  }

  /** Go's {@code /sched/*} metrics by name. Any thread; takes no scheduler lock. */
  public java.util.Map<String, Object> readMetrics() {
    return SchedMetrics.read(this);
  }

  /** Every live goroutine, as a goroutine dump shows it, in goid order. Any thread; racy. */
  public java.util.List<io.gmp4j.GoroutineInfo> goroutines() {
    long now = System.nanoTime();
    return allgs.snapshot().stream()
        .filter(g -> !g.system) // as Go's traceback leaves out system goroutines
        .sorted((a, b) -> Long.compare(a.goid, b.goid))
        .map(
            g -> {
              int st = g.status();
              return new io.gmp4j.GoroutineInfo(
                  g.goid,
                  Goroutine.statusName(st),
                  st == Goroutine.WAITING ? g.waitReason() : "",
                  st == Goroutine.WAITING ? Math.max(0, now - g.waitSince) : 0,
                  g.thread);
            })
        .toList();
  }

  /** Go's metrics.All for the /sched set gmp4j provides. */
  public static java.util.List<io.gmp4j.MetricDescription> describeMetrics() {
    return SchedMetrics.ALL;
  }

  /** Go's GOMAXPROCS(0). Any thread. */
  public int gomaxprocs() {
    return gomaxprocs;
  }

  @Override
  public String toString() {
    return SchedTrace.format(this, false).trim();
  }
}
