package example.servers;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code ./demo}: the problem gmp4j solves, in half a minute. The JDK's own HttpServer ({@link
 * JdkServer}, unchanged) runs in a child JVM twice, first on the JDK's default scheduler and
 * then on gmp4j through the agent, under the same load: light requests on a fixed schedule
 * (open loop) while more CPU-bound requests than there are cores stay in flight. It prints a
 * line per second, a side-by-side table of that run's latencies, and one schedtrace line taken
 * during the gmp4j run, explained. Every number is measured in this run.
 */
public final class Demo {
  private Demo() {}

  private static final double RATE = 200;
  private static final Duration LOAD = Duration.ofSeconds(6);
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** {@code agentJar}. */
  public static void main(String[] args) throws Exception {
    String agent = args[0];
    int cores = Runtime.getRuntime().availableProcessors();
    int cpu = Math.max(4, 4 * cores);
    System.out.printf(
        "gmp4j demo on JDK %s, %d cores: the JDK's HttpServer on 127.0.0.1 with a"
            + " virtual thread per request%n",
        Runtime.version(), cores);
    System.out.printf(
        "  load: %.0f light requests/s (small JSON, open loop) while %d CPU requests"
            + " (%d ms of computation each) stay in flight%n%n",
        RATE, cpu, Endpoints.CPU_MILLIS);

    System.out.println("1. on the JDK's default scheduler (ForkJoinPool, no time slices)");
    LoadClient.Result def = run(null, cpu, null);
    System.out.println();
    int port = freePort();
    String base = "http://127.0.0.1:" + port;
    System.out.println(
        "2. on gmp4j: java -javaagent:gmp4j-agent.jar=exporter.port="
            + port
            + " ... (the same server, unchanged)");
    LoadClient.Result gmp = run(agent + "=exporter.port=" + port, cpu, base);
    System.out.println();

    System.out.println("light requests while the CPU requests run:");
    System.out.printf("  %-22s %14s %14s%n", "", "JDK default", "gmp4j");
    row("p50", def.lightMs(50), gmp.lightMs(50));
    row("p99", def.lightMs(99), gmp.lightMs(99));
    row("p99.9", def.lightMs(99.9), gmp.lightMs(99.9));
    row("max", def.light().getMaxValue() / 1000.0, gmp.light().getMaxValue() / 1000.0);
    System.out.printf(
        "  %-22s %14s %14s%n",
        "answered / failed",
        def.lightOk() + " / " + def.lightFailed(),
        gmp.lightOk() + " / " + gmp.lightFailed());
    System.out.printf("  %-22s %14d %14d%n", "CPU requests done", def.cpuOk(), gmp.cpuOk());
    for (LoadClient.Result r : List.of(def, gmp)) {
      if (r.firstFailure() != null) {
        System.out.println(
            "  first failed request on "
                + (r == def ? "the default" : "gmp4j")
                + ": "
                + r.firstFailure());
      }
    }
    System.out.printf(
        "  light p99: %.0fx lower on gmp4j%n%n",
        def.lightMs(99) / Math.max(gmp.lightMs(99), 0.001));
    explain(lastTrace);
  }

  private static String lastTrace;

  private static void row(String what, double def, double gmp) {
    System.out.printf("  %-22s %11.1f ms %11.1f ms%n", what, def, gmp);
  }

  /** One phase: a server child, a warm-up, the load with a line per second. */
  private static LoadClient.Result run(String agent, int cpu, String base) throws Exception {
    try (ServerProcess p = new ServerProcess(JdkServer.class, agent, List.of(), 60);
        LoadClient client = new LoadClient("127.0.0.1", p.port())) {
      client.run(RATE, 2, Duration.ofMillis(2000), null); // warm-up: compiled server code
      long[] preempt0 = {-1};
      LoadClient.Result r =
          client.run(
              RATE,
              cpu,
              LOAD,
              t -> {
                String sched = "";
                if (base != null) {
                  Map<String, Long> m = sched(base);
                  if (preempt0[0] < 0) {
                    preempt0[0] = m.getOrDefault("/sched/preemptions/honored:preemptions", 0L);
                  }
                  sched =
                      String.format(
                          "  GOMAXPROCS=%d  preemptions=%d",
                          m.getOrDefault("/sched/gomaxprocs:threads", 0L),
                          m.getOrDefault("/sched/preemptions/honored:preemptions", 0L)
                              - preempt0[0]);
                  if (t.second() == 3) {
                    lastTrace = get(base + "/debug/schedtrace").trim();
                  }
                }
                System.out.printf(
                    "   %ds  light answered %5d  light p99 (this second) %7.1f ms"
                        + "  CPU done %3d%s%n",
                    t.second(), t.lightOk(), t.lightP99Ms(), t.cpuOk(), sched);
              });
      return r;
    }
  }

  private static final Pattern FIELD = Pattern.compile("(\\w+)=(\\S+)");

  /** The schedtrace line, and what its fields say about this moment of the run. */
  private static void explain(String line) {
    if (line == null) {
      System.out.println("(no schedtrace line: the endpoint did not answer)");
      return;
    }
    System.out.println("one schedtrace line from the gmp4j run (GODEBUG=schedtrace in Go):");
    System.out.println("  " + line);
    System.out.println("  (SCHED <n>ms: milliseconds since the scheduler started in that JVM)");
    Map<String, String> f = new HashMap<>();
    for (Matcher m = FIELD.matcher(line); m.find(); ) {
      f.put(m.group(1), m.group(2));
    }
    Matcher local = Pattern.compile("runqueue=\\d+ \\[([^\\]]*)\\]").matcher(line);
    String locals = local.find() ? local.group(1).trim() : "?";
    System.out.printf(
        "  gomaxprocs=%s idleprocs=%s: %s Ps (one per core) run goroutines, %s of" + " them idle%n",
        f.get("gomaxprocs"), f.get("idleprocs"), f.get("gomaxprocs"), f.get("idleprocs"));
    System.out.printf(
        "  threads=%s: carrier threads (Ms), more than Ps only while some are idle"
            + " or blocked%n",
        f.get("threads"));
    System.out.printf(
        "  runqueue=%s: goroutines in the global queue, here CPU handlers whose 10"
            + " ms slice ran out and were preempted%n",
        f.get("runqueue"));
    System.out.printf(
        "  [ %s ]: each P's local queue; a new or woken light handler goes ahead"
            + " of the preempted ones, so it waits at most a slice%n",
        locals);
    System.out.printf(
        "  schedticks=%s: how many times each P has scheduled a goroutine%n",
        line.substring(line.indexOf("schedticks=") + "schedticks=".length()));
  }

  private static Map<String, Long> sched(String base) {
    Map<String, Long> m = new HashMap<>();
    for (String l : get(base + "/sched").split("\n")) {
      String[] kv = l.trim().split("\\s+");
      if (kv.length == 2) {
        try {
          m.put(kv[0], Long.parseLong(kv[1]));
        } catch (NumberFormatException ignored) {
          // a histogram's quantile: not shown here
        }
      }
    }
    return m;
  }

  private static String get(String url) {
    try {
      return HTTP.send(
              HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
              HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (IOException | InterruptedException e) {
      return "";
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
