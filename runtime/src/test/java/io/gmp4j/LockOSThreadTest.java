package io.gmp4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import io.gmp4j.runtime.Hooks;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Go's LockOSThread tests (proc_test.go TestLockOSThreadNesting, TestYieldLockedProgress,
 * TestBlockLocked, TestYieldLocked; TestLockOSThreadExit through carrier identity). The carrier
 * of a virtual thread is the {@code gmp-m<id>} in its {@code toString()}.
 */
@ExtendWith(SchedTraceOnFailure.class)
class LockOSThreadTest {
  private static String carrier() {
    String s = Thread.currentThread().toString();
    return s.substring(s.lastIndexOf('@') + 1);
  }

  /** Go's TestLockOSThreadNesting: counts nest, and an extra unlock at zero does nothing. */
  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void testLockOSThreadNesting() throws Exception {
    GmpTesting.runInG(
        "nesting",
        20,
        () -> {
          assertEquals(0, Hooks.lockOSThreadCount());
          Gmp.lockOSThread();
          Gmp.lockOSThread();
          Gmp.unlockOSThread();
          assertEquals(1, Hooks.lockOSThreadCount());
          Gmp.unlockOSThread();
          assertEquals(0, Hooks.lockOSThreadCount());
          Gmp.unlockOSThread();
          assertEquals(0, Hooks.lockOSThreadCount());
        });
  }

  /**
   * Go's TestBlockLocked, plus Go's guarantee: a locked G sends ten times on an unbuffered
   * channel (blocking each time) and always comes back on the same carrier.
   */
  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void testBlockLocked() throws Exception {
    SynchronousQueue<Integer> c = new SynchronousQueue<>();
    Set<String> carriers = ConcurrentHashMap.newKeySet();
    Thread g =
        Gmp.go(
            () -> {
              Gmp.lockOSThread();
              try {
                for (int i = 0; i < 10; i++) {
                  carriers.add(carrier());
                  c.put(i);
                }
                carriers.add(carrier());
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } finally {
                Gmp.unlockOSThread();
              }
            });
    for (int i = 0; i < 10; i++) {
      assertEquals(i, c.take());
      Thread.sleep(1); // let the locked G block on every send
    }
    GmpTesting.join(g, 10, "the locked G");
    assertEquals(1, carriers.size(), "a locked G moved carriers: " + carriers);
  }

  /** Go's TestYieldLockedProgress: a locked G yielding in a loop does not starve the rest. */
  @Test
  @Timeout(value = 30, threadMode = SEPARATE_THREAD)
  void testYieldLockedProgress() throws Exception {
    AtomicBoolean c = new AtomicBoolean();
    CountDownLatch ack = new CountDownLatch(1);
    Gmp.go(
        () -> {
          Gmp.lockOSThread();
          while (!c.get()) {
            Gmp.gosched();
          }
          Gmp.unlockOSThread();
          ack.countDown();
        });
    Thread.sleep(10);
    c.set(true);
    GmpTesting.await(ack, 10, "the locked yielder");
  }

  /**
   * Go's TestYieldLocked and TestLockOSThreadExit: a G that yields and sleeps while locked, and
   * ends locked, takes its carrier with it: that thread ends, and no later G runs on it.
   */
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void testLockOSThreadExitKillsItsCarrier() throws Exception {
    String[] mine = new String[1];
    Thread g =
        Gmp.go(
            () -> {
              Gmp.lockOSThread();
              for (int i = 0; i < 10; i++) {
                Gmp.gosched();
                try {
                  Thread.sleep(1);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                if (mine[0] != null && !mine[0].equals(carrier())) {
                  throw new AssertionError("locked G moved from " + mine[0] + " to " + carrier());
                }
                mine[0] = carrier();
              }
              // exits without unlocking
            });
    GmpTesting.join(g, 20, "the locked G");
    String dead = mine[0];
    assertTrue(
        GmpTesting.poll(
            5_000,
            () ->
                Thread.getAllStackTraces().keySet().stream()
                    .noneMatch(t -> t.getName().equals(dead))),
        dead + " still alive\n" + Gmp.schedtrace(true));
    List<String> later = new ArrayList<>();
    List<Thread> gs = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      gs.add(
          Gmp.go(
              () -> {
                synchronized (later) {
                  later.add(carrier());
                }
              }));
    }
    for (Thread t : gs) {
      GmpTesting.join(t, 10, "a later G");
    }
    assertTrue(!later.contains(dead), "a G ran on the dead carrier " + dead);
  }
}
