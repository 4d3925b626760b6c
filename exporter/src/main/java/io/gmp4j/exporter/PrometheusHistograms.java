package io.gmp4j.exporter;

import io.gmp4j.Float64Histogram;
import io.gmp4j.MetricDescription;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.config.NamingConvention;
import io.micrometer.core.instrument.noop.NoopGauge;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.List;

/**
 * Go's latency histograms as real Prometheus histograms on a {@link PrometheusMeterRegistry}.
 * See 'Latency distributions' in {@link GmpMetrics} and 'Buckets for Prometheus' in {@link
 * Histograms}.
 *
 * <p>This class is the only one that links to micrometer-registry-prometheus and the Prometheus
 * client model; GmpMetrics loads it only after finding a PrometheusMeterRegistry by class name,
 * so the module works without them.
 *
 * <p>Steps of {@link #register}:
 *
 * <ol>
 *   <li>For each histogram, register and at once remove a probe gauge with the meter's name, base
 *       unit and tags. Its id has been through the registry's meter filters: common tags added,
 *       renames applied; a denied probe (a no-op gauge) means the histogram is left out.
 *   <li>Name the histogram with the registry's naming convention as a distribution summary in
 *       seconds ({@code gmp_sched_latencies_seconds}), the name Micrometer would give a Timer.
 *   <li>Register one {@link MultiCollector} for all histograms on the registry's {@link
 *       PrometheusRegistry}: one scrape, one read.
 * </ol>
 */
final class PrometheusHistograms implements MultiCollector {
  private record Family(String name, String help, Labels labels, String goName) {}

  private final MetricsReader reader;
  private final List<Family> families;
  private int[] kept; // written once by the first collect; racy-benign (same value each time)

  private PrometheusHistograms(MetricsReader reader, List<Family> families) {
    this.reader = reader;
    this.families = families;
  }

  /** Registers the histograms; returns what unregisters them. Any thread. */
  static Runnable register(
      MeterRegistry registry,
      MetricsReader reader,
      List<MetricDescription> histograms,
      Iterable<Tag> tags) {
    PrometheusRegistry prometheus = ((PrometheusMeterRegistry) registry).getPrometheusRegistry();
    NamingConvention convention = registry.config().namingConvention();
    List<Family> families = new ArrayList<>();
    for (MetricDescription d : histograms) {
      MetricNames n = MetricNames.of(d);
      Gauge probe =
          Gauge.builder(n.meterName(), () -> 0)
              .baseUnit(n.baseUnit())
              .tags(tags)
              .register(registry); // step 1
      Meter.Id id = probe.getId();
      registry.remove(probe);
      if (probe instanceof NoopGauge) {
        continue;
      }
      List<String> keys = new ArrayList<>();
      List<String> values = new ArrayList<>();
      for (Tag t : id.getTagsAsIterable()) {
        keys.add(convention.tagKey(t.getKey()));
        values.add(convention.tagValue(t.getValue()));
      }
      String name =
          convention.name(
              id.getName(), Meter.Type.DISTRIBUTION_SUMMARY, id.getBaseUnit()); // step 2
      families.add(new Family(name, d.description(), Labels.of(keys, values), d.name()));
    }
    PrometheusHistograms collector = new PrometheusHistograms(reader, List.copyOf(families));
    prometheus.register(collector); // step 3
    return () -> prometheus.unregister(collector);
  }

  /** Called by the Prometheus registry on each scrape, on the scraping thread. */
  @Override
  public MetricSnapshots collect() {
    List<MetricSnapshot> out = new ArrayList<>(families.size());
    for (Family f : families) {
      Float64Histogram h = reader.histogram(f.goName());
      if (h == null) {
        continue;
      }
      double[] bounds = h.buckets();
      int[] k = kept;
      if (k == null) {
        k = Histograms.keptBounds(bounds);
        kept = k;
      }
      long[] cumulative = Histograms.cumulative(h, k);
      double[] upper = new double[k.length];
      long[] perBucket = new long[k.length];
      for (int j = 0; j < k.length; j++) {
        upper[j] = bounds[k[j]];
        perBucket[j] =
            cumulative[j]
                - (j == 0 ? 0 : cumulative[j - 1]); // the client wants them non-cumulative
      }
      out.add(
          HistogramSnapshot.builder()
              .name(f.name())
              .help(f.help())
              .dataPoint(
                  HistogramDataPointSnapshot.builder()
                      .classicHistogramBuckets(ClassicHistogramBuckets.of(upper, perBucket))
                      .sum(Histograms.sum(h))
                      .labels(f.labels())
                      .build())
              .build());
    }
    return new MetricSnapshots(out);
  }

  @Override
  public List<String> getPrometheusNames() {
    return families.stream().map(Family::name).toList();
  }
}
