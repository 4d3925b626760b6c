package io.gmp4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The "everything else behaves as the JDK's scheduler": a goroutine is an ordinary JDK
 * virtual thread (uncaught-exception handlers, interrupts, join, thread locals, identity), only
 * its carriers are gmp4j's {@code gmp-m<id>} Ms, and every virtual thread it creates, however it
 * creates it, runs on gmp4j too. Also the names and shapes of Go's {@code /sched} metrics.
 */
@ExtendWith(SchedTraceOnFailure.class)
class JdkBehaviourTest {
  private static final String CARRIER = "@gmp-m";

  /** The carrier part of a mounted virtual thread's toString, e.g. "@gmp-m3". */
  private static String carrierOf(String vthreadToString) {
    int at = vthreadToString.lastIndexOf('@');
    return at < 0 ? "(unmounted: " + vthreadToString + ")" : vthreadToString.substring(at);
  }

  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void uncaughtExceptionGoesToHandlerAndMSurvives() throws Exception {
    AtomicReference<Thread> handledThread = new AtomicReference<>();
    AtomicReference<Throwable> handled = new AtomicReference<>();
    AtomicReference<String> carrier = new AtomicReference<>();
    CountDownLatch handlerRan = new CountDownLatch(1);
    RuntimeException boom = new RuntimeException("boom from a G");
    Thread g =
        Gmp.ofVirtual()
            .uncaughtExceptionHandler(
                (t, e) -> {
                  handledThread.set(t);
                  handled.set(e);
                  handlerRan.countDown();
                })
            .start(
                () -> {
                  carrier.set(carrierOf(Thread.currentThread().toString()));
                  throw boom;
                });
    GmpTesting.await(handlerRan, 10, "uncaught-exception handler");
    GmpTesting.join(g, 10, "throwing G");
    assertSame(g, handledThread.get());
    assertSame(boom, handled.get());
    assertTrue(carrier.get().startsWith(CARRIER), carrier.get());

    // The M that ran it survives: its thread is alive, and Gs keep running, on every P.
    String mName = carrier.get().substring(1);
    assertTrue(
        Thread.getAllStackTraces().keySet().stream()
            .anyMatch(t -> t.getName().equals(mName) && t.isAlive()),
        mName + " died after a G's uncaught exception\n" + Gmp.schedtrace(true));
    int procs = Gmp.gomaxprocs();
    List<Thread> after = new ArrayList<>();
    CountDownLatch ran = new CountDownLatch(4 * procs);
    for (int i = 0; i < 4 * procs; i++) {
      after.add(Gmp.go(ran::countDown));
    }
    GmpTesting.await(ran, 10, "Gs after the uncaught exception");
    for (Thread t : after) {
      GmpTesting.join(t, 10, "G after the uncaught exception");
    }
  }

  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void interruptWakesSleepingG() throws Exception {
    CountDownLatch sleeping = new CountDownLatch(1);
    AtomicReference<Throwable> woke = new AtomicReference<>();
    Thread g =
        Gmp.go(
            () -> {
              sleeping.countDown();
              try {
                Thread.sleep(60_000);
              } catch (Throwable e) {
                woke.set(e);
              }
            });
    GmpTesting.await(sleeping, 10, "G about to sleep");
    assertTrue(
        GmpTesting.poll(5_000, () -> g.getState() == Thread.State.TIMED_WAITING),
        "state " + g.getState());
    long t0 = System.nanoTime();
    g.interrupt();
    GmpTesting.join(g, 10, "interrupted sleeper");
    assertInstanceOf(InterruptedException.class, woke.get());
    assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "interrupt took too long to wake");
  }

  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void interruptWakesParkedG() throws Exception {
    CountDownLatch parking = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    Thread g =
        Gmp.go(
            () -> {
              parking.countDown();
              while (!Thread.currentThread().isInterrupted()) {
                LockSupport.park(this);
              }
              interrupted.set(true);
            });
    GmpTesting.await(parking, 10, "G about to park");
    assertTrue(
        GmpTesting.poll(5_000, () -> g.getState() == Thread.State.WAITING),
        "state " + g.getState());
    g.interrupt();
    GmpTesting.join(g, 10, "interrupted parker");
    assertTrue(interrupted.get());
    assertEquals(Thread.State.TERMINATED, g.getState());
  }

  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void currentThreadIsTheGoroutineAndRunsOnAnM() throws Exception {
    AtomicReference<Thread> self = new AtomicReference<>();
    AtomicReference<String> shown = new AtomicReference<>();
    AtomicBoolean virtual = new AtomicBoolean();
    CountDownLatch go = new CountDownLatch(1);
    Thread g =
        Gmp.go(
            () -> {
              try {
                go.await(); // so that Gmp.go has returned before we look
              } catch (InterruptedException e) {
                return;
              }
              self.set(Thread.currentThread());
              virtual.set(Thread.currentThread().isVirtual());
              shown.set(Thread.currentThread().toString());
            });
    assertTrue(g.isVirtual());
    go.countDown();
    GmpTesting.join(g, 10, "G");
    assertSame(g, self.get());
    assertTrue(virtual.get());
    assertTrue(shown.get().contains(CARRIER), shown.get());
  }

  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void threadLocalsWork() throws Exception {
    ThreadLocal<String> local = new ThreadLocal<>();
    InheritableThreadLocal<String> inheritable = new InheritableThreadLocal<>();
    inheritable.set("from the test thread");
    local.set("test thread only");
    AtomicReference<String[]> seen = new AtomicReference<>();
    try {
      Thread g =
          Gmp.go(
              () -> {
                String fromParent = inheritable.get();
                String notInherited = local.get();
                local.set("mine");
                try {
                  Thread.sleep(5); // unmount and remount, perhaps on another M
                } catch (InterruptedException e) {
                  return;
                }
                String afterPark = local.get();
                inheritable.set("from the G");
                AtomicReference<String> child = new AtomicReference<>();
                AtomicReference<String> childLocal = new AtomicReference<>();
                Thread c =
                    Gmp.go(
                        () -> {
                          child.set(inheritable.get());
                          childLocal.set(local.get());
                        });
                try {
                  c.join();
                } catch (InterruptedException e) {
                  return;
                }
                seen.set(
                    new String[] {
                      fromParent, notInherited, afterPark, child.get(), childLocal.get()
                    });
              });
      GmpTesting.join(g, 10, "G");
    } finally {
      inheritable.remove();
      local.remove();
    }
    assertNotNull(seen.get(), "the G did not finish its checks");
    assertArrayEquals(
        new String[] {"from the test thread", null, "mine", "from the G", null}, seen.get());
  }

  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void virtualThreadsCreatedInsideAGRunOnGmp() throws Exception {
    AtomicReference<String> plain = new AtomicReference<>();
    AtomicReference<String> viaExecutor = new AtomicReference<>();
    AtomicReference<String> nested = new AtomicReference<>();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread g =
        Gmp.go(
            () -> {
              try {
                Thread t =
                    Thread.ofVirtual()
                        .start(
                            () -> {
                              plain.set(Thread.currentThread().toString());
                              // and a grandchild, created by a thread that was itself created the
                              // JDK's way
                              Thread gc =
                                  Thread.ofVirtual()
                                      .start(() -> nested.set(Thread.currentThread().toString()));
                              try {
                                gc.join();
                              } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                              }
                            });
                t.join();
                try (ExecutorService ex = Executors.newVirtualThreadPerTaskExecutor()) {
                  Future<String> f = ex.submit(() -> Thread.currentThread().toString());
                  viaExecutor.set(f.get(10, TimeUnit.SECONDS));
                }
              } catch (Throwable e) {
                failure.set(e);
              }
            });
    GmpTesting.join(g, 20, "G");
    if (failure.get() != null) {
      throw new AssertionError(failure.get());
    }
    assertTrue(plain.get().contains(CARRIER), "Thread.ofVirtual() in a G: " + plain.get());
    assertTrue(nested.get().contains(CARRIER), "grandchild: " + nested.get());
    assertTrue(
        viaExecutor.get().contains(CARRIER),
        "Executors.newVirtualThreadPerTaskExecutor() in a G: " + viaExecutor.get());
  }

  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void gmpExecutorRunsTasksOnMs() throws Exception {
    List<Future<String>> fs = new ArrayList<>();
    try (ExecutorService ex = Gmp.newVirtualThreadPerTaskExecutor()) {
      for (int i = 0; i < 20; i++) {
        fs.add(
            ex.submit(
                () -> {
                  Thread.sleep(1);
                  return Thread.currentThread().isVirtual() + " " + Thread.currentThread();
                }));
      }
      for (Future<String> f : fs) {
        String s = f.get(10, TimeUnit.SECONDS);
        assertTrue(s.startsWith("true ") && s.contains(CARRIER), s);
      }
    }
  }

  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void readMetricsHasGoNamesAndShapes() throws Exception {
    Map<String, Object> m = Gmp.readMetrics();
    for (String gauge :
        List.of(
            "/sched/gomaxprocs:threads",
            "/sched/goroutines:goroutines",
            "/sched/goroutines-created:goroutines")) {
      assertInstanceOf(Long.class, m.get(gauge), gauge + " in " + m.keySet());
    }
    assertEquals((long) Gmp.gomaxprocs(), m.get("/sched/gomaxprocs:threads"));
    Float64Histogram lat =
        assertInstanceOf(Float64Histogram.class, m.get("/sched/latencies:seconds"));
    double[] b = lat.buckets();
    assertEquals(163, b.length);
    assertEquals(162, lat.counts().length);
    assertEquals(Double.NEGATIVE_INFINITY, b[0]);
    assertEquals(0.0, b[1]);
    assertEquals(6.4e-8, b[2], 1e-20);
    assertEquals(Double.POSITIVE_INFINITY, b[b.length - 1]);
    for (int i = 1; i < b.length; i++) {
      assertTrue(b[i - 1] < b[i], "buckets not ascending at " + i);
    }

    long created0 = (Long) Gmp.readMetrics().get("/sched/goroutines-created:goroutines");
    CountDownLatch release = new CountDownLatch(1);
    List<Thread> gs = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      gs.add(
          Gmp.go(
              () -> {
                try {
                  release.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              }));
    }
    try {
      long created1 = (Long) Gmp.readMetrics().get("/sched/goroutines-created:goroutines");
      assertEquals(created0 + 10, created1, "goroutines-created after starting 10 Gs");
      long live = (Long) Gmp.readMetrics().get("/sched/goroutines:goroutines");
      assertTrue(live >= 10, "goroutines gauge " + live + " with 10 parked Gs");
    } finally {
      release.countDown();
      for (Thread t : gs) {
        GmpTesting.join(t, 10, "parked G");
      }
    }
    // Some of those Gs waited to run, and every 8th wait of each G is sampled.
    long samples = ((Float64Histogram) Gmp.readMetrics().get("/sched/latencies:seconds")).total();
    assertTrue(samples > 0, "no scheduling-latency samples");
  }
}
