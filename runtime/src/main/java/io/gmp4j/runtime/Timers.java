package io.gmp4j.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A P's timer heap: Go 1.14-1.22's per-P timers (runtime/time.go {@code pp.timers}, {@code
 * timer0When}, {@code deletedTimers}, {@code timersLock}; addtimer, deltimer, runtimer,
 * checkTimers, clearDeletedTimers, moveTimers, nobarrierWakeTime, timeSleepUntil).
 *
 * <h2>Implementation overview: 'Timers on the P'</h2>
 *
 * With the agent, the JDK's timed parks of a G ({@code Thread.sleep}, {@code
 * LockSupport.parkNanos}, timed {@code Object.wait}, and every timed wait in j.u.c built on
 * them) schedule their timeout here instead of on the JDK's timer threads. JDK 25 pins the
 * place: {@code VirtualThread.afterYield}, on the carrier after the unmount, calls {@code private
 * Future<?> schedule(Runnable, long, TimeUnit)} with {@code this::parkTimeoutExpired} (timed park)
 * or {@code () -> waitTimeoutExpired(seqNo)} (timed wait); for a scheduler that is not a
 * ForkJoinPool that method hands the task to one of its {@code VirtualThread-unparker}
 * ScheduledThreadPoolExecutors. The agent's advice on it calls {@link Hooks#schedule}, which
 * puts the task on the heap of the P that the carrier (our M) holds, and returns the timer as
 * the Future the JDK keeps. The JDK calls only {@code cancel(false)} on it, from {@code
 * runContinuation} when the thread runs again after an unpark, notify or interrupt.
 *
 * <p>Why not the JDK's timer threads: a timeout fired there is a wake-up from a thread that is
 * not ours, which goes to the global queue ('Wake-ups from JDK threads' in {@link Sched}); a
 * sleeper behind CPU-bound Gs then waited behind the Gs queued there, and every wake-up crossed
 * threads twice (unparker, then an M). Rejected as well: one gmp4j timer thread (the same
 * crossing, and a lock every P contends on); a timer wheel (the JDK's and Go's callers want
 * nanosecond deadlines, and Go's heap has the numbers behind it).
 *
 * <ol>
 *   <li>addtimer (the owner P, in afterYield): push on this heap, a 4-ary min-heap on {@code
 *       when} under {@link #timersLock} (Go's siftupTimer/siftdownTimer shape), after dropping
 *       deleted timers at the top (Go's cleantimers); publish the top's {@code when} in {@link
 *       #timer0When}; then {@link TimerSleeper#wakeNetPoller} makes sure some M will wake for it.
 *   <li>deltimer (any thread, {@code Future.cancel}): one CAS WAITING → DELETED and a count in
 *       {@link #deletedTimers}. The timer stays in the heap (Go's lazy deletion): the run skips
 *       it, addtimer drops it at the top, and the owner sweeps the heap when more than a quarter
 *       of it is deleted (clearDeletedTimers). So a cancel takes no lock and costs no sift.
 *   <li>checkTimers (every M, at the top of findRunnable; thieves on stealWork's last pass;
 *       the M that slept for timers): a fast path of one volatile load when there are no timers
 *       or none is due; otherwise, under the lock, runtimer repeatedly: a deleted top is
 *       removed; a due top is taken out (WAITING → RUNNING, a CAS that a cancel may win), the
 *       lock is released and the task runs on this M. The task unparks the G, and {@link
 *       Sched#ready} from an M with a P in its scheduler puts it in that P's runnext: a
 *       timer-woken G runs next on the P that ran its timer, as Go's goready.
 *   <li>An idle M with no G to run sleeps until the earliest timer of all Ps instead of for
 *       good, and then steals the due timers: 'Timer sleep' in {@link TimerSleeper}. sysmon
 *       starts a spinning M when a timer is overdue and a P is idle (Go 1.14's sysmon).
 *   <li>Beyond Go: a P that schedules runs the due timers of the other Ps too ('Overdue timers
 *       on running Ps' in TimerSleeper), and with no P idle sysmon asks the G with the oldest
 *       slice to yield once a timer is 1ms overdue ('Overdue timers' in {@link Sysmon}). Go
 *       leaves such a timer to its own P's next schedule, a whole time slice behind CPU-bound
 *       Gs.
 *   <li>procresize moves a removed P's waiting timers to a remaining P (Go's moveTimers, in
 *       p.destroy) and drops its deleted ones.
 * </ol>
 *
 * Time is {@link #nanotime()}: {@code System.nanoTime()} from an origin fixed at class
 * initialisation, so that every {@code when} is positive for 292 years and 0 can mean "no
 * timer", as in Go. A delay is clamped so that {@code when} does not overflow.
 *
 * <h3>Timer states (Go's timerWaiting, timerRunning, timerDeleted, timerRemoved)</h3>
 *
 * <pre>
 *   from      to        by whom                                 where
 *   -         WAITING   the owner P                             addtimer
 *   WAITING   RUNNING   an M holding a P, under the heap's lock runtimer
 *   RUNNING   RAN       the same M, after the task returned     runOneTimer
 *   WAITING   DELETED   any thread (Future.cancel)              deltimer
 *   DELETED   REMOVED   an M under the heap's lock              runtimer, cleantimers,
 *                                                               clearDeletedTimers, moveTimers
 * </pre>
 *
 * Invariants: a timer in the heap is WAITING or DELETED; {@link #timer0When} is 0 exactly when
 * the heap is empty, else the top's {@code when} (written under the lock). {@link
 * #deletedTimers} counts the DELETED timers in the heap, except for a cancel between its CAS and
 * its increment, and for cancels that raced a move (both self-correct at the next sweep).
 * Non-invariants: timer0When may name a deleted timer, so an M may wake for nothing (Go's too);
 * a cancel that loses to RUNNING returns false and the task still runs: the JDK tolerates it
 * (VirtualThread's parkTimeoutExpired then only sets the park permit, a spurious wake-up that
 * park allows; waitTimeoutExpired checks its sequence number), exactly as with its own executor.
 *
 * <h3>Far timers skip the clock</h3>
 *
 * Go's checkTimers reads the clock at every schedule while its P has a timer, and so did we: one
 * {@code System.nanoTime} per G switch, 30 ns on a KVM guest's kvm-clock, a fifth of a park
 * round trip at 1 P. Yet most timers that wait are timeouts seconds off, which a cancel ends
 * long before they are due (a {@code join}, a socket read, a {@code poll} with a timeout). So
 * findRunnable reads the clock only when the soonest timer, this P's top or the hint for the
 * others, is within {@link #FAR_NS} (50 ms) of the freshest time it knows: its own last read, or
 * sysmon's {@code coarseNow}, which sysmon refreshes every cycle (at most 10 ms apart while any
 * P runs). Otherwise it skips both checks, at most {@link #MAX_SKIPS} (64) times in a row. Once
 * a sysmon cycle has passed a timer's when, {@code coarseNow} alone makes every P read at its
 * next schedule. A timer skipped while due needs the time known to be more than 50 ms behind
 * the clock, i.e. sysmon more than 40 ms late for its cycle, and fewer than 64 schedules since
 * the P's last read; sysmon's own check ('Overdue timers' in
 * {@link Sysmon}) still catches it then. A timer within 50 ms is checked at every schedule, as
 * in Go. Measured in BENCHMARKS.md ('Far timers skip the clock').
 *
 * <h3>Cost</h3>
 *
 * No sleeping G: two volatile loads per schedule round ({@code timer0When} and the hint) and
 * one per P per sysmon cycle; no thread, no allocation. Only timeouts more than 50 ms off: three
 * volatile loads, and a clock read every 64 rounds. A timed park: one {@link Timer} (the JDK's
 * executor allocates a ScheduledFutureTask instead), one uncontended lock and an O(log n) sift;
 * its cancel, one CAS and one atomic increment. Measured in BENCHMARKS.md ('Timers on the P').
 *
 * <p>Library mode (no agent) has no advice on VirtualThread, so its timeouts stay on the JDK's
 * timer threads; so does option {@code timers=jdk}.
 */
final class Timers {
  /** The origin of {@link #nanotime()}: one before the first reading, so nanotime() > 0. */
  private static final long ORIGIN = System.nanoTime() - 1;

  /** Go's maxWhen: a when that saturates. */
  static final long MAX_WHEN = Long.MAX_VALUE;

  /** Go's nanotime: monotonic, positive. Any thread. */
  static long nanotime() {
    return System.nanoTime() - ORIGIN;
  }

  /** The owner P (final). */
  final Processor pp;

  /** Go's pp.timersLock: guards {@link #heap} and {@link #len}. Never held while a task runs. */
  private final ReentrantLock timersLock = new ReentrantLock();

  /** Go's pp.timers: a 4-ary min-heap on when. Under timersLock; allocated on first use. */
  private Timer[] heap;

  /** Timers in the heap, deleted ones included. Under timersLock. */
  private int len;

  /**
   * Go's pp.numTimers: {@link #len}, for racy readers (the sweep rule, schedtrace). Written under
   * timersLock; volatile.
   */
  private volatile int numTimers;

  /**
   * Go's pp.timer0When: the top's when, 0 for an empty heap. Written under timersLock (volatile,
   * after the heap change it describes); read without the lock by checkTimers' fast path,
   * nobarrierWakeTime, sysmon and the timer sleeper (volatile: pairs with the store, and is the
   * adder's half of the Dekker in 'Timer sleep' in TimerSleeper).
   */
  private volatile long timer0When;

  /**
   * 'Far timers skip the clock': how far off the soonest timer must be, from the freshest clock
   * the owner knows, for findRunnable to skip its timer checks without reading the clock. Five
   * of sysmon's longest sleeps, which bound how stale {@code Sched.coarseNow} is.
   */
  static final long FAR_NS = 50_000_000L;

  /** 'Far timers skip the clock': at most this many checks in a row are skipped. */
  static final int MAX_SKIPS = 64;

  /**
   * 'Far timers skip the clock': the clock of the owner's last timer check, and the checks
   * skipped since (MAX_SKIPS before the first check, so that it reads the clock). Plain fields,
   * touched only by the M holding {@link #pp}, in {@link #clockForCheck}; a P changes hands
   * under its status CAS, which orders them.
   */
  private long checkNow;

  private int checkSkips = MAX_SKIPS;

  /** Go's pp.deletedTimers: see the Invariants. Any thread. */
  final AtomicInteger deletedTimers = new AtomicInteger();

  /** Timer tasks run from this heap (extra metric). Under timersLock; racy reads. */
  private volatile long ran;

  Timers(Processor pp) {
    this.pp = pp;
  }

  // ------------------------------------------------------------------------------------------
  // Adding and deleting

  /**
   * Go's addtimer for a JDK timeout task: puts {@code f} on this heap to run after {@code delay}
   * {@code unit}s and returns the Future the JDK keeps. The caller then calls {@link
   * TimerSleeper#wakeNetPoller} with its when, once it no longer holds the P's claim (a wakeP
   * may wait for sched.lock). Called only by the owner P (its M, in the JDK's afterYield).
   */
  Timer addtimer(Runnable f, long delay, TimeUnit unit) {
    long now = nanotime();
    long d = Math.max(0, unit.toNanos(delay)); // toNanos saturates
    long when = d > MAX_WHEN - now ? MAX_WHEN : now + d;
    Timer t = new Timer(when, f, this);
    timersLock.lock();
    try {
      cleantimers();
      doaddtimer(t);
    } finally {
      timersLock.unlock();
    }
    return t;
  }

  /** Go's doaddtimer: the push and sift. Requires timersLock. */
  private void doaddtimer(Timer t) {
    if (heap == null) {
      heap = new Timer[8];
    } else if (len == heap.length) {
      heap = java.util.Arrays.copyOf(heap, len * 2);
    }
    t.ts = this;
    heap[len] = t;
    siftupTimer(len);
    len++;
    numTimers = len;
    if (heap[0] == t) {
      timer0When = t.when; // release: after the heap write it describes
    }
  }

  /**
   * Go's cleantimers: removes deleted timers from the top, so a heap that only grows by adds and
   * cancels (a ping-pong with timed waits) stays small between sweeps. Requires timersLock.
   */
  private void cleantimers() {
    while (len > 0) {
      Timer t = heap[0];
      if (t.status != Timer.DELETED
          || !Timer.STATUS.compareAndSet(t, Timer.DELETED, Timer.REMOVED)) {
        return;
      }
      dodeltimer0();
      deletedTimers.decrementAndGet();
    }
  }

  /** Go's dodeltimer0: removes the top and re-sifts. Requires timersLock and len > 0. */
  private void dodeltimer0() {
    int last = len - 1;
    heap[0].ts = null;
    if (last > 0) {
      heap[0] = heap[last];
    }
    heap[last] = null;
    len = last;
    numTimers = last;
    if (last > 0) {
      siftdownTimer(0);
    }
    timer0When = last > 0 ? heap[0].when : 0; // volatile: after the heap change
  }

  // ------------------------------------------------------------------------------------------
  // Running

  /**
   * Go's checkTimers: runs the due timers of this heap; with {@code owner}, also sweeps deleted
   * timers when they are more than a quarter of the heap. {@code now} is a {@link #nanotime()}
   * reading, or 0 to read it only if a timer exists. Returns whether any task ran. Called only by
   * an M holding a P ({@code owner}: this one), in its scheduler: a task readies its G into
   * that P.
   */
  /** The earliest timer's when (Go's timer0When), 0 for none. Any thread; volatile. */
  long nextWhen() {
    return timer0When;
  }

  /**
   * The clock for findRunnable's timer checks ({@link #checkTimers} on this P, then {@code
   * TimerSleeper.checkOverdue}), or 0 when they can be skipped: when no timer waits anywhere, or
   * when the soonest one (this heap's top, or the sleeper's hint for the other Ps) is more than
   * {@link #FAR_NS} after the freshest clock known, at most {@link #MAX_SKIPS} times in a row.
   * See 'Far timers skip the clock'. Called only
   * by the M holding {@link #pp}, in findRunnable.
   */
  long clockForCheck() {
    assert Thread.currentThread() instanceof Machine mp && mp.p == pp
        : "clockForCheck: not the M holding P" + pp.id;
    return clockForCheck(timer0When, pp.sched.timerSleeper.hint()); // two volatile loads
  }

  /**
   * {@link #clockForCheck()} with this heap's top ({@code mine}) and the sleeper's hint given, 0
   * for none. Called only by the M holding {@link #pp}, and by white-box tests.
   */
  long clockForCheck(long mine, long hint) {
    long soonest = mine == 0 ? hint : hint == 0 ? mine : Math.min(mine, hint);
    if (soonest == 0) {
      return 0; // no timers: the whole cost when no G sleeps
    }
    long known = Math.max(checkNow, pp.sched.coarseNow - ORIGIN); // volatile coarseNow
    if (soonest - known > FAR_NS && checkSkips < MAX_SKIPS) {
      checkSkips++;
      return 0;
    }
    long now = nanotime();
    checkNow = now;
    checkSkips = 0;
    return now;
  }

  boolean checkTimers(long now, boolean owner) {
    long next = timer0When; // volatile, pairs with the store in doaddtimer/dodeltimer0
    if (next == 0) {
      return false; // no timers: the whole cost when no G sleeps
    }
    if (now == 0) {
      now = nanotime();
    }
    if (now < next) {
      // Next timer is not ready to run, but keep going if we would clear deleted timers.
      if (!owner || deletedTimers.get() <= numTimers / 4) {
        return false;
      }
    }
    boolean any = false;
    timersLock.lock();
    try {
      while (len > 0) {
        int r = runtimer(now);
        if (r > 0) {
          break; // the top is not due
        }
        if (r < 0) {
          any = true;
        }
      }
      if (owner && deletedTimers.get() > len / 4) {
        clearDeletedTimers();
      }
    } finally {
      timersLock.unlock();
    }
    return any;
  }

  /**
   * Go's runtimer: looks at the top timer. Returns 1 if it is not due, 0 if it was deleted and
   * is now removed, -1 if it was due and its task ran (with timersLock released meanwhile).
   * Requires timersLock and len > 0.
   */
  private int runtimer(long now) {
    Timer t = heap[0];
    int st = t.status;
    if (st == Timer.DELETED) {
      if (Timer.STATUS.compareAndSet(t, Timer.DELETED, Timer.REMOVED)) {
        dodeltimer0();
        deletedTimers.decrementAndGet();
      }
      return 0;
    }
    if (st != Timer.WAITING) {
      throw new InternalError("runtimer: bad timer status " + st);
    }
    if (t.when > now) {
      return 1;
    }
    if (!Timer.STATUS.compareAndSet(t, Timer.WAITING, Timer.RUNNING)) {
      return 0; // a cancel won: the next call removes it as deleted
    }
    dodeltimer0();
    runOneTimer(t);
    return -1;
  }

  /**
   * Go's runOneTimer: runs t's task with timersLock released, as Go does: the task readies a G,
   * which may take sched.lock, and must not be serialised with this heap's adders and thieves.
   * Requires timersLock; returns with it held.
   */
  private void runOneTimer(Timer t) {
    timersLock.unlock();
    try {
      t.f.run();
    } catch (Throwable e) {
      // The JDK's tasks catch their own failures; this M must survive anything else.
      System.err.println("gmp4j: timer task " + t.f + " threw " + e);
    } finally {
      t.status = Timer.RAN; // volatile: isDone after the task
      timersLock.lock();
      ran++;
    }
  }

  /**
   * Go's clearDeletedTimers: removes every deleted timer and rebuilds the heap. Requires
   * timersLock; called only by the owner P.
   */
  private void clearDeletedTimers() {
    int kept = 0;
    int removed = 0;
    for (int i = 0; i < len; i++) {
      Timer t = heap[i];
      if (t.status == Timer.DELETED
          && Timer.STATUS.compareAndSet(t, Timer.DELETED, Timer.REMOVED)) {
        t.ts = null;
        removed++;
      } else {
        heap[kept++] = t;
      }
    }
    for (int i = kept; i < len; i++) {
      heap[i] = null;
    }
    len = kept;
    numTimers = kept;
    deletedTimers.addAndGet(-removed);
    for (int i = (len - 1) / 4; i >= 0 && len > 0; i--) {
      siftdownTimer(i); // Go's initHeap
    }
    timer0When = len > 0 ? heap[0].when : 0;
  }

  // ------------------------------------------------------------------------------------------
  // Moving (procresize)

  /**
   * Go's moveTimers: takes every waiting timer of {@code from} (a P that procresize removes) onto
   * this heap, and drops its deleted ones. Requires a stopped world, so no task of either heap
   * runs and no G cancels.
   */
  void moveTimers(Timers from) {
    from.timersLock.lock();
    timersLock.lock();
    try {
      for (int i = 0; i < from.len; i++) {
        Timer t = from.heap[i];
        from.heap[i] = null;
        if (t.status == Timer.WAITING) {
          doaddtimer(t);
        } else if (Timer.STATUS.compareAndSet(t, Timer.DELETED, Timer.REMOVED)) {
          t.ts = null;
        }
      }
      from.len = 0;
      from.numTimers = 0;
      from.timer0When = 0;
      from.deletedTimers.set(0);
    } finally {
      timersLock.unlock();
      from.timersLock.unlock();
    }
  }

  // ------------------------------------------------------------------------------------------
  // Reading without the lock

  /**
   * Go's nobarrierWakeTime: when this heap next needs an M, 0 for never. Any thread; racy (a
   * volatile load of timer0When).
   */
  long nobarrierWakeTime() {
    return timer0When;
  }

  /**
   * Go's timeSleepUntil: the earliest wake time over {@code allp}, 0 for none. Any thread; racy.
   */
  static long timeSleepUntil(Processor[] allp) {
    long next = 0;
    for (Processor p2 : allp) {
      long w = p2.timers.timer0When; // volatile
      if (w != 0 && (next == 0 || w < next)) {
        next = w;
      }
    }
    return next;
  }

  /** Timers in the heap, deleted ones included (schedtrace's timerslen). Any thread; racy. */
  int numTimers() {
    return numTimers;
  }

  /** Tasks run from this heap. Any thread; racy. */
  long ran() {
    return ran;
  }

  // ------------------------------------------------------------------------------------------
  // The 4-ary heap (Go's siftupTimer, siftdownTimer). Require timersLock.

  private void siftupTimer(int i) {
    Timer t = heap[i];
    long when = t.when;
    while (i > 0) {
      int p = (i - 1) / 4; // parent
      if (when >= heap[p].when) {
        break;
      }
      heap[i] = heap[p];
      i = p;
    }
    heap[i] = t;
  }

  private void siftdownTimer(int i) {
    int n = len;
    Timer t = heap[i];
    long when = t.when;
    for (; ; ) {
      int c = i * 4 + 1; // left child
      int c3 = c + 2; // mid child
      if (c >= n) {
        break;
      }
      long w = heap[c].when;
      if (c + 1 < n && heap[c + 1].when < w) {
        w = heap[c + 1].when;
        c++;
      }
      if (c3 < n) {
        long w3 = heap[c3].when;
        if (c3 + 1 < n && heap[c3 + 1].when < w3) {
          w3 = heap[c3 + 1].when;
          c3++;
        }
        if (w3 < w) {
          w = w3;
          c = c3;
        }
      }
      if (w >= when) {
        break;
      }
      heap[i] = heap[c];
      i = c;
    }
    heap[i] = t;
  }

  @Override
  public String toString() {
    return "timers{P"
        + pp.id
        + " len="
        + numTimers
        + " deleted="
        + deletedTimers.get()
        + " timer0When="
        + timer0When
        + "}";
  }

  /**
   * Go's runtime timer: one JDK timeout task, and the Future that VirtualThread keeps for it (it
   * calls only {@code cancel(false)}). See 'Timer states' above.
   */
  static final class Timer implements Future<Object> {
    static final int WAITING = 1;
    static final int RUNNING = 2;
    static final int RAN = 3;
    static final int DELETED = 4;
    static final int REMOVED = 5;

    static final VarHandle STATUS;

    static {
      try {
        STATUS = MethodHandles.lookup().findVarHandle(Timer.class, "status", int.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    /** Go's t.when, in {@link Timers#nanotime()}. Final. */
    final long when;

    /** The JDK's task. Final. */
    final Runnable f;

    /** See 'Timer states'. CAS through STATUS, or a volatile write by the state's owner. */
    volatile int status = WAITING;

    /**
     * The heap the timer is on (Go's t.pp), null once removed. Written under that heap's lock;
     * read by deltimer for the count (volatile).
     */
    volatile Timers ts;

    Timer(long when, Runnable f, Timers ts) {
      this.when = when;
      this.f = f;
      this.ts = ts;
    }

    /**
     * Go's deltimer: WAITING → DELETED, or false if the task runs or ran. Any thread; no lock.
     */
    boolean deltimer() {
      if (!STATUS.compareAndSet(this, WAITING, DELETED)) {
        return false;
      }
      Timers h = ts;
      if (h != null) {
        h.deletedTimers.incrementAndGet();
      }
      return true;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      return deltimer();
    }

    @Override
    public boolean isCancelled() {
      int st = status;
      return st == DELETED || st == REMOVED;
    }

    @Override
    public boolean isDone() {
      int st = status;
      return st == RAN || st == DELETED || st == REMOVED;
    }

    /** Not used by the JDK, which never waits for a timeout task. */
    @Override
    public Object get() {
      throw new UnsupportedOperationException("gmp4j timer: get");
    }

    /** Not used by the JDK, which never waits for a timeout task. */
    @Override
    public Object get(long timeout, TimeUnit unit) {
      throw new UnsupportedOperationException("gmp4j timer: get");
    }

    @Override
    public String toString() {
      return "timer{when=" + when + " status=" + status + "}";
    }
  }
}
