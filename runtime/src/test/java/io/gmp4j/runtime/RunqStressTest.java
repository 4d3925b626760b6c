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
  @Test
  @Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = SEPARATE_THREAD)
  void putStealRunnextLosesAndDuplicatesNothing() throws Exception {
    int total = 300_000 * Integer.getInteger("gmp.stress", 1);
    int thieves = 3;
    Sched sched = new Sched(1);
    Processor owner = new Processor(sched, 0);
    owner.setStatus(Processor.IDLE, "procresize"); // as procresize and acquireP would, so
    owner.setStatus(Processor.RUNNING, "acquireP"); // that runnext thieves take Go's 3us back-off
    AtomicIntegerArray taken = new AtomicIntegerArray(total);
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
    for (int i = 0; i < total; i++) {
      owner.runqPut(new Goroutine(sched, i, null, null), r.nextBoolean());
      if (r.nextInt(3) == 0) {
        Goroutine g = owner.runqGet();
        if (g != null) {
          taken.incrementAndGet((int) g.goid);
        }
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
    for (int i = 0; i < total; i++) {
      assertEquals(1, taken.get(i), "G" + i + " taken " + taken.get(i) + " times");
    }
  }
}
