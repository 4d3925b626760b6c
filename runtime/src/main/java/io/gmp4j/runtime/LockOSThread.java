package io.gmp4j.runtime;

/**
 * Go's LockOSThread / UnlockOSThread (proc.go lockOSThread, dolockOSThread, stoplockedm,
 * startlockedm, and goexit0's handling of a locked G).
 *
 * <h2>Implementation overview: 'LockOSThread'</h2>
 *
 * "LockOSThread wires the calling goroutine to its current operating system thread. The calling
 * goroutine will always execute in that thread, and no other goroutine will execute in it, until
 * the calling goroutine has made as many calls to UnlockOSThread as to LockOSThread. If the
 * calling goroutine exits without unlocking the thread, the thread will be terminated." (Go's
 * doc.) On the JVM, "the thread" is the G's carrier M: a virtual thread locked this way always
 * mounts on the same platform thread, which matters for thread-affine native state (JNI
 * libraries, thread-locals of the carrier, OS thread attributes).
 *
 * <ol>
 *   <li>lock (the G, on its M): {@code m.lockedExt++}; the first call wires {@code m.lockedg =
 *       gp} and {@code gp.lockedm = m}. unlock: a no-op at zero (as Go's UnlockOSThread);
 *       the last one unwires.
 *   <li>When a locked G blocks or yields, its M runs nothing else (stoplockedm): it hands its P
 *       off (handoffp) and parks until it is handed a P again.
 *   <li>The locked G, readied, goes to a run queue like any G. The M that dequeues it does not
 *       run it: it hands its own P to the G's M and stops (startlockedm). The locked M wakes with
 *       that P and runs the G.
 *   <li>A G that ends while locked takes its M with it: the M hands its P off and the thread
 *       ends instead of returning to the idle list, so whatever state the G left in the thread
 *       dies with it.
 * </ol>
 *
 * <h2>'Forwarding'</h2>
 *
 * <p>Go's startlockedm writes {@code mp.nextp} without a check: its locked G, when queued, is
 * waiting in stoplockedm on that M, or soon will be. Here the JDK 25 stack walker could submit a
 * thread that is running (a spurious submit); since 'Submits that ready nothing' in Sched none
 * is queued, and what follows is a defence, reached by the white-box tests with
 * Sched.readyUnlooked. With a second entry, an entry of a locked G can be
 * dequeued while that G still runs on its M, and the G may then unlock or end before the M next
 * waits for a forward. A P forwarded then would be waited for by nobody: lost, and the next
 * stop-the-world would wait for it forever (LockedForwardTest). So the forward and the unwire
 * order through the owner's lock:
 *
 * <ul>
 *   <li>the forwarder writes the handoff (its P, and the entry) only while the owner's lockedg is
 *       the G; otherwise it keeps its P and runs the entry itself (the G unlocked: it is an
 *       ordinary G now; it ended: execute drops the entry);
 *   <li>the unwire (the last unlock, or the G's end) clears lockedg and takes a handoff not yet
 *       taken; the M settles it on its own thread, after the G's run (the G must not take
 *       sched.lock, which may park it): its entry goes back to the global queue unless the G is
 *       dead, and its P to handoffp;
 *   <li>an unlock that takes a forward leaves it for its M to settle after the run, and yields
 *       to end the run: until the settle, the G's one entry is private to the M, and the G,
 *       runnable while it runs, is passed over by preemption and the syscall bracket;
 *   <li>lock writes lockedm and lockedg, then reads the G's status. RUNNABLE while the G runs
 *       means it has an entry. If that entry is this M's (a forwarder put it in lockedNext after
 *       seeing the lock, or an unlock earlier in this run left it to be settled, and it goes
 *       back to lockedNext), the lock stands. Otherwise the entry may be queued, and its dequeuer
 *       may have read lockedm before the write: lock undoes itself and yields, so that the entry
 *       runs the G (ready makes no second entry for a runnable G), and tries again. A later
 *       submit's dequeuer reads lockedm after the status write it queued behind (volatile, and
 *       the queue orders the rest), so it sees the lock.
 * </ul>
 *
 * <p>A forward can land while the G still runs; the M takes it at its next stoplockedm and
 * executes the G, whose runContinuation returns at once if the thread is parked: the entry's
 * run, as any spurious entry's. Until then the forwarded P is idle but on no list: nobody steals
 * from it and a stop-the-world waits for it, as long as the G runs. A pinned G's yields return
 * at once: its unlock's run goes on to its end with the entry held, and its lock retries until
 * another M takes the queued entry (at one P, after sysmon's hog hand-off). Left open, as too
 * narrow to pay for on every run: a dequeuer that passed its status CAS just before the G's
 * lock, and reaches runContinuation only after the G has parked and been woken, runs it off its
 * M; an unlock there does nothing (that M has no lock count), so the G stays wired to its M,
 * which waits in stoplockedm until the G's next entry, or for ever if the G ends there.
 *
 * <p>Go counts runtime-internal locks ({@code lockedInt}) separately; gmp4j has none. Called from a
 * thread that is not a G, both calls do nothing: a platform thread is its own OS thread already.
 */
final class LockOSThread {
  private LockOSThread() {}

  /** The current G, or null for a thread that is not one of ours. */
  private static Goroutine current() {
    Thread t = Thread.currentThread();
    return t.isVirtual() && VirtualThreads.scheduler(t) instanceof Goroutine gp ? gp : null;
  }

  static void lock() {
    Goroutine gp = current();
    if (gp == null) {
      return;
    }
    for (; ; ) {
      Machine mp = gp.runningM();
      if (mp.lockedg != null && mp.lockedg != gp) {
        throw new InternalError(
            "lockOSThread: M" + mp.id + " already locked to G" + mp.lockedg.goid);
      }
      if (mp.lockedExt > 0) {
        mp.lockedExt++;
        return;
      }
      gp.lockedm = mp; // volatile, before the status read below: 'Forwarding'
      mp.lockedg = gp;
      if (gp.status() != Goroutine.RUNNABLE || mp.relockWithEntry(gp)) {
        mp.lockedExt = 1;
        return;
      }
      // An entry of this running G may be queued (a spurious submit), and its dequeuer may have
      // read lockedm before the write above: it would run the G off this M. The lock is undone;
      // let the entry run the G (Thread.yield makes no second entry: ready finds the G
      // runnable), and try again.
      Thread.yield();
    }
  }

  static void unlock() {
    Goroutine gp = current();
    if (gp == null) {
      return;
    }
    Machine mp = gp.runningM();
    if (mp.lockedExt == 0) {
      return; // Go's UnlockOSThread is a no-op when not locked
    }
    if (--mp.lockedExt == 0) {
      Machine.LockedHandoff h = mp.unwireLocked(gp);
      if (h != null) {
        // The G's one entry came here with a P, and is this M's to settle after the run; until
        // then the G is runnable while it runs (no preemption, no syscall bracket), so end the
        // run now. Pinned, the yield returns at once, and the run goes on to its end.
        mp.unwiredByG(h);
        Thread.yield();
      }
    }
  }

  /** (lockedExt) of the current G's M, for tests: Go's LockOSCounts. */
  static int lockCount() {
    Goroutine gp = current();
    return gp == null ? 0 : gp.runningM().lockedExt;
  }
}
