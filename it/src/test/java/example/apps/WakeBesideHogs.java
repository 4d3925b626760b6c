package example.apps;

import java.util.concurrent.locks.LockSupport;

/**
 * 'Overdue wake-ups' as a plain program: a platform thread (a poller's stand-in) unparks a parked
 * virtual thread every 5 ms, {@code args[1]} times, beside {@code args[0]} CPU-bound virtual
 * threads whose loops the agent polls, and prints how long each woken thread took to run after
 * its unpark (p50, p90, p99, max in ms) and {@code wakeups=}. The wake-ups begin 2 s after the
 * start. A watchdog prints the scheduler's state and exits 3 after 60 s.
 */
public final class WakeBesideHogs {

  /** When the last unpark was made, in nanoTime; 0 once the woken thread has run. */
  static volatile long unparkedAt;

  private WakeBesideHogs() {}

  public static void main(String[] args) throws Exception {
    int hogs = Integer.parseInt(args[0]);
    int n = Integer.parseInt(args[1]);
    AppSupport.watchdog(60_000, "WakeBesideHogs");
    Thread[] hog = Hogs.start(hogs);
    long[] waited = new long[n];
    Thread woken =
        Thread.ofVirtual()
            .start(
                () -> {
                  for (int i = 0; i < n; i++) {
                    while (unparkedAt == 0) {
                      LockSupport.park();
                    }
                    waited[i] = System.nanoTime() - unparkedAt;
                    unparkedAt = 0;
                  }
                });
    Thread.sleep(2_000);
    for (int i = 0; i < n; i++) {
      Thread.sleep(5);
      while (unparkedAt != 0) {
        Thread.sleep(1); // the last one has not run yet
      }
      unparkedAt = System.nanoTime();
      LockSupport.unpark(woken);
    }
    woken.join();
    Hogs.stopAndJoin(hog);
    System.out.println("wakeups=" + n);
    AppSupport.printPercentilesMs(waited);
  }
}
