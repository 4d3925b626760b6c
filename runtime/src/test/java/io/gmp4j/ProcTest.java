package io.gmp4j;

import static io.gmp4j.GmpTesting.STRESS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Ports of Go's black-box scheduler tests in {@code src/runtime/proc_test.go} (Go 1.26):
 * TestGoroutineParallelism, TestGoroutineParallelism2 (the "load" variant), TestYieldProgress,
 * TestNumGoroutine and TestStopTheWorldDeadlock. In Go the test function is itself a goroutine,
 * so each port runs its body in a G ({@link GmpTesting#runInG}); the test thread only waits for it.
 *
 * <p>Go's spin loops ({@code for atomic.LoadUint32(&x) != expected {}}) rely on the 10-minute
 * {@code go test} timeout. Here a spinner gives up after {@link #SPIN_SECONDS}, records the
 * schedtrace of that moment and releases everyone, so a scheduler that fails to run the Gs in
 * parallel fails the test instead of pinning Ps forever (which would also hang the GOMAXPROCS
 * restore: a stop-the-world waits for every running G to block or yield).
 */
@ExtendWith(SchedTraceOnFailure.class)
class ProcTest {
  /** How long a spinner waits for its turn before declaring the Gs not parallel. */
  private static final long SPIN_SECONDS = 10;

  /**
   * Go's {@code for atomic.LoadUint32(&x) != expected {}}, bounded by {@code deadline}: returns
   * false (after recording a schedtrace in {@code failure}) if it gave up, or if another spinner
   * already did.
   */
  private static boolean spinUntil(
      AtomicInteger x, int expected, long deadline, AtomicReference<String> failure, String who) {
    while (x.get() != expected) {
      if (failure.get() != null) {
        return false;
      }
      if (System.nanoTime() - deadline > 0) {
        failure.compareAndSet(
            null,
            who
                + " waited "
                + SPIN_SECONDS
                + " s for x == "
                + expected
                + " but x == "
                + x.get()
                + ": the Gs did not run in parallel\n"
                + Gmp.schedtrace(true));
        return false;
      }
      Thread.onSpinWait();
    }
    return true;
  }

  // ------------------------------------------------------------------------------------------
  // Go: TestGoroutineParallelism (proc_test.go). P=4, N=10: each try starts P goroutines;
  // goroutine p waits for x == P*i+p and then bumps x, three times. This passes only if all P
  // goroutines run at the same time, so it checks that wakep and spinning Ms get every P running.

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void testGoroutineParallelism() throws Exception {
    final int procs = 4;
    final int tries = 10 * STRESS;
    int prev = Gmp.gomaxprocs(procs);
    try {
      GmpTesting.runInG(
          "TestGoroutineParallelism",
          50,
          () -> {
            for (int attempt = 0; attempt < tries; attempt++) {
              AtomicReference<String> failure = new AtomicReference<>();
              CountDownLatch done = new CountDownLatch(procs);
              AtomicInteger x = new AtomicInteger();
              long deadline = System.nanoTime() + SPIN_SECONDS * 1_000_000_000L;
              for (int p = 0; p < procs; p++) {
                final int pp = p;
                // Test that all P goroutines are scheduled at the same time.
                Gmp.go(
                    () -> {
                      for (int i = 0; i < 3; i++) {
                        int expected = procs * i + pp;
                        if (!spinUntil(x, expected, deadline, failure, "goroutine " + pp)) {
                          break;
                        }
                        x.set(expected + 1);
                      }
                      done.countDown();
                    });
              }
              GmpTesting.await(done, 2 * SPIN_SECONDS, "try " + attempt);
              if (failure.get() != null) {
                throw new AssertionError("try " + attempt + ": " + failure.get());
              }
              assertEquals(3 * procs, x.get(), "try " + attempt);
            }
          });
    } finally {
      GmpTesting.restoreProcs(prev);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Go: TestGoroutineParallelism2 (proc_test.go), the "load" variant (netpoll has no gmp4j
  // counterpart yet). First P goroutines spin until all have arrived, so that their Ms are about
  // to park when the real test starts; then the P goroutines are spawned nested, P/2 goroutines
  // starting 2 each. A nested spawn puts the new G in the spawner's runnext, so the other Ps only
  // get it by stealing runnext (stealWork's last pass).

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void testGoroutineParallelism2Load() throws Exception {
    final int procs = 4;
    final int tries = 10 * STRESS;
    int prev = Gmp.gomaxprocs(procs);
    try {
      GmpTesting.runInG(
          "TestGoroutineParallelism2(load)",
          50,
          () -> {
            for (int attempt = 0; attempt < tries; attempt++) {
              long deadline = System.nanoTime() + SPIN_SECONDS * 1_000_000_000L;
              AtomicReference<String> failure = new AtomicReference<>();
              {
                // Create P goroutines and wait until they all run. When we run the actual test
                // below, worker threads running the goroutines will start parking.
                CountDownLatch loaded = new CountDownLatch(1);
                AtomicInteger x = new AtomicInteger();
                for (int p = 0; p < procs; p++) {
                  Gmp.go(
                      () -> {
                        if (x.incrementAndGet() == procs) {
                          loaded.countDown();
                          return;
                        }
                        spinUntil(x, procs, deadline, failure, "load goroutine");
                      });
                }
                GmpTesting.await(loaded, 2 * SPIN_SECONDS, "load phase of try " + attempt);
                if (failure.get() != null) {
                  throw new AssertionError("load phase of try " + attempt + ": " + failure.get());
                }
              }
              CountDownLatch done = new CountDownLatch(procs);
              AtomicInteger x = new AtomicInteger();
              // Spawn P goroutines in a nested fashion just to differ from
              // TestGoroutineParallelism.
              for (int p = 0; p < procs / 2; p++) {
                final int pp = p;
                Gmp.go(
                    () -> {
                      for (int p2 = 0; p2 < 2; p2++) {
                        final int pp2 = p2;
                        Gmp.go(
                            () -> {
                              for (int i = 0; i < 3; i++) {
                                int expected = procs * i + pp * 2 + pp2;
                                if (!spinUntil(
                                    x,
                                    expected,
                                    deadline,
                                    failure,
                                    "goroutine " + pp + "." + pp2)) {
                                  break;
                                }
                                x.set(expected + 1);
                              }
                              done.countDown();
                            });
                      }
                    });
              }
              GmpTesting.await(done, 2 * SPIN_SECONDS, "try " + attempt);
              if (failure.get() != null) {
                throw new AssertionError("try " + attempt + ": " + failure.get());
              }
              assertEquals(3 * procs, x.get(), "try " + attempt);
            }
          });
    } finally {
      GmpTesting.restoreProcs(prev);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Go: TestYieldProgress (proc_test.go; TestYieldLockedProgress needs lockOSThread, which
  // gmp4j does not have yet). A goroutine loops { select { case <-c: cack <- true; return;
  // default: Gosched() } }; main sleeps 10 ms, sends on c and waits for cack. The yielding loop
  // must not starve main, whose sleep ends on a JDK timer thread (a global-queue wake-up).

  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void testYieldProgress() throws Exception {
    for (int i = 0; i < 10 * STRESS; i++) {
      GmpTesting.runInG("TestYieldProgress", 20, ProcTest::yieldProgress);
    }
  }

  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void testYieldProgressGomaxprocs1() throws Exception {
    int prev = Gmp.gomaxprocs(1);
    try {
      for (int i = 0; i < 10 * STRESS; i++) {
        GmpTesting.runInG("TestYieldProgress at gomaxprocs(1)", 20, ProcTest::yieldProgress);
      }
    } finally {
      GmpTesting.restoreProcs(prev);
    }
  }

  private static void yieldProgress() throws InterruptedException {
    AtomicBoolean c = new AtomicBoolean();
    CountDownLatch cack = new CountDownLatch(1);
    AtomicLong yields = new AtomicLong();
    Thread yielder =
        Gmp.go(
            () -> {
              while (!c.get()) {
                yields.incrementAndGet();
                Gmp.gosched();
              }
              cack.countDown();
            });
    Thread.sleep(10);
    c.set(true);
    GmpTesting.await(cack, 10, "yielder ack (" + yields.get() + " yields)");
    GmpTesting.join(yielder, 10, "yielder");
  }

  // ------------------------------------------------------------------------------------------
  // Go: TestNumGoroutine (proc_test.go). Go runs testprog NumGoroutine in a fresh process and
  // wants "1" (ChildJvmTest.testNumGoroutineFreshJvm does that); in this shared JVM the check is
  // relative to the Gs alive before. Then, up to 10 tries as in Go, NumGoroutine must match the
  // goroutines in the dump: the "  G" lines of schedtrace detail. Both are racy (a G that has
  // just ended is reaped by its M asynchronously), hence Go's retries.

  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void testNumGoroutine() throws Exception {
    int tries = 0;
    for (; ; tries++) {
      int before = Gmp.numGoroutine(); // the test thread is not a G
      AtomicInteger inside = new AtomicInteger(-1);
      Thread g = Gmp.go(() -> inside.set(Gmp.numGoroutine()));
      GmpTesting.join(g, 10, "numGoroutine reader");
      if (inside.get() == before + 1) {
        break;
      }
      if (tries >= 10) {
        throw new AssertionError(
            "NumGoroutine inside a G = "
                + inside.get()
                + ", want "
                + (before + 1)
                + " ("
                + before
                + " before it started)\n"
                + Gmp.schedtrace(true));
      }
      Thread.sleep(5);
    }

    CountDownLatch release = new CountDownLatch(1);
    int parked = 20;
    Thread[] gs = new Thread[parked];
    for (int i = 0; i < parked; i++) {
      gs[i] =
          Gmp.go(
              () -> {
                try {
                  release.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
    }
    try {
      numGoroutineMatchesDump(parked);
      // And from inside a G, as Go's test (itself a goroutine) does it.
      GmpTesting.runInG("TestNumGoroutine in a G", 20, () -> numGoroutineMatchesDump(parked + 1));
    } finally {
      release.countDown();
      for (Thread t : gs) {
        GmpTesting.join(t, 10, "parked G");
      }
    }
  }

  private static void numGoroutineMatchesDump(int atLeast) throws InterruptedException {
    for (int i = 0; ; i++) {
      // Give goroutines about to exit a chance to exit.
      Gmp.gosched();
      int n = Gmp.numGoroutine();
      String dump = Gmp.schedtrace(true);
      long nstk = dump.lines().filter(l -> l.startsWith("  G")).count();
      if (n == nstk) {
        assertTrue(n >= atLeast, "NumGoroutine=" + n + ", want at least " + atLeast);
        return;
      }
      if (i >= 10) {
        throw new AssertionError(
            "NumGoroutine="
                + n
                + ", but found "
                + nstk
                + " goroutines in the schedtrace dump:\n"
                + dump);
      }
      Thread.sleep(1);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Go: TestStopTheWorldDeadlock (proc_test.go). GOMAXPROCS(3); one goroutine runs a
  // stop-the-world 1000 times while another calls GOMAXPROCS(3) 1000 times, and perpetuumMobile
  // keeps respawning itself. gmp4j's only stop-the-world is a GOMAXPROCS change, so one G
  // alternates gomaxprocs(2)/gomaxprocs(3) (a real resize each time), a second calls
  // gomaxprocs(3) as Go's does, and the test's platform thread resizes too (a stop-the-world run
  // in place rather than on a gmp-stw thread). It must finish within 30 s.

  private static final AtomicBoolean stop = new AtomicBoolean();
  private static final AtomicLong perpetuumSpawns = new AtomicLong();

  private static void perpetuumMobile() {
    if (!stop.get()) {
      perpetuumSpawns.incrementAndGet();
      Gmp.go(ProcTest::perpetuumMobile);
    }
  }

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void testStopTheWorldDeadlock() throws Exception {
    final int iterations = 200 * STRESS;
    int maxprocs = Gmp.gomaxprocs(3);
    long t0 = System.nanoTime();
    stop.set(false);
    perpetuumSpawns.set(0);
    try {
      CountDownLatch compl = new CountDownLatch(2);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Gmp.go(
          () -> {
            try {
              for (int i = 0; i != iterations; i++) {
                Gmp.gomaxprocs(i % 2 == 0 ? 2 : 3);
              }
            } catch (Throwable t) {
              failure.compareAndSet(null, t);
            }
            compl.countDown();
          });
      Gmp.go(
          () -> {
            try {
              for (int i = 0; i != iterations; i++) {
                Gmp.gomaxprocs(3);
              }
            } catch (Throwable t) {
              failure.compareAndSet(null, t);
            }
            compl.countDown();
          });
      Gmp.go(ProcTest::perpetuumMobile);
      for (int i = 0; i != iterations / 4; i++) {
        Gmp.gomaxprocs(i % 2 == 0 ? 4 : 3); // from a platform thread
      }
      GmpTesting.await(compl, 30, "TestStopTheWorldDeadlock resizers");
      if (failure.get() != null) {
        throw new AssertionError("a resizer threw", failure.get());
      }
      long before = perpetuumSpawns.get();
      assertTrue(
          GmpTesting.poll(10_000, () -> perpetuumSpawns.get() > before),
          "perpetuumMobile made no progress after the resizes\n" + Gmp.schedtrace(true));
    } finally {
      stop.set(true);
      GmpTesting.restoreProcs(maxprocs);
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    System.out.println(
        "TestStopTheWorldDeadlock: "
            + (iterations * 2 + iterations / 4)
            + " gomaxprocs calls, "
            + perpetuumSpawns.get()
            + " perpetuumMobile spawns in "
            + ms
            + " ms");
    assertTrue(ms < 30_000, "took " + ms + " ms, want < 30 s");
  }
}
