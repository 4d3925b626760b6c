package io.gmp4j.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Pins the JDK behaviour that 'Reused event objects' in Trace relies on: one event object
 * committed again and again records one event per commit, each with the fields and times it had
 * at that commit. If a JDK made commit keep the object (an asynchronous write) or left a time
 * behind in it, the second event here would carry the first one's values.
 */
class TraceReuseTest {
  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void oneObjectCommittedTwiceRecordsTwoEvents() throws Exception {
    Path file = Files.createTempFile("trace-reuse", ".jfr");
    try {
      try (Recording r = new Recording()) {
        r.enable(TraceEvents.GoUnblock.class).withoutStackTrace();
        r.enable(TraceEvents.GoDestroy.class).withoutStackTrace();
        r.start();
        // A GoUnblock, as Trace fills a reused one: begin and end each time.
        TraceEvents.GoUnblock u = new TraceEvents.GoUnblock();
        for (int i = 1; i <= 2; i++) {
          u.begin();
          u.goid = i;
          u.byGoid = 10 + i;
          u.to = i == 1 ? "runnext" : "global";
          Thread.sleep(20);
          u.end();
          u.commit();
        }
        // A GoDestroy, an instant: never begun, so each commit times itself.
        TraceEvents.GoDestroy d = new TraceEvents.GoDestroy();
        for (int i = 1; i <= 2; i++) {
          d.goid = 100 + i;
          d.commit();
          Thread.sleep(20);
        }
        r.stop();
        r.dump(file);
      }
      List<RecordedEvent> events = RecordingFile.readAllEvents(file);
      List<RecordedEvent> unblocks =
          events.stream()
              .filter(e -> e.getEventType().getName().equals("gmp4j.GoUnblock"))
              .toList();
      List<RecordedEvent> destroys =
          events.stream()
              .filter(e -> e.getEventType().getName().equals("gmp4j.GoDestroy"))
              .toList();
      assertEquals(2, unblocks.size(), "GoUnblocks: " + unblocks);
      assertEquals(2, destroys.size(), "GoDestroys: " + destroys);
      for (int i = 0; i < 2; i++) {
        RecordedEvent e = unblocks.get(i);
        assertEquals(i + 1, e.getLong("goid"), e.toString());
        assertEquals(11 + i, e.getLong("byGoid"), e.toString());
        assertEquals(i == 0 ? "runnext" : "global", e.getString("to"), e.toString());
        // Its own begin and end: about the 20 ms sleep, not the span since the first begin.
        Duration dur = e.getDuration();
        assertTrue(dur.toMillis() >= 15 && dur.toMillis() < 10_000, "duration " + dur + ": " + e);
      }
      assertTrue(
          unblocks.get(1).getStartTime().isAfter(unblocks.get(0).getEndTime().minusNanos(1)),
          "the second GoUnblock begins after the first ends: " + unblocks);
      for (int i = 0; i < 2; i++) {
        RecordedEvent e = destroys.get(i);
        assertEquals(101 + i, e.getLong("goid"), e.toString());
        assertEquals(Duration.ZERO, e.getDuration(), "an instant: " + e);
      }
      assertTrue(
          Duration.between(destroys.get(0).getStartTime(), destroys.get(1).getStartTime())
                  .toMillis()
              >= 15,
          "each GoDestroy commit takes its own time: " + destroys);
    } finally {
      Files.deleteIfExists(file);
    }
  }
}
