package kernels;

import io.gmp4j.bench.Spin;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Worst-case preemption delay of each kernel shape, under the real agent with one P:
 *
 * <pre>
 * $JDK25/bin/java -javaagent:agent/target/gmp4j-agent.jar=gomaxprocs=1 \
 *     -cp bench/target/gmp4j-bench.jar kernels.PreemptionDelay [mode] [kernel...]
 * </pre>
 *
 * For each kernel, one goroutine (virtual thread) calls the kernel without end while another
 * sleeps 1 ms {@link #SLEEPS} times and records how long each sleep took. With one P the sleeper
 * can only run when the kernel's goroutine is preempted, which happens at its next poll after
 * sysmon asks (one time slice, 10 ms, without a scheduling event). So a sleep's latency is about
 * the wait for the slice to run out plus the delay until the kernel reaches a poll; the part
 * above ~11 ms is what the poll placement adds.
 *
 * <p>Modes ({@code args[0]}):
 *
 * <ul>
 *   <li>{@code bare} (default): the driver loop is {@link Spin#run}, in {@code io.gmp4j}, which
 *       the agent never instruments. The only polls are the kernel's own, so the delay is that of
 *       the kernel's placement. A kernel without polls (fib without prologue polls) starves the
 *       sleeper.
 *   <li>{@code app}: the driver loop is {@code while (!stop) kernel.run()} in this class, as an
 *       application would write it; its back-edge is polled once per kernel call.
 * </ul>
 *
 * A sleeper that makes no progress for {@link #STARVED_MS} is reported as starved, and the
 * kernel is stopped.
 */
public final class PreemptionDelay {
  static final int SLEEPS = 200;
  static final long STARVED_MS = 2000;
  static final long WARMUP_MS = 500;

  static volatile long sink;
  static volatile boolean appStop;

  public static void main(String[] args) throws Exception {
    String mode = args.length > 0 ? args[0] : "bare";
    if (!mode.equals("bare") && !mode.equals("app")) {
      throw new IllegalArgumentException("mode must be bare or app, not " + mode);
    }
    List<String> names =
        new ArrayList<>(Arrays.asList(args).subList(Math.min(1, args.length), args.length));
    if (names.isEmpty()) {
      names.add("idle");
      names.addAll(Arrays.asList(KernelInputs.NAMES));
    }
    KernelInputs in = new KernelInputs();
    LoopKernels k = new LoopKernels();
    System.out.printf(
        Locale.ROOT,
        "mode=%s sleeps=%d x 1ms, gmp.gomaxprocs=%s, preempt.prologue=%s, asyncpreemptoff=%s%n",
        mode,
        SLEEPS,
        System.getProperty("gmp.gomaxprocs"),
        System.getProperty("gmp.preempt.prologue"),
        System.getProperty("gmp.asyncpreemptoff"));
    System.out.printf(
        Locale.ROOT,
        "%-14s %10s %10s %8s %8s %8s %8s%n",
        "kernel",
        "call_us",
        "calls",
        "p50_ms",
        "p99_ms",
        "max_ms",
        "carrier");
    for (String name : names) {
      measure(name, mode, kernel(k, in, name));
    }
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }

  static Runnable kernel(LoopKernels k, KernelInputs in, String name) {
    return switch (name) {
      case "idle" -> null;
      case "addArrays" -> () -> k.addArrays(in.a, in.b, in.c);
      case "scaleFloats" -> () -> k.scaleFloats(in.fsrc, in.fdst, 1.5f);
      case "sumInts" -> () -> sink = k.sumInts(in.a);
      case "dotLongs" -> () -> sink = k.dotLongs(in.la, in.lb);
      case "hashBytes" -> () -> sink = k.hashBytes(in.bytes);
      case "matMul" -> () -> k.matMul(in.ma, in.mb, in.mc);
      case "listWalk" -> () -> sink = k.listWalk(in.head);
      case "stateMachine" -> () -> sink = k.stateMachine(in.text);
      case "fib" -> () -> sink = k.fib(KernelInputs.FIB);
      case "collatz" ->
          () -> sink = k.collatz(KernelInputs.COLLATZ_FROM, KernelInputs.COLLATZ_COUNT);
      case "addArraysDown" -> () -> k.addArraysDown(in.a, in.b, in.c);
      case "sumIntList" -> () -> sink = k.sumIntList(in.list);
      case "indexOfByte" -> () -> sink = k.indexOfByte(in.text, KernelInputs.ABSENT);
      case "countNulls" -> () -> sink = k.countNulls(in.refs);
      case "indexOfRef" -> () -> sink = k.indexOfRef(in.refs, in);
      default -> throw new IllegalArgumentException("no kernel " + name);
    };
  }

  static long appLoop(Runnable kernel) {
    long calls = 0;
    while (!appStop) {
      kernel.run();
      calls++;
    }
    return calls;
  }

  static void measure(String name, String mode, Runnable kernel) throws Exception {
    long[] calls = new long[1];
    String[] carrier = {"-"};
    Thread runner = null;
    Spin.reset();
    appStop = false;
    long t0 = System.nanoTime();
    if (kernel != null) {
      runner =
          Thread.ofVirtual()
              .name("kernel-" + name)
              .start(
                  () -> {
                    String s = Thread.currentThread().toString();
                    carrier[0] = s.substring(s.lastIndexOf('@') + 1);
                    calls[0] = mode.equals("bare") ? Spin.run(kernel) : appLoop(kernel);
                  });
      Thread.sleep(WARMUP_MS); // main is a platform thread: it needs no P
    }
    long[] lat = new long[SLEEPS];
    int[] done = new int[1];
    Thread sleeper =
        Thread.ofVirtual()
            .name("sleeper")
            .start(
                () -> {
                  try {
                    for (int i = 0; i < SLEEPS; i++) {
                      long s0 = System.nanoTime();
                      Thread.sleep(1);
                      lat[i] = System.nanoTime() - s0;
                      done[0] = i + 1;
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                });
    boolean starved = false;
    int seen = -1;
    long lastProgress = System.nanoTime();
    while (sleeper.isAlive()) {
      sleeper.join(50);
      int d = done[0];
      if (d != seen) {
        seen = d;
        lastProgress = System.nanoTime();
      } else if (System.nanoTime() - lastProgress > STARVED_MS * 1_000_000L) {
        starved = true;
        break;
      }
    }
    Spin.stop();
    appStop = true;
    long elapsed = System.nanoTime() - t0;
    if (runner != null) {
      runner.join();
    }
    sleeper.interrupt();
    sleeper.join();
    double callUs = runner == null ? 0 : elapsed / 1e3 / Math.max(1, calls[0]);
    if (starved) {
      System.out.printf(
          Locale.ROOT,
          "%-14s %10.1f %10d   starved: %d of %d sleeps returned, none in the last %d ms%n",
          name,
          callUs,
          calls[0],
          done[0],
          SLEEPS,
          STARVED_MS);
      return;
    }
    long[] s = lat.clone();
    Arrays.sort(s);
    System.out.printf(
        Locale.ROOT,
        "%-14s %10.1f %10d %8.2f %8.2f %8.2f %8s%n",
        name,
        callUs,
        calls[0],
        s[SLEEPS / 2] / 1e6,
        s[(int) Math.ceil(SLEEPS * 0.99) - 1] / 1e6,
        s[SLEEPS - 1] / 1e6,
        carrier[0]);
  }
}
