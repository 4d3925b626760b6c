package example.apps;

import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Every kind of timed park a virtual thread makes, checked for its semantics: timeouts that
 * expire, and wake-ups (unpark, notify, a hand-off, interrupt) that come first and so cancel the
 * timeout. With the agent these timeouts are gmp4j timers on the Ps; the program only sees
 * whether each returned when it should. Prints one {@code name=ok} (or {@code name=FAIL ...})
 * line per check, {@code unparkers=} (the JDK's VirtualThread-unparker threads alive at the
 * end: its timer threads, which gmp4j's timers make unneeded) and {@code failures=}.
 */
public final class TimedParks {
  static final AtomicInteger failures = new AtomicInteger();

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(60_000, "TimedParks");
    check(
        "sleep",
        vt(
            () -> {
              long t0 = System.nanoTime();
              Thread.sleep(20);
              long ms = ms(t0);
              return ms >= 20 && ms < 2_000 ? null : "slept " + ms + " ms";
            }));
    check(
        "parkNanosTimesOut",
        vt(
            () -> {
              long t0 = System.nanoTime();
              long deadline = t0 + 30_000_000L;
              while (System.nanoTime() < deadline) {
                LockSupport.parkNanos(deadline - System.nanoTime()); // spurious returns allowed
              }
              long ms = ms(t0);
              return ms < 2_000 ? null : "parked " + ms + " ms";
            }));
    // unpark before the timeout: the park returns at once, and the cancelled timer must not
    // cut a later park short (it could only set a permit: checked by the second park's length)
    check(
        "unparkCancelsTheTimeout",
        vt(
            () -> {
              Thread self = Thread.currentThread();
              Thread.ofVirtual()
                  .start(
                      () -> {
                        sleepQuietly(10);
                        LockSupport.unpark(self);
                      });
              long t0 = System.nanoTime();
              LockSupport.parkNanos(10_000_000_000L);
              long first = ms(t0);
              if (first > 5_000) {
                return "unpark did not end the park: " + first + " ms";
              }
              long t1 = System.nanoTime();
              Thread.sleep(200); // past a cancelled 10 s timer's nothing: must last its 200 ms
              long second = ms(t1);
              return second >= 200 ? null : "a later sleep ended early: " + second + " ms";
            }));
    Object lock = new Object();
    check(
        "waitTimesOut",
        vt(
            () -> {
              long t0 = System.nanoTime();
              synchronized (lock) {
                lock.wait(25);
              }
              long ms = ms(t0);
              return ms >= 25 && ms < 2_000 ? null : "waited " + ms + " ms";
            }));
    check(
        "notifyBeforeTheTimeout",
        vt(
            () -> {
              Object l = new Object();
              boolean[] done = new boolean[1];
              Thread.ofVirtual()
                  .start(
                      () -> {
                        sleepQuietly(10);
                        synchronized (l) {
                          done[0] = true;
                          l.notifyAll();
                        }
                      });
              long t0 = System.nanoTime();
              synchronized (l) {
                while (!done[0]) {
                  l.wait(10_000);
                }
              }
              long ms = ms(t0);
              return ms < 5_000 ? null : "notify came after " + ms + " ms";
            }));
    check(
        "pollHandOffsAndTimeouts",
        vt(
            () -> {
              SynchronousQueue<Integer> q = new SynchronousQueue<>();
              int n = 20_000;
              Thread producer =
                  Thread.ofVirtual()
                      .start(
                          () -> {
                            try {
                              for (int i = 0; i < n; i++) {
                                q.put(i);
                              }
                            } catch (InterruptedException e) {
                              Thread.currentThread().interrupt();
                            }
                          });
              long sum = 0;
              for (int got = 0; got < n; ) {
                Integer v =
                    q.poll(1, TimeUnit.SECONDS); // a timed park cancelled by almost every put
                if (v != null) {
                  sum += v;
                  got++;
                }
              }
              producer.join();
              long t0 = System.nanoTime();
              Integer none = q.poll(15, TimeUnit.MILLISECONDS);
              long ms = ms(t0);
              if (none != null || ms < 15 || ms > 2_000) {
                return "empty poll returned " + none + " after " + ms + " ms";
              }
              return sum == (long) n * (n - 1) / 2 ? null : "sum " + sum;
            }));
    check(
        "interruptEndsASleep",
        vt(
            () -> {
              Thread self = Thread.currentThread();
              Thread.ofVirtual()
                  .start(
                      () -> {
                        sleepQuietly(10);
                        self.interrupt();
                      });
              long t0 = System.nanoTime();
              try {
                Thread.sleep(10_000);
                return "not interrupted";
              } catch (InterruptedException e) {
                long ms = ms(t0);
                return ms < 5_000 ? null : "interrupted after " + ms + " ms";
              }
            }));
    check(
        "manySleepersNeverWakeEarly",
        vt(
            () -> {
              int n = 2_000;
              AtomicLong early = new AtomicLong();
              Thread[] ts = new Thread[n];
              for (int i = 0; i < n; i++) {
                int d = 1 + i % 50;
                ts[i] =
                    Thread.ofVirtual()
                        .start(
                            () -> {
                              long t0 = System.nanoTime();
                              sleepQuietly(d);
                              if (System.nanoTime() - t0 < d * 1_000_000L) {
                                early.incrementAndGet();
                              }
                            });
              }
              for (Thread t : ts) {
                t.join();
              }
              return early.get() == 0 ? null : early.get() + " woke early";
            }));
    // GOMAXPROCS shrinks while Gs sleep: their timers move with the removed Ps' queues.
    check(
        "sleepersSurviveAGomaxprocsChange",
        vt(
            () -> {
              int prev = gomaxprocs(4);
              int n = 200;
              AtomicLong bad = new AtomicLong();
              Thread[] ts = new Thread[n];
              for (int i = 0; i < n; i++) {
                ts[i] =
                    Thread.ofVirtual()
                        .start(
                            () -> {
                              long t0 = System.nanoTime();
                              sleepQuietly(300);
                              long ms = ms(t0);
                              if (ms < 300 || ms > 5_000) {
                                bad.incrementAndGet();
                              }
                            });
              }
              Thread.sleep(100);
              gomaxprocs(1);
              Thread.sleep(50);
              gomaxprocs(3);
              for (Thread t : ts) {
                t.join();
              }
              gomaxprocs(prev);
              return bad.get() == 0 ? null : bad.get() + " sleepers woke early or late";
            }));
    long unparkers =
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().startsWith("VirtualThread-unparker"))
            .count();
    System.out.println("unparkers=" + unparkers);
    System.out.println("failures=" + failures.get());
    System.out.flush();
  }

  interface Check {
    String run() throws Exception;
  }

  /** Runs {@code c} on a virtual thread and returns its verdict: null for ok. */
  static String vt(Check c) throws InterruptedException {
    String[] out = new String[1];
    Thread t =
        Thread.ofVirtual()
            .start(
                () -> {
                  try {
                    out[0] = c.run();
                  } catch (Throwable e) {
                    out[0] = "threw " + e;
                  }
                });
    t.join();
    return out[0];
  }

  static void check(String name, String verdict) {
    if (verdict != null) {
      failures.incrementAndGet();
    }
    System.out.println(name + "=" + (verdict == null ? "ok" : "FAIL " + verdict));
  }

  static long ms(long t0) {
    return (System.nanoTime() - t0) / 1_000_000;
  }

  static void sleepQuietly(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Go's GOMAXPROCS(n) through io.gmp4j.Gmp, which the agent put on the boot class path. */
  static int gomaxprocs(int n) {
    try {
      return (int)
          Class.forName("io.gmp4j.Gmp", true, null)
              .getMethod("gomaxprocs", int.class)
              .invoke(null, n);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }
}
