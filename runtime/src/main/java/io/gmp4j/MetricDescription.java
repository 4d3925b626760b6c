package io.gmp4j;

/**
 * A metric's description, as Go's {@code runtime/metrics.Description}.
 *
 * @param name the full name with its unit, e.g. {@code /sched/goroutines:goroutines}
 * @param description what it measures
 * @param kind {@link Kind#GAUGE}, {@link Kind#COUNTER} (cumulative), {@link Kind#HISTOGRAM}
 *     (cumulative, a {@link Float64Histogram}) or {@link Kind#PER_P} (a {@code long[]} with one
 *     gauge per P, indexed by P id)
 * @param goName true for Go's own metrics, false for gmp4j's extras in Go's style
 */
public record MetricDescription(String name, String description, Kind kind, boolean goName) {
  /** How a value behaves. */
  public enum Kind {
    GAUGE,
    COUNTER,
    HISTOGRAM,
    PER_P
  }

  /** The part before the colon, e.g. {@code /sched/goroutines}. */
  public String base() {
    return name.substring(0, name.indexOf(':'));
  }

  /** The unit, the part after the colon, e.g. {@code goroutines} or {@code seconds}. */
  public String unit() {
    return name.substring(name.indexOf(':') + 1);
  }
}
