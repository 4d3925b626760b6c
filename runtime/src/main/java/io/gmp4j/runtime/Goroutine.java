package io.gmp4j.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.Executor;

/**
 * The G of Go's GMP model (runtime2.go {@code type g}): one JDK virtual thread scheduled by gmp4j.
 *
 * <h2>Implementation overview</h2>
 *
 * A G is the {@link Executor} of its own virtual thread, so a wake-up ({@code execute}) knows its G
 * without a lookup. The JDK calls {@code execute(runContinuation)} to start the thread, after
 * {@code Thread.yield}, and whenever something unparks it; {@link Sched#ready} decides where it
 * goes. A task that is not this G's own is a new thread that inherited this G as its scheduler
 * (the JDK does that for a virtual thread created by a virtual thread); it is adopted as a new G.
 *
 * <h3>Status</h3>
 *
 * Go's G statuses with their Go numbers, because {@code schedtrace} prints them, and one of our
 * own, readied (5, unused in Go), for a G readied while it runs:
 *
 * <pre>
 *   from       to         by whom                                  where         Go
 *   idle     → runnable   Sched.ready on adoption                  ready         newproc1
 *   waiting  → runnable   Sched.ready (any thread)                 ready         goready
 *   running  → runnable   Sched.ready of the M's own G's yield     ready         gosched_m
 *   readied  → runnable   the same                                 ready         gosched_m
 *   syscall  → runnable   Sched.ready, the G parked in a bracket   ready         (none)
 *   running  → readied    Sched.ready (any other readying)         ready         (none)
 *   readied  → readied    the same                                 ready         (none)
 *   runnable → running    the M that dequeued it                   execute       execute
 *   running  → waiting    its M after the run returns              park          park_m
 *   readied  → runnable   its M after the run, thread runnable     afterRun      (none)
 *   readied  → waiting    its M after the run, thread not          afterRun      (none)
 *   running,
 *   readied  → syscall    the G itself, under its claim            entersyscall  entersyscall
 *   syscall  → running    the G itself                             exitsyscall   exitsyscall
 *   any      → dead       an M, once the thread has terminated     gdestroy      goexit0
 * </pre>
 *
 * A G that parks inside a syscall bracket stays syscall (the post-run CAS from running fails)
 * until it is readied (a spurious submit can ready it there too, with no park: 'A spurious
 * submit inside the bracket' in Syscall): in Go a G cannot park in a syscall, but a virtual
 * thread in a marked native-call bracket can. "any" is every state but dead. Every write is a
 * CAS through {@link #casState}, which checks the edge against {@link #TABLE} under {@code
 * assert}.
 *
 * The JDK unmounts a parking thread before it publishes PARKED, and an unparker may then submit
 * it at once, before the M's {@code runContinuation} call has returned. So the status word
 * carries a sequence number that every readying increments, and the M's post-run step ({@link
 * #afterRun}) parks the G only if it is still running in that M's run: the word that the M's
 * dequeue wrote, or any running word with that M in {@link #m} (a syscall bracket drops a
 * readied mark, readied → syscall → running, and keeps the bumped sequence). A readied G it
 * settles by the thread's JDK state.
 *
 * <pre>
 *   state:  63 ............................ 8 | 7 ...... 0
 *           sequence (bumped by every ready)  | status
 * </pre>
 *
 * <h3>Readied while running</h3>
 *
 * A readying that finds the G running (an M dequeued it and has not finished the run) queues
 * nothing: it marks the G readied and leaves it to that M, which after the run queues the G on
 * its own P if the JDK's state of the thread is runnable, and parks it if not ({@link
 * #afterRun}). Only the M's own G's yield is queued at once, as gosched_m does. For a G that
 * parked and was woken during its M's unmount, that is where 'Readying a G' in Sched puts it
 * anyway (the M's P's runnext).
 *
 * The reason is JDK 25's stack walker ({@code VirtualThread.tryGetStackTrace}, behind {@code
 * Thread.getStackTrace}, thread dumps, and the agent's look at running classes): it suspends
 * an unmounted thread, and afterwards resubmits every runnable one ("the task may have run while
 * suspended"). When it lands between an M's dequeue and that M's {@code runContinuation} (an M
 * descheduled there for 7 ms in JfrIT with a walker beside it), a second queue entry let
 * another M run the thread while the first M was still on its way, and the first M's
 * {@code runContinuation} then ran, or failed on, a later runnable spell of the thread than the
 * one it had dequeued: a run with no readying before it in the trace, or a run that never was.
 * Readied leaves the first M to settle it: it sees the JDK state after its own run. With
 * Sched.ready dropping the submits of a thread that is mounted or whose JDK state is not runnable
 * (a walker's resubmit that came late: 'Submits that ready nothing' in Sched), a G has at most
 * one queue entry, and only while runnable. readied means running to everyone else: the G may
 * even be mounted (a walker that read the word after the dequeue and looked before the mount),
 * so preemption and entersyscall treat it as such; a bracket drops the mark, a stale walker's
 * readying of a G that runs.
 */
final class Goroutine implements Executor {
  // Go's G status values (runtime2.go); the gaps are Go statuses that have no JVM counterpart.
  static final int IDLE = 0;
  static final int RUNNABLE = 1;
  static final int RUNNING = 2;
  static final int SYSCALL = 3;
  static final int WAITING = 4;

  /** Ours, not Go's (its 5 is unused): running, and readied since the run began. */
  static final int READIED = 5;

  static final int DEAD = 6;

  /** Bits of the state word that hold the status; the sequence is above them. */
  private static final long STATUS_MASK = 0xff;

  /** One step of the sequence in the state word. */
  private static final long SEQ_ONE = STATUS_MASK + 1;

  /** 'Status', held in code. */
  static final StateTable TABLE =
      new StateTable(
              "G status", "idle", "runnable", "running", "syscall", "waiting", "readied", "dead")
          .edge(IDLE, RUNNABLE, "ready")
          .edge(WAITING, RUNNABLE, "ready")
          .edge(RUNNING, RUNNABLE, "ready")
          .edge(READIED, RUNNABLE, "ready")
          .edge(SYSCALL, RUNNABLE, "ready")
          .edge(RUNNING, READIED, "ready")
          .edge(READIED, READIED, "ready")
          .edge(RUNNABLE, RUNNING, "execute")
          .edge(RUNNING, WAITING, "park")
          .edge(READIED, RUNNABLE, "afterRun")
          .edge(READIED, WAITING, "afterRun")
          .edge(RUNNING, SYSCALL, "entersyscall")
          .edge(READIED, SYSCALL, "entersyscall")
          .edge(SYSCALL, RUNNING, "exitsyscall")
          .edge(IDLE, DEAD, "gdestroy")
          .edge(RUNNABLE, DEAD, "gdestroy")
          .edge(RUNNING, DEAD, "gdestroy")
          .edge(READIED, DEAD, "gdestroy")
          .edge(SYSCALL, DEAD, "gdestroy")
          .edge(WAITING, DEAD, "gdestroy");

  private static final VarHandle STATE;
  private static final VarHandle PREEMPT;
  private static final VarHandle TRACE_RUNNABLE_SINCE;
  private static final VarHandle M;
  private static final VarHandle WAIT_REASON;
  private static final VarHandle WAIT_SINCE;
  private static final VarHandle WAITING_FOR_P;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(Goroutine.class, "state", long.class);
      PREEMPT = MethodHandles.lookup().findVarHandle(Goroutine.class, "preempt", boolean.class);
      TRACE_RUNNABLE_SINCE =
          MethodHandles.lookup().findVarHandle(Goroutine.class, "traceRunnableSince", long.class);
      M = MethodHandles.lookup().findVarHandle(Goroutine.class, "m", Machine.class);
      WAIT_REASON =
          MethodHandles.lookup().findVarHandle(Goroutine.class, "waitReason", String.class);
      WAIT_SINCE = MethodHandles.lookup().findVarHandle(Goroutine.class, "waitSince", long.class);
      WAITING_FOR_P =
          MethodHandles.lookup().findVarHandle(Goroutine.class, "waitingForP", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** The scheduler this G belongs to. Final. */
  final Sched sched;

  /** The goroutine id; unique for the life of the JVM. Final. */
  final long goid;

  /** The virtual thread; null only for the white-box tests' detached Gs. Final. */
  final Thread thread;

  /** The thread's one {@code runContinuation} task. Final. */
  final Runnable runContinuation;

  /** (sequence, status), see 'Status'. Written only by casState's CAS; volatile reads. */
  private volatile long state;

  /**
   * How many times an M has dequeued the G (its runs begun, spurious or not). Bumped by the
   * dequeuing M just before its dequeue CAS, which publishes it; read by an M that settles a run
   * for another M ({@link #afterRun(long, Machine, int)}). Plain.
   */
  int dequeues;

  /**
   * The goroutine (0: a platform thread) that last readied the G while it ran ('Readied while
   * running'), for the GoUnblock of the M that queues it. Written by the readier just before its
   * CAS to readied, which publishes it; read by that M after it read readied. Plain: of two
   * readiers racing, the M may name either.
   */
  long readiedBy;

  /**
   * Link in the global run queue. Written and read only under sched.lock, while the G is on that
   * queue; the queue's tail has a null link.
   */
  Goroutine schedlink;

  /**
   * The M that last started running this G. Written by that M before each run, before its
   * dequeue CAS, which publishes it to whoever sees the G running (setM: a release store; the
   * M's phold word publishes it to sysmon); also by casM, for a second entry (tests only). Read
   * by {@link #afterRun}, which settles a run only for its M, and by observers (racy,
   * volatile). Code on the G itself uses {@link #runningM()} instead: after a second entry this
   * may name an M that only tried to run the G.
   */
  volatile Machine m;

  /**
   * Go's isSystemGoroutine: a thread the JDK runs for itself (its I/O pollers), which {@code
   * numGoroutine} and the goroutine dump leave out and the metrics count, as Go does. Final.
   */
  final boolean system;

  /**
   * Go's gp.preempt: sysmon asks this G to yield at its next poll. Set by sysmon (CAS
   * false→true, which also counts the request in {@link Preempt}); cleared by CAS by whoever
   * consumes or cancels it: the G's poll, its M after the run, or sysmon when it raced a
   * reschedule. See 'Preemption' in {@link Preempt}.
   */
  private volatile boolean preempt;

  /**
   * Go's gp.lockedm: the M this G is locked to. Set by the G (volatile, before its status check),
   * cleared under that M's lockedLock by Machine.unwireLocked; read by any M ('Forwarding' in
   * LockOSThread).
   */
  volatile Machine lockedm;

  /**
   * Counted in sched.npinnedwaiting ('Pinned waiters first' in Sched.handoffP). Set by the G in
   * Syscall.reacquireIfPinned (CAS false → true, then the count goes up); cleared by getAndSet,
   * with the count down, by whichever comes first: the G as it stops waiting, or its M after a
   * run that returned while it was set (the wait unmounted the G, so it was not pinned). Volatile.
   */
  private volatile boolean waitingForP;

  /** Nesting depth of syscall brackets; only the G itself touches it. */
  int syscallDepth;

  /**
   * The G is inside the JDK's network poller wait ({@code sun.nio.ch.Poller.poll}, marked by the
   * agent): a park there is Go's {@code IO wait}. Written only by the G itself; read by its M
   * after the run that ended in that park, which the JDK's unmount orders after the write.
   */
  boolean inNetpoll;

  /** Links and stripe in {@link AllGs}: under the stripe's lock. */
  Goroutine allPrev;

  Goroutine allNext;

  AllGs.Stripe allStripe;

  /**
   * When the G last started waiting (Go's waitsince), at Sched.coarseNow's resolution; written
   * with waitReason, by {@link #parked}. Racy.
   */
  volatile long waitSince;

  /**
   * Why the G waits; Go's waitReason string, null before its first park. Written by its M after
   * a run that ended in a park, by {@link #parked}; read through {@link #waitReason()}, and
   * meaningful only while the status is waiting (readers check), so nothing clears it. No
   * initial value: a volatile write in the constructor is a full fence on every spawn.
   */
  private volatile String waitReason;

  /**
   * Latency sampling, Go's gTrackingPeriod: every 8th transition to runnable records its time
   * and the M that runs the G next records the wait. Written only by the thread that moved the G
   * to runnable and read by the M that dequeued it; the run queues order the two.
   */
  int trackingSeq;

  long trackingStamp;

  // Tracing (see 'Tracing' in Trace). traceRunnableSince: when the G last became runnable
  // (System.nanoTime), for GoRun's schedLatency; written by the thread that readied it (only
  // while GoRun is on; ordered by the run queues as trackingStamp is) and zeroed by the M that
  // begins its run, which reads it. gdestroy writes it last, volatile, for the exit M's slice
  // end ('The end of a run' in Trace).
  // tracePreempted: the G is yielding because of a preemption request; written by the G around
  // its yield and read by Sched.ready on the same carrier during that yield. (The open
  // GoSyscall is the M's: Machine.traceSyscall.)
  long traceRunnableSince;

  boolean tracePreempted;

  Goroutine(Sched sched, long goid, Thread thread, Runnable runContinuation) {
    this.sched = sched;
    this.goid = goid;
    this.thread = thread;
    this.runContinuation = runContinuation;
    this.system = thread != null && VirtualThreads.isSystem(thread);
    this.trackingSeq = (int) (goid * 0x9E3779B9L) & 7; // Go starts tracking new Gs at random
  }

  /**
   * Sets {@link #m}: a release store. Nothing needs it ordered before a later load, and a
   * volatile store would cost a full fence on every run. Called only by an M, in execute.
   */
  void setM(Machine mp) {
    M.setRelease(this, mp);
  }

  /**
   * {@code m}: {@code expect} → {@code mp}, a CAS (a full fence: Machine.execute reads the carrier
   * next). Only for a second entry of the G, which the white-box tests make. Called by the M that
   * dequeued that entry.
   */
  boolean casM(Machine expect, Machine mp) {
    return M.compareAndSet(this, expect, mp);
  }

  /**
   * Records why and since when the G waits, after its status went to waiting: release stores,
   * for observers only (as {@link #setM}). Called only by the M whose afterRun parked it: its M
   * after the run, or an M that settled it for that M (Machine.execute's hand-back).
   */
  void parked(String reason, long since) {
    WAIT_REASON.setRelease(this, reason);
    WAIT_SINCE.setRelease(this, since);
  }

  /** Why the G waits, or "" before its first park; see {@link #waitReason}. Any thread. */
  String waitReason() {
    String r = waitReason; // volatile read
    return r == null ? "" : r;
  }

  /** Marks the G as counted in npinnedwaiting; false if it already was. Called only by the G. */
  boolean markWaitingForP() {
    return WAITING_FOR_P.compareAndSet(this, false, true);
  }

  /**
   * Clears the mark of {@link #markWaitingForP}; true for the one caller that cleared it, which
   * must count the G out. The G itself, or its M after a run.
   */
  boolean clearWaitingForP() {
    return waitingForP && (boolean) WAITING_FOR_P.getAndSet(this, false);
  }

  /**
   * Whether the G is running to everyone but its M: running, or readied while it ran ('Readied
   * while running'). Any thread; volatile read.
   */
  boolean running() {
    int st = status();
    return st == RUNNING || st == READIED;
  }

  /** Go's readgstatus. Any thread. */
  int status() {
    return statusOf(state); // volatile read
  }

  /** The status in state word {@code s}. */
  static int statusOf(long s) {
    return (int) (s & STATUS_MASK);
  }

  /** Word {@code s} with its sequence kept and status {@code st}. */
  static long withStatus(long s, int st) {
    return (s & ~STATUS_MASK) | st;
  }

  /** Word {@code s} with its sequence bumped and status {@code st} (a move to runnable). */
  static long nextSeq(long s, int st) {
    return ((s & ~STATUS_MASK) + SEQ_ONE) | st;
  }

  /** Whether words {@code a} and {@code b} have the same sequence. */
  static boolean sameSeq(long a, long b) {
    return (a & ~STATUS_MASK) == (b & ~STATUS_MASK);
  }

  /**
   * The one write of the state word: CAS {@code s → next}, an edge of 'Status' taken by
   * function {@code fn} (checked under assert). Same callers as the caller's own.
   */
  private boolean casState(long s, long next, String fn) {
    assert TABLE.check(fn, this, statusOf(s), statusOf(next));
    return STATE.compareAndSet(this, s, next);
  }

  /**
   * Go's casgstatus for ready, bumping the sequence: idle, waiting or syscall (a thread that
   * parked inside a syscall bracket) → runnable, and running or readied → runnable too if {@code
   * ownYield} (the M's own G's yield), else → readied ('Readied while running'). Returns the
   * status it had, or -1 if it is runnable already (a duplicate submit) or dead. Any thread.
   */
  int casToRunnable(boolean ownYield) {
    for (; ; ) {
      long s = state; // volatile read; pairs with the CASes below
      int was = casToRunnable(s, ownYield);
      if (was != LOST) {
        return was;
      }
    }
  }

  /** {@link #casToRunnable(long, boolean)}'s answer when the word was not {@code s} any more. */
  static final int LOST = -2;

  /**
   * One try of {@link #casToRunnable(boolean)}, from word {@code s} as read (by {@link #word})
   * before the caller looked at the thread: returns {@link #LOST} if the word has changed since,
   * so that the look is made again ('Submits that ready nothing' in Sched). Any thread.
   */
  int casToRunnable(long s, boolean ownYield) {
    int st = statusOf(s);
    if (st == RUNNABLE || st == DEAD) {
      return -1;
    }
    if ((st == RUNNING || st == READIED) && !ownYield) {
      readiedBy = Trace.currentGoid(); // published by the CAS ('Readied while running')
      return casState(s, nextSeq(s, READIED), "ready") ? st : LOST;
    }
    // The CAS publishes the enqueue that follows it.
    return casState(s, nextSeq(s, RUNNABLE), "ready") ? st : LOST;
  }

  /** The state word, (sequence, status). Any thread; volatile read. */
  long word() {
    return state;
  }

  /**
   * Its M's last step of a run, after {@code runContinuation} returned with the thread neither
   * terminated nor mounted elsewhere: running → waiting, or, for a G readied while it ran,
   * readied → runnable when the JDK's state of its thread is runnable (the caller queues it) and
   * readied → waiting when it is not (a readying that the run itself consumed, or a stale walker's;
   * see 'Readied while running'). Returns the new status, or -1 if the G is neither: a yield's
   * submit queued it (runnable), another M runs it since (running, or readied in that M's run:
   * {@link #m} names that M, written before its dequeue CAS, which publishes it to whoever sees
   * the G running), or it parked inside a syscall bracket. {@code ran} is casRunnableToRunning's
   * result. Called only by the M that ran it, {@code mp}.
   */
  int afterRun(long ran, Machine mp) {
    return afterRun(ran, mp, -1);
  }

  /**
   * {@link #afterRun} by an M for another M's run, that of {@code mp} (Machine.execute, for a
   * second entry): only while {@link #dequeues} is still {@code dequeue}, the caller's own
   * dequeue's, as nobody dequeued the G since; -1 for the G's own M.
   */
  int afterRun(long ran, Machine mp, int dequeue) {
    for (; ; ) {
      long s = state; // volatile read, before the thread's state: a readier sets both the other way
      int st = statusOf(s);
      if (dequeue >= 0 && dequeues != dequeue) {
        return -1; // dequeued since: a later run (its dequeue's count precedes its word's CAS)
      }
      if (st == READIED && m == mp) {
        int next = VirtualThreads.runnable(VirtualThreads.state(thread)) ? RUNNABLE : WAITING;
        if (casState(s, withStatus(s, next), "afterRun")) { // fails if readied once more
          return next;
        }
      } else if (s == ran || (st == RUNNING && m == mp)) { // the second: a bracket dropped READIED
        if (casState(s, withStatus(s, WAITING), "park")) {
          return WAITING;
        }
      } else {
        return -1;
      }
    }
  }

  /**
   * Moves a dequeued G from runnable to running; returns the state word the M's post-run CAS
   * expects, or -1 if the G is dead: a duplicate entry (a spurious submit) stayed queued while
   * the G ended, and the M of its last run destroyed it (runnable → dead). Called only by the M
   * that dequeued it.
   */
  long casRunnableToRunning() {
    for (; ; ) {
      long s = state; // volatile read
      if (statusOf(s) == DEAD) {
        return -1;
      }
      if (statusOf(s) != RUNNABLE) {
        throw new InternalError("execute: G" + goid + " bad status " + statusOf(s));
      }
      long running = withStatus(s, RUNNING);
      if (casState(s, running, "execute")) {
        return running;
      }
    }
  }

  /**
   * Whether the G was readied since the run that {@code ran} (casRunnableToRunning's result)
   * began: the sequence moved on. For the trace's end reason. Any thread; volatile read.
   */
  boolean readiedSince(long ran) {
    return !sameSeq(state, ran);
  }

  /**
   * The readying sequence of the state word now: one more at every readying, so a run is named by
   * its G and {@link #seqOf} of casRunnableToRunning's result. Any thread; volatile read.
   */
  long runSeq() {
    return seqOf(state);
  }

  /** The readying sequence in state word {@code s}. */
  static long seqOf(long s) {
    return s >>> Long.numberOfTrailingZeros(SEQ_ONE);
  }

  /** traceRunnableSince, volatile: see its comment (gdestroy's stamp). Any thread. */
  long traceRunnableSinceVolatile() {
    return (long) TRACE_RUNNABLE_SINCE.getVolatile(this);
  }

  /** Sets traceRunnableSince, volatile: gdestroy's stamp for an exit M not back yet. */
  void traceRunnableSinceVolatile(long nanos) {
    TRACE_RUNNABLE_SINCE.setVolatile(this, nanos);
  }

  /** false→true; true if this call made the request. Any thread (sysmon). */
  boolean trySetPreempt() {
    return PREEMPT.compareAndSet(this, false, true);
  }

  /** true→false; true if this call consumed or cancelled the request. Any thread. */
  boolean tryClearPreempt() {
    return preempt && PREEMPT.compareAndSet(this, true, false);
  }

  /**
   * running or readied → syscall, keeping the sequence (a readied G that runs was readied by a
   * stale walker: see 'Readied while running'). Called only by the G itself (entersyscall).
   */
  boolean casRunningToSyscall() {
    for (; ; ) {
      long s = state;
      int st = statusOf(s);
      if (st != RUNNING && st != READIED) {
        return false;
      }
      if (casState(s, withStatus(s, SYSCALL), "entersyscall")) {
        return true; // else a stale walker's readying came between: try again
      }
    }
  }

  /**
   * syscall → running, keeping the sequence; false if the G is not in syscall any more (a
   * ready took it out: a park inside the bracket, or a spurious submit, which may come at any
   * moment). Of this CAS and ready's, exactly one wins. Called only by the G itself
   * (exitsyscall).
   */
  boolean casSyscallToRunning() {
    for (; ; ) {
      long s = state;
      if (statusOf(s) != SYSCALL) {
        return false;
      }
      if (casState(s, withStatus(s, RUNNING), "exitsyscall")) {
        return true;
      }
    }
  }

  /**
   * Marks a G dead whatever it was doing; only for a G whose thread has terminated. Returns the
   * status it had, or -1 if it was dead already: a duplicate submit can have two Ms find the
   * thread terminated.
   */
  int setDead() {
    for (; ; ) {
      long s = state;
      int was = statusOf(s);
      if (was == DEAD) {
        return -1;
      }
      if (casState(s, withStatus(s, DEAD), "gdestroy")) {
        return was;
      }
    }
  }

  /** The JDK's way into the scheduler; see the class overview. Any thread; never blocks. */
  @Override
  public void execute(Runnable task) {
    if (task == runContinuation) {
      sched.ready(this);
    } else {
      sched.adopt(task);
    }
  }

  /** Go's status name, as goroutine dumps print it. */
  static String statusName(int status) {
    return switch (status) {
      case IDLE -> "idle";
      case RUNNABLE -> "runnable";
      case RUNNING -> "running";
      case READIED -> "running"; // until its M has looked: 'Readied while running'
      case SYSCALL -> "syscall";
      case WAITING -> "waiting";
      case DEAD -> "dead";
      default -> "status " + status;
    };
  }

  @Override
  public String toString() {
    Machine mp = m;
    return "G"
        + goid
        + "{status="
        + status()
        + "("
        + waitReason
        + ") m="
        + (mp == null ? "nil" : mp.id)
        + "}";
  }

  /**
   * The M this G runs on, from its carrier, or null if that is not one of this scheduler's Ms.
   * Called only by the G itself, for which it is exact. Not {@link #m}: a spurious submit (JDK
   * 25's stack walker resubmits a thread that may have run meanwhile) runs the G's task on a
   * second M, which writes {@code m} while the G goes on running on the first; code on the G
   * that claimed the second M's P would then act as a second owner of that P.
   */
  Machine runningM() {
    return VirtualThreads.carrier(thread) instanceof Machine mp && mp.sched == sched ? mp : null;
  }
}
