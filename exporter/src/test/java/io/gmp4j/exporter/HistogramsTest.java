package io.gmp4j.exporter;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gmp4j.Float64Histogram;
import io.gmp4j.Gmp;
import org.junit.jupiter.api.Test;

class HistogramsTest {
  private static double[] goBounds() {
    return ((Float64Histogram) Gmp.readMetrics().get("/sched/latencies:seconds")).buckets();
  }

  @Test
  void keptBoundsAreClientGolangs() {
    double[] b = goBounds();
    int[] kept = Histograms.keptBounds(b);
    assertEquals(b.length - 1, kept[kept.length - 1], "ends with +Inf");
    assertEquals(6.4e-8, b[kept[0]], 1e-15, "first is Go's 64 ns sub-bucket");
    for (int j = 1; j < kept.length - 1; j++) {
      assertTrue(b[kept[j]] >= b[kept[j - 1]] * 10 * (1 - 1e-9));
      assertTrue(b[kept[j]] <= 1.0);
    }
    assertTrue(kept.length >= 7 && kept.length <= 10, "about 8 buckets: " + kept.length);
  }

  @Test
  void cumulativeCountsAndSum() {
    double[] b = {Double.NEGATIVE_INFINITY, 0, 1, 2, 10, 20, Double.POSITIVE_INFINITY};
    long[] c = {1, 2, 3, 4, 5, 6};
    Float64Histogram h = new Float64Histogram(b, c);
    int[] kept = {2, 4, 6}; // le=1, le=10, +Inf
    assertArrayEquals(new long[] {3, 10, 21}, Histograms.cumulative(h, kept));
    // 2*0.5 + 3*1.5 + 4*6 + 5*15 + 6*20 (lower bound of the overflow bucket)
    assertEquals(1 + 4.5 + 24 + 75 + 120, Histograms.sum(h), 1e-9);
    assertEquals(20, Histograms.quantile(h, 0.5), 0); // rank 11 of 21 is in [10,20)
    assertEquals(20, Histograms.quantile(h, 1.0), 0); // overflow: its lower bound
  }
}
