package io.gmp4j.exporter;

import io.gmp4j.Float64Histogram;
import io.gmp4j.Gmp;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * One {@link Gmp#readMetrics()} shared by every meter of one scrape.
 *
 * <p>A Micrometer registry reads each meter through its own function, so a scrape of the ~30
 * gmp4j meters would call readMetrics ~30 times; each call walks every P, M and G (the
 * not-in-go count walks allgs). The reader keeps the last map for {@link #MAX_AGE_NANOS}:
 * a scrape, which reads all meters within a few milliseconds, pays for one readMetrics, and a
 * reader that polls faster than 10 Hz sees values at most 100 ms old. readMetrics takes no
 * scheduler lock, so neither does anything here.
 *
 * <p>A read that comes {@link #SCRAPE_GAP_NANOS} or more after the one before starts a new
 * scrape and takes a reading of its own, however young the kept one is. Without this, a scrape
 * that began on a map read up to 100 ms earlier (by the previous scrape, or by the bind at
 * start-up) could see it expire halfway, and then show two readings side by side: on an
 * ExporterIT run, {@code gmp_sched_goroutines{state="waiting"}} 0 from the bind's map beside
 * {@code gmp_sched_goroutines_live_goroutines} 21 from a new one. A scrape's reads follow one
 * another within microseconds, so it now sees one map unless it runs longer than 100 ms or
 * pauses for 20 (a GC pause).
 *
 * <p>Access rules: {@code last} is written by any reading thread (a racy publish of an
 * immutable snapshot: two threads that race both read, and either result is fine) and read by
 * any thread; volatile for safe publication of the record. {@code lastRead} likewise: written
 * by every read, racily (a lost update only moves the gap's start by one read).
 */
final class MetricsReader {
  /** How long one readMetrics serves: longer than a scrape, shorter than any scrape interval. */
  static final long MAX_AGE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  /** How long without a read ends a scrape: far longer than between two meters of one. */
  static final long SCRAPE_GAP_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

  private static final MetricsReader SHARED = new MetricsReader(Gmp::readMetrics, System::nanoTime);

  private record Snapshot(long readAt, Map<String, Object> values) {}

  private final Supplier<Map<String, Object>> source;
  private final LongSupplier nanoClock;
  private volatile Snapshot last;
  private volatile long lastRead;

  MetricsReader(Supplier<Map<String, Object>> source, LongSupplier nanoClock) {
    this.source = source;
    this.nanoClock = nanoClock;
  }

  /**
   * The reader of the running scheduler. Static, so that meters, which Micrometer holds only
   * weakly (FunctionCounter, FunctionTimer), keep working after the binder is dropped.
   */
  static MetricsReader shared() {
    return SHARED;
  }

  /** The current values: at most MAX_AGE_NANOS old, new at a scrape's first read. Any thread. */
  Map<String, Object> values() {
    long now = nanoClock.getAsLong();
    Snapshot s = last; // volatile read, pairs with the write below
    long idle = now - lastRead;
    lastRead = now;
    if (s == null || now - s.readAt >= MAX_AGE_NANOS || idle >= SCRAPE_GAP_NANOS) {
      s = new Snapshot(now, source.get());
      last = s; // volatile write: publishes the immutable map
    }
    return s.values;
  }

  /** A gauge or counter value; NaN for a name the runtime does not report. Any thread. */
  double value(String name) {
    return values().get(name) instanceof Long l ? l : Double.NaN;
  }

  /** A histogram value, or null. Any thread. */
  Float64Histogram histogram(String name) {
    return values().get(name) instanceof Float64Histogram h ? h : null;
  }

  /** A per-P value; NaN for a P id the runtime no longer has. Any thread. */
  double perP(String name, int p) {
    return values().get(name) instanceof long[] a && p < a.length ? a[p] : Double.NaN;
  }

  /** The number of Ps in a per-P value, 0 if absent. Any thread. */
  int perPLength(String name) {
    return values().get(name) instanceof long[] a ? a.length : 0;
  }
}
