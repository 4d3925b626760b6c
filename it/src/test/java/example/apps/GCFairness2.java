package example.apps;

import java.util.Arrays;

/**
 * Go's TestGCFairness2 (testdata/testprog/gc.go): at one P, three CPU-bound virtual threads
 * that allocate 1 KB per round must all have run within 30 ms (with one second of grace).
 */
public final class GCFairness2 {
  static volatile boolean stop;
  static volatile Object sink;

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(20_000, "GCFairness2");
    long[] count = new long[3];
    for (int i = 0; i < 3; i++) {
      final int me = i;
      Thread.ofVirtual()
          .start(
              () -> {
                while (!stop) {
                  sink = new byte[1024];
                  count[me]++;
                }
              });
    }
    Thread.sleep(30);
    long[] seen = count.clone();
    if (Arrays.stream(seen).anyMatch(c -> c == 0)) {
      Thread.sleep(1000);
      seen = count.clone();
    }
    stop = true;
    System.out.println("counts=" + Arrays.toString(seen));
    System.out.println("fair=" + Arrays.stream(seen).allMatch(c -> c > 0));
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }
}
