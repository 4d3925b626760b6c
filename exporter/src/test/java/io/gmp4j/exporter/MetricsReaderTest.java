package io.gmp4j.exporter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** When {@link MetricsReader} serves its kept reading and when it takes a new one. */
class MetricsReaderTest {
  private long now = 1_000_000_000L; // the reader's clock, moved by the test
  private long readings; // how many times the reader asked the source

  private final MetricsReader reader =
      new MetricsReader(() -> Map.of("/sched/x:n", ++readings), () -> now);

  private long readAt(long millis) {
    now += TimeUnit.MILLISECONDS.toNanos(millis);
    return (long) reader.value("/sched/x:n");
  }

  @Test
  void aScrapeIsServedByOneReading() {
    assertEquals(1, readAt(0));
    // 30 meters a few ms apart: one scrape, one reading
    for (int i = 0; i < 30; i++) {
      assertEquals(1, readAt(2), "read " + i);
    }
    assertEquals(1, readings);
  }

  @Test
  void aScrapeAfterAGapTakesItsOwnReading() {
    assertEquals(1, readAt(0)); // the bind, or the last scrape's last meter
    // 20 ms later: a new scrape, though the kept reading is only 20 ms old
    assertEquals(2, readAt(MetricsReader.SCRAPE_GAP_NANOS / 1_000_000));
    assertEquals(2, readAt(1));
  }

  @Test
  void aLongRunOfReadsIsRefreshedAtTheMaxAge() {
    assertEquals(1, readAt(0));
    long step = MetricsReader.SCRAPE_GAP_NANOS / 1_000_000 / 2; // never a gap
    long maxAgeMillis = MetricsReader.MAX_AGE_NANOS / 1_000_000;
    long at = 0;
    while (at + step < maxAgeMillis) {
      at += step;
      assertEquals(1, readAt(step), "at " + at + " ms");
    }
    assertEquals(2, readAt(maxAgeMillis - at)); // 100 ms after the reading
  }
}
