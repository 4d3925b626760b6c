package example.apps;

import java.time.Duration;

/**
 * Issue 11's timer row as a plain program: a virtual thread sleeps 1 ms {@code args[1]} times
 * beside {@code args[0]} CPU-bound virtual threads whose loops the agent polls. Prints the
 * overshoot of each sleep past its 1 ms (p50, p90, p99, max in ms), {@code sleeps=}, and with
 * {@code args[2]} = {@code trace} the scheduler's detail after the sleeps. A watchdog prints the
 * scheduler's state and exits 3 after {@code args[3]} ms (default 60000). The sleeps begin
 * {@code args[4]} ms after the start (default 50): long enough for the hogs to take the Ps, or,
 * with 2000, for the JVM's and the agent's own start-up work to be over. {@code args[5]} is the
 * sleep in ms (default 1; the overshoot is past it), and {@code args[6]} = {@code spawn} adds a
 * virtual thread that starts a short-lived one and joins it with a 30 s timeout, over and over
 * (a runnext chain, and a far timer that is cancelled at every join).
 *
 * <p>Go's version of this (a goroutine doing {@code time.Sleep(time.Millisecond)} beside four
 * {@code for {}} goroutines at GOMAXPROCS=2, Go 1.19 on this kind of machine) overshoots p50
 * 19 ms: Go runs the sleeper's timer when the hog on the timer's P is preempted, which is a full
 * time slice (10 ms, plus up to one 10 ms sysmon period) after the sleeper parked.
 */
public final class SleepBesideHogs {

  public static void main(String[] args) throws Exception {
    int hogs = Integer.parseInt(args[0]);
    int n = Integer.parseInt(args[1]);
    boolean trace = args.length > 2 && args[2].equals("trace");
    AppSupport.watchdog(args.length > 3 ? Long.parseLong(args[3]) : 60_000, "SleepBesideHogs");
    long settleMs = args.length > 4 ? Long.parseLong(args[4]) : 50;
    long sleepMs = args.length > 5 ? Long.parseLong(args[5]) : 1;
    boolean spawner = args.length > 6 && args[6].equals("spawn");
    Thread[] hog = Hogs.start(hogs);
    Thread spawning =
        spawner
            ? Thread.ofVirtual()
                .name("spawner")
                .start(
                    () -> {
                      try {
                        while (!Hogs.stopped()) {
                          Thread.ofVirtual().start(() -> Hogs.sink++).join(Duration.ofSeconds(30));
                        }
                      } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                      }
                    })
            : null;
    long[] over = new long[n];
    Thread sleeper =
        Thread.ofVirtual()
            .name("sleeper")
            .start(
                () -> {
                  try {
                    Thread.sleep(settleMs); // let the hogs take the Ps first
                    for (int i = 0; i < over.length; i++) {
                      long t0 = System.nanoTime();
                      Thread.sleep(sleepMs);
                      over[i] = System.nanoTime() - t0 - sleepMs * 1_000_000L;
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                });
    sleeper.join();
    String detail = trace ? AppSupport.schedtrace() : "";
    Hogs.stopAndJoin(hog);
    if (spawning != null) {
      spawning.join();
    }
    System.out.println("sleeps=" + n);
    AppSupport.printPercentilesMs(over.clone());
    System.out.print(detail);
    System.out.flush();
  }
}
