package example.apps;

import java.io.FileOutputStream;
import java.io.IOException;

/**
 * Go's TestGCFairness (testdata/testprog/gc.go): at one P, two virtual threads write one byte
 * at a time to /dev/null in tight loops, and main, a virtual thread too, sleeps 10 ms and must
 * come back (here: within one second). Every write is a syscall: the writers leave and re-enter
 * the scheduler on each one, and must still not keep main off the only P.
 */
public final class GCFairness {
  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(20_000, "GCFairness");
    FileOutputStream f = new FileOutputStream("/dev/null");
    byte[] dot = {'.'};
    long[] elapsed = {-1};
    Thread main =
        Thread.ofVirtual()
            .start(
                () -> {
                  for (int i = 0; i < 2; i++) {
                    Thread.ofVirtual()
                        .start(
                            () -> {
                              try {
                                for (; ; ) {
                                  f.write(dot);
                                }
                              } catch (IOException e) {
                                throw new RuntimeException(e);
                              }
                            });
                  }
                  long start = System.nanoTime();
                  try {
                    Thread.sleep(10);
                  } catch (InterruptedException e) {
                    return;
                  }
                  elapsed[0] = (System.nanoTime() - start) / 1_000_000;
                });
    main.join(5_000);
    System.out.println("carrier=" + carrierOf(main));
    if (elapsed[0] < 0) {
      System.out.println("main=stuck");
      System.out.print(AppSupport.schedtrace());
    } else {
      System.out.println("sleep_ms=" + elapsed[0]);
      if (elapsed[0] < 1_000) {
        System.out.println("OK");
      }
    }
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }

  private static String carrierOf(Thread t) {
    return t.isAlive() ? t.toString() : "done";
  }
}
