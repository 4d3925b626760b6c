package io.gmp4j.agent.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code gmp4j trace summary} and {@code check} on a recording of {@link SmallWorkload} made
 * here (see {@link TraceFixture}), against the recording's own events as the JDK's parser reads
 * them, and the bad files each verb must refuse in one line with exit status 2.
 */
@Timeout(120)
class TraceCommandTest {
  private static TraceFixture fixture;
  private static List<RecordedEvent> events;

  @BeforeAll
  static void record() throws Exception {
    fixture = TraceFixture.shared();
    events = RecordingFile.readAllEvents(fixture.rec);
  }

  /** What a verb printed and returned. */
  record Run(int exit, String out, String err) {
    @Override
    public String toString() {
      return "exit " + exit + "\n--- out ---\n" + out + "--- err ---\n" + err;
    }
  }

  static Run trace(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      exit = TraceCommand.run(Arrays.asList(args), o, e);
    }
    return new Run(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static List<RecordedEvent> of(String type) {
    return events.stream().filter(e -> e.getEventType().getName().equals(type)).toList();
  }

  @Test
  void summaryJsonAgreesWithTheRecordingsEvents() throws Exception {
    Run r = trace("summary", fixture.rec.toString(), "--json");
    assertEquals(0, r.exit(), r.toString());
    JsonNode j = new ObjectMapper().readTree(r.out());
    List<RecordedEvent> runs = of("gmp4j.GoRun");
    assertEquals(runs.size(), j.get("runs").asLong(), "runs");
    assertEquals(runs.size(), j.get("eventCounts").get("gmp4j.GoRun").asLong());
    long exec = runs.stream().mapToLong(e -> e.getDuration().toNanos()).sum();
    long execGroups = 0;
    long groupRuns = 0;
    for (JsonNode g : j.get("groups")) {
      execGroups += g.get("execNs").get("sum").asLong();
      groupRuns += g.get("runs").asLong();
    }
    assertEquals(exec, execGroups, "run time over the groups vs the GoRun durations");
    assertEquals(runs.size(), groupRuns, "runs over the groups");
    // the top runners are the Gs with the most run time in the recording (their GoRuns'
    // durations), most first, each with its own sum. Which G that is depends on the machine: on
    // a loaded one a ping's or the ticker's runs also hold the time its carrier was descheduled
    // while it was mounted (seen in TraceToolIT: one ping run of 1.04 s), so the order is
    // checked against the recording and the hog only for its own time
    Map<Long, Long> execByG = new HashMap<>();
    for (RecordedEvent e : runs) {
      execByG.merge(e.getLong("goid"), e.getDuration().toNanos(), Long::sum);
    }
    List<Long> listed = new ArrayList<>();
    JsonNode hog = null;
    for (JsonNode g : j.get("topRunners")) {
      assertEquals(execByG.get(g.get("goid").asLong()), g.get("execNs").asLong(), r.out());
      listed.add(g.get("execNs").asLong());
      hog = g.get("group").asText().equals("hog") ? g : hog;
    }
    assertEquals(
        execByG.values().stream()
            .sorted(Comparator.reverseOrder())
            .limit(SummaryFormat.TOP)
            .toList(),
        listed,
        r.out());
    // the hog ran about its 300 ms: without polls (no agent here) it loses its P after a slice
    // or two and runs on off-P
    assertTrue(hog != null && ran(hog) >= 200_000_000L, r.out());
    assertTrue(hog.get("offPNs").asLong() > 0, r.out());
    // the marked calls show as syscall time, most of their 40 ms each, and lose their P
    JsonNode sys = group(j, "syscallN");
    assertEquals(3, sys.get("goroutines").asInt(), r.out());
    long syscallNs = of("gmp4j.GoSyscall").stream().mapToLong(e -> e.getDuration().toNanos()).sum();
    long syscallGroups = 0;
    for (JsonNode g : j.get("groups")) {
      syscallGroups += g.get("syscallNs").get("sum").asLong();
    }
    assertEquals(syscallNs, syscallGroups, "syscall time vs the GoSyscall durations");
    assertTrue(sys.get("syscallNs").get("sum").asLong() >= 3 * 30_000_000L, r.out());
    assertTrue(sys.get("syscallBlockedNs").asLong() > 0, r.out());
    // the sleeper blocks in sleep; ping and pong wait on each other
    assertTrue(group(j, "sleeper").get("blockNsByReason").size() >= 1, r.out());
    // every event count that the summary gives is the file's own
    assertEquals(of("gmp4j.ProcHandoff").size(), j.get("events").get("handoffs").asLong());
    assertEquals(of("gmp4j.RunqSteal").size(), j.get("events").get("steals").asLong());
    assertEquals(
        of("gmp4j.RunqSteal").stream().mapToLong(e -> e.getInt("count")).sum(),
        j.get("events").get("stolenGoroutines").asLong());
    assertEquals(2, j.get("events").get("gomaxprocsChanges").asInt());
    assertEquals("2 -> 1 -> 2", j.get("gomaxprocs").asText());
    assertEquals(2, j.get("procs").size(), "one entry per P");
    // the latency distribution is of the runs' own schedLatency fields
    long[] lat =
        runs.stream().mapToLong(e -> e.getDuration("schedLatency").toNanos()).sorted().toArray();
    assertEquals(lat[lat.length - 1], j.get("schedLatency").get("allNs").get("max").asLong());
    long histogram = 0;
    for (JsonNode b : j.get("schedLatency").get("histogram")) {
      histogram += b.get("count").asLong();
    }
    assertEquals(j.get("schedLatency").get("allNs").get("count").asLong(), histogram);
  }

  private static long ran(JsonNode g) {
    return g.get("execNs").asLong() + g.get("offPNs").asLong();
  }

  private static JsonNode group(JsonNode j, String name) {
    for (JsonNode g : j.get("groups")) {
      if (g.get("name").asText().equals(name)) {
        return g;
      }
    }
    throw new AssertionError("no group " + name + " in " + j.get("groups"));
  }

  @Test
  void summaryTextNamesTheSections() {
    Run r = trace("summary", fixture.rec.toString());
    assertEquals(0, r.exit(), r.toString());
    System.out.println("TraceCommandTest: gmp4j trace summary\n" + r.out());
    for (String s :
        List.of(
            "Goroutine groups",
            "Top runners",
            "Scheduler latency",
            "by source",
            "worst waits",
            "Scheduler events",
            "Proc 0",
            "Proc 1",
            "Goroutines that ignored preemption")) {
      assertTrue(r.out().contains(s), s + " missing:\n" + r.out());
    }
    assertTrue(r.out().lines().anyMatch(l -> l.matches("  G\\d+ +hog +run .* off-P, .*")), r.out());
    assertEquals("", r.err());
  }

  @Test
  void checkPassesAboveTheMeasuredValuesAndFailsBelowNamingTheLimit() throws Exception {
    JsonNode j =
        new ObjectMapper().readTree(trace("summary", fixture.rec.toString(), "--json").out());
    long p99 = j.get("schedLatency").get("allNs").get("p99").asLong();
    long max = j.get("schedLatency").get("allNs").get("max").asLong();
    long handoffs = j.get("events").get("handoffs").asLong();
    double ratio = j.get("events").get("stealRatioPercent").asDouble();
    assertTrue(handoffs >= 1, "the syscalls at least should lose their P: " + j.get("events"));
    Run ok =
        trace(
            "check",
            fixture.rec.toString(),
            "--max-sched-latency",
            "p99=" + (p99 / 1000 + 1) + "us,max=" + (max / 1000 + 1) + "us",
            "--max-steal-ratio",
            (Math.ceil(ratio) + 1) + "%",
            "--max-handoffs",
            "" + handoffs,
            "--min-schedulings",
            "10");
    assertEquals(0, ok.exit(), ok.toString());
    assertTrue(ok.out().contains("ok    sched-latency p99"), ok.toString());
    assertEquals("", ok.err(), ok.toString());

    Run bad =
        trace(
            "check",
            fixture.rec.toString(),
            "--max-sched-latency",
            "p99=" + Math.max(0, p99 / 1000 - 1) + "us",
            "--max-handoffs=" + (handoffs - 1),
            "--max-steal-ratio",
            "100%");
    assertEquals(1, bad.exit(), bad.toString());
    List<String> errs = bad.err().lines().toList();
    assertEquals(3, errs.size(), bad.toString());
    assertTrue(
        errs.get(0)
            .startsWith(
                "gmp4j: trace check: limit broken: --max-sched-latency p99="
                    + Math.max(0, p99 / 1000 - 1)
                    + "us, measured "
                    + SummaryFormat.dur(p99)),
        bad.toString());
    assertEquals(
        "gmp4j: trace check: limit broken: --max-handoffs "
            + (handoffs - 1)
            + ", measured "
            + handoffs,
        errs.get(1));
    assertTrue(errs.get(2).startsWith("gmp4j: trace check: 2 of 3 limits broken"), errs.get(2));
    assertTrue(bad.out().contains("FAIL  handoffs"), bad.toString());
    assertTrue(bad.out().contains("ok    steal-ratio"), bad.toString());
  }

  @Test
  void badLimitsAreUsageErrors() {
    String f = fixture.rec.toString();
    for (String[] args :
        List.of(
            new String[] {"check", f},
            new String[] {"check", f, "--max-sched-latency", "p99=5 parsecs"},
            new String[] {"check", f, "--max-sched-latency", "p42=5ms"},
            new String[] {"check", f, "--max-handoffs", "-1"},
            new String[] {"check", f, "--max-handoffs"},
            new String[] {"check", f, "--max-fun", "3"},
            new String[] {"summary", f, "--yaml"},
            new String[] {"flamegraph", f},
            new String[] {"summary"})) {
      Run r = trace(args);
      assertEquals(2, r.exit(), List.of(args) + ": " + r);
      assertEquals(1, r.err().lines().count(), List.of(args) + ": " + r);
      assertTrue(r.err().startsWith("gmp4j: "), r.toString());
      assertEquals("", r.out(), r.toString());
    }
  }

  @Test
  void badFilesGetOneLineNamingTheFileAndExit2() throws Exception {
    Path dir = fixture.dir;
    Path empty = Files.write(dir.resolve("empty.jfr"), new byte[0]);
    Path text = Files.writeString(dir.resolve("notes.jfr"), "not a recording\n".repeat(20));
    byte[] all = Files.readAllBytes(fixture.rec);
    Path truncated = Files.write(dir.resolve("truncated.jfr"), Arrays.copyOf(all, all.length / 2));
    Path plain = dir.resolve("plain.jfr");
    try (Recording rec = new Recording()) {
      rec.enable("jdk.CPULoad").withPeriod(Duration.ofMillis(20));
      rec.start();
      Thread.sleep(200);
      rec.stop();
      rec.dump(plain);
    }
    Path missing = dir.resolve("missing.jfr");
    List<Path> files = List.of(empty, text, truncated, plain, missing);
    List<String> lines = new ArrayList<>();
    for (Path f : files) {
      for (String sub : List.of("summary", "check", "perfetto", "html")) {
        List<String> args = new ArrayList<>(List.of(sub, f.toString()));
        switch (sub) {
          case "check" -> args.addAll(List.of("--max-handoffs", "0"));
          case "perfetto" -> args.addAll(List.of("-o", dir.resolve("t.json").toString()));
          case "html" -> args.addAll(List.of("-o", dir.resolve("t.html").toString()));
          default -> {}
        }
        Run r = trace(args.toArray(String[]::new));
        assertEquals(2, r.exit(), args + ": " + r);
        assertEquals(1, r.err().lines().count(), args + ": " + r);
        assertTrue(r.err().startsWith("gmp4j: " + f + ": "), args + ": " + r);
        if (sub.equals("summary")) {
          lines.add(r.err().strip());
        }
      }
    }
    System.out.println("TraceCommandTest: bad files\n" + String.join("\n", lines));
    assertEquals("gmp4j: " + empty + ": empty file, not a JFR recording", lines.get(0));
    assertTrue(lines.get(1).startsWith("gmp4j: " + text + ": not a JFR recording"), lines.get(1));
    assertTrue(
        lines.get(2).startsWith("gmp4j: " + truncated + ": truncated JFR recording"), lines.get(2));
    assertTrue(
        lines.get(3).startsWith("gmp4j: " + plain + ": a JFR recording with no gmp4j" + " events"),
        lines.get(3));
    assertEquals("gmp4j: " + missing + ": no such file", lines.get(4));
    assertTrue(!Files.exists(dir.resolve("t.json")) && !Files.exists(dir.resolve("t.html")));
  }

  @Test
  void largeFilesShowProgressOnStderr() throws Exception {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    try (PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      new TraceReader(e, 0).read(fixture.rec); // as if the file were of 100 MB and more
      String quiet = err.toString(StandardCharsets.UTF_8);
      assertTrue(quiet.startsWith("gmp4j: read " + fixture.rec + ": "), quiet);
      err.reset();
      new TraceReader(e, TraceReader.PROGRESS_BYTES).read(fixture.rec);
      assertEquals("", err.toString(StandardCharsets.UTF_8));
    }
  }

  @Test
  void htmlIsOneSelfContainedPageWithALanePerPAndARectPerRun() throws Exception {
    Path out = fixture.dir.resolve("report.html");
    Run r = trace("html", fixture.rec.toString(), "-o", out.toString());
    assertEquals(0, r.exit(), r.toString());
    String page = Files.readString(out);
    assertTrue(page.contains("default-src 'none'"), "the CSP that forbids every request");
    for (String ref : List.of("src=", "href=", "url(", "@import", "http://", "https://")) {
      assertTrue(!page.contains(ref), "refers outside the page: " + ref);
    }
    assertEquals(2, page.split("<g class=\"lane\"", -1).length - 1, "one lane per P");
    assertTrue(
        page.contains("<g class=\"lane\" data-p=\"0\">")
            && page.contains("<g class=\"lane\" data-p=\"1\">"));
    assertEquals(of("gmp4j.GoRun").size(), page.split("<rect class=\"run\"", -1).length - 1);
    assertEquals(
        of("gmp4j.ProcHandoff").size(), page.split("<rect class=\"handoff\"", -1).length - 1);
    for (String s :
        List.of(
            "id=\"hist\"",
            "id=\"groups\"",
            "id=\"handoffs\"",
            "hog",
            "syscallN",
            "SmallWorkload.spinFor")) {
      assertTrue(page.contains(s), s + " missing from the page");
    }
  }
}
