package io.gmp4j.runtime;

import java.util.concurrent.locks.ReentrantLock;

/**
 * sched.lock: Go's runtime {@code mutex} (lock_futex.go, lock_spinbit.go) over a ReentrantLock.
 *
 * <h2>Implementation overview</h2>
 *
 * Go's lock spins before it sleeps: a few rounds of procyield, then osyield, and only then a
 * futex sleep, because its critical sections (a queue push, an idle-list pop) are shorter than a
 * sleep and a wake-up. A plain ReentrantLock parks a waiter after one failed CAS or two, and
 * its unlock then pays {@code signalNext} and a futex wake: with {@code Thread.yield} at 2 Ps,
 * where every yield puts a G on the global queue, {@code AQS.signalNext} was 13.8% of the
 * samples, with seven times the JDK scheduler's voluntary context switches.
 *
 * So {@link #lock} first tries {@link #SPINS} times to barge in with {@code tryLock}, pausing
 * with onSpinWait between tries, and only then queues and parks as before. Unlock is
 * ReentrantLock's, which signals only when a waiter did park. What stays ReentrantLock's: the
 * owner, which the "Requires sched.lock" asserts check ({@code isHeldByCurrentThread}), and the
 * queue of parked waiters that HogHandoff asks about ({@code hasQueuedThread}: a G parked there
 * runs no polls). A spinning waiter is running, so it needs no such exemption: its spin is
 * bounded.
 *
 * Barging is unfair, as Go's lock is; a parked waiter is still woken at the next unlock.
 */
final class SchedLock extends ReentrantLock {
  /**
   * Barging tries before parking. About 2 us of onSpinWait on this kind of machine: longer than
   * the longest ordinary critical section (globRunqGetBatch moving half a run queue), shorter
   * than a park and unpark.
   */
  static final int SPINS = 100;

  @Override
  public void lock() {
    if (tryLock()) {
      return;
    }
    for (int i = 0; i < SPINS; i++) {
      Thread.onSpinWait();
      if (!isLocked() && tryLock()) {
        return;
      }
    }
    super.lock();
  }
}
