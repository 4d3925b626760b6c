package example.servers;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * What the agent costs {@link SpringServer} (issue 17), with the agent, with {@code
 * asyncpreemptoff=1} and without it, in one run: rounds of three child JVMs, the order rotated
 * each round so that a drift of the shared machine reaches all three. Each child, fresh:
 *
 * <ol>
 *   <li>start-up: {@code startup.ms} (its uptime when Spring's context is ready, Spring's
 *       "process running for") and the time from the parent's process start to the first 200;
 *   <li>cold: the first {@link #COLD} light requests, closed loop at {@link #CONCURRENCY};
 *   <li>warm: the next {@link #WARM} (the cold ones, more than 3,000, were the warm-up);
 *   <li>steady, only with {@code -Dspring.bench.steady=N}: N more light requests not measured,
 *       then {@link #WARM} measured ({@link #STEADY});
 *   <li>beside CPU: light requests closed loop at {@link #CONCURRENCY} for {@link #BESIDE} while
 *       {@link #CPU} CPU requests stay in flight (4 per carrier on 2 cores).
 * </ol>
 *
 * <p>Before the first round, one child without the agent warms this JVM's load client and is not
 * counted ({@link #warmClient}).
 *
 * <p>The same for the plain servers of {@link Endpoints} (issue 17 asks for one beside Spring
 * Boot): {@link TomcatServer} or {@link JettyServer}, whose {@code startup.ms} is the uptime when
 * the server listens.
 *
 * <p>No {@code -Xverify:all} here: it would verify every JDK class in the agent's runs only. Run
 * by {@code SpringBootIT} with {@code -Dspring.bench} (BENCHMARKS.md), or as a program: {@code
 * agentJar rounds [spring|tomcat|jetty [baselineJar]]}, where the baseline may carry options
 * ({@code gmp4j-agent.jar=timeslice=1s}) to measure an option against the default.
 */
public final class SpringBench {
  private SpringBench() {}

  static final int CONCURRENCY = 16;
  static final int COLD = 5_000;
  static final int WARM = 10_000;
  static final int CLIENT_WARM_UP = 40_000;
  static final int CPU = 8;
  static final Duration BESIDE = Duration.ofSeconds(8);

  /**
   * With {@code -Dspring.bench.steady=N} (N &gt; 0), a phase after the warm one: N light requests
   * of more warm-up, not measured, then {@link #WARM} measured. The warm phase is still the JIT's
   * warm-up: on two CPUs with one C2 thread, Spring's {@code DispatcherServlet.doDispatch} reached
   * tier 4 after more than 40,000 requests (BENCHMARKS.md, 'Where the warm gap goes'); this is the
   * rate once that is done. Before the beside-CPU phase, not after it: the JDK's child, whose
   * carriers the CPU requests hold, still had C2 busy 30,000 light requests after that phase
   * (BENCHMARKS.md, 'Once the JIT has settled'). So with it the beside-CPU phase comes after more
   * warm-up, and its rows do not pool with runs without it; the cold and warm ones do.
   */
  static final int STEADY = Integer.getInteger("spring.bench.steady", 0);

  /**
   * The configurations, in the order of the table's columns; the fourth, another agent jar
   * without options, only with a baseline ({@code -Dspring.bench.baseline=jar}).
   */
  static final String[] MODES = {
    "JDK default", "gmp4j agent", "gmp4j, asyncpreemptoff=1", "baseline agent"
  };

  /** One child JVM's figures. */
  public record Run(
      int mode,
      double startupMs,
      double firstOkMs,
      LoadClient.Result cold,
      LoadClient.Result warm,
      LoadClient.Result beside,
      LoadClient.Result steady) {
    @Override
    public String toString() {
      String line =
          String.format(
              "%-26s start-up %5.0f ms (first 200 at %5.0f ms) | cold %5.0f/s p99"
                  + " %6.1f ms | warm %5.0f/s p99 %6.1f ms | beside CPU: light p99 %7.1f ms,"
                  + " CPU p50 %5.0f ms (%d done) | failed %d",
              MODES[mode],
              startupMs,
              firstOkMs,
              cold.throughput(),
              cold.lightMs(99),
              warm.throughput(),
              warm.lightMs(99),
              beside.lightMs(99),
              beside.cpuMs(50),
              beside.cpuOk(),
              cold.lightFailed() + warm.lightFailed() + beside.lightFailed() + beside.cpuFailed());
      return steady == null
          ? line
          : line
              + String.format(
                  " | steady %5.0f/s p99 %6.1f ms, failed %d",
                  steady.throughput(), steady.lightMs(99), steady.lightFailed());
    }
  }

  /**
   * {@code agentJar rounds [spring|tomcat|jetty [baselineJar]]}: prints each run and the table;
   * with a baseline jar, that agent as a fourth mode (see below).
   */
  public static void main(String[] args) throws Exception {
    Class<?> server =
        switch (args.length > 2 ? args[2] : "spring") {
          case "spring" -> SpringServer.class;
          case "tomcat" -> TomcatServer.class;
          case "jetty" -> JettyServer.class;
          default ->
              throw new IllegalArgumentException(
                  "SpringBench: unknown server " + args[2] + " (spring, tomcat or jetty)");
        };
    String baselineJar = args.length > 3 ? args[3] : null;
    System.out.println(table(run(server, args[0], Integer.parseInt(args[1]), baselineJar)));
  }

  /**
   * {@code rounds} rounds of the three modes on {@link SpringServer}, the order rotated each
   * round; with {@code baselineJar} (null for none) a fourth mode in the rotation: that agent jar,
   * so that a change to the agent is measured against the agent before it.
   */
  public static List<Run> run(String agentJar, int rounds, String baselineJar) throws Exception {
    return run(SpringServer.class, agentJar, rounds, baselineJar);
  }

  /** As above, on {@code server} (a class with a main that serves {@link Endpoints}). */
  public static List<Run> run(Class<?> server, String agentJar, int rounds, String baselineJar)
      throws Exception {
    List<Run> runs = new ArrayList<>();
    int modes = baselineJar == null ? 3 : 4;
    warmClient(server);
    for (int r = 0; r < rounds; r++) {
      for (int k = 0; k < modes; k++) {
        int mode = (r + k) % modes;
        Run run = measure(server, mode == 3 ? baselineJar : agentJar, mode);
        System.out.println(run);
        runs.add(run);
      }
    }
    return runs;
  }

  /**
   * Brings this JVM's load client to its warm state before the first measured child: one child
   * without the agent, sent {@link #CLIENT_WARM_UP} light requests, and not counted. The client
   * shares the two CPUs with the server, and its CPU per request fell from 430-530 us in the
   * first child to 130-170 us from about the 35,000th request on (BENCHMARKS.md, 'Where the warm
   * gap goes'), so without this the first round's children (the JDK's first, in the rotation)
   * were measured beside a client that ran up to three times slower, and that round's ratios
   * leant towards the agent.
   */
  private static void warmClient(Class<?> server) throws Exception {
    try (ServerProcess p = new ServerProcess(server, null, false, List.of(), 120);
        LoadClient client = new LoadClient("127.0.0.1", p.port())) {
      LoadClient.Result warmUp = // ServerProcess waited for "ready": the server listens
          client.closed(CONCURRENCY, CLIENT_WARM_UP, Duration.ofSeconds(120), 0);
      System.out.printf(
          "client warm-up (not counted): %.0f req/s, %d failed%n",
          warmUp.throughput(), warmUp.lightFailed());
    }
  }

  /** One child JVM of {@code server} in {@code mode} (an index into {@link #MODES}). */
  public static Run measure(Class<?> server, String agentJar, int mode) throws Exception {
    String agent =
        switch (mode) {
          case 0 -> null;
          case 1, 3 -> agentJar;
          default -> agentJar + "=asyncpreemptoff=1";
        };
    long t0 = System.nanoTime();
    try (ServerProcess p = new ServerProcess(server, agent, false, List.of(), 120);
        LoadClient client = new LoadClient("127.0.0.1", p.port())) {
      double firstOk = firstOk(p.port(), t0);
      double startup = startupMsOf(p.output());
      Duration bound = Duration.ofSeconds(120);
      LoadClient.Result cold = client.closed(CONCURRENCY, COLD, bound, 0);
      LoadClient.Result warm = client.closed(CONCURRENCY, WARM, bound, 0);
      LoadClient.Result steady = null;
      if (STEADY > 0) {
        client.closed(CONCURRENCY, STEADY, Duration.ofSeconds(300), 0);
        steady = client.closed(CONCURRENCY, WARM, bound, 0);
      }
      LoadClient.Result beside = client.closed(CONCURRENCY, Long.MAX_VALUE, BESIDE, CPU);
      return new Run(mode, startup, firstOk, cold, warm, beside, steady);
    }
  }

  /** Milliseconds from {@code t0} until a light request got its 200. */
  private static double firstOk(int port, long t0) throws Exception {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    HttpRequest get =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/light"))
            .timeout(Duration.ofSeconds(30))
            .build();
    try {
      for (int i = 0; i < 1000; i++) {
        try {
          if (http.send(get, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
            return (System.nanoTime() - t0) / 1e6;
          }
        } catch (java.io.IOException retry) {
          Thread.sleep(10);
        }
      }
      throw new IllegalStateException("no 200 from /light");
    } finally {
      http.shutdownNow();
    }
  }

  /** The child's {@code startup.ms=} line. */
  public static double startupMsOf(String output) {
    for (String line : output.split("\n")) {
      if (line.startsWith("startup.ms=")) {
        return Double.parseDouble(line.substring("startup.ms=".length()).trim());
      }
    }
    throw new IllegalStateException("no startup.ms line in:\n" + output);
  }

  /**
   * The issue-17 table: per mode the median over the rounds, the range, the ratio to the JDK's
   * median, and the median of the rounds' own ratios ({@link #row}).
   */
  public static String table(List<Run> runs) {
    StringBuilder t = new StringBuilder();
    int modes = runs.stream().mapToInt(Run::mode).max().orElse(2) + 1;
    t.append("| | ")
        .append(String.join(" | ", Arrays.copyOf(MODES, modes)))
        .append(" |\n|---")
        .append("|---".repeat(modes))
        .append("|\n");
    row(t, runs, "start-up (\"process running for\"), ms", "%.0f", Run::startupMs, true);
    row(t, runs, "parent's process start to first 200, ms", "%.0f", Run::firstOkMs, true);
    row(
        t,
        runs,
        "light-only throughput, first 5,000, req/s",
        "%.0f",
        r -> r.cold().throughput(),
        false);
    row(t, runs, "light-only p99, first 5,000, ms", "%.1f", r -> r.cold().lightMs(99), false);
    row(
        t,
        runs,
        "light-only throughput, next 10,000, req/s",
        "%.0f",
        r -> r.warm().throughput(),
        false);
    row(t, runs, "light-only p99, next 10,000, ms", "%.1f", r -> r.warm().lightMs(99), false);
    row(t, runs, "light p99 beside 8 CPU requests, ms", "%.0f", r -> r.beside().lightMs(99), false);
    row(t, runs, "CPU request p50 beside light load, ms", "%.0f", r -> r.beside().cpuMs(50), false);
    if (runs.stream().allMatch(r -> r.steady() != null)) {
      String after = String.format("%,d", STEADY);
      row(
          t,
          runs,
          "light-only throughput, 10,000 after " + after + " more, req/s",
          "%.0f",
          r -> r.steady().throughput(),
          false);
      row(
          t,
          runs,
          "light-only p99, 10,000 after " + after + " more, ms",
          "%.1f",
          r -> r.steady().lightMs(99),
          false);
    }
    return t.toString();
  }

  /**
   * One row: median (min-max) per mode, and beside the agent's the ratio to the JDK's median, or
   * with {@code difference} the difference to it; then, paired by round, the median of the
   * rounds' own ratios (or differences). The machine drifts between rounds (the JDK's own cold
   * throughput moved from 1,226 to 2,431 req/s within one run of ten rounds), and a mode's median
   * can come from another round than the JDK's: the pairs keep each round's drift out.
   */
  private static void row(
      StringBuilder t,
      List<Run> runs,
      String name,
      String fmt,
      ToDoubleFunction<Run> f,
      boolean difference) {
    t.append("| ").append(name);
    double base = Double.NaN;
    int modes = runs.stream().mapToInt(Run::mode).max().orElse(2) + 1;
    for (int mode = 0; mode < modes; mode++) {
      int m = mode;
      double[] v = runs.stream().filter(r -> r.mode() == m).mapToDouble(f).sorted().toArray();
      if (v.length == 0) {
        t.append(" | ");
        continue;
      }
      double median = median(v);
      t.append(" | ").append(String.format(fmt, median));
      if (v.length > 1) {
        t.append(" (")
            .append(String.format(fmt, v[0]))
            .append("-")
            .append(String.format(fmt, v[v.length - 1]))
            .append(")");
      }
      if (mode == 0) {
        base = median;
      } else if (difference) {
        t.append(String.format(" (%+.0f)", median - base));
      } else if (base > 0) {
        t.append(String.format(" %.2fx", median / base));
      }
      if (mode > 0) {
        double paired = paired(runs, modes, m, f, difference);
        if (!Double.isNaN(paired)) {
          t.append(String.format(difference ? ", paired %+.0f" : ", paired %.2fx", paired));
        }
      }
    }
    t.append(" |\n");
  }

  /**
   * The median over the rounds of {@code mode}'s figure over the JDK's (or minus it, with {@code
   * difference}) in the same round; NaN unless {@code runs} is whole rounds of {@code modes} runs
   * in the order {@link #run} made them, or with fewer than two rounds.
   */
  private static double paired(
      List<Run> runs, int modes, int mode, ToDoubleFunction<Run> f, boolean difference) {
    if (runs.size() % modes != 0 || runs.size() / modes < 2) {
      return Double.NaN;
    }
    double[] v = new double[runs.size() / modes];
    for (int r = 0; r < v.length; r++) {
      Run jdk = null;
      Run other = null;
      for (Run run : runs.subList(r * modes, (r + 1) * modes)) {
        if (run.mode() == 0) {
          jdk = run;
        } else if (run.mode() == mode) {
          other = run;
        }
      }
      if (jdk == null || other == null) {
        return Double.NaN;
      }
      double a = f.applyAsDouble(other);
      double b = f.applyAsDouble(jdk);
      v[r] = difference ? a - b : a / b;
    }
    Arrays.sort(v);
    return median(v);
  }

  /** The median of {@code sorted}, which is not empty. */
  private static double median(double[] sorted) {
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }
}
