package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.dump;
import static io.gmp4j.runtime.SchedTesting.runOnG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A readying that reaches the scheduler while the G is mounted inside a syscall bracket (JDK 25's
 * stack walker resubmits a thread it suspended as runnable; Sched.ready drops the submit of a
 * mounted thread, but not one that looked before the M mounted it: Sched.readyLooked) takes the
 * G out of _Gsyscall with no park. Its exitsyscall must still get the P back ('A spurious submit
 * inside the bracket' in Syscall): before, it did nothing, and the G ran on without a P until it
 * parked, out of sysmon's sight. Here the readying comes from a platform thread, as the walker's
 * does, and the test waits until another M has popped the entry and found the thread mounted.
 */
class SpuriousSubmitInSyscallTest {
  private static final int ROUNDS = 200;

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void exitsyscallAfterASpuriousSubmitGetsThePBack() throws Exception {
    Sched s = SchedTesting.newSched(2); // no sysmon: nobody retakes the P left in the call
    runOnG(
        s,
        30,
        () -> {
          Goroutine me = (Goroutine) VirtualThreads.scheduler(Thread.currentThread());
          for (int i = 0; i < ROUNDS; i++) {
            round(s, me, i);
          }
        });
  }

  /**
   * At one P, the resubmit's entry cannot run before exitsyscall: the G is still runnable and
   * queued when it leaves the call, and must get its P back all the same. Its queued entry then
   * resumes the G when the G yields (the yield's own submit finds it queued).
   */
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void exitsyscallBeforeTheResubmitRunsGetsThePBack() throws Exception {
    Sched s = SchedTesting.newSched(1);
    runOnG(
        s,
        30,
        () -> {
          Goroutine me = (Goroutine) VirtualThreads.scheduler(Thread.currentThread());
          assertTrue(Syscall.enter(), "entered");
          SchedTesting.readyUnlooked(me); // spins: no park inside the bracket
          assertEquals(Goroutine.RUNNABLE, me.status(), "the resubmit's entry ran");
          exitKeepsTheP(s, me);
          Thread.yield(); // the queued entry resumes it
        });
    Thread next = s.newBuilder().start(() -> {});
    assertTrue(next.join(Duration.ofSeconds(20)), "the P was lost\n" + dump(s));
  }

  /** The walker's submit itself, of the thread mounted in the bracket, readies nothing. */
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void aSubmitOfTheMountedThreadLeavesItInTheCall() throws Exception {
    Sched s = SchedTesting.newSched(1);
    runOnG(
        s,
        30,
        () -> {
          Goroutine me = (Goroutine) VirtualThreads.scheduler(Thread.currentThread());
          assertTrue(Syscall.enter(), "entered");
          SchedTesting.submitLikeTheStackWalker(me);
          assertEquals(Goroutine.SYSCALL, me.status(), "the submit readied a mounted thread");
          assertEquals(1L, s.nGsyscall.sum(), "nGsyscall");
          exitKeepsTheP(s, me);
        });
  }

  /** Leaves the bracket of the calling G {@code me}: its M holds a P after, counted out. */
  private static void exitKeepsTheP(Sched s, Goroutine me) {
    Syscall.exit(true);
    Machine mp = me.runningM();
    assertTrue(!mp.lostP() && mp.p != null, "no P after exitsyscall on " + mp);
    assertEquals(0L, s.nGsyscall.sum(), "nGsyscall after the call");
  }

  /** One bracket with a resubmit inside it. Runs on the G; never parks inside the bracket. */
  private static void round(Sched s, Goroutine me, int i) throws InterruptedException {
    Machine before = me.runningM();
    assertTrue(Syscall.enter(), "entered");
    assertEquals(Goroutine.SYSCALL, me.status(), "round " + i + ": in the call");
    Thread walker = Thread.ofPlatform().start(() -> s.readyUnlooked(me));
    // Spin, not join: a park here would be the other way out of _Gsyscall.
    long deadline = System.nanoTime() + 10_000_000_000L;
    while ((walker.isAlive() || me.status() != Goroutine.RUNNING)
        && System.nanoTime() - deadline < 0) {
      Thread.onSpinWait();
    }
    assertEquals(
        Goroutine.RUNNING, me.status(), "round " + i + ": the resubmit's entry did not run");
    assertEquals(before, me.runningM(), "round " + i + ": the G moved inside the bracket");
    Syscall.exit(true);
    Machine mp = me.runningM();
    assertTrue(!mp.lostP() && mp.p != null, "round " + i + ": no P after exitsyscall on " + mp);
    assertEquals(0L, s.nGsyscall.sum(), "round " + i + ": nGsyscall counted twice or never");
  }
}
