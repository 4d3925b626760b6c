package io.gmp4j.runtime;

import static io.gmp4j.runtime.SchedTesting.dump;
import static io.gmp4j.runtime.SchedTesting.runOnG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Go's goid cache ({@code Machine.newGoid}): a G's code takes goids from its M's batch of {@link
 * Sched#GOID_CACHE_BATCH} and counts its creations on the M; a platform thread takes one goid
 * from {@code goidgen} and counts in a shared counter. Gs created both ways at once, on two Ps,
 * must get distinct goids, and {@code /sched/goroutines-created} must count each exactly once.
 */
class GoidCacheTest {
  private static final int PARENTS = 4;
  private static final int PER_PARENT = 1_000;
  private static final int FROM_PLATFORM = 300;

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void goidsAreDistinctAndEveryCreationCountsOnce() throws Exception {
    Sched s = SchedTesting.newSched(2);
    long created0 = created(s);
    Set<Long> goids = ConcurrentHashMap.newKeySet();
    List<Long> duplicates = new ArrayList<>();
    int children = PARENTS * PER_PARENT + FROM_PLATFORM;
    CountDownLatch ran = new CountDownLatch(children);
    Runnable child =
        () -> {
          long goid = ((Goroutine) VirtualThreads.scheduler(Thread.currentThread())).goid;
          if (!goids.add(goid)) {
            synchronized (duplicates) {
              duplicates.add(goid);
            }
          }
          ran.countDown();
        };
    runOnG(
        s,
        40,
        () -> {
          List<Thread> creators = new ArrayList<>();
          for (int p = 0; p < PARENTS; p++) {
            creators.add(s.newBuilder().start(startChildren(s, PER_PARENT, child)));
          }
          creators.add(Thread.ofPlatform().start(startChildren(s, FROM_PLATFORM, child)));
          assertTrue(
              ran.await(30, TimeUnit.SECONDS),
              ran.getCount() + " of " + children + " children did not run\n" + dump(s));
          for (Thread t : creators) {
            t.join(); // every creation happens-before the count below
          }
        });
    assertEquals(
        0,
        duplicates.size(),
        "goids handed out twice, e.g. " + duplicates.subList(0, Math.min(10, duplicates.size())));
    assertEquals(children, goids.size(), "distinct goids");
    // The children, their PARENTS creators, and runOnG's own G.
    assertEquals(
        created0 + children + PARENTS + 1, created(s), "/sched/goroutines-created\n" + dump(s));
  }

  /** A creator's body: starts {@code n} Gs of {@code s} that run {@code child}. */
  private static Runnable startChildren(Sched s, int n, Runnable child) {
    return () -> {
      for (int i = 0; i < n; i++) {
        s.newBuilder().start(child);
      }
    };
  }

  private static long created(Sched s) {
    return ((Number) SchedMetrics.read(s).get("/sched/goroutines-created:goroutines")).longValue();
  }
}
