package io.gmp4j.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * The GoRun pre-filter reads the recordings' thresholds as JFR writes them ('The slice record'
 * in Trace). A value it cannot read must come out as 0, which commits every slice and leaves the
 * filtering to JFR: never larger than JFR's own threshold, or slices would be lost.
 */
class TraceThresholdTest {
  @Test
  void readsJfrTimespans() {
    assertEquals(10_000_000L, Trace.parseNanos("10 ms"));
    assertEquals(0L, Trace.parseNanos("0 ns"));
    assertEquals(20_000L, Trace.parseNanos("20 us"));
    assertEquals(1_000_000_000L, Trace.parseNanos("1 s"));
    assertEquals(120_000_000_000L, Trace.parseNanos("2 m"));
    assertEquals(3_600_000_000_000L, Trace.parseNanos(" 1  h "));
  }

  @Test
  void anythingElseIsZeroSoJfrDecides() {
    assertEquals(0L, Trace.parseNanos(null));
    assertEquals(0L, Trace.parseNanos(""));
    assertEquals(0L, Trace.parseNanos("10ms"));
    assertEquals(0L, Trace.parseNanos("10 fortnights"));
    assertEquals(0L, Trace.parseNanos("-5 ms"));
    assertEquals(0L, Trace.parseNanos("infinity"));
    assertEquals(0L, Trace.parseNanos("9223372036854775807 d"));
  }
}
