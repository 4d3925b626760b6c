package example.apps;

/**
 * Go's TestAsyncPreempt (testdata/testprog/preempt.go) with Go's stop-the-world replaced by
 * "main gets the P back": at one P, one virtual thread stores to a field in a call-free loop,
 * another runs a call-free arithmetic loop; a third, standing in for Go's main goroutine, yields
 * until both have started and then must run again. Prints OK.
 */
public final class AsyncPreempt {
  static volatile int ready;
  static volatile int ready2;
  static volatile long out;

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(20_000, "AsyncPreempt");
    Thread main =
        Thread.ofVirtual()
            .start(
                () -> {
                  Thread.ofVirtual()
                      .start(
                          () -> {
                            for (; ; ) {
                              ready = 1;
                            }
                          });
                  Thread.ofVirtual()
                      .start(
                          () -> {
                            ready2 = 1;
                            long o = 0;
                            for (long i = 0; i < (1L << 62); i++) {
                              o += i;
                            }
                            out = o;
                          });
                  while (ready == 0 || ready2 == 0) {
                    Thread.yield();
                  }
                  // Both loops are running; this G got the P back from them once, and must again.
                  Thread.yield();
                  System.out.println("OK");
                });
    main.join();
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }
}
