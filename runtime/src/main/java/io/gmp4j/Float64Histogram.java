package io.gmp4j;

import java.util.Arrays;

/**
 * A cumulative histogram, as Go's {@code runtime/metrics.Float64Histogram}: {@code counts[i]}
 * samples fell in {@code [buckets[i], buckets[i+1])}, so there is one more boundary than count.
 * The first boundary may be negative infinity and the last positive infinity. Counts only grow
 * between reads.
 *
 * @param buckets the bucket boundaries, ascending, in the metric's unit
 * @param counts the sample count of each bucket
 */
public record Float64Histogram(double[] buckets, long[] counts) {
  public Float64Histogram {
    if (buckets.length != counts.length + 1) {
      throw new IllegalArgumentException(
          "Float64Histogram: " + buckets.length + " boundaries for " + counts.length + " counts");
    }
    buckets = buckets.clone();
    counts = counts.clone();
  }

  @Override
  public double[] buckets() {
    return buckets.clone();
  }

  @Override
  public long[] counts() {
    return counts.clone();
  }

  /** The total number of samples. */
  public long total() {
    long t = 0;
    for (long c : counts) {
      t += c;
    }
    return t;
  }

  @Override
  public String toString() {
    return "Float64Histogram[total=" + total() + ", buckets=" + buckets.length + "]";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Float64Histogram h
        && Arrays.equals(buckets, h.buckets)
        && Arrays.equals(counts, h.counts);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(buckets) + Arrays.hashCode(counts);
  }
}
