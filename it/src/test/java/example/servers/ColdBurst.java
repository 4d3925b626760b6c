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
 * machine's CPUs were ({@code client=} and {@code busy=}), and the warm throughput. A child
 * that serves nothing in the cold phase is a hang: its threads are dumped and the run fails.
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
      Map<String, Long> before = ticksByGroup(pid);
      Map<String, Long> switchesBefore = switchesByGroup(pid);
      long clientBefore = ownCpuMillis();
      long t0 = System.nanoTime();
      LoadClient.Result cold = c.closed(16, 5_000, Duration.ofSeconds(60), 0);
      long coldMillis = (System.nanoTime() - t0) / 1_000_000;
      long client = ownCpuMillis() - clientBefore;
      Map<String, Long> after = ticksByGroup(pid);
      Map<String, Long> switchesAfter = switchesByGroup(pid);
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
      LoadClient.Result warm = c.closed(16, 10_000, Duration.ofSeconds(120), 0);
      StringBuilder cpu = new StringBuilder();
      long total = 0;
      Map<String, Long> delta = new TreeMap<>();
      for (Map.Entry<String, Long> e : after.entrySet()) {
        long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
        total += d;
        if (d > 2) {
          delta.put(e.getKey(), d);
        }
      }
      delta.entrySet().stream()
          .sorted((x, y) -> Long.compare(y.getValue(), x.getValue()))
          .forEach(e -> cpu.append(' ').append(e.getKey()).append('=').append(e.getValue()));
      String startup =
          p.output()
              .lines()
              .filter(l -> l.startsWith("startup.ms="))
              .findFirst()
              .orElse("startup.ms=?");
      StringBuilder switches = new StringBuilder();
      for (Map.Entry<String, Long> e : new TreeMap<>(switchesAfter).entrySet()) {
        long d = e.getValue() - switchesBefore.getOrDefault(e.getKey(), 0L);
        if (delta.containsKey(e.getKey())) {
          switches.append(' ').append(e.getKey()).append('=').append(d);
        }
      }
      int cpus = Runtime.getRuntime().availableProcessors();
      System.out.printf(
          "%-6s %s cold=%.0f/s p99=%.1fms cpu=%d [%s ] switches=[%s ] client=%d busy=%.0f%%"
              + " warm=%.0f/s%n",
          args[0],
          startup,
          cold.throughput(),
          cold.lightMs(99),
          total,
          cpu,
          switches,
          client / 10,
          100.0 * (total * 10 + client) / Math.max(1, coldMillis * cpus),
          warm.throughput());
    }
  }

  /** This JVM's CPU time so far (the load client's), in ms. */
  private static long ownCpuMillis() {
    return ProcessHandle.current().info().totalCpuDuration().orElseThrow().toMillis();
  }

  /**
   * CPU ticks (user + system) of each thread of process {@code pid}, summed by name with the
   * digits taken out, so that "gmp-m0" and "gmp-m1" are one group. A thread that ended between
   * two calls drops out of the second, so a group's delta can undercount it.
   */
  static Map<String, Long> ticksByGroup(long pid) throws IOException {
    return byGroup(pid, ColdBurst::ticks);
  }

  /**
   * Voluntary context switches of each thread of process {@code pid} (its sleeps and parks: for
   * sysmon, its wake-ups), summed by name as {@link #ticksByGroup} does.
   */
  static Map<String, Long> switchesByGroup(long pid) throws IOException {
    return byGroup(pid, ColdBurst::voluntarySwitches);
  }

  /** A thread's figure from its /proc directory; throws if the thread ended. */
  private interface ThreadFigure {
    long of(Path task, String stat) throws IOException;
  }

  private static long ticks(Path task, String stat) {
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }

  private static long voluntarySwitches(Path task, String stat) throws IOException {
    for (String line : Files.readAllLines(task.resolve("status"))) {
      if (line.startsWith("voluntary_ctxt_switches:")) {
        return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
      }
    }
    return 0;
  }

  private static Map<String, Long> byGroup(long pid, ThreadFigure figure) throws IOException {
    Map<String, Long> m = new HashMap<>();
    try (DirectoryStream<Path> tasks =
        Files.newDirectoryStream(Path.of("/proc/" + pid + "/task"))) {
      for (Path t : tasks) {
        String stat;
        try {
          stat = Files.readString(t.resolve("stat"));
        } catch (IOException e) {
          continue; // the thread ended
        }
        String name =
            stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replaceAll("[0-9]+", "#");
        long v;
        try {
          v = figure.of(t, stat);
        } catch (IOException e) {
          continue; // the thread ended
        }
        m.merge(name, v, Long::sum);
      }
    }
    return m;
  }
}
