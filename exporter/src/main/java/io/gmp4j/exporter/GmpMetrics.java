package io.gmp4j.exporter;

import io.gmp4j.Float64Histogram;
import io.gmp4j.Gmp;
import io.gmp4j.MetricDescription;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * gmp4j's scheduler metrics (Go's {@code /sched/*} from {@link Gmp#readMetrics()}) as Micrometer
 * meters, for any {@link MeterRegistry}: Spring Boot Actuator's, a Prometheus registry, a
 * {@code SimpleMeterRegistry}.
 *
 * <pre>{@code
 * new GmpMetrics().bindTo(registry);   // or, in Spring Boot: @Bean MeterBinder gmp() { return new GmpMetrics(); }
 * }</pre>
 *
 * <h2>Implementation overview</h2>
 *
 * Modelled on Micrometer's JvmThreadMetrics: names from {@link MetricNames} (README.md has the
 * table), every meter reads one shared, lock-free {@link MetricsReader}, so a scrape costs one
 * {@code Gmp.readMetrics()} and never takes a scheduler lock ({@code schedtrace} does, and is
 * never called here). Per {@link MetricDescription.Kind}:
 *
 * <ul>
 *   <li>GAUGE: a {@link Gauge}, with {@code state=} for the goroutine states.
 *   <li>COUNTER: a {@link FunctionCounter} over the runtime's cumulative count.
 *   <li>PER_P: one {@link Gauge} per P with tag {@code p=<id>}. Ps that GOMAXPROCS adds later
 *       are registered when a read first sees them; a P that GOMAXPROCS removed reads NaN.
 *   <li>HISTOGRAM ("Latency distributions" below).
 * </ul>
 *
 * <h3>Latency distributions</h3>
 *
 * Go keeps the buckets and their counts; Micrometer's Timer and DistributionSummary keep their
 * own and accept only single samples, so there is no Micrometer meter that can be handed
 * someone else's cumulative buckets. What each registry gets:
 *
 * <ol>
 *   <li>A {@code PrometheusMeterRegistry} (micrometer-registry-prometheus 1.13+, recognised by
 *       class name so that this module does not need it): a real Prometheus histogram,
 *       registered as a collector on its {@code PrometheusRegistry} ({@link
 *       PrometheusHistograms}): {@code gmp_sched_latencies_seconds_bucket{le=...}}, {@code
 *       _count}, {@code _sum}, with client_golang's buckets ({@link Histograms}). Its name and
 *       tags go through the registry's meter filters and naming convention like any meter's, so
 *       common tags, renames and denies apply.
 *   <li>Any other registry: a {@link FunctionTimer} (count and total time), the meter Micrometer's
 *       own binders use for timings kept elsewhere (e.g. Caffeine's load time). Backends get a
 *       rate and a mean, but no buckets.
 * </ol>
 *
 * Rejected: a {@code Gauge} per bucket with an {@code le} tag (Prometheus would see a gauge
 * family, not a histogram, so {@code histogram_quantile} works only by accident, and other
 * backends get 160 unrelated series); {@code Meter.builder(..., DISTRIBUTION_SUMMARY, ...)}
 * (PrometheusMeterRegistry renders custom meters as counters and gauges per statistic, without
 * buckets); recording synthetic samples into a DistributionSummary (one call per sample).
 */
public final class GmpMetrics implements MeterBinder, AutoCloseable {
  /** One description for the four state gauges, which share a name. */
  private static final String STATES =
      "Approximate count of goroutines in each state (Go's"
          + " /sched/goroutines/<state>:goroutines): running, runnable, waiting, not-in-go (in a"
          + " system call). Not guaranteed to add up to gmp.sched.goroutines.live.";

  private final Iterable<Tag> tags;
  private final MetricsReader reader;
  private final List<MetricDescription> descriptions;

  /** Prometheus collectors registered by bindTo, removed by close. Guarded by this. */
  private final List<Runnable> closers = new ArrayList<>();

  /** Binds gmp4j's metrics with no extra tags. */
  public GmpMetrics() {
    this(Tags.empty());
  }

  /** Binds gmp4j's metrics with {@code tags} added to every meter. */
  public GmpMetrics(Iterable<Tag> tags) {
    this(tags, MetricsReader.shared(), Gmp.describeMetrics());
  }

  /** For tests: another source of values and descriptions. */
  GmpMetrics(Iterable<Tag> tags, MetricsReader reader, List<MetricDescription> descriptions) {
    this.tags = Tags.of(tags);
    this.reader = reader;
    this.descriptions = List.copyOf(descriptions);
  }

  /**
   * Registers one meter per metric of {@link Gmp#describeMetrics()}. Starts the scheduler if it
   * is not running yet (as any Gmp call does). Any thread.
   */
  @Override
  public void bindTo(MeterRegistry registry) {
    List<MetricDescription> histograms = new ArrayList<>();
    for (MetricDescription d : descriptions) {
      MetricNames n = MetricNames.of(d);
      String goName = d.name();
      switch (d.kind()) {
        case GAUGE ->
            gauge(n, "state".equals(n.tagKey()) ? STATES : d.description(), -1, goName)
                .register(registry);
        case COUNTER ->
            FunctionCounter.builder(n.meterName(), reader, r -> r.value(goName))
                .description(d.description())
                .baseUnit(n.baseUnit())
                .tags(meterTags(n, null))
                .register(registry);
        case PER_P -> bindPerP(registry, n, d);
        case HISTOGRAM -> histograms.add(d);
      }
    }
    if (histograms.isEmpty()) {
      return;
    }
    if (isPrometheusRegistry(registry)) {
      Runnable closer = PrometheusHistograms.register(registry, reader, histograms, tags);
      synchronized (this) {
        closers.add(closer);
      }
      return;
    }
    for (MetricDescription d : histograms) {
      MetricNames n = MetricNames.of(d);
      String goName = d.name();
      FunctionTimer.builder(
              n.meterName(),
              reader,
              r -> countOf(r.histogram(goName)),
              r -> sumOf(r.histogram(goName)),
              TimeUnit.SECONDS)
          .description(d.description())
          .tags(meterTags(n, null))
          .register(registry);
    }
  }

  /** Removes the Prometheus histogram collectors; the other meters stay, as with any binder. */
  @Override
  public void close() {
    List<Runnable> toRun;
    synchronized (this) {
      toRun = List.copyOf(closers);
      closers.clear();
    }
    toRun.forEach(Runnable::run);
  }

  private Gauge.Builder<MetricsReader> gauge(
      MetricNames n, String description, int p, String goName) {
    return Gauge.builder(
            n.meterName(), reader, p < 0 ? r -> r.value(goName) : r -> r.perP(goName, p))
        .description(description)
        .baseUnit(n.baseUnit())
        .tags(meterTags(n, p < 0 ? null : Integer.toString(p)))
        .strongReference(true);
  }

  /** See PER_P in the overview: P ids registered now, and later when a read sees more. */
  private void bindPerP(MeterRegistry registry, MetricNames n, MetricDescription d) {
    String goName = d.name();
    AtomicInteger registered = new AtomicInteger();
    Runnable grow =
        new Runnable() {
          @Override
          public void run() {
            int have;
            int want = reader.perPLength(goName);
            while ((have = registered.get()) < want) {
              if (registered.compareAndSet(have, want)) {
                for (int p = have; p < want; p++) {
                  int id = p;
                  Gauge.builder(
                          n.meterName(),
                          reader,
                          r -> {
                            if (id == 0) {
                              run(); // P 0 always exists: its read notices GOMAXPROCS growth
                            }
                            return r.perP(goName, id);
                          })
                      .description(d.description())
                      .baseUnit(n.baseUnit())
                      .tags(meterTags(n, Integer.toString(id)))
                      .strongReference(true)
                      .register(registry);
                }
              }
            }
          }
        };
    grow.run();
  }

  private Tags meterTags(MetricNames n, String p) {
    Tags t = Tags.of(tags);
    if (n.tagKey() != null) {
      t = t.and(n.tagKey(), p != null ? p : n.tagValue());
    }
    return t;
  }

  /**
   * True for a micrometer-registry-prometheus 1.13+ registry or a subclass, found by name: the
   * module may be absent. Inside the agent, shading rewrites this string with the class names,
   * so it names the agent's relocated copy.
   */
  private static boolean isPrometheusRegistry(MeterRegistry registry) {
    for (Class<?> c = registry.getClass(); c != null; c = c.getSuperclass()) {
      if (c.getName().equals("io.micrometer.prometheusmetrics.PrometheusMeterRegistry")) {
        return true;
      }
    }
    return false;
  }

  private static long countOf(Float64Histogram h) {
    return h == null ? 0 : h.total();
  }

  private static double sumOf(Float64Histogram h) {
    return h == null ? 0 : Histograms.sum(h);
  }
}
