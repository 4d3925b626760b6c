package io.gmp4j.runtime;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Go's timeHistogram (histogram.go): an HDR histogram of durations in nanoseconds, the bucket
 * scheme of every {@code /sched/*:seconds} metric.
 *
 * <p>Buckets are powers of two from 2^9 ns up to 2^48 ns (exclusive), each split into 4 linear
 * sub-buckets ({@code timeHistMinBucketBits = 9}, {@code timeHistMaxBucketBits = 48},
 * {@code timeHistSubBucketBits = 2}), plus an underflow count (negative durations) and an
 * overflow count. 40 * 4 + 2 = 162 counts, described by 163 boundaries in seconds. Counts only
 * grow; each is an independent atomic, so a reader sees each bucket exactly but not a snapshot
 * of all of them at one instant (Go's histogram makes the same trade).
 */
final class TimeHistogram {
  static final int MIN_BUCKET_BITS = 9;
  static final int MAX_BUCKET_BITS = 48;
  static final int SUB_BUCKET_BITS = 2;
  static final int NUM_SUB_BUCKETS = 1 << SUB_BUCKET_BITS;
  static final int NUM_BUCKETS = MAX_BUCKET_BITS - MIN_BUCKET_BITS + 1;
  static final int TOTAL_BUCKETS = NUM_BUCKETS * NUM_SUB_BUCKETS;

  private final AtomicLongArray counts = new AtomicLongArray(TOTAL_BUCKETS);
  private final java.util.concurrent.atomic.AtomicLong underflow =
      new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong overflow =
      new java.util.concurrent.atomic.AtomicLong();

  /** Go's timeHistogram.record. Any thread. */
  void record(long duration) {
    if (duration < 0) {
      underflow.incrementAndGet();
      return;
    }
    int bucketBit;
    int bucket;
    int l = 64 - Long.numberOfLeadingZeros(duration); // bits.Len64
    if (l < MIN_BUCKET_BITS) {
      bucketBit = MIN_BUCKET_BITS;
      bucket = 0; // the first bucket is linear in [0, 2^9)
    } else {
      bucketBit = l;
      bucket = l - MIN_BUCKET_BITS + 1;
    }
    if (bucket >= NUM_BUCKETS) {
      overflow.incrementAndGet();
      return;
    }
    int sub = (int) ((duration >>> (bucketBit - 1 - SUB_BUCKET_BITS)) % NUM_SUB_BUCKETS);
    counts.incrementAndGet(bucket * NUM_SUB_BUCKETS + sub);
  }

  /** Go's timeHistogramMetricsBuckets: 163 boundaries in seconds, -Inf and +Inf at the ends. */
  static double[] boundaries() {
    double[] b = new double[TOTAL_BUCKETS + 3];
    b[0] = Double.NEGATIVE_INFINITY;
    for (int j = 0; j < NUM_SUB_BUCKETS; j++) {
      b[j + 1] = (double) ((long) j << (MIN_BUCKET_BITS - 1 - SUB_BUCKET_BITS)) / 1e9;
    }
    for (int i = MIN_BUCKET_BITS; i < MAX_BUCKET_BITS; i++) {
      for (int j = 0; j < NUM_SUB_BUCKETS; j++) {
        long bucketNanos = (1L << (i - 1)) | ((long) j << (i - 1 - SUB_BUCKET_BITS));
        b[(i - MIN_BUCKET_BITS + 1) * NUM_SUB_BUCKETS + j + 1] = (double) bucketNanos / 1e9;
      }
    }
    b[b.length - 2] = (double) (1L << (MAX_BUCKET_BITS - 1)) / 1e9;
    b[b.length - 1] = Double.POSITIVE_INFINITY;
    return b;
  }

  /** Counts in boundary order: underflow, the 160 buckets, overflow. Any thread. */
  long[] counts() {
    long[] c = new long[TOTAL_BUCKETS + 2];
    c[0] = underflow.get();
    for (int i = 0; i < TOTAL_BUCKETS; i++) {
      c[i + 1] = counts.get(i);
    }
    c[c.length - 1] = overflow.get();
    return c;
  }
}
