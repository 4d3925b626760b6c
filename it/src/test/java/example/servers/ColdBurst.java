package example.servers;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Cold throughput of {@link SpringServer}, and where its CPU goes (issue 17): starts one child,
 * sends it 5,000 light requests at 16 concurrent from the very first one (SpringBench sends one
 * request alone first), then 10,000 more, and prints one line: start-up, the cold phase's
 * throughput and p99, the child's CPU in that phase by thread group (10 ms ticks: JIT compilers,
 * carriers or Ms, Tomcat's poller and acceptor, sysmon, GC) and the same groups' voluntary context
 * switches (sysmon's: its wake-ups), the load client's own CPU in that phase and how busy the
 * machine's CPUs were ({@code client=} and {@code busy=}); then, after a bar, the warm phase's
 * throughput, p99 and the same CPU split (issue 17's warm gap: 'Where the warm gap goes' in
 * BENCHMARKS.md). A child that serves nothing in the cold phase is a hang: its threads are dumped
 * and the run fails.
 * Run by {@code it/scripts/spring-cold.sh}.
 *
 * <p>The client is this JVM, cold too: on two CPUs the cold phase keeps both busy (98-99%), and
 * the client takes about as much CPU as the server (BENCHMARKS.md, 'Who the cold phase waits
 * for'). So the server's extra CPU per request, not its latency, sets the cold throughput, and a
 * change of the client's share between runs moves it as much as a change of the server's.
 *
 * <pre>
 *   java -cp &lt;it's test class path&gt; example.servers.ColdBurst MODE none|&lt;agent spec&gt;
 * </pre>
 */
public final class ColdBurst {
  private ColdBurst() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: ColdBurst MODE none|<agent jar>[=<options>]");
      System.exit(2);
    }
    String agent = args[1].equals("none") ? null : args[1];
    try (ServerProcess p = new ServerProcess(SpringServer.class, agent, false, List.of(), 120);
        LoadClient c = new LoadClient("127.0.0.1", p.port())) {
      long pid = p.pid();
      Map<String, long[]> before = byGroup(pid);
      long clientBefore = ownCpuMillis();
      long t0 = System.nanoTime();
      LoadClient.Result cold = c.closed(16, 5_000, Duration.ofSeconds(60), 0);
      long coldMillis = (System.nanoTime() - t0) / 1_000_000;
      long client = ownCpuMillis() - clientBefore;
      Map<String, long[]> after = byGroup(pid);
      if (cold.throughput() == 0) {
        System.out.println(args[0] + " FAILED: nothing served cold: " + cold);
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(pid),
                "Thread.print")
            .inheritIO()
            .start()
            .waitFor();
        System.out.println(p.output());
        System.exit(1);
      }
      long warmClientBefore = ownCpuMillis();
      long t1 = System.nanoTime();
      LoadClient.Result warm = c.closed(16, 10_000, Duration.ofSeconds(120), 0);
      long warmMillis = (System.nanoTime() - t1) / 1_000_000;
      long warmClient = ownCpuMillis() - warmClientBefore;
      Map<String, long[]> end = byGroup(pid);
      Phase coldCpu = Phase.of(before, after);
      Phase warmCpu = Phase.of(after, end);
      int cpus = Runtime.getRuntime().availableProcessors();
      System.out.printf(
          "%-6s startup.ms=%.0f cold=%.0f/s p99=%.1fms cpu=%d [%s ] switches=[%s ] client=%d"
              + " busy=%.0f%% | warm=%.0f/s p99=%.1fms cpu=%d [%s ] client=%d busy=%.0f%%%n",
          args[0],
          SpringBench.startupMsOf(p.output()), // every server of Endpoints prints it before ready
          cold.throughput(),
          cold.lightMs(99),
          coldCpu.total,
          coldCpu.ticks,
          coldCpu.switches,
          client / 10,
          100.0 * (coldCpu.total * 10 + client) / Math.max(1, coldMillis * cpus),
          warm.throughput(),
          warm.lightMs(99),
          warmCpu.total,
          warmCpu.ticks,
          warmClient / 10,
          100.0 * (warmCpu.total * 10 + warmClient) / Math.max(1, warmMillis * cpus));
    }
  }

  /**
   * One phase's CPU by thread group, from two {@link #byGroup} walks: the total ticks, the groups
   * of more than two ticks by ticks (most first), and their voluntary context switches.
   */
  private record Phase(long total, String ticks, String switches) {
    static Phase of(Map<String, long[]> from, Map<String, long[]> to) {
      long total = 0;
      Map<String, Long> delta = new TreeMap<>();
      StringBuilder switches = new StringBuilder();
      for (Map.Entry<String, long[]> e : new TreeMap<>(to).entrySet()) {
        long[] was = from.getOrDefault(e.getKey(), new long[2]);
        long d = e.getValue()[TICKS] - was[TICKS];
        total += d;
        if (d > 2) {
          delta.put(e.getKey(), d);
          switches.append(' ').append(e.getKey()).append('=');
          switches.append(e.getValue()[SWITCHES] - was[SWITCHES]);
        }
      }
      StringBuilder ticks = new StringBuilder();
      delta.entrySet().stream()
          .sorted((x, y) -> Long.compare(y.getValue(), x.getValue()))
          .forEach(e -> ticks.append(' ').append(e.getKey()).append('=').append(e.getValue()));
      return new Phase(total, ticks.toString(), switches.toString());
    }
  }

  /** This JVM's CPU time so far (the load client's), in ms. */
  private static long ownCpuMillis() {
    return ProcessHandle.current().info().totalCpuDuration().orElseThrow().toMillis();
  }

  /** Index of a group's CPU ticks in {@link #byGroup}'s figures. */
  private static final int TICKS = 0;

  /** Index of a group's voluntary context switches in {@link #byGroup}'s figures. */
  private static final int SWITCHES = 1;

  /**
   * Each thread group of process {@code pid}, by name with the digits taken out (so "gmp-m0" and
   * "gmp-m1" are one group) but a leading "C1 " or "C2 " (HotSpot's compiler threads, whose split
   * is the JIT's tiers), and its figures summed: CPU ticks (user + system) and voluntary
   * context switches (its sleeps and parks: for sysmon, its wake-ups). One walk of the process's
   * threads. A thread that ended between two calls drops out of the second, so a group's delta
   * can undercount it.
   */
  static Map<String, long[]> byGroup(long pid) throws IOException {
    Map<String, long[]> m = new HashMap<>();
    try (DirectoryStream<Path> tasks =
        Files.newDirectoryStream(Path.of("/proc/" + pid + "/task"))) {
      for (Path t : tasks) {
        String stat;
        List<String> status;
        try {
          stat = Files.readString(t.resolve("stat"));
          status = Files.readAllLines(t.resolve("status"));
        } catch (IOException e) {
          continue; // the thread ended
        }
        int close = stat.lastIndexOf(')');
        String name = stat.substring(stat.indexOf('(') + 1, close).replaceAll("(?<!^C)[0-9]+", "#");
        String[] f = stat.substring(close + 2).split(" ");
        long[] sum = m.computeIfAbsent(name, k -> new long[2]);
        sum[TICKS] += Long.parseLong(f[11]) + Long.parseLong(f[12]);
        for (String line : status) {
          if (line.startsWith("voluntary_ctxt_switches:")) {
            sum[SWITCHES] += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
          }
        }
      }
    }
    return m;
  }
}
