package io.gmp4j.bench;

import io.gmp4j.Gmp;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
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
 * The cost of a JFR recording on the scheduler's two hottest paths (issue 10, 'Cost'): a
 * LockSupport ping-pong (one park and one unpark per half round trip: a GoRun and a GoUnblock
 * each with gmp4j-detail.jfc) and spawn-and-join of 100 virtual threads (GoCreate, GoRun,
 * GoDestroy each).
 *
 * <p>{@code settings}: {@code none}; {@code gmp4j} (the agent's gmp4j.jfc); {@code detail}
 * (gmp4j-detail.jfc); {@code default} (the JDK's default.jfc, for the row "JDK scheduler with
 * default.jfc"); or the path of any {@code .jfc} file, to find what one setting costs (an
 * empty configuration measures what a recording costs by itself). The recording is started in
 * the fork, in the trial's setup, on disk as a user's would be, and discarded at teardown. Run
 * the rows the issue asks for with {@code -p scheduler=gmp4j -p settings=none,gmp4j,detail} and
 * {@code -p scheduler=jdk -p settings=none,default}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = PingPongBenchmark.ADD_OPENS)
@State(Scope.Benchmark)
public class JfrCostBenchmark {
  static final int ROUND_TRIPS = 10_000;
  static final int SPAWNS = 100;

  @Param({"gmp4j", "jdk"})
  public String scheduler;

  @Param({"none", "gmp4j", "detail", "default"})
  public String settings;

  private Recording recording;
  private Thread.Builder.OfVirtual builder;

  private volatile int turn;
  private volatile Thread driver;
  private volatile Thread echo;

  @Setup(Level.Trial)
  public void startRecording() throws Exception {
    builder = scheduler.equals("gmp4j") ? Gmp.ofVirtual() : Thread.ofVirtual();
    Configuration config =
        switch (settings) {
          case "none" -> null;
          case "default" -> Configuration.getConfiguration("default");
          case "gmp4j" -> jfc("gmp4j.jfc");
          case "detail" -> jfc("gmp4j-detail.jfc");
          default -> {
            if (!settings.endsWith(".jfc")) {
              throw new IllegalArgumentException("settings: " + settings);
            }
            yield Configuration.create(Path.of(settings));
          }
        };
    if (config != null) {
      recording = new Recording(config);
      recording.setToDisk(true);
      recording.start();
      Thread.sleep(1_500); // gmp4j's sysmon turns the enabled bits on within a cycle or two
    }
  }

  /** gmp4j.jfc from the agent jar on the class path, or from agent/target/classes. */
  private static Configuration jfc(String name) throws Exception {
    try (InputStream in = JfrCostBenchmark.class.getResourceAsStream("/" + name)) {
      if (in != null) {
        return Configuration.create(new InputStreamReader(in, StandardCharsets.UTF_8));
      }
    }
    Path file = Path.of("agent", "target", "classes", name);
    if (!Files.isRegularFile(file)) {
      throw new IllegalStateException(name + " not found: build the agent first");
    }
    return Configuration.create(file);
  }

  @TearDown(Level.Trial)
  public void stopRecording() {
    if (recording != null) {
      recording.close();
    }
  }

  /** A park/unpark ping-pong of {@link #ROUND_TRIPS} round trips, ns per round trip. */
  @Benchmark
  @OperationsPerInvocation(ROUND_TRIPS)
  public void pingPong() throws InterruptedException {
    pingPong(0);
  }

  /**
   * The ping-pong with {@link #BUSY_STEPS} steps of computation (about 1 us on the 2-vCPU VMs)
   * before each unpark: runs of a microsecond or two, nearer a request handler's than the bare
   * ping-pong's few hundred ns, so that a per-run cost shows at the size a real program pays it.
   */
  @Benchmark
  @OperationsPerInvocation(ROUND_TRIPS)
  public void pingPongBusy() throws InterruptedException {
    pingPong(BUSY_STEPS);
  }

  static final int BUSY_STEPS = 700;

  private void pingPong(int steps) throws InterruptedException {
    turn = 0;
    Thread e =
        builder.unstarted(
            () -> {
              for (int i = 0; i < ROUND_TRIPS; i++) {
                while (turn != 1) {
                  LockSupport.park();
                }
                busy(steps);
                turn = 0;
                LockSupport.unpark(driver);
              }
            });
    Thread d =
        builder.unstarted(
            () -> {
              for (int i = 0; i < ROUND_TRIPS; i++) {
                busy(steps);
                turn = 1;
                LockSupport.unpark(echo);
                while (turn != 0) {
                  LockSupport.park();
                }
              }
            });
    echo = e;
    driver = d;
    e.start();
    d.start();
    d.join();
    e.join();
  }

  /**
   * A dependent xorshift-multiply chain of {@code steps} steps, about 1.4 ns each on the 2-vCPU
   * EPYC VM. Not a multiply-add: C2 collapses an affine chain to a few ns whatever its length.
   */
  private static void busy(int steps) {
    long x = sink;
    for (int i = 0; i < steps; i++) {
      x = (x ^ (x >>> 29)) * 6364136223846793005L;
    }
    if (x == 42) {
      sink = x; // almost never: keeps the chain live without a store per call
    }
  }

  /** {@link #SPAWNS} virtual threads started and joined from one, ns per spawn. */
  @Benchmark
  @OperationsPerInvocation(SPAWNS)
  public void spawnAndJoin() throws InterruptedException {
    Thread parent =
        builder.start(
            () -> {
              Thread[] ts = new Thread[SPAWNS];
              for (int i = 0; i < SPAWNS; i++) {
                ts[i] = builder.start(JfrCostBenchmark::work);
              }
              try {
                for (Thread t : ts) {
                  t.join();
                }
              } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
              }
            });
    parent.join();
  }

  private static volatile long sink;

  private static void work() {
    sink++;
  }
}
