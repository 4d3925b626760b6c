package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.ExporterApp;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.hawkular.agent.prometheus.text.TextPrometheusMetricDataParser;
import org.hawkular.agent.prometheus.types.Counter;
import org.hawkular.agent.prometheus.types.Gauge;
import org.hawkular.agent.prometheus.types.Histogram;
import org.hawkular.agent.prometheus.types.Metric;
import org.hawkular.agent.prometheus.types.MetricFamily;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The agent's endpoint ({@code exporter.port}) on an unmodified program, scraped over HTTP:
 * /metrics parses as Prometheus text with an independent parser and agrees with /sched, the
 * goroutine dump shows the program's parked goroutines at their frame, the endpoint is
 * read-only, and a port in use costs one line while the program runs on.
 */
@Timeout(120)
class ExporterIT {
  private static final int PARKED = 20;
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  void scrapedOverHttp() throws Exception {
    ChildJvm.onFreePort(
        port -> {
          scrapedOverHttp(port);
          return null;
        });
  }

  private static void scrapedOverHttp(int port) throws Exception {
    List<String> cmd =
        List.of(
            ChildJvm.JAVA.toString(),
            "-Xverify:all",
            "-javaagent:" + ChildJvm.AGENT + "=exporter.port=" + port,
            "-cp",
            System.getProperty("java.class.path"),
            ExporterApp.class.getName(),
            Integer.toString(PARKED),
            "stdin");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    StringBuilder output = new StringBuilder();
    CompletableFuture<Void> ready = new CompletableFuture<>();
    Thread.ofPlatform()
        .daemon()
        .start(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                  synchronized (output) {
                    output.append(line).append('\n');
                  }
                  if (line.equals("ready")) {
                    ready.complete(null);
                  }
                }
              } catch (IOException ignored) {
                // the child died
              }
              ready.complete(null);
            });
    try {
      ready.get(60, TimeUnit.SECONDS);
      synchronized (output) {
        ChildJvm.failIfPortTaken(output.toString(), port);
      }
      String base = "http://127.0.0.1:" + port;

      Map<String, String> sched1 = sched(get(base + "/sched", 200));
      // /metrics serves one readMetrics for up to 100 ms (MetricsReader.MAX_AGE_NANOS), and the
      // exporter's bind took one at start-up, just before "ready": scraped at once, /metrics
      // showed 0 latency samples against /sched's 4 before it. Past that age, the reading that a
      // scrape serves was taken after sched1.
      Thread.sleep(250);
      String metricsText = get(base + "/metrics", 200);
      Map<String, String> sched2 = sched(get(base + "/sched", 200));
      Map<String, MetricFamily> metrics = parse(metricsText);

      // gauges that do not move agree exactly
      assertEquals(
          Double.parseDouble(sched1.get("/sched/gomaxprocs:threads")),
          gauge(metrics, "gmp_sched_gomaxprocs_threads"),
          metricsText);
      // counters: /sched before <= /metrics <= /sched after
      double created = counter(metrics, "gmp_sched_goroutines_created_goroutines_total");
      long c1 = Long.parseLong(sched1.get("/sched/goroutines-created:goroutines"));
      long c2 = Long.parseLong(sched2.get("/sched/goroutines-created:goroutines"));
      assertTrue(c1 <= created && created <= c2 && c1 <= c2, c1 + " <= " + created + " <= " + c2);
      assertTrue(c1 >= PARKED, "created " + c1);
      // live goroutines: the parked ones plus a few churning, within slack
      double live = gauge(metrics, "gmp_sched_goroutines_live_goroutines");
      long l1 = Long.parseLong(sched1.get("/sched/goroutines:goroutines"));
      assertTrue(live >= PARKED && Math.abs(live - l1) <= 10, live + " vs " + l1);
      assertTrue(
          byLabel(metrics, "gmp_sched_goroutines", "state")
              .keySet()
              .containsAll(List.of("running", "runnable", "waiting", "not-in-go")),
          metricsText);
      assertTrue(
          byLabel(metrics, "gmp_sched_goroutines", "state").get("waiting") >= PARKED - 5,
          metricsText);
      assertTrue(
          byLabel(metrics, "gmp_sched_runqueue_local_goroutines", "p").containsKey("0"),
          metricsText);
      // the latency histogram: buckets, count and sum, consistent with /sched
      Histogram h = (Histogram) metrics.get("gmp_sched_latencies_seconds").getMetrics().get(0);
      assertTrue(h.getBuckets().size() >= 7, metricsText);
      assertEquals(
          Double.POSITIVE_INFINITY, h.getBuckets().get(h.getBuckets().size() - 1).getUpperBound());
      assertEquals(
          h.getSampleCount(), h.getBuckets().get(h.getBuckets().size() - 1).getCumulativeCount());
      long n1 = Long.parseLong(sched1.get("/sched/latencies:seconds{count}"));
      long n2 = Long.parseLong(sched2.get("/sched/latencies:seconds{count}"));
      assertTrue(
          n1 <= h.getSampleCount() && h.getSampleCount() <= n2,
          n1 + " <= " + h.getSampleCount() + " <= " + n2);

      // goroutine dumps: the parked goroutines, grouped, at their frame
      String grouped = get(base + "/debug/goroutines", 200);
      Matcher m =
          Pattern.compile(
                  "(?m)^(\\d+) @ \\[[^\\]]+\\][^\\n]*: goroutine [0-9 .]+\\n"
                      + "(#\\t[^\\n]*\\n)*#\\texample\\.apps\\.ExporterApp\\.parkHere\\t")
              .matcher(grouped);
      assertTrue(m.find(), grouped);
      assertEquals(PARKED, Integer.parseInt(m.group(1)), grouped);
      String each = get(base + "/debug/goroutines?debug=2", 200);
      Matcher g =
          Pattern.compile(
                  "(?m)^goroutine \\d+ \\[[^\\]]+\\]:\\n([^\\n]+\\n\\t[^\\n]+\\n)*?"
                      + "example\\.apps\\.ExporterApp\\.parkHere\\(\\.\\.\\.\\)\\n\\tExporterApp\\.java:\\d+\\n")
              .matcher(each);
      int found = 0;
      while (g.find()) {
        found++;
      }
      assertEquals(PARKED, found, each);

      String trace = get(base + "/debug/schedtrace?detail=1", 200);
      assertTrue(trace.startsWith("SCHED ") && trace.contains("\n  P0: status="), trace);
      assertTrue(get(base + "/debug/schedtrace", 200).lines().count() == 1);

      // read-only
      HttpResponse<String> post =
          HTTP.send(
              HttpRequest.newBuilder(URI.create(base + "/metrics"))
                  .POST(HttpRequest.BodyPublishers.ofString("x"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(405, post.statusCode());
      assertEquals("GET, HEAD", post.headers().firstValue("Allow").orElse(""));
      HttpResponse<String> head =
          HTTP.send(
              HttpRequest.newBuilder(URI.create(base + "/sched"))
                  .method("HEAD", HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, head.statusCode());
      assertEquals("", head.body());
      get(base + "/nope", 404);

      // the endpoint's threads are daemons: the program ends when main ends
      p.getOutputStream().close();
      assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the endpoint kept the JVM alive:\n" + output);
      assertEquals(0, p.exitValue(), output.toString());
      synchronized (output) {
        assertTrue(output.toString().contains("done"), output.toString());
        assertEquals(List.of(), ChildJvm.notes(output.toString()), output.toString());
      }
    } finally {
      p.destroyForcibly();
    }
  }

  @Test
  void portInUseIsOneLineAndTheProgramRuns() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      ChildJvm.Result r =
          ChildJvm.withAgent(
              "exporter.port=" + port, ExporterApp.class, Duration.ofSeconds(60), "3", "exit");
      assertEquals(0, r.exit(), r.toString());
      assertTrue(r.out().contains("done"), r.toString());
      List<String> lines = r.notes();
      assertEquals(
          List.of(
              "gmp4j: exporter: cannot listen on 127.0.0.1:"
                  + port
                  + ": Address already in use; the app keeps running without the endpoint"),
          lines,
          r.toString());
    }
  }

  @Test
  void badHostIsOneLineAndTheProgramRuns() throws Exception {
    ChildJvm.Result r =
        ChildJvm.withAgent(
            "exporter.port=" + ChildJvm.freePort() + ",exporter.host=no-such-host.invalid",
            ExporterApp.class,
            Duration.ofSeconds(60),
            "3",
            "exit");
    assertEquals(0, r.exit(), r.toString());
    assertTrue(r.out().contains("done"), r.toString());
    List<String> lines = r.notes();
    assertEquals(1, lines.size(), r.toString());
    assertTrue(
        lines.get(0).startsWith("gmp4j: exporter: cannot listen on no-such-host.invalid:")
            && lines.get(0).endsWith("; the app keeps running without the endpoint"),
        r.toString());
  }

  private static String get(String url, int status) throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(status, r.statusCode(), url + ": " + r.body());
    return r.body();
  }

  /** /sched lines: key (name with its {…}) to value, split at the last space. */
  private static Map<String, String> sched(String text) {
    Map<String, String> m = new HashMap<>();
    for (String line : text.split("\n")) {
      int sp = line.lastIndexOf(' ');
      m.put(line.substring(0, sp), line.substring(sp + 1));
    }
    return m;
  }

  private static Map<String, MetricFamily> parse(String text) throws IOException {
    Map<String, MetricFamily> families = new HashMap<>();
    TextPrometheusMetricDataParser parser =
        new TextPrometheusMetricDataParser(
            new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)));
    for (MetricFamily f; (f = parser.parse()) != null; ) {
      families.put(f.getName(), f);
    }
    assertTrue(families.size() > 10, "parsed " + families.keySet() + " from\n" + text);
    return families;
  }

  private static double gauge(Map<String, MetricFamily> metrics, String name) {
    return ((Gauge) only(metrics, name)).getValue();
  }

  private static double counter(Map<String, MetricFamily> metrics, String name) {
    return ((Counter) only(metrics, name)).getValue();
  }

  private static Metric only(Map<String, MetricFamily> metrics, String name) {
    MetricFamily f = metrics.get(name);
    assertTrue(f != null && f.getMetrics().size() == 1, name + " in " + metrics.keySet());
    return f.getMetrics().get(0);
  }

  private static Map<String, Double> byLabel(
      Map<String, MetricFamily> metrics, String name, String label) {
    Map<String, Double> out = new HashMap<>();
    MetricFamily f = metrics.get(name);
    assertTrue(f != null, name + " in " + metrics.keySet());
    for (Metric m : new ArrayList<>(f.getMetrics())) {
      out.put(m.getLabels().get(label), ((Gauge) m).getValue());
    }
    return out;
  }
}
