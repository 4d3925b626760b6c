package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.IgnoresPreemption;
import example.apps.JfrOptionsWorkload;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The agent's JFR options end to end, each in a fresh JVM with the real agent jar: {@code jfr=}
 * with the shipped settings, a {@code jcmd JFR.start} with gmp4j.jfc from the jar, and the flight
 * recorder's dump on a hog hand-off, with its failures. Recordings are read back with
 * {@code jdk.jfr.consumer.RecordingFile}.
 */
@Timeout(180)
class FlightRecordingIT {
  private static final Duration LIMIT = Duration.ofSeconds(90);
  private static final String EXCLUDE =
      "preempt.exclude=" + IgnoresPreemption.Library.class.getName();

  private Path dir;

  @BeforeEach
  void tempDir() throws IOException {
    dir = Files.createTempDirectory("gmp4j-jfr-it-");
  }

  @AfterEach
  void cleanUp() throws IOException {
    if (Files.exists(dir)) {
      try (Stream<Path> s = Files.walk(dir)) {
        for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  @Test
  void jfrOptionRecordsGmp4jJfcAndTheJdksDefaultEvents() throws Exception {
    Path rec = dir.resolve("rec.jfr");
    ChildJvm.Result r = ChildJvm.withAgent("jfr=" + rec, JfrOptionsWorkload.class, LIMIT, "mixed");
    assertEquals(0, r.exit(), r.toString());
    assertTrue(r.value("carrier").startsWith("gmp-m"), r.toString());
    List<RecordedEvent> events = RecordingFile.readAllEvents(rec);
    Map<String, Integer> counts = counts(events);
    System.out.println("FlightRecordingIT jfr=, gmp4j.jfc: " + gmp4j(counts));
    assertTrue(counts.getOrDefault("gmp4j.SchedStats", 0) >= 1, counts.toString());
    assertTrue(counts.getOrDefault("gmp4j.ProcsChange", 0) >= 2, counts.toString());
    assertTrue(counts.getOrDefault("gmp4j.GoRun", 0) >= 1, counts.toString()); // the 30 ms spinner
    for (RecordedEvent e : events) {
      if (e.getEventType().getName().equals("gmp4j.GoRun")) {
        assertTrue(e.getDuration().toMillis() >= 10, "below gmp4j.jfc's threshold: " + e);
      }
    }
    for (String off :
        List.of("gmp4j.GoCreate", "gmp4j.GoUnblock", "gmp4j.GoDestroy", "gmp4j.ProcIdle")) {
      assertFalse(counts.containsKey(off), off + " is off in gmp4j.jfc: " + counts);
    }
    // default.jfc's own events: start-of-chunk, periodic and the settings it applied
    for (String jdk :
        List.of("jdk.JVMInformation", "jdk.CPULoad", "jdk.ActiveSetting", "jdk.GCConfiguration")) {
      assertTrue(counts.containsKey(jdk), jdk + " missing: " + counts.keySet());
    }
  }

  @Test
  void jfrDetailSettingsRecordEveryTransition() throws Exception {
    Path rec = dir.resolve("detail.jfr");
    ChildJvm.Result r =
        ChildJvm.withAgent(
            "jfr=" + rec + ",jfr.settings=detail", JfrOptionsWorkload.class, LIMIT, "mixed");
    assertEquals(0, r.exit(), r.toString());
    Map<String, Integer> counts = counts(RecordingFile.readAllEvents(rec));
    System.out.println("FlightRecordingIT jfr=, gmp4j-detail.jfc: " + gmp4j(counts));
    for (String on :
        List.of(
            "gmp4j.GoCreate",
            "gmp4j.GoRun",
            "gmp4j.GoUnblock",
            "gmp4j.GoDestroy",
            "gmp4j.SchedStats",
            "gmp4j.ProcsChange",
            "gmp4j.ProcIdle")) {
      assertTrue(counts.getOrDefault(on, 0) >= 1, on + " missing: " + gmp4j(counts));
    }
    assertTrue(counts.containsKey("jdk.JVMInformation"), counts.keySet().toString());
  }

  /** A user's way: gmp4j.jfc out of the agent jar, then jcmd on the running JVM. */
  @Test
  void jcmdJfrStartWithGmp4jJfcRecordsGmp4jEvents() throws Exception {
    Path jfc = dir.resolve("gmp4j.jfc");
    try (ZipFile jar = new ZipFile(ChildJvm.AGENT.toFile());
        InputStream in = jar.getInputStream(jar.getEntry("gmp4j.jfc"))) {
      Files.copy(in, jfc);
    }
    CompletableFuture<ChildJvm.Result> child =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return ChildJvm.withAgent(
                    "", JfrOptionsWorkload.class, LIMIT, "attach", dir.toString());
              } catch (Exception e) {
                throw new RuntimeException(e);
              }
            });
    Path pidFile = dir.resolve("pid");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!Files.exists(pidFile) && !child.isDone() && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertTrue(Files.exists(pidFile), () -> "no pid file; child: " + child.getNow(null));
    String pid = Files.readString(pidFile).trim();
    Path rec = dir.resolve("jcmd.jfr");
    List<String> log = new ArrayList<>();
    try {
      log.add(jcmd(pid, "JFR.start", "name=gmp4j", "settings=" + jfc));
      Thread.sleep(2_500); // sysmon turns the events on within a cycle; SchedStats is at 1 s
      log.add(jcmd(pid, "JFR.dump", "name=gmp4j", "filename=" + rec));
      log.add(jcmd(pid, "JFR.stop", "name=gmp4j"));
    } finally {
      Files.writeString(dir.resolve("stop"), "");
    }
    ChildJvm.Result r = child.get(60, TimeUnit.SECONDS);
    assertEquals(0, r.exit(), r + "\njcmd: " + log);
    Map<String, Integer> counts = counts(RecordingFile.readAllEvents(rec));
    System.out.println("FlightRecordingIT jcmd JFR.start settings=gmp4j.jfc: " + gmp4j(counts));
    assertTrue(counts.getOrDefault("gmp4j.SchedStats", 0) >= 1, counts + "\n" + log);
    assertTrue(counts.getOrDefault("gmp4j.GoRun", 0) >= 1, counts + "\n" + log);
    assertTrue(counts.containsKey("jdk.JVMInformation"), counts.keySet().toString());
  }

  @Test
  void flightRecorderDumpsTheWindowOnAHogHandoff() throws Exception {
    ChildJvm.Result r =
        ChildJvm.withAgent(
            "gomaxprocs=1," + EXCLUDE + ",flightrecorder=10s,flightrecorder.dir=" + dir,
            JfrOptionsWorkload.class,
            LIMIT,
            "hog",
            dir.toString());
    assertEquals(0, r.exit(), r.toString());
    List<String> lines =
        r.err().lines().filter(l -> l.startsWith("gmp4j: flightrecorder:")).toList();
    assertEquals(1, lines.size(), r.toString());
    System.out.println("FlightRecordingIT stderr: " + lines.get(0));
    assertTrue(
        lines
            .get(0)
            .matches(
                "gmp4j: flightrecorder: a hog hand-off \\(reason="
                    + "ignoredPreemption p=0 goid=\\d+ .*\\): wrote the last 10s to .*gmp4j-flight-"
                    + "\\d+-[0-9-]+\\.jfr \\(\\d+ bytes\\)"),
        lines.get(0));
    List<Path> dumps;
    try (Stream<Path> s = Files.list(dir)) {
      dumps = s.toList();
    }
    assertEquals(1, dumps.size(), dumps.toString());
    List<RecordedEvent> events = RecordingFile.readAllEvents(dumps.get(0));
    Map<String, Integer> counts = counts(events);
    System.out.println("FlightRecordingIT flight recorder dump: " + gmp4j(counts));
    RecordedEvent handoff =
        events.stream()
            .filter(e -> e.getEventType().getName().equals("gmp4j.ProcHandoff"))
            .filter(e -> e.getString("reason").equals("ignoredPreemption"))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no hog hand-off in the dump: " + counts));
    Instant at = handoff.getStartTime();
    long runsBefore =
        events.stream()
            .filter(e -> e.getEventType().getName().equals("gmp4j.GoRun"))
            .filter(e -> e.getEndTime().isBefore(at))
            .count();
    assertTrue(runsBefore >= 10, "GoRun before the hand-off: " + runsBefore + " " + counts);
  }

  @Test
  void unwritableFlightRecorderDirIsOneLineAndTheAppRunsOnGmp4j() throws Exception {
    Path notADir = Files.writeString(dir.resolve("file"), "");
    ChildJvm.Result r =
        ChildJvm.withAgent(
            "flightrecorder=on,flightrecorder.dir=" + notADir,
            JfrOptionsWorkload.class,
            LIMIT,
            "mixed");
    assertEquals(0, r.exit(), r.toString());
    assertTrue(r.value("carrier").startsWith("gmp-m"), r.toString());
    // (a loaded machine may add hand-off lines of the workload's own; those are not ours)
    List<String> lines =
        r.err().lines().filter(l -> l.startsWith("gmp4j: flightrecorder:")).toList();
    assertEquals(
        List.of(
            "gmp4j: flightrecorder: "
                + notADir
                + " is not a writable directory"
                + " (flightrecorder.dir); no flight recorder, gmp4j and the app run on"),
        lines,
        r.toString());
  }

  @Test
  void failedDumpIsOneLineAndTheRecorderAndTheAppRunOn() throws Exception {
    Path gone = Files.createDirectory(dir.resolve("gone"));
    ChildJvm.Result r =
        ChildJvm.withAgent(
            "gomaxprocs=1," + EXCLUDE + ",flightrecorder=10s,flightrecorder.dir=" + gone,
            JfrOptionsWorkload.class,
            LIMIT,
            "hog-nodir",
            gone.toString());
    assertEquals(0, r.exit(), r.toString());
    assertEquals("1", r.value("done"), r.toString());
    List<String> lines =
        r.err().lines().filter(l -> l.startsWith("gmp4j: flightrecorder:")).toList();
    assertEquals(1, lines.size(), r.toString());
    System.out.println("FlightRecordingIT stderr: " + lines.get(0));
    assertTrue(
        lines.get(0).contains(": cannot write " + gone + "/gmp4j-flight-")
            && lines.get(0).endsWith("; the flight recorder keeps recording"),
        lines.get(0));
  }

  @Test
  void badFlightRecorderValueIsOneLineAndTheAppRunsOnTheJdkScheduler() throws Exception {
    ChildJvm.Result r =
        ChildJvm.withAgent("flightrecorder=500ms", JfrOptionsWorkload.class, LIMIT, "short");
    assertEquals(0, r.exit(), r.toString());
    assertFalse(r.value("carrier").startsWith("gmp-m"), r.toString());
    List<String> lines = r.err().lines().filter(l -> l.startsWith("gmp4j:")).toList();
    assertEquals(1, lines.size(), r.toString());
    assertTrue(
        lines.get(0).startsWith("gmp4j: bad value \"500ms\" for option flightrecorder"),
        lines.get(0));
  }

  private static String jcmd(String pid, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(ChildJvm.JAVA.resolveSibling("jcmd").toString());
    cmd.add(pid);
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), "jcmd hangs: " + cmd);
    assertEquals(0, p.exitValue(), cmd + ": " + out);
    return String.join(" ", args) + ": " + out.strip();
  }

  private static Map<String, Integer> counts(List<RecordedEvent> events) {
    Map<String, Integer> counts = new TreeMap<>();
    for (RecordedEvent e : events) {
      counts.merge(e.getEventType().getName(), 1, Integer::sum);
    }
    return counts;
  }

  private static Map<String, Integer> gmp4j(Map<String, Integer> counts) {
    Map<String, Integer> out = new TreeMap<>();
    counts.forEach(
        (k, v) -> {
          if (k.startsWith("gmp4j.")) {
            out.put(k, v);
          }
        });
    return out;
  }
}
