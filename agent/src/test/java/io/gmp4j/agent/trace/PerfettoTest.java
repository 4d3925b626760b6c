package io.gmp4j.agent.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code gmp4j trace perfetto} on the tests' own recording: the output is JSON in the
 * trace-event format, with one lane per P, a slice per GoRun, slices that nest or are disjoint
 * on every lane, arrows whose two ends both exist, and parts that are whole traces.
 */
@Timeout(120)
class PerfettoTest {
  private static TraceFixture fixture;

  @BeforeAll
  static void record() throws Exception {
    fixture = TraceFixture.shared();
  }

  @Test
  void traceFollowsTheFormatWithOneLanePerP() throws Exception {
    Path out = fixture.dir.resolve("trace.json");
    TraceCommandTest.Run r =
        TraceCommandTest.trace("perfetto", fixture.rec.toString(), "-o", out.toString());
    assertEquals(0, r.exit(), r.toString());
    assertEquals("wrote " + out + " (" + Files.size(out) + " bytes)\n", r.out());
    List<RecordedEvent> events = RecordingFile.readAllEvents(fixture.rec);
    Set<Integer> ps = new TreeSet<>();
    long runs = 0;
    for (RecordedEvent e : events) {
      if (e.getEventType().getName().equals("gmp4j.GoRun")) {
        ps.add(e.getInt("p"));
        runs++;
      }
    }
    JsonNode trace = new ObjectMapper().readTree(out.toFile());
    Map<String, Long> stats = check(trace);
    assertEquals(runs, stats.get("run"), "a slice per GoRun: " + stats);
    Set<Integer> lanes = lanes(trace);
    assertEquals(ps, lanes, "one lane per P");
    assertEquals(2, lanes.size());
    assertTrue(stats.get("syscall") >= 1, stats.toString());
    assertTrue(stats.getOrDefault("flows", 0L) >= 100, "ping-pong arrows: " + stats);
    assertTrue(stats.getOrDefault("i:handoff", 0L) >= 1, stats.toString());
    assertEquals(2, stats.getOrDefault("i:procs", 0L), stats.toString());
    assertTrue(stats.getOrDefault("C:Goroutines", 0L) >= runs, stats.toString());
    System.out.println("PerfettoTest: " + Files.size(out) + " bytes, " + stats);
  }

  @Test
  void splitsIntoWholeTracesPastTheLimit() throws Exception {
    TraceData d =
        new TraceReader(new PrintStream(PrintStream.nullOutputStream()), TraceReader.PROGRESS_BYTES)
            .read(fixture.rec);
    Path out = fixture.dir.resolve("split.json");
    List<Path> parts = new Perfetto(d, 60_000).write(out);
    assertTrue(parts.size() >= 3, parts.toString());
    long runs = 0;
    for (int i = 0; i < parts.size(); i++) {
      assertEquals(fixture.dir.resolve("split." + i + ".json"), parts.get(i));
      JsonNode trace = new ObjectMapper().readTree(parts.get(i).toFile());
      assertEquals(d.procs(), lanes(trace), "every part names every lane");
      runs += check(trace).getOrDefault("run", 0L);
      assertTrue(Files.size(parts.get(i)) < 60_000 + 4_000, parts.get(i) + " too big");
    }
    assertEquals(d.runs.size(), runs);
    assertTrue(!Files.exists(out));
  }

  private static Set<Integer> lanes(JsonNode trace) {
    Set<Integer> lanes = new TreeSet<>();
    for (JsonNode e : trace.get("traceEvents")) {
      if (e.get("ph").asText().equals("M") && e.get("name").asText().equals("thread_name")) {
        assertEquals(0, e.get("pid").asInt());
        int tid = e.get("tid").asInt();
        assertEquals("Proc " + tid, e.get("args").get("name").asText());
        assertTrue(lanes.add(tid), "lane named twice: " + tid);
      }
    }
    return lanes;
  }

  /**
   * The trace-event format's rules that Perfetto relies on; returns counts by kind. Every X
   * has name, ts, dur, pid and tid; the X of one lane nest or are disjoint; every flow start
   * has its end; every event's ph is one we mean to write.
   */
  static Map<String, Long> check(JsonNode trace) {
    assertEquals("ns", trace.get("displayTimeUnit").asText());
    Map<String, Long> counts = new TreeMap<>();
    Map<String, List<long[]>> byLane = new HashMap<>();
    Map<Long, String> flows = new HashMap<>();
    Set<Long> ended = new HashSet<>();
    for (JsonNode e : trace.get("traceEvents")) {
      String ph = e.get("ph").asText();
      switch (ph) {
        case "X" -> {
          for (String f : List.of("name", "ts", "dur", "pid", "tid")) {
            assertTrue(e.hasNonNull(f), "X without " + f + ": " + e);
          }
          assertTrue(e.get("ts").isNumber() && e.get("dur").isNumber(), e.toString());
          assertTrue(e.get("dur").asDouble() >= 0, e.toString());
          counts.merge(e.get("cat").asText(), 1L, Long::sum);
          byLane
              .computeIfAbsent(
                  e.get("pid").asInt() + "/" + e.get("tid").asInt(), k -> new ArrayList<>())
              .add(new long[] {ns(e.get("ts")), ns(e.get("ts")) + ns(e.get("dur"))});
        }
        case "i" -> {
          assertTrue(e.hasNonNull("ts") && e.hasNonNull("pid") && e.hasNonNull("s"), e.toString());
          counts.merge("i:" + e.get("cat").asText(), 1L, Long::sum);
        }
        case "C" -> {
          assertTrue(e.hasNonNull("ts") && e.get("args").size() >= 1, e.toString());
          String name = e.get("name").asText();
          counts.merge("C:" + (name.startsWith("runq") ? "runq" : name), 1L, Long::sum);
        }
        case "s" -> {
          flows.put(e.get("id").asLong(), e.toString());
          counts.merge("flows", 1L, Long::sum);
        }
        case "f" -> {
          assertEquals("e", e.get("bp").asText(), e.toString());
          ended.add(e.get("id").asLong());
        }
        case "M" -> counts.merge("M", 1L, Long::sum);
        default -> fail("unexpected ph " + ph + ": " + e);
      }
    }
    for (Long id : flows.keySet()) {
      if (!ended.contains(id)) {
        // an arrow may lose its end only at a part boundary; the unsplit trace has both
        counts.merge("flowsCut", 1L, Long::sum);
      }
    }
    for (var lane : byLane.entrySet()) {
      List<long[]> s = lane.getValue();
      s.sort(Comparator.comparingLong((long[] a) -> a[0]).thenComparingLong((long[] a) -> -a[1]));
      // a stack of open slices: each next slice must end inside the innermost open one
      List<long[]> open = new ArrayList<>();
      for (long[] x : s) {
        while (!open.isEmpty() && open.get(open.size() - 1)[1] <= x[0]) {
          open.remove(open.size() - 1);
        }
        if (!open.isEmpty() && x[1] > open.get(open.size() - 1)[1]) {
          fail(
              "lane "
                  + lane.getKey()
                  + ": slice ["
                  + x[0]
                  + ", "
                  + x[1]
                  + "] partly overlaps ["
                  + open.get(open.size() - 1)[0]
                  + ", "
                  + open.get(open.size() - 1)[1]
                  + "]");
        }
        open.add(x);
      }
    }
    return counts;
  }

  /** A trace-event time (us, 3 decimals) in whole ns, as Perfetto's importer takes it. */
  private static long ns(JsonNode us) {
    return Math.round(us.asDouble() * 1000);
  }
}
