package io.gmp4j.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Concurrency stress of the local run queue: one owner puts (to the ring and to runnext, with
 * overflow to the global queue) and gets, while thieves steal into their own Ps, runnext
 * included. Every G must be taken exactly once: none lost, none run twice. Scaled by
 * {@code -Dgmp.stress=N}.
 */
class RunqStressTest {
  /**
   * The most Gs the owner puts after the counted ones while no thief has stolen yet. The
   * thieves may not have had a CPU by then: the counted loop took 0.5-0.8 s cold, less once
   * earlier tests in the fork made the JIT compile the queue's code, and on a loaded machine a
   * thread just started can wait a while for a CPU. The owner goes on, sleeping a millisecond
   * every 64 Gs in case a thief waits for its CPU: 16,384 sleeps, so the 10 s limit comes
   * first, and only then does the check say that no steal happened.
   */
  private static final int UNTIL_A_STEAL = 1 << 20;

  @Test
  @Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = SEPARATE_THREAD)
  void putStealRunnextLosesAndDuplicatesNothing() throws Exception {
    int total = 300_000 * Integer.getInteger("gmp.stress", 1);
    int thieves = 3;
    Sched sched = new Sched(1);
    Processor owner = new Processor(sched, 0);
    owner.setStatus(Processor.IDLE, "procresize"); // as procresize and acquireP would, so
    owner.setStatus(Processor.RUNNING, "acquireP"); // that runnext thieves take Go's 3us back-off
    AtomicIntegerArray taken = new AtomicIntegerArray(total + UNTIL_A_STEAL);
    AtomicBoolean done = new AtomicBoolean();
    java.util.concurrent.atomic.LongAdder stolen = new java.util.concurrent.atomic.LongAdder();
    List<Thread> ts = new ArrayList<>();
    List<Processor> thiefPs = new ArrayList<>();
    for (int t = 0; t < thieves; t++) {
      Processor mine = new Processor(sched, t + 1);
      thiefPs.add(mine);
      ts.add(
          Thread.ofPlatform()
              .daemon()
              .name("thief-" + t)
              .start(
                  () -> {
                    ThreadLocalRandom r = ThreadLocalRandom.current();
                    while (!done.get()) {
                      Goroutine gp = mine.runqSteal(owner, r.nextInt(8) == 0);
                      if (gp != null) {
                        stolen.increment();
                        taken.incrementAndGet((int) gp.goid);
                        for (Goroutine g; (g = mine.runqGet()) != null; ) {
                          taken.incrementAndGet((int) g.goid);
                        }
                      } else {
                        Thread.onSpinWait();
                      }
                    }
                  }));
    }
    ThreadLocalRandom r = ThreadLocalRandom.current();
    int n = 0;
    for (; n < total; n++) {
      putAndMaybeGet(owner, new Goroutine(sched, n, null, null), r, taken);
    }
    // Until a steal: see UNTIL_A_STEAL.
    long stealBy = System.nanoTime() + 10_000_000_000L;
    for (; stolen.sum() == 0 && n < total + UNTIL_A_STEAL && System.nanoTime() - stealBy < 0; n++) {
      putAndMaybeGet(owner, new Goroutine(sched, n, null, null), r, taken);
      if ((n & 63) == 0) {
        Thread.sleep(1);
      }
    }
    done.set(true);
    for (Thread t : ts) {
      assertTrue(
          t.join(java.time.Duration.ofSeconds(30)),
          () ->
              t.getName()
                  + " did not stop: "
                  + java.util.Arrays.toString(t.getStackTrace())
                  + "\nowner "
                  + owner
                  + "\nthieves "
                  + thiefPs);
    }
    for (Goroutine g; (g = owner.runqGet()) != null; ) {
      taken.incrementAndGet((int) g.goid);
    }
    for (Processor p : thiefPs) {
      assertTrue(p.runqEmpty(), "thief P left non-empty");
    }
    sched.lock.lock();
    try {
      for (Goroutine g; (g = sched.runq.globRunqGet()) != null; ) {
        taken.incrementAndGet((int) g.goid);
      }
    } finally {
      sched.lock.unlock();
    }
    assertTrue(stolen.sum() > 0, "no steal happened: the race was not exercised");
    for (int i = 0; i < n; i++) {
      assertEquals(1, taken.get(i), "G" + i + " taken " + taken.get(i) + " times");
    }
  }

  /** One step of the owner: puts gp (to runnext half the time), and a third of the time gets. */
  private static void putAndMaybeGet(
      Processor owner, Goroutine gp, ThreadLocalRandom r, AtomicIntegerArray taken) {
    owner.runqPut(gp, r.nextBoolean());
    if (r.nextInt(3) == 0) {
      Goroutine g = owner.runqGet();
      if (g != null) {
        taken.incrementAndGet((int) g.goid);
      }
    }
  }
}
