package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.servers.HelidonServer;
import example.servers.JdkServer;
import example.servers.JettyServer;
import example.servers.LoadClient;
import example.servers.ServerProcess;
import example.servers.ServersBench;
import example.servers.ServersBench.Run;
import example.servers.ServersBench.Settings;
import example.servers.TomcatServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Real servers, unchanged, on gmp4j (issue 13): each of the four servers in {@code
 * example.servers} runs in a child JVM on the JDK's default scheduler and then with the agent
 * ({@code -Xverify:all}, {@code exporter.port} on), under the open-loop {@link LoadClient}:
 *
 * <ul>
 *   <li>(a) the light endpoint alone: no failed request on either, and gmp4j within a loose
 *       bound of the default's throughput and p99;
 *   <li>(b) the light endpoint while 8 CPU requests (4 per carrier on 2 cores) stay in flight:
 *       gmp4j's light p99 far below the default's, where light requests queue behind the CPU
 *       handlers.
 * </ul>
 *
 * The two runs of a pair come one after the other, so a stall of the shared machine may land in
 * one of them only; when gmp4j's run misses (a) or (b)'s timings, a second pair, gmp4j's run
 * first, must meet them (the default build's runs; a gmp4j that lost its advantage misses in
 * both).
 *
 * <p>During the load the agent's {@code /metrics} is scraped once a second: running Gs never
 * above GOMAXPROCS, preemptions counted, the steal counters served. The handlers' own answers
 * name their carrier, which shows the servers' virtual threads (created from platform threads)
 * on gmp4j's Ms.
 *
 * <p>The default build runs a few seconds per scenario. {@code -Dservers.bench} runs three
 * alternating pairs of longer runs per server and prints the tables of BENCHMARKS.md.
 */
@Timeout(600)
class ServersIT {
  private static final boolean BENCH =
      !System.getProperty("servers.bench", "").isEmpty()
          && !System.getProperty("servers.bench").equals("false");

  /** The default build's short runs: about 15 s per server, both JVMs included. */
  private static final Settings QUICK =
      new Settings(
          Duration.ofMillis(1000), Duration.ofMillis(1000), Duration.ofMillis(2000), 200, 8);

  private static final Settings LONG =
      new Settings(Duration.ofSeconds(2), Duration.ofSeconds(10), Duration.ofSeconds(10), 200, 8);

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      classes = {JdkServer.class, JettyServer.class, HelidonServer.class, TomcatServer.class})
  void lightRequestsStayFastBesideCpuRequests(Class<?> server) throws Exception {
    if (BENCH) {
      List<Run> runs = ServersBench.run(agent(""), 3, LONG, List.of(server));
      System.out.println(ServersBench.table(runs, LONG));
      for (int i = 0; i < runs.size(); i += 2) {
        Run def = runs.get(i).gmp4j() ? runs.get(i + 1) : runs.get(i);
        Run gmp = runs.get(i).gmp4j() ? runs.get(i) : runs.get(i + 1);
        check(def, gmp, "", List.of());
      }
      return;
    }
    Pair first = pair(server, false);
    first.check();
    String slow = slower(first.def(), first.gmp());
    if (slow == null) {
      return;
    }
    // A stall of either child (seen: 118 ms at load average 5) lands in one run of a pair, and
    // the p99 of a run of a second or two is that stall: one pair more, gmp4j first this time,
    // and that pair must hold. A gmp4j that lost its advantage fails both.
    System.out.println(
        "ServersIT " + server.getSimpleName() + ": " + slow + "; once more with a second pair");
    Pair second = pair(server, true);
    second.check();
    String slowAgain = slower(second.def(), second.gmp());
    assertTrue(
        slowAgain == null,
        "in both pairs: "
            + slow
            + "; "
            + slowAgain
            + "\n--- first pair ---\n"
            + first.both()
            + "\n--- second pair ---\n"
            + second.both());
  }

  /**
   * One pair of runs, the JDK's default scheduler's and gmp4j's, with what was scraped from
   * gmp4j's endpoint during the load and its schedtrace at the last tick.
   */
  private record Pair(Run def, Run gmp, String schedtrace, List<Scrape> scrapes) {
    /** The assertions of the class overview but for the timings ({@link #slower}). */
    void check() {
      for (Run r : List.of(def, gmp)) {
        assertEquals(0, r.a().lightFailed(), both());
        assertEquals(r.a().lightSent(), r.a().lightOk(), both());
        assertEquals(0, r.b().lightFailed(), both());
        assertEquals(0, r.b().cpuFailed(), both());
        assertTrue(r.b().cpuOk() > 0, both());
        assertTrue(r.output().contains("stopped served="), both());
      }
      if (!scrapes.isEmpty()) {
        checkMetrics(scrapes, both());
      }
    }

    String both() {
      return def
          + "\n"
          + gmp
          + "\n--- gmp4j child's output ---\n"
          + gmp.output()
          + "\n--- schedtrace at the last tick ---\n"
          + schedtrace;
    }
  }

  /** Runs {@code server} on the default scheduler and on gmp4j, in that order or the other. */
  private static Pair pair(Class<?> server, boolean gmp4jFirst) throws Exception {
    Pair gmp = gmp4jFirst ? gmp4j(server) : null;
    Run def =
        ServersBench.measure(
            server, null, List.of(), QUICK, p -> carrier(p, "@ForkJoinPool"), null);
    if (gmp == null) {
      gmp = gmp4j(server);
    }
    return new Pair(def, gmp.gmp(), gmp.schedtrace(), gmp.scrapes());
  }

  /**
   * The gmp4j run of a pair (a Pair without its default run), its endpoint scraped once a
   * second; on another exporter.port if another process took the first (ChildJvm.onFreePort).
   */
  private static Pair gmp4j(Class<?> server) throws Exception {
    return ChildJvm.onFreePort(
        port -> {
          String base = "http://127.0.0.1:" + port;
          List<Scrape> scrapes = new ArrayList<>();
          String[] schedtrace = {""};
          Run gmp =
              ServersBench.measure(
                  server,
                  agent("exporter.port=" + port),
                  List.of(),
                  QUICK,
                  p -> {
                    ChildJvm.failIfPortTaken(p.output(), port);
                    carrier(p, "@gmp-m");
                    scrapes.add(scrape(base));
                  },
                  tick -> {
                    // on the client's ticker thread: a failure here shows as too few scrapes,
                    // with why
                    try {
                      scrapes.add(Scrape.of(base + "/metrics"));
                      schedtrace[0] = Scrape.get(base + "/debug/schedtrace?detail=1");
                    } catch (Exception e) {
                      schedtrace[0] = "scrape failed: " + e;
                    }
                  });
          return new Pair(null, gmp, schedtrace[0], scrapes);
        });
  }

  /** The assertions of the class overview, for one pair of runs. */
  private static void check(Run def, Run gmp, String schedtrace, List<Scrape> scrapes) {
    Pair pair = new Pair(def, gmp, schedtrace, scrapes);
    pair.check();
    String slow = slower(def, gmp);
    assertTrue(slow == null, slow + "\n" + pair.both());
  }

  /** Which of the class overview's timings gmp4j missed in this pair, or null. */
  private static String slower(Run def, Run gmp) {
    // (a): within noise, loosely: the open-loop rate is the same, and a shared machine may
    // stall either child for a hundred milliseconds (seen: 118 ms once at load average 5)
    if (gmp.a().throughput() < 0.9 * def.a().throughput()) {
      return "(a) throughput " + gmp.a().throughput() + " < 0.9 x " + def.a().throughput();
    }
    if (gmp.a().lightMs(99) > Math.max(5 * def.a().lightMs(99), 250)) {
      return "(a) p99 " + gmp.a().lightMs(99) + " ms > max(5 x " + def.a().lightMs(99) + ", 250)";
    }
    // (b): the default queues light requests behind 8 x 200 ms of CPU work on 2 carriers
    // (hundreds of ms to seconds); gmp4j runs them within a few time slices. Measured 10-20x.
    if (!(3 * gmp.b().lightMs(99) < def.b().lightMs(99))) {
      return "(b) p99 3 x " + gmp.b().lightMs(99) + " ms >= " + def.b().lightMs(99) + " ms";
    }
    return null;
  }

  /** Sanity of /metrics during the load: see the class overview. */
  private static void checkMetrics(List<Scrape> scrapes, String both) {
    assertTrue(scrapes.size() >= 3, scrapes.size() + " scrapes\n" + both);
    for (Scrape s : scrapes) {
      double procs = s.value("gmp_sched_gomaxprocs_threads");
      double running = s.value("gmp_sched_goroutines{state=\"running\"}");
      assertTrue(procs >= 1 && running >= 0 && running <= procs, s.text());
      assertTrue(s.value("gmp_sched_steals_total") >= 0, s.text());
      assertTrue(s.value("gmp_sched_steals_goroutines_total") >= 0, s.text());
    }
    Scrape first = scrapes.get(0);
    Scrape last = scrapes.get(scrapes.size() - 1);
    String name = "gmp_sched_preemptions_honored_preemptions_total";
    assertTrue(
        last.value(name) > first.value(name),
        "preemptions " + first.value(name) + " -> " + last.value(name) + "\n" + last.text() + both);
    assertTrue(
        last.value("gmp_sched_preemptions_requested_preemptions_total") >= last.value(name),
        last.text());
    assertTrue(
        last.value("gmp_sched_goroutines_created_goroutines_total")
            > first.value("gmp_sched_goroutines_created_goroutines_total"),
        last.text());
  }

  /** The light endpoint's answer names its thread: its carrier must start with {@code at}. */
  private static void carrier(ServerProcess p, String at) {
    try {
      String body = Scrape.get("http://127.0.0.1:" + p.port() + "/light");
      assertTrue(body.contains("VirtualThread[") && body.contains(at), body + "\n" + p.output());
    } catch (Exception e) {
      throw new AssertionError(p.output(), e);
    }
  }

  private static Scrape scrape(String base) {
    try {
      return Scrape.of(base + "/metrics");
    } catch (Exception e) {
      throw new AssertionError("scrape of " + base + "/metrics", e);
    }
  }

  private static String agent(String options) {
    return ChildJvm.javaagent(options).substring("-javaagent:".length());
  }
}
