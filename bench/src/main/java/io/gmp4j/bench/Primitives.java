package io.gmp4j.bench;

import io.gmp4j.Gmp;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The scheduling primitives of issue 11, each as ns per operation, on three schedulers in one JMH
 * run: the JDK's default ForkJoinPool ({@code Jdk*}, and {@code JdkAgent*} with a Java agent that
 * does nothing, for what any agent costs), gmp4j under its agent ({@code Agent*}, which
 * also replaces the JDK's scheduler for {@code Thread.ofVirtual()}; {@code AgentNoJvmtiVt*} the
 * same with HotSpot's JVMTI virtual-thread notifications off), and gmp4j as a library
 * without the agent ({@code Lib*}, {@code Gmp.ofVirtual()}). Each comes at 1 P (one carrier for
 * the JDK) and at 2 Ps. The scheduler and the P count are start-up settings, so they are fork
 * arguments of the subclasses below, not {@code @Param}s; {@code bench/run Primitives} runs them
 * all, and {@code bench/run 'Primitives.*1P'} one column.
 *
 * <h2>Implementation overview</h2>
 *
 * Every benchmark runs on one long-lived driver goroutine, never on the JMH thread: a platform
 * thread that parks and unparks per operation would measure futexes, not the scheduler (see
 * {@link PingPongBenchmark}). Per invocation the JMH thread hands the driver a {@link Runnable}
 * that does {@link #BATCH} operations and waits for it with {@link #HANG_TIMEOUT}; the two
 * platform/virtual crossings are amortised over the batch by {@code @OperationsPerInvocation}. A
 * batch starts the goroutines it needs (the echo of a ping-pong, the yielders) with {@code
 * Thread.ofVirtual()}: a thread that a goroutine creates runs on that goroutine's scheduler in
 * every mode (gmp4j's 'Adoption' in Sched, and the JDK's inheritance), and one start per batch of
 * 10,000 operations is below the noise.
 *
 * <p>The driver checks at set-up that it mounts on the scheduler the class names ({@code
 * gmp-m<id>} or {@code ForkJoinPool-1-worker-<n>}), so a wiring mistake fails the trial instead of
 * measuring the wrong scheduler.
 *
 * <p>Benchmarks (Go's names where Go has one, from proc_test.go and chan_test.go):
 *
 * <ul>
 *   <li>{@code pingPongPark}: a round trip with bare {@code LockSupport.park}/{@code unpark} and a
 *       volatile turn: the scheduler's own hand-off, twice.
 *   <li>{@code pingPongArrayBlockingQueue}, {@code pingPongSynchronousQueue}: the round trip as
 *       an application writes it, through {@code ArrayBlockingQueue(1)} (a ReentrantLock and
 *       conditions) and {@code SynchronousQueue} (LinkedTransferQueue's spin-then-park; the agent
 *       turns the spin off when the P has other work, as the JDK's scheduler does for its own
 *       carriers; library mode cannot).
 *   <li>{@code yield}: two goroutines that call {@code Thread.yield()} in turn (Go's Gosched),
 *       ns per yield.
 *   <li>{@code spawn}: start a goroutine that does nothing and count its end (Go's
 *       BenchmarkCreateGoroutines), ns per goroutine; the driver waits for all of a batch.
 *   <li>{@code pingPongHog} (Go's BenchmarkPingPongHog): the park ping-pong at 1 P beside a
 *       goroutine that only spins. Go's runnext makes the woken peer run next, so the pair
 *       inherits each other's slice and the hog runs only at slice ends; a scheduler without it
 *       puts the hog between every hand-off.
 *   <li>{@code wakeupParallelSpinning} (Go's BenchmarkWakeupParallelSpinning): as many goroutines
 *       as Ps, each woken from its own sleep by the driver, which waits for all: the cost of
 *       waking parked carriers.
 *   <li>{@code fanOutFanIn}: the driver starts 100 goroutines that each do a little work and
 *       count down a latch, and waits on it; ns per goroutine.
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 5, time = 1)
public abstract class Primitives {
  static final String ADD_OPENS = PingPongBenchmark.ADD_OPENS;

  /** The agent jar, relative to the repository root where {@code bench/run} starts JMH. */
  static final String AGENT = "-javaagent:agent/target/gmp4j-agent.jar";

  /** This benchmark jar as an agent whose premain does nothing ({@link NoopAgent}). */
  static final String NOOP_AGENT = "-javaagent:bench/target/gmp4j-bench.jar";

  /**
   * HotSpot's switch for the JVMTI mount and unmount notifications that any Java agent turns on
   * (an experimental flag, so it needs the unlock before it).
   */
  static final String NO_JVMTI_VT_1 = "-XX:+UnlockExperimentalVMOptions";

  static final String NO_JVMTI_VT_2 = "-XX:-DoJVMTIVirtualThreadTransitions";

  static final String ONE_P = "-Djdk.virtualThreadScheduler.parallelism=1";
  static final String ONE_P_GMP = "-Dgmp.gomaxprocs=1";
  static final String TWO_P = "-Djdk.virtualThreadScheduler.parallelism=2";
  static final String TWO_P_GMP = "-Dgmp.gomaxprocs=2";

  /** Operations per invocation; see the overview. */
  static final int BATCH = 10_000;

  /** How long the JMH thread waits for one batch: 3 ms per operation, far off any score. */
  static final Duration HANG_TIMEOUT = Duration.ofSeconds(30);

  /** How this fork's goroutines are built: "jdk", "agent" or "lib" (the column's fork argument). */
  static String mode() {
    return System.getProperty("bench.mode", "unset");
  }

  private final SynchronousQueue<Runnable> work = new SynchronousQueue<>();
  private final SynchronousQueue<Throwable> done = new SynchronousQueue<>();
  private Thread driver;

  /** Starts the driver on the scheduler of {@link #mode} and checks its carrier. JMH thread. */
  @Setup(Level.Trial)
  public void startDriver() throws InterruptedException {
    if (!java.util.Set.of("jdk", "agent", "lib").contains(mode())) {
      throw new IllegalStateException("bench.mode=" + mode() + ": run a column class (Jdk1P, ...)");
    }
    Thread.Builder.OfVirtual b = mode().equals("lib") ? Gmp.ofVirtual() : Thread.ofVirtual();
    driver = b.name("bench-driver").start(this::drive);
    String[] carrier = new String[1];
    runBatch(() -> carrier[0] = Thread.currentThread().toString());
    String want = mode().equals("jdk") ? "@ForkJoinPool" : "@gmp-m";
    if (!carrier[0].contains(want)) {
      throw new IllegalStateException(
          "mode=" + mode() + " ran its driver as " + carrier[0] + ", want a carrier " + want);
    }
  }

  @TearDown(Level.Trial)
  public void stopDriver() throws InterruptedException {
    driver.interrupt();
    if (!driver.join(HANG_TIMEOUT)) {
      throw hang("stopDriver: driver did not end");
    }
  }

  private void drive() {
    while (true) {
      Runnable r;
      try {
        r = work.take();
      } catch (InterruptedException e) {
        return;
      }
      Throwable failure = null;
      try {
        r.run();
      } catch (Throwable t) {
        failure = t;
      }
      try {
        done.put(failure != null ? failure : OK);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private static final Throwable OK = new Throwable("ok", null, false, false) {};

  /** Runs {@code r} on the driver and waits for it. JMH thread. */
  final void runBatch(Runnable r) throws InterruptedException {
    long t = HANG_TIMEOUT.toNanos();
    if (!work.offer(r, t, TimeUnit.NANOSECONDS)) {
      throw hang("driver did not take the batch");
    }
    Throwable f = done.poll(t, TimeUnit.NANOSECONDS);
    if (f == null) {
      throw hang("batch did not finish");
    }
    if (f != OK) {
      throw new IllegalStateException("batch failed on the driver", f);
    }
  }

  private IllegalStateException hang(String what) {
    String s = what + " within " + HANG_TIMEOUT + " (mode=" + mode() + ", driver " + driver + ")";
    if (!mode().equals("jdk")) {
      s += "\n" + Gmp.schedtrace(true);
    }
    System.err.println(s);
    return new IllegalStateException(s);
  }

  // ------------------------------------------------------------------------------------------
  // Ping-pong

  /** Whose move it is in pingPongPark: 0 the driver's, 1 the echo's, 2 stop. Volatile. */
  private volatile int turn;

  private volatile boolean hogStop;

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void pingPongPark() throws InterruptedException {
    runBatch(() -> parkRoundTrips(BATCH));
  }

  private void parkRoundTrips(int n) {
    Thread me = Thread.currentThread();
    turn = 0;
    Thread echo =
        Thread.ofVirtual()
            .start(
                () -> {
                  while (true) {
                    int t;
                    while ((t = turn) == 0) {
                      LockSupport.park(this);
                    }
                    if (t == 2) {
                      return;
                    }
                    turn = 0;
                    LockSupport.unpark(me);
                  }
                });
    for (int i = 0; i < n; i++) {
      turn = 1;
      LockSupport.unpark(echo);
      while (turn != 0) {
        LockSupport.park(this);
      }
    }
    turn = 2;
    LockSupport.unpark(echo);
    join(echo);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void pingPongArrayBlockingQueue() throws InterruptedException {
    runBatch(() -> queueRoundTrips(new ArrayBlockingQueue<>(1), new ArrayBlockingQueue<>(1)));
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void pingPongSynchronousQueue() throws InterruptedException {
    runBatch(() -> queueRoundTrips(new SynchronousQueue<>(), new SynchronousQueue<>()));
  }

  private static final Integer PING = 1;
  private static final Integer STOP = -1;

  private static void queueRoundTrips(BlockingQueue<Integer> ping, BlockingQueue<Integer> pong) {
    Thread echo =
        Thread.ofVirtual()
            .start(
                () -> {
                  try {
                    Integer m;
                    while ((m = ping.take()) != STOP) {
                      pong.put(m);
                    }
                  } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                  }
                });
    try {
      for (int i = 0; i < BATCH; i++) {
        ping.put(PING);
        pong.take();
      }
      ping.put(STOP);
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
    join(echo);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void pingPongHog() throws InterruptedException {
    if (mode().equals("jdk")) {
      // Not a number to report: with no time slicing the hog keeps its carrier once the pair
      // parks, and at 1 P the batch never ends.
      throw new UnsupportedOperationException("the JDK's scheduler never preempts the hog");
    }
    runBatch(
        () -> {
          hogStop = false;
          Thread hog =
              Thread.ofVirtual()
                  .start(
                      () -> {
                        long x = 0;
                        while (!hogStop) {
                          x +=
                              System.identityHashCode(this)
                                  & 1; // a loop with a back-edge poll under the agent
                        }
                        if (x == 42) {
                          System.out.print("");
                        }
                      });
          parkRoundTrips(BATCH);
          hogStop = true;
          join(hog);
        });
  }

  // ------------------------------------------------------------------------------------------
  // Yield, spawn, wake-ups

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void yield() throws InterruptedException {
    runBatch(
        () -> {
          Runnable yielder =
              () -> {
                for (int i = 0; i < BATCH / 2; i++) {
                  Thread.yield();
                }
              };
          Thread a = Thread.ofVirtual().start(yielder);
          Thread b = Thread.ofVirtual().start(yielder);
          join(a);
          join(b);
        });
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void spawn() throws InterruptedException {
    runBatch(
        () -> {
          CountDownLatch ended = new CountDownLatch(BATCH);
          Runnable body = ended::countDown;
          Thread.Builder.OfVirtual b = Thread.ofVirtual();
          for (int i = 0; i < BATCH; i++) {
            b.start(body);
          }
          await(ended);
        });
  }

  /** Goroutines per fan-out in fanOutFanIn. */
  static final int FAN = 100;

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void fanOutFanIn() throws InterruptedException {
    runBatch(
        () -> {
          AtomicLong sum = new AtomicLong();
          for (int round = 0; round < BATCH / FAN; round++) {
            CountDownLatch ended = new CountDownLatch(FAN);
            for (int i = 0; i < FAN; i++) {
              int k = i;
              Thread.ofVirtual()
                  .start(
                      () -> {
                        long h = k;
                        for (int j = 0; j < 100; j++) {
                          h = h * 31 + j;
                        }
                        sum.addAndGet(h);
                        ended.countDown();
                      });
            }
            await(ended);
          }
        });
  }

  /** Rounds per invocation of wakeupParallelSpinning. */
  static final int WAKE_ROUNDS = 1_000;

  @Benchmark
  @OperationsPerInvocation(WAKE_ROUNDS)
  public void wakeupParallelSpinning() throws InterruptedException {
    runBatch(
        () -> {
          int n = Runtime.getRuntime().availableProcessors();
          Thread[] ws = new Thread[n];
          // Worker i may run round r once wake[i] >= r. The flag, not the park permit, carries the
          // wake-up: the Phaser parks and unparks too, and would swallow a permit.
          java.util.concurrent.atomic.AtomicIntegerArray wake =
              new java.util.concurrent.atomic.AtomicIntegerArray(n);
          java.util.concurrent.Phaser phaser = new java.util.concurrent.Phaser(n + 1);
          for (int i = 0; i < n; i++) {
            int w = i;
            ws[i] =
                Thread.ofVirtual()
                    .start(
                        () -> {
                          for (int r = 1; r <= WAKE_ROUNDS; r++) {
                            while (wake.get(w) < r) {
                              LockSupport.park(); // woken by the driver
                            }
                            for (int j = 0; j < 50; j++) {
                              Thread
                                  .onSpinWait(); // Go's procyield(50) in the benchmark's goroutines
                            }
                            phaser.arriveAndAwaitAdvance();
                          }
                        });
          }
          for (int r = 1; r <= WAKE_ROUNDS; r++) {
            for (int i = 0; i < n; i++) {
              wake.set(i, r);
              LockSupport.unpark(ws[i]);
            }
            phaser.arriveAndAwaitAdvance();
          }
          for (Thread w : ws) {
            join(w);
          }
        });
  }

  /** Go's skynet: a tree of 1,000,000 leaf goroutines, ten children each, summing leaf ids. */
  static final int SKYNET_LEAVES = 1_000_000;

  @Benchmark
  @BenchmarkMode(Mode.SingleShotTime)
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  @Warmup(iterations = 2)
  @Measurement(iterations = 4)
  public void skynet() throws InterruptedException {
    runBatch(
        () -> {
          long sum = skynet(0, SKYNET_LEAVES);
          long want = (long) SKYNET_LEAVES * (SKYNET_LEAVES - 1) / 2;
          if (sum != want) {
            throw new IllegalStateException("skynet: sum " + sum + ", want " + want);
          }
        });
  }

  private static long skynet(long num, int size) {
    if (size == 1) {
      return num;
    }
    int sub = size / 10;
    long[] results = new long[10];
    Thread[] children = new Thread[10];
    for (int i = 0; i < 10; i++) {
      int k = i;
      children[i] = Thread.ofVirtual().start(() -> results[k] = skynet(num + (long) k * sub, sub));
    }
    long sum = 0;
    for (int i = 0; i < 10; i++) {
      join(children[i]); // join orders the child's write of results[i] before this read
      sum += results[i];
    }
    return sum;
  }

  private static void join(Thread t) {
    try {
      if (!t.join(HANG_TIMEOUT)) {
        throw new IllegalStateException(t + " did not end within " + HANG_TIMEOUT);
      }
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void await(CountDownLatch l) {
    try {
      if (!l.await(HANG_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS)) {
        throw new IllegalStateException(l + " did not reach zero within " + HANG_TIMEOUT);
      }
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  // ------------------------------------------------------------------------------------------
  // The columns

  @Fork(
      value = 1,
      jvmArgsAppend = {ADD_OPENS, ONE_P, "-Dbench.mode=jdk"})
  public static class Jdk1P extends Primitives {}

  /**
   * The JDK's scheduler with a Java agent that does nothing: what any agent costs virtual
   * threads. With a JVMTI environment present, HotSpot reports every mount and unmount to JVMTI
   * (JDK 25's VTMS transitions), and gmp4j under its agent pays that as well.
   */
  @Fork(
      value = 1,
      jvmArgsAppend = {ADD_OPENS, NOOP_AGENT, ONE_P, "-Dbench.mode=jdk"})
  public static class JdkAgent1P extends Primitives {}

  @Fork(
      value = 1,
      jvmArgsAppend = {ADD_OPENS, NOOP_AGENT, TWO_P, "-Dbench.mode=jdk"})
  public static class JdkAgent2P extends Primitives {}

  @Fork(
      value = 1,
      jvmArgsAppend = {ADD_OPENS, AGENT, ONE_P_GMP, "-Dbench.mode=agent"})
  public static class Agent1P extends Primitives {}

  /**
   * gmp4j under its agent with HotSpot's JVMTI virtual-thread notifications off, the one VM
   * option that takes back what any agent costs a switch (README, 'What any Java agent costs a
   * virtual thread').
   */
  @Fork(
      value = 1,
      jvmArgsAppend = {
        ADD_OPENS,
        AGENT,
        NO_JVMTI_VT_1,
        NO_JVMTI_VT_2,
        ONE_P_GMP,
        "-Dbench.mode=agent"
      })
  public static class AgentNoJvmtiVt1P extends Primitives {}

  @Fork(
      value = 1,
      jvmArgsAppend = {ADD_OPENS, ONE_P_GMP, "-Dbench.mode=lib"})
  public static class Lib1P extends Primitives {}

  @Fork(
      value = 1,
      jvmArgsAppend = {ADD_OPENS, TWO_P, "-Dbench.mode=jdk"})
  public static class Jdk2P extends Primitives {}

  @Fork(
      value = 1,
      jvmArgsAppend = {ADD_OPENS, AGENT, TWO_P_GMP, "-Dbench.mode=agent"})
  public static class Agent2P extends Primitives {}

  @Fork(
      value = 1,
      jvmArgsAppend = {
        ADD_OPENS,
        AGENT,
        NO_JVMTI_VT_1,
        NO_JVMTI_VT_2,
        TWO_P_GMP,
        "-Dbench.mode=agent"
      })
  public static class AgentNoJvmtiVt2P extends Primitives {}

  @Fork(
      value = 1,
      jvmArgsAppend = {ADD_OPENS, TWO_P_GMP, "-Dbench.mode=lib"})
  public static class Lib2P extends Primitives {}
}
