package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.ExporterApp;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Grafana dashboard in exporter/ asks only for metrics that the agent's {@code /metrics}
 * really serves: every metric name in every panel query (and in the template variable) appears
 * in a live scrape of an unmodified program run with {@code exporter.port}.
 */
@Timeout(120)
class GrafanaDashboardIT {
  static final Path DASHBOARD = Path.of("../exporter/gmp4j-grafana-dashboard.json");

  /** PromQL words that are not metric names: aggregation operators and keywords. */
  private static final Set<String> NOT_METRICS =
      Set.of(
          "sum",
          "min",
          "max",
          "avg",
          "count",
          "group",
          "stddev",
          "stdvar",
          "topk",
          "bottomk",
          "quantile",
          "count_values",
          "bool",
          "offset",
          "and",
          "or",
          "unless",
          "group_left",
          "group_right");

  private static final Pattern EXPR =
      Pattern.compile("\"(?:expr|definition)\":\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");

  @Test
  void everyQueryNamesAServedMetric() throws Exception {
    String json = Files.readString(DASHBOARD);
    List<String> queries = new ArrayList<>();
    for (Matcher m = EXPR.matcher(json); m.find(); ) {
      queries.add(m.group(1).replace("\\\"", "\"").replace("\\\\", "\\"));
    }
    assertTrue(queries.size() >= 10, "queries: " + queries);

    record Served(Scrape scrape, int exit, String output) {}
    Served run =
        ChildJvm.onFreePort(
            port -> {
              try (LiveChild child =
                  LiveChild.java(
                      List.of("-Xverify:all", ChildJvm.javaagent("exporter.port=" + port)),
                      Map.of(),
                      ExporterApp.class,
                      "5",
                      "stdin")) {
                child.awaitOut("ready"::equals, Duration.ofSeconds(60));
                ChildJvm.failIfPortTaken(child.err(), port);
                Thread.sleep(500); // some scheduling events for the latency histogram
                Scrape scrape = Scrape.of("http://127.0.0.1:" + port + "/metrics");
                child.process.getOutputStream().close(); // ExporterApp ends at the end of its stdin
                int exit = child.waitFor(Duration.ofSeconds(20));
                return new Served(scrape, exit, child.toString());
              }
            });
    int exit = run.exit();
    String output = run.output();
    Set<String> served = run.scrape().names();
    Set<String> asked = new TreeSet<>();
    for (String q : queries) {
      Set<String> names = metricNames(q);
      assertTrue(!names.isEmpty(), "no metric in " + q);
      for (String n : names) {
        assertTrue(
            served.contains(n),
            n + " (in " + q + ") is not in the scrape: " + served + "\n" + output);
      }
      asked.addAll(names);
    }
    // the panels: states, runnable vs GOMAXPROCS, latency, steals, preemptions,
    // hand-offs, threads
    for (String n :
        List.of(
            "gmp_sched_goroutines",
            "gmp_sched_gomaxprocs_threads",
            "gmp_sched_latencies_seconds_bucket",
            "gmp_sched_steals_total",
            "gmp_sched_preemptions_honored_preemptions_total",
            "gmp_sched_syscalls_handoffs_total",
            "gmp_sched_preemptions_handoffs_total",
            "gmp_sched_threads_live_threads")) {
      assertTrue(asked.contains(n), n + " has no panel: " + asked);
    }
    assertEquals(0, exit, output);
  }

  /**
   * The metric names in a PromQL query: identifiers outside strings, label matchers, grouping
   * clauses, range selectors and label_values' label, less function names (followed by a
   * parenthesis) and {@link #NOT_METRICS}.
   */
  static Set<String> metricNames(String query) {
    String q =
        query
            .replaceAll("\"[^\"]*\"", "\"\"")
            .replaceAll("\\{[^}]*\\}", " ")
            .replaceAll("\\b(by|without|on|ignoring)\\s*\\([^)]*\\)", " ")
            .replaceAll("label_values\\(([^,)]+),[^)]*\\)", "($1)") // Grafana's: (metric, label)
            .replaceAll("\\[[^\\]]*\\]", " ")
            .replaceAll("\\$\\w+", " ");
    Set<String> names = new TreeSet<>();
    Matcher m = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*(\\()?").matcher(q);
    while (m.find()) {
      if (m.group(2) == null && !NOT_METRICS.contains(m.group(1))) {
        names.add(m.group(1));
      }
    }
    return names;
  }
}
