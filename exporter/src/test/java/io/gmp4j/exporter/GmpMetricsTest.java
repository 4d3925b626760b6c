package io.gmp4j.exporter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gmp4j.Gmp;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.DoubleSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The binder in a SimpleMeterRegistry and a PrometheusMeterRegistry, on the real scheduler. */
@Timeout(60)
class GmpMetricsTest {
  private static final int N = 50;

  @Test
  void bindsAndUpdatesInSimpleMeterRegistry() throws Exception {
    MeterRegistry registry = new SimpleMeterRegistry();
    new GmpMetrics(Tags.of("app", "test")).bindTo(registry);

    Gauge live = registry.get("gmp.sched.goroutines.live").tag("app", "test").gauge();
    FunctionCounter created = registry.get("gmp.sched.goroutines.created").functionCounter();
    for (String state : List.of("running", "runnable", "waiting", "not-in-go")) {
      assertNotNull(registry.get("gmp.sched.goroutines").tag("state", state).gauge(), state);
    }
    assertEquals(Gmp.gomaxprocs(), registry.get("gmp.sched.gomaxprocs").gauge().value());
    assertEquals("threads", registry.get("gmp.sched.gomaxprocs").gauge().getId().getBaseUnit());
    assertEquals(
        Gmp.gomaxprocs(),
        registry.get("gmp.sched.runqueue.local").gauges().size(),
        "one gauge per P");
    assertNotNull(registry.get("gmp.sched.runqueue.local").tag("p", "0").gauge());
    FunctionTimer latencies = registry.get("gmp.sched.latencies").functionTimer();

    Thread.sleep(MetricsReader.MAX_AGE_NANOS / 1_000_000 + 10); // no snapshot of an earlier test
    double createdBefore = created.count();
    double liveBefore = live.value();
    CountDownLatch release = new CountDownLatch(1);
    List<Thread> gs = startParked(release);
    try {
      awaitAtLeast(() -> created.count(), createdBefore + N, "goroutines created");
      awaitAtLeast(() -> live.value(), liveBefore + N, "live goroutines");
      awaitAtLeast(
          () -> registry.get("gmp.sched.goroutines").tag("state", "waiting").gauge().value(),
          N,
          "waiting goroutines");
      assertTrue(latencies.count() > 0, "latency samples: " + latencies.count());
      assertTrue(latencies.totalTime(java.util.concurrent.TimeUnit.SECONDS) > 0);
    } finally {
      release.countDown();
      joinAll(gs);
    }
  }

  @Test
  void rendersPrometheusHistogramsAndNames() throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    registry.config().commonTags("app", "prom");
    try (GmpMetrics metrics = new GmpMetrics()) {
      metrics.bindTo(registry);
      CountDownLatch release = new CountDownLatch(1);
      List<Thread> gs = startParked(release);
      String text;
      try {
        Thread.sleep(MetricsReader.MAX_AGE_NANOS / 1_000_000 + 10);
        text = registry.scrape();
      } finally {
        release.countDown();
        joinAll(gs);
      }
      for (String expected :
          List.of(
              "# TYPE gmp_sched_latencies_seconds histogram",
              "gmp_sched_latencies_seconds_bucket{app=\"prom\",le=\"6.4E-8\"}",
              "gmp_sched_latencies_seconds_bucket{app=\"prom\",le=\"+Inf\"}",
              "gmp_sched_latencies_seconds_count{app=\"prom\"}",
              "gmp_sched_latencies_seconds_sum{app=\"prom\"}",
              "gmp_sched_pauses_total_other_seconds_count{app=\"prom\"}",
              "# TYPE gmp_sched_goroutines_created_goroutines_total counter",
              "gmp_sched_goroutines{app=\"prom\",state=\"waiting\"}",
              "gmp_sched_goroutines{app=\"prom\",state=\"not-in-go\"}",
              "gmp_sched_goroutines_live_goroutines{app=\"prom\"}",
              "gmp_sched_gomaxprocs_threads{app=\"prom\"} " + Gmp.gomaxprocs() + ".0",
              "gmp_sched_runqueue_local_goroutines{app=\"prom\",p=\"0\"}",
              "gmp_sched_steals_total{app=\"prom\"}",
              "gmp_sched_threads_live_threads{app=\"prom\"}")) {
        assertTrue(text.contains(expected), () -> "missing " + expected + " in\n" + text);
      }
      double live = sample(text, "gmp_sched_goroutines_live_goroutines{app=\"prom\"}");
      assertTrue(live >= N, "live " + live);
      double count = sample(text, "gmp_sched_latencies_seconds_count{app=\"prom\"}");
      double inf = sample(text, "gmp_sched_latencies_seconds_bucket{app=\"prom\",le=\"+Inf\"}");
      assertEquals(count, inf);
      // Go samples one transition in 8 (gTrackingPeriod), so N starts give about N/8
      assertTrue(count > 0, "latency samples " + count);
    }
    assertTrue(
        !registry.scrape().contains("gmp_sched_latencies_seconds_bucket"),
        "close() unregisters the histograms");
  }

  private static double sample(String text, String series) {
    for (String line : text.split("\n")) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1).trim());
      }
    }
    throw new AssertionError("no " + series + " in\n" + text);
  }

  private static List<Thread> startParked(CountDownLatch release) {
    List<Thread> gs = new ArrayList<>();
    for (int i = 0; i < N; i++) {
      gs.add(
          Gmp.go(
              () -> {
                try {
                  release.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              }));
    }
    return gs;
  }

  private static void awaitAtLeast(DoubleSupplier value, double want, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + 10_000_000_000L;
    double v;
    while ((v = value.getAsDouble()) < want) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(what + ": " + v + " < " + want + "\n" + Gmp.schedtrace(true));
      }
      Thread.sleep(20);
    }
  }

  /** Joins the test's Gs, 10 s at most; on a timeout fails with the schedtrace of the moment. */
  static void joinAll(List<Thread> gs) throws InterruptedException {
    for (Thread t : gs) {
      if (!t.join(java.time.Duration.ofSeconds(10))) {
        throw new AssertionError(t + " did not end within 10 s\n" + Gmp.schedtrace(true));
      }
    }
  }
}
