package io.gmp4j.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * White-box ports of Go's local run-queue tests (proc_test.go TestSchedLocalQueue,
 * TestSchedLocalQueueSteal, TestSchedLocalQueueEmpty; export_test.go RunSchedLocalQueueTest,
 * RunSchedLocalQueueStealTest, RunSchedLocalQueueEmptyTest) and of TestStealOrder
 * (RunStealOrderTest), on detached Ps and Gs that no M ever runs.
 */
class RunqTest {
  private final Sched sched = new Sched(1); // for runqputslow's global queue; starts no M

  private Goroutine[] gs(int n) {
    Goroutine[] gs = new Goroutine[n];
    for (int i = 0; i < n; i++) {
      gs[i] = new Goroutine(sched, i, null, null);
    }
    return gs;
  }

  /** Go's RunSchedLocalQueueTest. */
  @Test
  void schedLocalQueue() {
    Processor p = new Processor(sched, 0);
    Goroutine[] gs = gs(Processor.RUNQ_SIZE);
    for (int i = 0; i < gs.length; i++) {
      assertNull(p.runqGet(), "runq is not empty initially");
      for (int j = 0; j < i; j++) {
        p.runqPut(gs[i], false);
      }
      for (int j = 0; j < i; j++) {
        assertSame(gs[i], p.runqGet(), "bad element");
      }
      assertNull(p.runqGet(), "runq is not empty afterwards");
      assertTrue(p.runqEmpty());
    }
  }

  /** Go's RunSchedLocalQueueStealTest. */
  @Test
  void schedLocalQueueSteal() {
    Processor p1 = new Processor(sched, 0);
    Processor p2 = new Processor(sched, 1);
    Goroutine[] gs = gs(Processor.RUNQ_SIZE);
    int[] seen = new int[gs.length];
    for (int i = 0; i < gs.length; i++) {
      java.util.Arrays.fill(seen, 0);
      for (int j = 0; j < i; j++) {
        p1.runqPut(gs[j], false);
      }
      Goroutine gp = p2.runqSteal(p1, true);
      int s = 0;
      if (gp != null) {
        s++;
        seen[(int) gp.goid]++;
      }
      for (Goroutine g; (g = p2.runqGet()) != null; ) {
        s++;
        seen[(int) g.goid]++;
      }
      for (Goroutine g; (g = p1.runqGet()) != null; ) {
        seen[(int) g.goid]++;
      }
      for (int j = 0; j < i; j++) {
        assertEquals(1, seen[j], "g" + j + " seen " + seen[j] + " times, i=" + i);
      }
      assertTrue(
          s == i / 2 || s == i / 2 + 1,
          "bad steal " + s + ", want " + i / 2 + " or " + (i / 2 + 1) + ", i=" + i);
    }
  }

  /** Runnext is stolen only when the ring is empty and only on the last pass. */
  @Test
  void stealRunnextOnlyOnLastPass() {
    Processor victim = new Processor(sched, 0);
    Processor thief = new Processor(sched, 1);
    Goroutine[] gs = gs(1);
    victim.runqPut(gs[0], true);
    if (victim.runqEmpty()) {
      fail("runqempty says empty with a G in runnext");
    }
    if (Sched.RANDOMIZE && !victim.hasRunnext()) {
      return; // randomizeScheduler sent it to the ring; the ring tests cover that
    }
    assertNull(thief.runqSteal(victim, false), "runnext stolen before the last pass");
    assertSame(gs[0], thief.runqSteal(victim, true));
    assertTrue(victim.runqEmpty());
  }

  /** A put to a full ring moves 128 + 1 Gs, in order, to the global queue (runqputslow). */
  @Test
  void runqPutSlowMovesHalfPlusOne() {
    Processor p = new Processor(sched, 0);
    Goroutine[] gs = gs(Processor.RUNQ_SIZE + 1);
    for (Goroutine g : gs) {
      p.runqPut(g, false);
    }
    assertEquals(129, sched.runq.runqsize());
    assertEquals(128, p.runqSize());
    sched.lock.lock();
    try {
      for (int i = 0; i < 129; i++) {
        Goroutine g = sched.runq.globRunqGet();
        assertNotNull(g);
        if (!Sched.RANDOMIZE) {
          assertEquals(i < 128 ? i : 256, g.goid, "global queue order");
        }
      }
      assertNull(sched.runq.globRunqGet());
    } finally {
      sched.lock.unlock();
    }
    for (int i = 128; i < 256; i++) {
      assertEquals(i, p.runqGet().goid);
    }
  }

  /**
   * Go's RunSchedLocalQueueEmptyTest: runqempty never says "empty" while a G is queued, even as
   * a put with runnext kicks the old runnext to the ring and a get races it.
   */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = SEPARATE_THREAD)
  void schedLocalQueueEmpty() throws Exception {
    int iters = 20_000 * Integer.getInteger("gmp.stress", 1);
    Processor p = new Processor(sched, 0);
    Goroutine[] gs = gs(2);
    AtomicInteger ready = new AtomicInteger();
    AtomicInteger phase = new AtomicInteger(); // iteration the checker should run, +1
    AtomicInteger checked = new AtomicInteger();
    AtomicReference<String> failure = new AtomicReference<>();
    Thread checker =
        Thread.ofPlatform()
            .daemon()
            .start(
                () -> {
                  for (int i = 0; i < iters; i++) {
                    final int at = i;
                    if (!spinUntil(() -> phase.get() == at + 1) || !incrementAndSpin(ready)) {
                      failure.compareAndSet(null, "checker stuck at iteration " + i);
                      return;
                    }
                    if (p.runqEmpty()) {
                      failure.compareAndSet(null, "queue is empty at iteration " + i);
                    }
                    checked.set(i + 1);
                  }
                });
    for (int i = 0; i < iters; i++) {
      ready.set(0);
      boolean next0 = (i & 1) == 0;
      boolean next1 = (i & 2) == 0;
      p.runqPut(gs[0], next0);
      phase.set(i + 1);
      final int at = i;
      assertTrue(
          incrementAndSpin(ready),
          () ->
              "stuck at iteration "
                  + at
                  + " (ready "
                  + ready.get()
                  + ", checker: "
                  + failure.get()
                  + ") "
                  + p);
      p.runqPut(gs[1], next1);
      p.runqGet();
      assertTrue(
          spinUntil(() -> checked.get() == at + 1),
          () -> "the checker never checked" + " iteration " + at + " (" + failure.get() + ") " + p);
      p.runqGet();
      assertTrue(p.runqEmpty());
    }
    assertTrue(checker.join(java.time.Duration.ofSeconds(10)), "the checker did not end");
    assertNull(failure.get());
  }

  /** Counts {@code ready} up and spins until both sides have (10 s at most). */
  private static boolean incrementAndSpin(AtomicInteger ready) {
    ready.incrementAndGet();
    return spinUntil(() -> ready.get() == 2);
  }

  /**
   * Spins until {@code cond} holds, 10 s at most: a lost step fails instead of hanging. Every
   * 1024 spins it yields the CPU: when the other side waits on the same CPU (a loaded machine),
   * a pure spin hands over only when the OS's slice runs out, a few ms per handshake and three
   * handshakes an iteration, and 20,000 iterations took over 120 s on one CPU. 1024 spins are
   * some microseconds, far longer than the other side takes to answer when it runs, so the
   * yield never falls inside the race the test looks for.
   */
  private static boolean spinUntil(java.util.function.BooleanSupplier cond) {
    long deadline = System.nanoTime() + 10_000_000_000L;
    for (int spins = 1; !cond.getAsBoolean(); spins++) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      if ((spins & 1023) == 0) {
        Thread.yield();
      } else {
        Thread.onSpinWait();
      }
    }
    return true;
  }

  /** Go's RunStealOrderTest. */
  @Test
  void stealOrder() {
    for (int procs = 1; procs <= 64; procs++) {
      RandomOrder ord = new RandomOrder(procs);
      if (procs >= 3 && ord.coprimeCount() < 2) {
        fail("too few coprimes for " + procs + " procs");
      }
      for (int i = 0; i < procs * ord.coprimeCount(); i++) {
        boolean[] used = new boolean[procs];
        RandomOrder.Enum e = ord.start(i);
        int n = 0;
        for (; !e.done(); e.next()) {
          assertFalse(used[e.position()], "position " + e.position() + " visited twice");
          used[e.position()] = true;
          n++;
        }
        assertEquals(procs, n, "bad number of iterations");
      }
    }
    // Each (pos, inc) pair appears exactly once among procs*len(coprimes) starts.
    for (int procs = 2; procs <= 64; procs++) {
      RandomOrder ord = new RandomOrder(procs);
      Set<Long> seen = new HashSet<>();
      for (int i = 0; i < procs * ord.coprimeCount(); i++) {
        RandomOrder.Enum e = ord.start(i);
        assertTrue(
            seen.add(((long) e.position() << 32) | e.inc),
            "duplicate (pos, inc) for procs=" + procs + " i=" + i);
      }
    }
  }
}
