package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.dump;
import static io.gmp4j.runtime.SchedTesting.poll;
import static io.gmp4j.runtime.SchedTesting.runOnG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A G that is asked to yield while it sits in a syscall bracket, and polls while pinned: the Java
 * code of a native upcall inside {@code Gmp.syscall}, here a class initializer (which pins its
 * virtual thread in JDK 25). Its M left its P in {@code _Psyscall}; the poll must not take a
 * second P (it did once: exitsyscall then found the old P free, could not wire it on top of the
 * new one, and left it idle on no list, so the scheduler lost a P for good).
 */
class PinnedPollInSyscallTest {
  /** Polls in its initializer, so on a pinned thread. Initialized once, by the test's G. */
  static final class PollsInClinit {
    static final boolean POLLED;

    static {
      Preempt.poll();
      POLLED = true;
    }

    private PollsInClinit() {}
  }

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void pinnedPollInsideASyscallKeepsEveryP() throws Exception {
    final int nprocs = 2;
    Sched s = SchedTesting.newSched(nprocs);
    // A 1s slice: sysmon does not ask the G to yield on its own. With the other P idle it
    // leaves the syscall's P alone for 10ms; a call held up longer (a loaded machine) loses it,
    // and then the exit yields to the global queue, which every check below allows too.
    s.startSysmon(1_000_000_000L, 0, 0, false, false);
    runOnG(
        s,
        20,
        () -> {
          Goroutine gp = (Goroutine) VirtualThreads.scheduler(Thread.currentThread());
          boolean entered = Syscall.enter();
          assertEquals(Goroutine.SYSCALL, gp.status(), "entered the syscall");
          Preempt.request(gp, null, 0, "timeslice"); // as sysmon would
          assertTrue(PollsInClinit.POLLED); // the pinned poll: its yield fails
          Syscall.exit(entered);
          assertEquals(Goroutine.RUNNING, gp.status(), "left the syscall");
        });
    boolean quiet = poll(10_000, () -> s.npidle == nprocs && s.numGoroutine() == 0);
    assertTrue(quiet, "a P is lost: npidle=" + s.npidle + "\n" + dump(s));
    for (Processor pp : s.allp) {
      assertEquals(Processor.IDLE, pp.status(), pp.toString());
      assertEquals(null, pp.m, pp.toString());
    }
    assertTrue(poll(10_000, s.allm::isEmpty), "idle Ms did not exit\n" + s.schedtrace(true));
  }
}
