package io.gmp4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * readMetrics and describeMetrics agree, name for name, and every name follows Go's grammar
 * (runtime/metrics Description doc); each kind has its documented Java type.
 */
@ExtendWith(SchedTraceOnFailure.class)
class MetricsTest {
  private static final Pattern GO_NAME =
      Pattern.compile("^(?<name>/[^:]+):(?<unit>[^:*/]+(?:[*/][^:*/]+)*)$");

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void everyMetricIsDescribedAndTyped() {
    Map<String, Object> m = Gmp.readMetrics();
    List<MetricDescription> all = Gmp.describeMetrics();
    assertEquals(all.stream().map(MetricDescription::name).toList(), List.copyOf(m.keySet()));
    for (MetricDescription d : all) {
      assertTrue(GO_NAME.matcher(d.name()).matches(), d.name());
      assertTrue(!d.description().isBlank(), d.name());
      Object v = m.get(d.name());
      switch (d.kind()) {
        case GAUGE, COUNTER -> assertInstanceOf(Long.class, v, d.name());
        case HISTOGRAM -> assertInstanceOf(Float64Histogram.class, v, d.name());
        case PER_P -> assertEquals(Gmp.gomaxprocs(), ((long[]) v).length, d.name());
      }
    }
  }

  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void goroutinesListsAParkedGWithItsWaitReason() throws Exception {
    java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
    Thread g =
        Gmp.go(
            () -> {
              try {
                gate.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    try {
      assertTrue(
          GmpTesting.poll(
              5_000,
              () ->
                  Gmp.goroutines().stream()
                      .anyMatch(
                          gi ->
                              gi.thread() == g
                                  && gi.status().equals("waiting")
                                  && gi.waitReason().equals("semacquire"))),
          Gmp.schedtrace(true));
    } finally {
      gate.countDown();
    }
    GmpTesting.join(g, 10, "the parked G");
  }
}
