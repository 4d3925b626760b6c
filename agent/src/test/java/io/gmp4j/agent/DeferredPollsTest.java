package io.gmp4j.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** 'Deferred polls': what DeferredPolls takes before its end, and that none falls between. */
class DeferredPollsTest {
  private final ClassLoader app = new ClassLoader(null) {};

  @Test
  void takesClassesUntilItsEndAndNoneAfter() {
    DeferredPolls d = new DeferredPolls(1_000_000, DeferredPolls.DEFAULT_DEADLINE_NANOS);
    assertTrue(d.defer(app, "com/acme/A", false));
    assertTrue(d.defer(app, "com/acme/B", false));
    assertTrue(d.deferring());
    assertEquals(Set.of("com/acme/A", "com/acme/B"), d.end());
    assertFalse(d.deferring());
    assertFalse(d.defer(app, "com/acme/C", false));
    assertEquals(Set.of("com/acme/A", "com/acme/B"), d.end());
    assertFalse(d.withoutPolls()); // each had early polls: no deadline
  }

  /**
   * 'The deadline': classes with early polls in an array loop that C2 may vectorize are taken
   * until it, and its end hands over those alone, with how many times they were taken; the
   * others stay deferred, one handed back joins them, and after it such a class is declined (its
   * array methods get their placed polls at load) while the others are still taken. With a
   * deadline of 0 none is ever taken.
   */
  @Test
  void classesWithArrayLoopsAreTakenUntilTheDeadline() {
    DeferredPolls d = new DeferredPolls(1_000_000, DeferredPolls.DEFAULT_DEADLINE_NANOS);
    assertTrue(d.deferringArrays());
    assertTrue(d.defer(app, "com/acme/Calls", false));
    assertTrue(d.defer(app, "com/acme/Arrays", true));
    assertTrue(d.defer(app, "com/acme/Arrays", true)); // a second loader's class of that name
    assertEquals(new DeferredPolls.Due(Set.of("com/acme/Arrays"), 2), d.endArrays());
    assertFalse(d.deferringArrays());
    assertTrue(d.deferring());
    assertFalse(d.defer(app, "com/acme/MoreArrays", true));
    assertTrue(d.defer(app, "com/acme/MoreCalls", false));
    assertEquals(new DeferredPolls.Due(Set.of(), 0), d.endArrays());
    d.handBack(Set.of("com/acme/Arrays")); // a thread stayed in it at the deadline
    assertEquals(Set.of("com/acme/Arrays", "com/acme/Calls", "com/acme/MoreCalls"), d.end());

    DeferredPolls atLoad = new DeferredPolls(1_000_000, 0);
    assertFalse(atLoad.deferringArrays());
    assertFalse(atLoad.defer(app, "com/acme/Arrays", true));
    assertTrue(atLoad.defer(app, "com/acme/Calls", false));
    assertEquals(Set.of("com/acme/Calls"), atLoad.end());
  }

  /**
   * Classes an AOT cache loaded before premain have no early polls: deferring them brings back
   * the deadline of step 2. Without the option set, premain does not defer them at all
   * ('Deferred polls by default').
   */
  @Test
  void classesWithoutEarlyPollsBringTheDeadline() {
    DeferredPolls d = new DeferredPolls(1_000_000, DeferredPolls.DEFAULT_DEADLINE_NANOS);
    d.deferAll(Set.of());
    assertFalse(d.withoutPolls());
    d.deferAll(Set.of("com/acme/Cached"));
    assertTrue(d.withoutPolls());
    assertEquals(Set.of("com/acme/Cached"), d.end());
  }

  /**
   * Classes deferred by many loading threads while the end comes: every class the deferral took
   * is in the set its end returns, so each either loads without polls and is retransformed, or
   * gets its polls at load ('Ordering' in DeferredPolls).
   */
  @Test
  @Timeout(60)
  void aClassIsEitherInTheEndsSetOrDeclined() throws Exception {
    for (int round = 0; round < 200; round++) {
      DeferredPolls d = new DeferredPolls(1_000_000, DeferredPolls.DEFAULT_DEADLINE_NANOS);
      int threads = 4;
      List<List<String>> taken = new ArrayList<>();
      CountDownLatch go = new CountDownLatch(1);
      AtomicInteger next = new AtomicInteger();
      List<Thread> loaders = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        List<String> mine = new ArrayList<>();
        taken.add(mine);
        loaders.add(
            Thread.ofPlatform()
                .start(
                    () -> {
                      try {
                        go.await();
                      } catch (InterruptedException e) {
                        return;
                      }
                      for (int i = 0; i < 500; i++) {
                        String name = "com/acme/C" + next.getAndIncrement();
                        if (d.defer(app, name, i % 3 == 0)) {
                          mine.add(name);
                        }
                      }
                    }));
      }
      go.countDown();
      Thread.onSpinWait();
      Set<String> ended = d.end();
      for (Thread t : loaders) {
        t.join();
      }
      int total = 0;
      for (List<String> mine : taken) {
        total += mine.size();
        assertTrue(ended.containsAll(mine), "round " + round + ": a deferred class was lost");
      }
      assertEquals(total, ended.size(), "round " + round);
    }
  }
}
