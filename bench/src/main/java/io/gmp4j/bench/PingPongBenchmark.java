package io.gmp4j.bench;

import io.gmp4j.Gmp;
import java.time.Duration;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Round-trip latency between two goroutines over two {@link SynchronousQueue}s, the JVM form of
 * Go's ping-pong over two unbuffered channels, with gmp4j and the JDK's default virtual-thread
 * scheduler side by side in one JMH run. The score is nanoseconds per round trip at the machine's
 * default parallelism; {@link PingPongOneP} is the same benchmark with one P / one carrier.
 *
 * <h2>Implementation overview</h2>
 *
 * <p>What is measured is the scheduler's handoff: a goroutine parks in {@code take}, its peer's
 * {@code put} makes it runnable, and the scheduler must get it running again. Each round trip is
 * two such handoffs.
 *
 * <p>Rejected designs:
 *
 * <ol>
 *   <li>The {@code @Benchmark} method as one end of the ping-pong. JMH calls it on a platform
 *       thread, so every round trip would park and unpark a platform thread; the score would be
 *       dominated by futex wake-ups, which neither scheduler controls.
 *   <li>Starting the two threads per invocation ({@code Level.Invocation}). Thread start, the
 *       first mount, and {@code join} would be in the score, and JMH's per-invocation
 *       bookkeeping would be too, since a batch is only tens of milliseconds.
 *   <li>One platform-to-virtual request per round trip to a long-lived driver. That is design 1
 *       again with an extra hop.
 * </ol>
 *
 * <p>Protocol ("Batch"):
 *
 * <ol>
 *   <li>{@code @Setup(Trial)} starts two virtual threads on the scheduler under test: the echo,
 *       which answers each {@code ping} with a {@code pong}, and the driver, which waits for
 *       batches. A probe thread first checks that the builder really mounts on that scheduler's
 *       carriers, so a wiring mistake fails instead of measuring the wrong thing.
 *   <li>Each invocation, the JMH thread hands {@link #BATCH} to the driver through {@code
 *       batches}; the driver does {@code BATCH} round trips with the echo, then reports on {@code
 *       done}, which the JMH thread waits on. The one platform-to-virtual crossing in and out per
 *       batch is amortized over {@code BATCH} round trips by {@code @OperationsPerInvocation}.
 *   <li>{@code @TearDown(Trial)} sends a negative batch; the driver forwards {@code STOP} to the
 *       echo, and both end. The JMH thread joins them.
 * </ol>
 *
 * <p>Handoffs ("Spin-then-park"): {@code handoff=queue} is the ping-pong as written, and its
 * score includes the JDK's {@code LinkedTransferQueue.DualNode.await} heuristic: a taker or putter
 * that finds no partner spins {@code SPINS} (128) {@code Thread.onSpinWait()} before it parks,
 * unless {@code ForkJoinWorkerThread.hasKnownQueuedWork()} says its carrier has queued work. That
 * check only sees ForkJoinPool carriers, so on the JDK's scheduler a just-woken peer in the
 * carrier's queue turns the spin off, while on gmp4j's {@code gmp-m} carriers it never does, and
 * each park pays the full spin (about 5 us on the machine in BENCHMARKS.md) while the peer waits in
 * the same P's {@code runnext}. {@code handoff=park} is the same round trip with a volatile turn
 * and bare {@code LockSupport.park}/{@code unpark}, which never spins, so it shows the schedulers'
 * own handoff cost.
 *
 * <p>Every wait of the JMH thread has a {@link #HANG_TIMEOUT}; on expiry the trial fails with
 * the state of both threads and, for gmp4j, {@code Gmp.schedtrace(true)}, instead of hanging the
 * fork.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = PingPongBenchmark.ADD_OPENS)
public class PingPongBenchmark {
  /** Lets gmp4j install itself as a scheduler without its agent; see {@link Gmp}. */
  static final String ADD_OPENS = "--add-opens=java.base/java.lang=ALL-UNNAMED";

  /**
   * Round trips per invocation. At a few microseconds per round trip this is tens of
   * milliseconds per batch, so the two platform/virtual crossings per batch (tens of
   * microseconds at worst) stay below 0.1% of the score.
   */
  static final int BATCH = 10_000;

  /**
   * How long the JMH thread waits for one batch or for teardown before it calls it a hang. A
   * batch that takes this long is 3 ms per round trip, three orders of magnitude off.
   */
  static final Duration HANG_TIMEOUT = Duration.ofSeconds(30);

  private static final Object PING = new Object();
  private static final Object STOP = new Object();

  /** "gmp4j": {@code Gmp.ofVirtual()}; "jdk": {@code Thread.ofVirtual()} (ForkJoinPool). */
  @Param({"gmp4j", "jdk"})
  public String scheduler;

  /** "queue": two SynchronousQueues; "park": LockSupport. See "Spin-then-park". */
  @Param({"queue", "park"})
  public String handoff;

  private final SynchronousQueue<Object> ping = new SynchronousQueue<>();
  private final SynchronousQueue<Object> pong = new SynchronousQueue<>();
  private final SynchronousQueue<Integer> batches = new SynchronousQueue<>();
  private final SynchronousQueue<Integer> done = new SynchronousQueue<>();
  private Thread echo;
  private Thread driver;

  /**
   * Whose move it is in {@code handoff=park}: {@link #DRIVER_TURN}, {@link #ECHO_TURN} or {@link
   * #STOP_TURN}. Written by the thread that hands the turn over, just before it unparks the other;
   * read by the waiting thread after each park, which may return spuriously. Volatile: the write
   * pairs with the waiter's read, so the waiter also sees the {@code echo}/{@code driver} fields
   * that the JMH thread wrote before starting the threads.
   */
  private volatile int turn = DRIVER_TURN;

  private static final int DRIVER_TURN = 0;
  private static final int ECHO_TURN = 1;
  private static final int STOP_TURN = 2;

  /** Step 1 of "Batch". Called only by the JMH thread. */
  @Setup(Level.Trial)
  public void startThreads() throws InterruptedException {
    Thread.Builder.OfVirtual builder = builder();
    checkCarrier(builder);
    boolean park =
        switch (handoff) {
          case "queue" -> false;
          case "park" -> true;
          default -> throw new IllegalArgumentException("unknown handoff \"" + handoff + "\"");
        };
    echo = builder.name("pingpong-echo").unstarted(park ? this::echoPark : this::echo);
    driver = builder.name("pingpong-driver").unstarted(this::drive);
    echo.start();
    driver.start();
  }

  /** Step 2 of "Batch": {@link #BATCH} round trips. Called only by the JMH thread. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void roundTrip() throws InterruptedException {
    long timeoutNanos = HANG_TIMEOUT.toNanos();
    if (!batches.offer(BATCH, timeoutNanos, TimeUnit.NANOSECONDS)) {
      throw hang("roundTrip: driver did not take the batch");
    }
    if (done.poll(timeoutNanos, TimeUnit.NANOSECONDS) == null) {
      throw hang("roundTrip: batch of " + BATCH + " round trips did not finish");
    }
  }

  /** Step 3 of "Batch". Called only by the JMH thread. */
  @TearDown(Level.Trial)
  public void stopThreads() throws InterruptedException {
    if (!batches.offer(-1, HANG_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS)) {
      throw hang("stopThreads: driver did not take STOP");
    }
    if (!driver.join(HANG_TIMEOUT) || !echo.join(HANG_TIMEOUT)) {
      throw hang("stopThreads: driver or echo did not end");
    }
  }

  private Thread.Builder.OfVirtual builder() {
    return switch (scheduler) {
      case "gmp4j" -> Gmp.ofVirtual();
      case "jdk" -> Thread.ofVirtual();
      default -> throw new IllegalArgumentException("unknown scheduler \"" + scheduler + "\"");
    };
  }

  /**
   * Fails the trial unless a thread from {@code builder} mounts on the carriers of {@link
   * #scheduler}: gmp4j's are {@code gmp-m<id>}, the JDK's are {@code ForkJoinPool-1-worker-<n>}.
   * A virtual thread's {@code toString()} ends with {@code @<carrier name>} while it runs.
   */
  private void checkCarrier(Thread.Builder.OfVirtual builder) throws InterruptedException {
    String[] seen = new String[1];
    Thread probe =
        builder.name("pingpong-probe").start(() -> seen[0] = Thread.currentThread().toString());
    if (!probe.join(HANG_TIMEOUT)) {
      throw hang("checkCarrier: probe did not run");
    }
    String want = scheduler.equals("gmp4j") ? "@gmp-m" : "@ForkJoinPool";
    if (seen[0] == null || !seen[0].contains(want)) {
      throw new IllegalStateException(
          "checkCarrier: scheduler="
              + scheduler
              + " ran its probe as "
              + seen[0]
              + ", want a carrier "
              + want
              + "...");
    }
  }

  /** The driver of "Batch": runs on the scheduler under test. */
  private void drive() {
    try {
      while (true) {
        int n = batches.take();
        if (n < 0) {
          stopEcho();
          return;
        }
        if (handoff.equals("park")) {
          roundTripsPark(n);
        } else {
          for (int i = 0; i < n; i++) {
            ping.put(PING);
            pong.take();
          }
        }
        done.put(n);
      }
    } catch (InterruptedException e) {
      // Nothing interrupts the driver; if something does, the JMH thread's timeout reports it.
    }
  }

  private void roundTripsPark(int n) {
    for (int i = 0; i < n; i++) {
      turn = ECHO_TURN; // pairs with the read in echoPark
      LockSupport.unpark(echo);
      while (turn != DRIVER_TURN) { // pairs with the write in echoPark
        LockSupport.park(this);
      }
    }
  }

  private void stopEcho() throws InterruptedException {
    if (handoff.equals("park")) {
      turn = STOP_TURN; // pairs with the read in echoPark
      LockSupport.unpark(echo);
    } else {
      ping.put(STOP);
    }
  }

  /** The echo of "Batch" for {@code handoff=park}: runs on the scheduler under test. */
  private void echoPark() {
    while (true) {
      int t;
      while ((t = turn) == DRIVER_TURN) { // pairs with the writes in roundTripsPark, stopEcho
        LockSupport.park(this);
      }
      if (t == STOP_TURN) {
        return;
      }
      turn = DRIVER_TURN; // pairs with the read in roundTripsPark
      LockSupport.unpark(driver);
    }
  }

  /** The echo of "Batch": runs on the scheduler under test. */
  private void echo() {
    try {
      Object m;
      while ((m = ping.take()) != STOP) {
        pong.put(m);
      }
    } catch (InterruptedException e) {
      // As in drive().
    }
  }

  private IllegalStateException hang(String what) {
    StringBuilder sb = new StringBuilder();
    sb.append(what)
        .append(" within ")
        .append(HANG_TIMEOUT)
        .append(" (scheduler=")
        .append(scheduler);
    sb.append(", handoff=").append(handoff).append(", turn=").append(turn);
    sb.append(")\n  driver: ").append(driver).append("\n  echo: ").append(echo);
    if (scheduler.equals("gmp4j")) {
      sb.append('\n').append(Gmp.schedtrace(true));
    }
    IllegalStateException e = new IllegalStateException(sb.toString());
    System.err.println(e.getMessage());
    return e;
  }
}
