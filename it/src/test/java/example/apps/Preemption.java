package example.apps;

/**
 * Go's TestPreemption (proc_test.go): two virtual threads take turns on x; each spins, calling
 * a small function with a loop in it, until x is its number, then flips x. At one P this ends
 * only if a spinning thread is preempted. Prints {@code turns=}.
 */
public final class Preemption {
  static volatile int x;

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(20_000, "Preemption");
    final int n = 5;
    Thread[] ts = new Thread[2];
    int[] turns = new int[2];
    for (int g = 0; g < 2; g++) {
      final int me = g;
      ts[g] =
          Thread.ofVirtual()
              .start(
                  () -> {
                    for (int i = 0; i < n; i++) {
                      while (x != me) {
                        preempt();
                      }
                      x = 1 - me;
                      turns[me]++;
                    }
                  });
    }
    for (Thread t : ts) {
      t.join();
    }
    System.out.println("turns=" + (turns[0] + turns[1]));
  }

  /** Go's preempt(): a call with a small loop in it. */
  static int preempt() {
    int[] a = new int[128];
    int s = 0;
    for (int i = 0; i < a.length; i++) {
      s += a[i];
    }
    return s;
  }
}
