package example.apps;

/**
 * CPU-bound virtual threads whose loop has no call: under the agent its back-edge poll is their
 * only way to yield. The hogs of SleepBesideHogs and WakeBesideHogs; one set per program.
 */
final class Hogs {
  private Hogs() {}

  /** Set once, by {@link #stopAndJoin}; read by the hogs' loops and by helpers that share it. */
  private static volatile boolean stop;

  /** Where the hogs' and helpers' results go, so that no loop is dead code. */
  static volatile long sink;

  /** Starts {@code n} hogs, named {@code hog-0} and on. */
  static Thread[] start(int n) {
    Thread[] hog = new Thread[n];
    for (int i = 0; i < n; i++) {
      hog[i] =
          Thread.ofVirtual()
              .name("hog-" + i)
              .start(
                  () -> {
                    long x = 0;
                    while (!stop) {
                      x = x * 31 + 7; // the agent's back-edge poll is the only call-free way out
                    }
                    sink = x;
                  });
    }
    return hog;
  }

  /** True once {@link #stopAndJoin} was called: helpers beside the hogs end with them. */
  static boolean stopped() {
    return stop;
  }

  /** Stops every hog and waits for them. */
  static void stopAndJoin(Thread[] hog) throws InterruptedException {
    stop = true;
    for (Thread h : hog) {
      h.join();
    }
  }
}
