package io.gmp4j.exporter;

import io.gmp4j.Float64Histogram;
import java.util.Arrays;

/**
 * Reads Go's {@link Float64Histogram} (163 boundaries for the {@code :seconds} metrics) the way
 * Prometheus and JMX want it.
 *
 * <h2>Implementation overview</h2>
 *
 * <h3>Buckets for Prometheus</h3>
 *
 * 161 {@code le} series per histogram is more than a dashboard needs and more than a TSDB should
 * store. Go's own Prometheus client (client_golang, {@code internal.RuntimeMetricsBucketsForUnit}
 * for "seconds") keeps a boundary only when it is at least 10 times the one kept before, and
 * folds everything above 1 s into {@code +Inf}. We do the same, so {@code
 * gmp_sched_latencies_seconds} has the shape of Go's {@code go_sched_latencies_seconds}: about
 * eight buckets from 64 ns to 1 s. Each kept boundary is one of Go's own, so the cumulative
 * counts are exact; nothing is interpolated. Rejected: all 161 buckets (cardinality), fixed
 * "nice" bounds like 1 µs, 10 µs (they fall inside Go's buckets, and the counts would have to be
 * guessed).
 *
 * <h3>Sum</h3>
 *
 * Go's time histograms count samples but keep no sum. Prometheus' {@code _sum} and Micrometer's
 * total time are therefore estimated: each bucket's count times its midpoint (its lower bound for
 * the overflow bucket, 0 for the underflow bucket of negative durations). The error per sample is
 * below half a bucket width, which Go's 4 sub-buckets per power of two keep under 12.5%.
 */
final class Histograms {
  /** Everything above this many seconds is in +Inf (client_golang's cut-off). */
  static final double MAX_FINITE_BOUND = 1.0;

  /** Each kept boundary is at least this factor above the previous one (client_golang's). */
  static final double FACTOR = 10.0;

  private Histograms() {}

  /**
   * Indices into {@code boundaries} of the kept upper bounds, ascending; the last index is that
   * of {@code +Inf} (boundaries.length - 1). See 'Buckets for Prometheus'.
   */
  static int[] keptBounds(double[] boundaries) {
    int[] kept = new int[boundaries.length];
    int n = 0;
    double last = 0;
    for (int i = 1; i < boundaries.length - 1; i++) {
      double b = boundaries[i];
      if (b <= 0 || b > MAX_FINITE_BOUND) {
        continue;
      }
      // 1e-9 relative slack: the bounds are ns / 1e9 in binary floating point
      if (last == 0 || b >= last * FACTOR * (1 - 1e-9)) {
        kept[n++] = i;
        last = b;
      }
    }
    kept[n++] = boundaries.length - 1;
    return Arrays.copyOf(kept, n);
  }

  /**
   * Cumulative counts at the kept upper bounds: element j counts every sample below
   * {@code boundaries[kept[j]]}, underflow included, so the last is the total.
   */
  static long[] cumulative(Float64Histogram h, int[] kept) {
    long[] counts = h.counts();
    long[] out = new long[kept.length];
    long acc = 0;
    int bucket = 0;
    for (int j = 0; j < kept.length; j++) {
      // counts[i] is the bucket [boundaries[i], boundaries[i+1]): below bound k are counts[0..k-1]
      for (; bucket < kept[j]; bucket++) {
        acc += counts[bucket];
      }
      out[j] = acc;
    }
    return out;
  }

  /** The estimated sum of all samples; see 'Sum'. */
  static double sum(Float64Histogram h) {
    double[] b = h.buckets();
    long[] c = h.counts();
    double sum = 0;
    for (int i = 0; i < c.length; i++) {
      if (c[i] == 0 || b[i] == Double.NEGATIVE_INFINITY) {
        continue;
      }
      double mid = b[i + 1] == Double.POSITIVE_INFINITY ? b[i] : (b[i] + b[i + 1]) / 2;
      sum += c[i] * mid;
    }
    return sum;
  }

  /**
   * The q-quantile (0..1), as the upper bound of the bucket that holds it (Go's
   * {@code runtime/metrics} examples do the same); NaN for an empty histogram, the last finite
   * boundary when it falls in the overflow bucket.
   */
  static double quantile(Float64Histogram h, double q) {
    double[] b = h.buckets();
    long[] c = h.counts();
    long total = h.total();
    if (total == 0) {
      return Double.NaN;
    }
    long rank = (long) Math.ceil(q * total);
    long acc = 0;
    for (int i = 0; i < c.length; i++) {
      acc += c[i];
      if (acc >= Math.max(1, rank)) {
        double upper = b[i + 1];
        return upper == Double.POSITIVE_INFINITY ? b[i] : Math.max(0, upper);
      }
    }
    return b[b.length - 2];
  }
}
