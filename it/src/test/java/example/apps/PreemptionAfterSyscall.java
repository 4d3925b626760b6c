package example.apps;

import io.gmp4j.Gmp;
import java.io.FileOutputStream;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * Go's TestPreemptionAfterSyscall (proc_test.go): at two Ps, eight virtual threads each loop
 * {@code while (!stop) fakeSyscall(d)}; main, a virtual thread too (Go's main is a goroutine and
 * needs a P as well), waits for the eight starts, sets stop and waits for the eight finishes.
 * Each iteration must take at most 5 s. A thread whose syscalls all take exitsyscall's fast path
 * never goes through the scheduler; only sysmon's retake and the time slice let the others (and
 * main) run and see the flag. The loop gets its back-edge poll from the agent, as any loop in an
 * application class: nothing here polls by hand.
 *
 * <p>fakeSyscall is two brackets back to back. First a real JDK blocking call that the agent
 * brackets: a one-byte {@code FileOutputStream.write} to /dev/null (agent advice on
 * FileOutputStream, about a microsecond). Then Go's own fakeSyscall, {@code entersyscall; busy
 * wait d; exitsyscall}, as {@link Gmp#syscall} around a busy wait: no JDK call blocks its
 * carrier for a chosen 10 µs, and a write that really blocked (a full pipe) would take as long
 * as its reader decides, not {@code d}. The busy wait is in {@link Spin}, which the test
 * excludes from poll injection ({@code preempt.exclude}): Go's busy wait runs inside the
 * syscall with no preemption point, and so does this one.
 *
 * <p>Without the agent (the JDK's scheduler, for comparison) {@code Gmp.syscall} just calls its
 * argument, and the program hangs: the loopers keep both carriers and never yield.
 *
 * <p>Usage: {@code PreemptionAfterSyscall micros iterations [watchdogMillis]}. Prints {@code
 * gmp_loader=}, {@code iter<i>_ms=}, {@code max_ms=}, {@code main_carrier=}, with gmp4j also
 * {@code gomaxprocs=} and {@code syscall_handoffs=}, and {@code OK} if every iteration took at
 * most 5 s.
 */
public final class PreemptionAfterSyscall {
  private static final int NROUTINES = 8;
  private static final long MAX_MS = 5_000;

  static volatile boolean stop;
  static FileOutputStream devNull;

  /** The syscall's body, kept free of polls by the test's preempt.exclude option. */
  public static final class Spin {
    private Spin() {}

    static Void busyWait(long nanos) {
      long end = System.nanoTime() + nanos;
      while (System.nanoTime() - end < 0) {
        Thread.onSpinWait();
      }
      return null;
    }
  }

  static void fakeSyscall(long nanos) throws Exception {
    devNull.write('.'); // the agent's FileOutputStream advice: entersyscall ... exitsyscall
    Gmp.syscall(() -> Spin.busyWait(nanos)); // Go's Entersyscall(); busy-wait d; Exitsyscall()
  }

  public static void main(String[] args) throws Exception {
    long nanos = Long.parseLong(args[0]) * 1_000;
    int iterations = Integer.parseInt(args[1]);
    AppSupport.watchdog(
        args.length > 2 ? Long.parseLong(args[2]) : 30_000L + iterations * 2 * MAX_MS,
        "PreemptionAfterSyscall");
    devNull = new FileOutputStream("/dev/null");
    boolean gmp4j = Gmp.class.getClassLoader() == null; // the agent's boot-path runtime
    System.out.println("gmp_loader=" + (gmp4j ? "boot" : Gmp.class.getClassLoader().toString()));
    if (gmp4j) {
      System.out.println("gomaxprocs=" + Gmp.gomaxprocs());
    }
    long[] max = {0};
    boolean[] ok = {true};
    String[] carrier = {"?"};
    Thread main =
        Thread.ofVirtual()
            .start(
                () -> {
                  carrier[0] = AppSupport.carrier();
                  try {
                    for (int i = 0; i < iterations; i++) {
                      long ms = iteration(nanos);
                      System.out.println("iter" + i + "_ms=" + ms);
                      max[0] = Math.max(max[0], ms);
                      if (ms > MAX_MS) {
                        ok[0] = false;
                      }
                    }
                  } catch (Exception e) {
                    ok[0] = false;
                    e.printStackTrace(System.out);
                  }
                });
    main.join();
    System.out.println("main_carrier=" + carrier[0]);
    System.out.println("max_ms=" + max[0]);
    if (gmp4j) {
      System.out.println(
          "syscall_handoffs=" + Gmp.readMetrics().get("/sched/syscalls/handoffs:handoffs"));
    }
    if (ok[0]) {
      System.out.println("OK");
    } else {
      System.out.print(AppSupport.schedtrace());
    }
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }

  /** One iteration of Go's test; returns its duration in milliseconds. */
  private static long iteration(long nanos) throws InterruptedException {
    BlockingQueue<Boolean> c = new ArrayBlockingQueue<>(NROUTINES); // make(chan bool, nroutines)
    stop = false;
    long start = System.nanoTime();
    for (int g = 0; g < NROUTINES; g++) {
      Thread.ofVirtual()
          .start(
              () -> {
                try {
                  c.put(true);
                  while (!stop) {
                    fakeSyscall(nanos);
                  }
                  c.put(true);
                } catch (Exception e) {
                  throw new RuntimeException(e);
                }
              });
    }
    for (int g = 0; g < NROUTINES; g++) { // wait until all goroutines have started
      c.take();
    }
    stop = true;
    for (int g = 0; g < NROUTINES; g++) { // wait until all goroutines have finished
      c.take();
    }
    return (System.nanoTime() - start) / 1_000_000;
  }
}
