package example.apps;

import io.gmp4j.Gmp;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.SynchronousQueue;

/**
 * Go's TestBlockLocked in the spirit of LockOSThreadAlt: a locked virtual thread sends ten
 * times on a SynchronousQueue (an unbuffered channel), blocking each time until main takes, and
 * must always resume on the carrier it locked. Main (a platform thread) sleeps 1 ms before each
 * take, so that every send really blocks. Prints {@code carriers=} (the distinct carriers seen)
 * and {@code sent=}.
 */
public final class LockedBlock {
  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(30_000, "LockedBlock");
    SynchronousQueue<Integer> c = new SynchronousQueue<>();
    Set<String> carriers = new TreeSet<>();
    Thread g =
        Thread.ofVirtual()
            .start(
                () -> {
                  Gmp.lockOSThread();
                  try {
                    for (int i = 0; i < 10; i++) {
                      synchronized (carriers) {
                        carriers.add(AppSupport.carrier());
                      }
                      c.put(i);
                    }
                    synchronized (carriers) {
                      carriers.add(AppSupport.carrier());
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  } finally {
                    Gmp.unlockOSThread();
                  }
                });
    int sent = 0;
    for (int i = 0; i < 10; i++) {
      Thread.sleep(1); // let the locked G block on every send
      if (c.take() == i) {
        sent++;
      }
    }
    g.join();
    System.out.println("sent=" + sent);
    synchronized (carriers) {
      System.out.println("carriers=" + carriers);
    }
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }
}
