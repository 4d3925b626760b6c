package example.apps;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.SynchronousQueue;

/**
 * Go's TestPingPongHog (proc_test.go) as a plain program: at one P, two "hog" virtual threads
 * hand a token back and forth through an unbuffered channel (SynchronousQueue) doing 1e6
 * increments per turn, two "light" ones doing 1e3. Prints what each pair counted in 100 ms.
 */
public final class PingPongHog {
  static volatile boolean done;

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(20_000, "PingPongHog");
    SynchronousQueue<Boolean> hogChan = new SynchronousQueue<>();
    SynchronousQueue<Boolean> lightChan = new SynchronousQueue<>();
    Counter hogCount = new Counter();
    Counter lightCount = new Counter();
    List<Thread> ts = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      ts.add(Thread.ofVirtual().start(() -> run(1_000_000, hogCount, hogChan)));
      ts.add(Thread.ofVirtual().start(() -> run(1_000, lightCount, lightChan)));
    }
    hogChan.put(true);
    lightChan.put(true);
    // A fresh JVM interprets the hogs' loop at first, 10x slower than Go's compiled one; let
    // the JIT compile it, then measure Go's 100 ms.
    Thread.sleep(1000);
    long hog0 = hogCount.n;
    long light0 = lightCount.n;
    Thread.sleep(100);
    long hog = hogCount.n - hog0;
    long light = lightCount.n - light0;
    done = true;
    for (Thread t : ts) {
      t.interrupt();
    }
    for (Thread t : ts) {
      t.join();
    }
    System.out.println("hog=" + hog);
    System.out.println("light=" + light);
  }

  /**
   * Go's {@code *counter++}. Volatile, so that each increment costs what Go's store does: C2
   * would otherwise fold a loop of plain increments into one add per strip, and the hogs would
   * not hog.
   */
  static final class Counter {
    volatile long n;
  }

  static void run(int limit, Counter counter, SynchronousQueue<Boolean> wake) {
    try {
      while (!done) {
        wake.take();
        for (int i = 0; i < limit; i++) {
          counter.n++; // one pair's two threads alternate, so the increments never race
        }
        wake.put(true);
      }
    } catch (InterruptedException e) {
      // done
    }
  }
}
