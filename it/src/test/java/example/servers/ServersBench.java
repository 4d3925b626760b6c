package example.servers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Scenarios (a) and (b) of issue 13 on one server child JVM, and the tables of BENCHMARKS.md.
 *
 * <ul>
 *   <li>warm-up: light requests and a few CPU requests, so that both schedulers run compiled
 *       server code;
 *   <li>(a) the light endpoint alone, open loop at {@code rate} per second;
 *   <li>(b) the same light load while {@code cpu} CPU requests (more than there are carriers)
 *       stay in flight.
 * </ul>
 *
 * Run as a program ({@code ServersIT} with {@code -Dservers.bench} does): pairs of runs, the
 * JDK's default scheduler and gmp4j alternating in each pair, then one table per scenario.
 */
public final class ServersBench {
  private ServersBench() {}

  /** The four servers of issue 13. */
  public static final List<Class<?>> SERVERS =
      List.of(JdkServer.class, JettyServer.class, HelidonServer.class, TomcatServer.class);

  /** Durations, load and CPU concurrency of one measurement. */
  public record Settings(Duration warmup, Duration a, Duration b, double rate, int cpu) {}

  /** One server under one scheduler: scenario (a), then (b). */
  public record Run(
      String server, boolean gmp4j, LoadClient.Result a, LoadClient.Result b, String output) {
    @Override
    public String toString() {
      return server
          + " on "
          + (gmp4j ? "gmp4j" : "the default scheduler")
          + ":\n  (a) "
          + a
          + "\n  (b) "
          + b;
    }
  }

  /**
   * Starts {@code server} (with the agent at {@code agent}, options included, or without it
   * when null), runs the warm-up, (a) and (b), and stops it. {@code during} sees the ticks of
   * (a) and (b); {@code started} the server before the load.
   */
  public static Run measure(
      Class<?> server,
      String agent,
      List<String> jvmArgs,
      Settings s,
      Consumer<ServerProcess> started,
      Consumer<LoadClient.Tick> during)
      throws Exception {
    try (ServerProcess p = new ServerProcess(server, agent, jvmArgs, 60);
        LoadClient client = new LoadClient("127.0.0.1", p.port())) {
      if (started != null) {
        started.accept(p);
      }
      client.run(s.rate(), Math.min(2, s.cpu()), s.warmup(), null);
      LoadClient.Result a = client.run(s.rate(), 0, s.a(), during);
      LoadClient.Result b = client.run(s.rate(), s.cpu(), s.b(), during);
      client.close();
      p.close();
      return new Run(server.getSimpleName(), agent != null, a, b, p.output());
    }
  }

  /**
   * {@code agentJar pairs warmupS aS bS rate cpu [Server...]}: prints each run and the tables.
   */
  public static void main(String[] args) throws Exception {
    String agent = args[0];
    int pairs = Integer.parseInt(args[1]);
    Settings s =
        new Settings(
            Duration.ofMillis((long) (Double.parseDouble(args[2]) * 1000)),
            Duration.ofMillis((long) (Double.parseDouble(args[3]) * 1000)),
            Duration.ofMillis((long) (Double.parseDouble(args[4]) * 1000)),
            Double.parseDouble(args[5]),
            Integer.parseInt(args[6]));
    List<Class<?>> servers = new ArrayList<>();
    for (int i = 7; i < args.length; i++) {
      servers.add(Class.forName("example.servers." + args[i]));
    }
    System.out.println(table(run(agent, pairs, s, servers.isEmpty() ? SERVERS : servers), s));
  }

  /** Runs {@code pairs} alternating pairs per server, printing each run as it ends. */
  public static List<Run> run(String agent, int pairs, Settings s, List<Class<?>> servers)
      throws Exception {
    List<Run> runs = new ArrayList<>();
    for (Class<?> server : servers) {
      for (int i = 0; i < pairs; i++) {
        // alternate which goes first, so that a drift of the shared machine hits both
        for (boolean withAgent :
            i % 2 == 0 ? new boolean[] {false, true} : new boolean[] {true, false}) {
          Run r = measure(server, withAgent ? agent : null, List.of(), s, null, null);
          System.out.println(
              server.getSimpleName()
                  + " "
                  + (withAgent ? "gmp4j  " : "default")
                  + " (a) "
                  + r.a()
                  + "\n"
                  + " ".repeat(server.getSimpleName().length() + 8)
                  + " (b) "
                  + r.b());
          runs.add(r);
        }
      }
    }
    return runs;
  }

  /** The (a) and (b) tables, one row per run, the runs of a pair next to each other. */
  public static String table(List<Run> runs, Settings s) {
    StringBuilder t = new StringBuilder();
    t.append(
        String.format(
            "(a) light only, open loop at %.0f/s for %.1f s%n",
            s.rate(), s.a().toMillis() / 1000.0));
    t.append("| server | scheduler | throughput (req/s) | p50 ms | p99 ms | p999 ms | failed |\n");
    t.append("|---|---|---|---|---|---|---|\n");
    for (Run r : runs) {
      t.append(
          String.format(
              "| %s | %s | %.0f | %.2f | %.2f | %.2f | %d |%n",
              r.server(),
              r.gmp4j() ? "gmp4j" : "default",
              r.a().throughput(),
              r.a().lightMs(50),
              r.a().lightMs(99),
              r.a().lightMs(99.9),
              r.a().lightFailed()));
    }
    t.append(
        String.format(
            "%n(b) light at %.0f/s while %d CPU requests (~%d ms each) stay in"
                + " flight, for %.1f s%n",
            s.rate(), s.cpu(), Endpoints.CPU_MILLIS, s.b().toMillis() / 1000.0));
    t.append(
        "| server | scheduler | light p50 ms | light p99 ms | light p999 ms | light failed"
            + " | CPU requests done | CPU p50 ms | CPU max ms |\n");
    t.append("|---|---|---|---|---|---|---|---|---|\n");
    for (Run r : runs) {
      t.append(
          String.format(
              "| %s | %s | %.1f | %.1f | %.1f | %d | %d | %.0f | %.0f |%n",
              r.server(),
              r.gmp4j() ? "gmp4j" : "default",
              r.b().lightMs(50),
              r.b().lightMs(99),
              r.b().lightMs(99.9),
              r.b().lightFailed(),
              r.b().cpuOk(),
              r.b().cpuMs(50),
              r.b().cpuMs(100)));
    }
    return t.toString();
  }
}
