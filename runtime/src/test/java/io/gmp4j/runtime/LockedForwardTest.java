package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.dump;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An entry of a locked G, forwarded while that G still runs ('Forwarding' in LockOSThread): a
 * platform thread readies the G in a syscall bracket, as a late JDK 25 stack walker can, which
 * leaves an entry of it queued (SchedTesting.queueEntryUnlooked), and the other M dequeues
 * the entry and forwards its P to the G's M. The G then ends, or unlocks and goes on. Before, the
 * forwarded P was lost either way (the exiting M handed off only its own; the unlocked M never
 * looked at it again), and the next stop-the-world waited for it forever; after an unlock the G
 * itself never ran again, its one entry gone with the P.
 */
class LockedForwardTest {
  private static final int ROUNDS = 20;

  @Test
  @Timeout(value = 120, threadMode = SEPARATE_THREAD)
  void aForwardToAnEndingLockedGIsHandedOff() throws Exception {
    rounds(false, false);
  }

  @Test
  @Timeout(value = 120, threadMode = SEPARATE_THREAD)
  void aForwardToAnUnlockingGIsHandedOffAndItsEntryRuns() throws Exception {
    rounds(true, false);
  }

  /**
   * A lock taken while an entry of the G is queued (at one P the entry waits behind the running
   * G) returns only once that entry has run the G, so that no dequeuer that read lockedm before
   * the lock can run the G off its M; then the G stays on its M through parks.
   */
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void aLockWaitsForAQueuedEntryOfItsG() throws Exception {
    Sched s = SchedTesting.newSched(1);
    for (int i = 0; i < ROUNDS; i++) {
      int round = i;
      SchedTesting.runOnG(
          s,
          20,
          () -> {
            Goroutine me = (Goroutine) VirtualThreads.scheduler(Thread.currentThread());
            SchedTesting.queueEntryUnlooked(me); // at one P its entry stays queued
            assertEquals(Goroutine.RUNNABLE, me.status(), "round " + round + ": entry queued");
            LockOSThread.lock();
            assertEquals(
                Goroutine.RUNNING, me.status(), "round " + round + ": lock left it queued");
            Machine mine = me.runningM();
            for (int k = 0; k < 3; k++) {
              Thread.sleep(1);
              assertEquals(mine, me.runningM(), "round " + round + ": left its M");
            }
            assertEquals(1, LockOSThread.lockCount());
            LockOSThread.unlock();
          });
    }
    assertWorldStops(s, 1, "");
  }

  /**
   * Pinned (a class initializer), the unlock's yield returns at once, so the G runs on with the
   * forward it took held by its M; a lock in the same run takes that forward back as its own.
   */
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void aPinnedGRelocksWithTheForwardItsUnlockTook() throws Exception {
    Sched s = SchedTesting.newSched(2);
    SchedTesting.runOnG(
        s,
        20,
        () -> {
          Goroutine me = (Goroutine) VirtualThreads.scheduler(Thread.currentThread());
          Machine mine = lockAndAwaitForward(me);
          assertTrue(mine.lockedForwardPending(), "no forward came");
          pinnedG = me; // not a field of PinnedRelock: writing that would initialize it first
          assertEquals("relocked with its forward", PinnedRelock.RESULT);
          assertEquals(0, LockOSThread.lockCount(), "still locked after the initializer");
          for (int k = 0; k < 3; k++) {
            Thread.sleep(1); // the run ends: its M settles the forward of the last unlock
          }
        });
    assertWorldStops(s, 2, "");
  }

  /** The G whose code PinnedRelock's initializer runs; set before that first runs. */
  private static volatile Goroutine pinnedG;

  /** Unlocks and locks again in its initializer, so on a pinned thread. */
  private static final class PinnedRelock {
    static final String RESULT;

    static {
      Goroutine me = pinnedG;
      Machine mine = me.runningM();
      LockOSThread.unlock(); // takes the forward; the yield returns at once
      String r;
      if (mine.lockedForwardPending() || me.status() != Goroutine.RUNNABLE) {
        r = "the unlock did not take the forward";
      } else {
        LockOSThread.lock();
        r =
            !mine.lockedForwardPending()
                ? "the lock did not take the forward back"
                : LockOSThread.lockCount() != 1 ? "not locked" : "relocked with its forward";
        LockOSThread.unlock();
      }
      RESULT = r;
    }
  }

  @Test
  @Timeout(value = 120, threadMode = SEPARATE_THREAD)
  void aForwardTakenByAnUnlockSurvivesALockInTheSameRun() throws Exception {
    rounds(true, true);
  }

  /**
   * Rounds of a locked G whose entry is forwarded while it runs; then it ends, or ({@code
   * unlock}) unlocks, maybe locks and unlocks again in the same run ({@code relock}), and parks.
   */
  private static void rounds(boolean unlock, boolean relock) throws Exception {
    Sched s = SchedTesting.newSched(2);
    AtomicInteger forwarded = new AtomicInteger();
    for (int i = 0; i < ROUNDS; i++) {
      int round = i;
      SchedTesting.runOnG(
          s,
          20,
          () -> {
            Goroutine me = (Goroutine) VirtualThreads.scheduler(Thread.currentThread());
            Machine mine = lockAndAwaitForward(me);
            if (mine.lockedForwardPending()) {
              forwarded.incrementAndGet();
            }
            if (unlock) {
              LockOSThread.unlock();
              assertEquals(
                  Goroutine.RUNNING, me.status(), "round " + round + ": runnable after its unlock");
              if (relock) {
                LockOSThread.lock();
                assertEquals(1, LockOSThread.lockCount(), "round " + round + ": relocked");
                LockOSThread.unlock();
              }
              for (int k = 0; k < 3; k++) {
                Thread.sleep(1); // parks: its entry must have gone back to a queue
              }
            }
          });
      assertWorldStops(s, 2, "round " + i + ": ");
    }
    assertEquals(ROUNDS, forwarded.get(), "every round forwarded its entry to the running G's M");
  }

  /**
   * Locks the calling G {@code me} and queues an entry of it, as a late stack walker can, then
   * spins until the other P's M has dequeued that entry and forwarded it here, or 10 s
   * pass: a park would take the forward. Returns the G's M. Called only by {@code me}.
   */
  private static Machine lockAndAwaitForward(Goroutine me) {
    LockOSThread.lock();
    Machine mine = me.runningM();
    SchedTesting.queueEntryUnlooked(me);
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (!mine.lockedForwardPending() && System.nanoTime() - deadline < 0) {
      Thread.onSpinWait();
    }
    return mine;
  }

  /**
   * A stop-the-world waits for every P: one lost by a forward never stops, and this fails with
   * {@code what} and the scheduler's state. A resize to the current {@code procs} Ps, through
   * the stop-the-world itself: {@code gomaxprocs(procs)} returns at once when the count does not
   * change, and so stopped nothing and never failed. The stops are counted, so that a resize
   * that learns the same shortcut fails here too.
   */
  private static void assertWorldStops(Sched s, int procs, String what) throws Exception {
    assertEquals(procs, s.gomaxprocs(), what + "Ps");
    long stops = s.gomaxprocsChanges.sum();
    Thread stw = Thread.ofPlatform().start(() -> s.stw.resize(procs, true));
    stw.join(20_000);
    assertTrue(!stw.isAlive(), what + "stop-the-world hangs\n" + dump(s));
    assertEquals(stops + 1, s.gomaxprocsChanges.sum(), what + "the world never stopped");
  }
}
