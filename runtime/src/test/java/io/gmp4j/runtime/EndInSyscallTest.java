package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.dump;
import static io.gmp4j.runtime.SchedTesting.poll;
import static io.gmp4j.runtime.SchedTesting.runOnG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A G whose thread ends inside a syscall bracket (an exitsyscall the JDK never ran: say, its
 * advice skipped by an error) leaves no trace in /sched/goroutines/not-in-go: gdestroy counts
 * it out of nGsyscall, as ready does for a G that parked inside the bracket. And its P, left in
 * _Psyscall, comes back through sysmon's retake.
 */
class EndInSyscallTest {
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void aGThatEndsInASyscallIsCountedOut() throws Exception {
    Sched s = SchedTesting.newSched(1);
    s.startSysmon(10_000_000L, 0, 0, false, false);
    runOnG(
        s,
        20,
        () -> {
          assertTrue(Syscall.enter(), "entered");
          assertEquals(1L, s.nGsyscall.sum(), "in the syscall");
          // ends here, inside the bracket
        });
    assertTrue(
        poll(10_000, () -> s.nGsyscall.sum() == 0),
        "nGsyscall " + s.nGsyscall.sum() + " after the G ended\n" + dump(s));
    // Its P is not lost: the next G runs (sysmon retakes the P from the dead G's syscall).
    Thread next = s.newBuilder().start(() -> {});
    assertTrue(next.join(Duration.ofSeconds(20)), "no P after the G ended\n" + dump(s));
  }
}
