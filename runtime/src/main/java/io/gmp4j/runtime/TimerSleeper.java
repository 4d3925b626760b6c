package io.gmp4j.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * The M that sleeps until the next timer: Go's blocking {@code netpoll(delay)} in findRunnable
 * with {@code sched.lastpoll}, {@code sched.pollUntil}, {@code netpollBreak} and {@code
 * wakeNetPoller}, for a runtime whose only timed events are timers (the JDK polls sockets on its
 * own threads).
 *
 * <h2>Implementation overview: 'Timer sleep'</h2>
 *
 * The timers live on the Ps ('Timers on the P' in {@link Timers}), and a P runs its due timers
 * whenever its M schedules. A timer on an idle P, or on a P whose G runs on, needs an M that
 * wakes for it. Go gives that job to at most one M at a time, the one blocked in netpoll with a
 * timeout: every other idle M parks for good, so idle Ms cost nothing. We do the same, with a
 * timed park in place of epoll_wait:
 *
 * <ol>
 *   <li>An M that found nothing to run has dropped its P and done the 'Delicate dance'
 *       (Machine.findRunnable). Before stopm it computes {@code until}, the earliest timer of
 *       all Ps (timeSleepUntil). None: stopm, as before. Else it tries to take the sleeper's
 *       place, {@link #sleeper} null → this M (Go's {@code sched.lastpoll.Swap(0) != 0}). If
 *       another M holds it and sleeps past {@code until}, it wakes that M (netpollBreak) and
 *       stops.
 *   <li>The sleeper publishes {@link #pollUntil}, reads the timers again (the adder's half is
 *       step 4), and parks until {@code until}. It is on no idle list, so no startm picks it
 *       (Go's netpolling M is not on {@code sched.midle} either).
 *   <li>Woken: it reads the timers again. If the earliest is not due yet (it was woken early,
 *       or the timer moved), back to step 2. If it is due, it leaves the place, takes an idle P
 *       and steals every due timer (Timers.checkTimers on every P); the tasks ready their Gs into
 *       its P's runnext, and findRunnable runs them. With no idle P every P runs, and each runs
 *       its own timers when it schedules (Go's netpoll M finds no P either).
 *   <li>Adders (Timers.addtimer) publish {@code timer0When}, then call {@link #wakeNetPoller}:
 *       with a sleeper that would sleep past the new timer, unpark it; with none and an idle P,
 *       wakeP, whose spinning M either steals the timer or becomes the sleeper. handoffP does the
 *       same for a P it puts idle with timers.
 * </ol>
 *
 * The Dekker between steps 2 and 4, on volatiles: the sleeper stores {@code sleeper} and {@code
 * pollUntil}, then loads every {@code timer0When}; an adder stores {@code timer0When}, then
 * loads {@code sleeper} and {@code pollUntil}. Either the sleeper sees the new timer, or the
 * adder sees the sleeper and compares; an adder that sees the sleeper but {@code pollUntil} still
 * 0 unparks it, and the permit makes the coming park return at once (netpollBreak's pending
 * byte in Go).
 *
 * <pre>
 *   T1 the sleeper                        T2 an adder (on a running P)
 *   until = timeSleepUntil() = 30s
 *                                         addtimer(1ms): timer0When = 1ms
 *                                         sleeper == null: wakeP (no idle P: nothing)
 *   sleeper = T1; pollUntil = 30s
 *   timeSleepUntil() again: 1ms. until = 1ms, park 1ms   (outcome: on time)
 * </pre>
 *
 * Rejected: every idle M parking with a timeout (a herd of wake-ups for one timer, and idle Ms
 * that never go quiet), and sysmon as the sleeper (its period backs off to 10ms, so a 1ms sleep
 * on an idle P would overshoot by up to 10ms; it stays the backstop for overdue timers).
 */
final class TimerSleeper {
  private static final VarHandle SLEEPER;
  private static final VarHandle HINT;

  static {
    try {
      SLEEPER = MethodHandles.lookup().findVarHandle(TimerSleeper.class, "sleeper", Machine.class);
      HINT = MethodHandles.lookup().findVarHandle(TimerSleeper.class, "hint", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Sched sched;

  /**
   * The M sleeping for timers, or null (Go's {@code sched.lastpoll == 0}). CAS null → M by that
   * M; cleared by it. Volatile: the sleeper's half of the Dekker in the overview.
   */
  private volatile Machine sleeper;

  /**
   * When the sleeper will wake (Go's sched.pollUntil), 0 while it has not published it yet or
   * while there is none. Written only by the sleeper; volatile.
   */
  private volatile long pollUntil;

  /** Times the sleeper woke because a timer was due (extra metric). Sleeper only; racy reads. */
  private volatile long wakeups;

  /**
   * 'Overdue timers on running Ps': at most the earliest when of every waiting timer, 0 when
   * none is known. Lowered by CAS by every adder ({@link #wakeNetPoller}); raised only by {@link
   * #checkOverdue}, by a CAS from the value it read. Invariant: a waiting timer's when is at
   * least the hint, except between an add's timer0When store and its CAS (the Dekker in
   * checkOverdue covers that). Non-invariant: the hint may be below every timer (one ran or was
   * cancelled), which costs one scan.
   */
  private volatile long hint;

  /** Timers that checkOverdue ran for another, running P (extra metric). Racy. */
  private volatile long overdueRuns;

  /**
   * {@link #hint}: 0 when no P holds a timer that checkOverdue would look at, else at most the
   * earliest when of every waiting timer. Any thread; volatile.
   */
  long hint() {
    return hint;
  }

  TimerSleeper(Sched sched) {
    this.sched = sched;
  }

  /**
   * Go's wakeNetPoller: makes sure an M wakes by {@code when}, a timer just put on a running P or
   * on a P going idle. See step 4. Any thread but the sleeper; must not hold sched.lock.
   */
  void wakeNetPoller(long when) {
    lowerHint(when);
    Machine m = sleeper; // volatile, after the caller's volatile timer0When store
    if (m != null) {
      long until = pollUntil;
      if (until == 0 || until > when) {
        LockSupport.unpark(m); // netpollBreak
      }
    } else if (sched.npidle > 0) {
      sched.wakeP(); // no-op while an M spins: that M sleeps or steals after its passes
    } else {
      sched.timerOnBusyPs(when); // every P runs: 'Overdue timers' in Sysmon
    }
  }

  /**
   * Steps 1 to 3 for M {@code mp}, which holds no P and is not spinning: returns an idle P that it
   * took because a timer is due, or null if it should stopm (no timers, another sleeper, no idle
   * P, or a stop-the-world). Called only by that M, in findRunnable.
   */
  Processor sleep(Machine mp) {
    long until = Timers.timeSleepUntil(sched.allp);
    if (until == 0) {
      return null;
    }
    Machine other = sleeper;
    if (other != null || !SLEEPER.compareAndSet(this, null, mp)) {
      wakeNetPoller(until); // the sleeper, if it sleeps past our timer (never wakeP: no P here)
      return null;
    }
    try {
      for (; ; ) {
        pollUntil = until; // volatile, then the re-read: the Dekker in the overview
        long next = Timers.timeSleepUntil(sched.allp);
        if (next == 0) {
          return null; // every timer went (moved, run by a P, or its heap swept)
        }
        long now = Timers.nanotime();
        if (next > now) {
          if (next != until) {
            until = next; // earlier: a timer added since; later: the earliest one went
            pollUntil = until;
          }
          LockSupport.parkNanos(this, next - now);
          Thread.interrupted(); // a stale interrupt must not turn this into a busy loop
          now = Timers.nanotime();
          next = Timers.timeSleepUntil(sched.allp);
          if (next == 0) {
            return null;
          }
          if (next > now) {
            until = next; // woken early (a new timer, or netpollBreak): sleep again
            continue;
          }
        }
        // A timer is due: an idle P to run it on.
        if (sched.gcwaiting) {
          return null; // the stop takes the idle Ps; the world's restart wakes a P (wakeP)
        }
        Processor pp;
        sched.lock.lock();
        try {
          pp = sched.gcwaiting ? null : sched.pidleget();
        } finally {
          sched.lock.unlock();
        }
        if (pp != null) {
          wakeups++;
        }
        return pp;
      }
    } finally {
      pollUntil = 0;
      sleeper = null; // volatile: an adder from now on wakes a P instead
    }
  }

  /** Lowers {@link #hint} to {@code when} unless it is lower already. Any thread. */
  private void lowerHint(long when) {
    for (; ; ) {
      long h = hint;
      if ((h != 0 && h <= when) || HINT.compareAndSet(this, h, when)) { // full fence
        return;
      }
    }
  }

  /**
   * Beyond Go, 'Overdue timers on running Ps': an M that schedules on {@code pp} runs the due
   * timers of the other Ps too, and their Gs come to pp's runnext. Go runs a P's timers only when
   * that P schedules, or when an idle P steals them; behind CPU-bound Gs that is a full time slice
   * after the sleeper parked (Go's p50 overshoot of a 1 ms sleep beside four hogs at 2 Ps: 19 ms),
   * though another P's M schedules sooner. With this the first P to schedule runs it. Cost: one
   * volatile load while no timer waits, and one nanoTime while one does (Go's checkTimers reads
   * the clock then too); the Ps are scanned only when the hint says a timer is due. Called only
   * by the M holding pp, in findRunnable, after pp's own timers, with its clock read ({@code
   * now}, 0 if it read none). Returns whether a task ran.
   */
  boolean checkOverdue(Processor pp, long now) {
    long h = hint; // volatile
    if (h == 0) {
      return false;
    }
    if (now == 0) {
      now = Timers.nanotime(); // the caller's read, else ours
    }
    if (now < h) {
      return false;
    }
    boolean ran = false;
    Processor[] allp = sched.allp; // stable while we hold a P
    for (Processor p2 : allp) {
      long w = p2.timers.nobarrierWakeTime();
      if (p2 != pp && w != 0 && w <= now && p2.timers.checkTimers(now, false)) {
        ran = true;
        overdueRuns++;
      }
    }
    long next = Timers.timeSleepUntil(allp);
    if (HINT.compareAndSet(this, h, next)) { // full fence, then the re-read: an adder that read
      long again = Timers.timeSleepUntil(allp); // the old hint published its timer0When first
      if (again != 0 && (next == 0 || again < next)) {
        lowerHint(again);
      }
    }
    return ran;
  }

  /** checkOverdue's runs for other Ps. Any thread; racy. */
  long overdueRuns() {
    return overdueRuns;
  }

  /** The sleeping M, or null; for schedtrace detail and tests. Any thread; racy. */
  Machine sleeper() {
    return sleeper;
  }

  /** Times the sleeper woke for a due timer and took a P. Any thread; racy. */
  long wakeups() {
    return wakeups;
  }

  @Override
  public String toString() {
    Machine m = sleeper;
    return "timersleeper{m=" + (m == null ? "nil" : m.id) + " pollUntil=" + pollUntil + "}";
  }
}
