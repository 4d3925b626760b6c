package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.dump;
import static io.gmp4j.runtime.SchedTesting.poll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Stress of the claim race in 'Hog hand-off' (HogHandoff): Gs that never poll keep using their
 * P (readying new Gs into its owner-only run queue, entering and leaving syscalls, yielding)
 * while sysmon retakes it over and over. A scheduler of its own with a 100us time slice and a
 * 100us hand-off makes retakes hundreds of times more frequent than the defaults do.
 *
 * <p>Every G must run exactly once (a put into a P that someone else owns loses or duplicates
 * Gs, and a duplicated G kills its M with "execute: bad status"), every retake must be handed
 * off exactly once (at the end every P is idle, wired to no M, and no M is dead), and there must
 * have been retakes. Scaled by {@code -Dgmp.stress=N}.
 */
class HogHandoffStressTest {
  private static final int STRESS = Integer.getInteger("gmp.stress", 1);

  @Test
  @Timeout(value = 120, threadMode = SEPARATE_THREAD)
  void retakesRacingPOperationsLoseAndDuplicateNothing() throws Exception {
    final int nprocs = 2;
    final int hogs = 4;
    final long runNanos = 300_000_000L * STRESS;
    Sched s = new Sched(nprocs);
    // Idle Ms exit soon, so that none of this scheduler's gmp-m threads outlives the test (other
    // tests look for carriers by name).
    s.idleThreadTimeoutNanos = 20_000_000L;
    s.startSysmon(100_000, 100_000, 0, false, false);
    Thread.Builder.OfVirtual builder = s.newBuilder();

    AtomicIntegerArray ran = new AtomicIntegerArray(1 << 22);
    AtomicInteger created = new AtomicInteger();
    AtomicInteger syscalls = new AtomicInteger();
    List<Thread> hogThreads = new ArrayList<>();
    for (int h = 0; h < hogs; h++) {
      hogThreads.add(builder.start(() -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        long deadline = System.nanoTime() + runNanos;
        for (int k = 0; System.nanoTime() - deadline < 0; k++) {
          long spin = System.nanoTime() + r.nextInt(50_000);
          while (System.nanoTime() - spin < 0) {
            Thread.onSpinWait(); // no poll: sysmon's retakes land here, between P operations
          }
          int burst = 1 + r.nextInt(8);
          for (int b = 0; b < burst; b++) {
            int id = created.getAndIncrement();
            if (id >= ran.length()) {
              return;
            }
            // A G started by a G: adopt, then ready under a claim on this M's P.
            Thread.ofVirtual().start(() -> {
              ran.incrementAndGet(id);
              if ((id & 7) == 0) {
                Thread.yield(); // the M's carrier-side submit, inside the run
              }
            });
          }
          if ((k & 31) == 7) {
            boolean entered = Hooks.enterSyscall(); // claims, then unwires the P
            syscalls.incrementAndGet();
            Hooks.exitSyscall(entered); // fast path reopens the word, slow paths yield
          }
          if ((k & 15) == 0) {
            Thread.yield(); // the run ends: closePHold races sysmon's CAS
          }
        }
      }));
    }
    for (Thread t : hogThreads) {
      if (!t.join(java.time.Duration.ofSeconds(60))) {
        throw new AssertionError("a hog did not finish\n" + s.schedtrace(true));
      }
    }
    int n = Math.min(created.get(), ran.length());
    boolean allRan = poll(20_000, () -> {
      for (int i = 0; i < n; i++) {
        if (ran.get(i) == 0) {
          return false;
        }
      }
      return true;
    });
    int missing = 0;
    for (int i = 0; i < n; i++) {
      assertTrue(ran.get(i) <= 1, "G #" + i + " ran " + ran.get(i) + " times");
      missing += ran.get(i) == 0 ? 1 : 0;
    }
    assertTrue(allRan, missing + " of " + n + " Gs never ran\n" + dump(s));

    boolean quiet = poll(10_000, () -> s.npidle == nprocs && s.numGoroutine() == 0);
    assertTrue(quiet, "the scheduler did not go idle\n" + s.schedtrace(true));
    long handoffs = s.preemptHandoffs.sum();
    System.out.printf("HogHandoffStressTest: %d Gs, %d syscalls, %d retakes, %d syscall"
        + " hand-offs%n", n, syscalls.get(), handoffs, s.syscallHandoffs.sum());
    assertTrue(handoffs > 0, "no retake happened\n" + s.schedtrace(true));
    for (Processor pp : s.allp) {
      assertEquals(Processor.IDLE, pp.status, pp.toString());
      assertEquals(null, pp.m, pp.toString());
      assertTrue(pp.runqEmpty(), pp.toString());
    }
    assertEquals(0, s.runqsize(), s.schedtrace(true));
    List<Machine> ms = List.copyOf(s.allm);
    for (Machine mp : ms) {
      assertTrue(mp.isAlive() || !s.allm.contains(mp), "M" + mp.id + " died\n"
          + s.schedtrace(true));
      assertEquals(null, mp.p, mp + " still holds a P\n" + s.schedtrace(true));
    }
    assertTrue(poll(10_000, s.allm::isEmpty), "idle Ms did not exit\n" + s.schedtrace(true));
    for (Machine mp : ms) {
      mp.join(5_000);
      assertTrue(!mp.isAlive(), mp + " still alive");
    }
  }
}
