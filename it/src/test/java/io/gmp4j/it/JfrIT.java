package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import example.apps.JfrWorkload;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openjdk.jmc.common.IDescribable;
import org.openjdk.jmc.common.item.IAccessorKey;
import org.openjdk.jmc.common.item.IItemCollection;
import org.openjdk.jmc.common.item.IItemIterable;
import org.openjdk.jmc.common.item.IType;
import org.openjdk.jmc.common.unit.ContentType;
import org.openjdk.jmc.common.unit.UnitLookup;
import org.openjdk.jmc.flightrecorder.JfrLoaderToolkit;

/**
 * The scheduler's JFR events end to end: {@link JfrWorkload} runs with the agent, {@code
 * -Xverify:all}, a recording of every gmp4j event (a settings file written here: every type on,
 * threshold 0, no stack traces) and its stack walker on, and the recording is read back three
 * ways. The walker is what a thread dump or the agent's look at running classes does to a
 * production app: before the scheduler dropped or left to the G's M the submits that the JDK
 * makes after walking an unmounted thread ('Readied while running' in Goroutine), six of seven
 * runs with it found a run with no readying before it.
 *
 * <ol>
 *   <li>{@code jdk.jfr.consumer.RecordingFile}: the schedule is legal per goroutine and per P,
 *       and the event counts agree with the program's {@code readMetrics()} deltas over the same
 *       window, exactly where the counter and the event are the same act.
 *   <li>The JDK's {@code jfr} tool: summary, print and view succeed.
 *   <li>JDK Mission Control's parser: every gmp4j type with its label, category and units.
 * </ol>
 */
@Timeout(300)
class JfrIT {
  private static final Duration LIMIT = Duration.ofSeconds(150);

  /** Every type, with its JMC label and category path. */
  private static final Map<String, String[]> TYPES = new LinkedHashMap<>();

  static {
    String g = "Goroutines";
    String p = "Processors";
    TYPES.put("gmp4j.GoCreate", new String[] {"Goroutine Create", g});
    TYPES.put("gmp4j.GoRun", new String[] {"Goroutine Run", g});
    TYPES.put("gmp4j.GoUnblock", new String[] {"Goroutine Unblock", g});
    TYPES.put("gmp4j.GoSyscall", new String[] {"Goroutine Syscall", g});
    TYPES.put("gmp4j.GoDestroy", new String[] {"Goroutine Destroy", g});
    TYPES.put("gmp4j.RunqSteal", new String[] {"Run Queue Steal", p});
    TYPES.put("gmp4j.PreemptRequest", new String[] {"Preemption Request", p});
    TYPES.put("gmp4j.ProcHandoff", new String[] {"P Hand-off", p});
    TYPES.put("gmp4j.ProcsChange", new String[] {"GOMAXPROCS Change", p});
    TYPES.put("gmp4j.ProcIdle", new String[] {"P Idle", p});
    TYPES.put("gmp4j.SchedStats", new String[] {"Scheduler Statistics"});
  }

  @Test
  void recordingReadsBackAsALegalScheduleThatMatchesTheMetrics(@TempDir Path dir) throws Exception {
    Path jfc = dir.resolve("gmp4j-all.jfc");
    Files.writeString(jfc, settings());
    Path rec = dir.resolve("workload.jfr");
    ChildJvm.Result r =
        ChildJvm.run(
            List.of(
                "-Xverify:all",
                "-Djfrworkload.walk=true",
                "-javaagent:" + ChildJvm.AGENT + "=gomaxprocs=2",
                "-XX:StartFlightRecording:filename=" + rec + ",settings=" + jfc),
            Map.of(),
            JfrWorkload.class,
            LIMIT,
            dir.toString());
    assertEquals(0, r.exit(), r.toString());
    assertTrue(r.out().lines().anyMatch("OK"::equals), r.toString());
    assertTrue(Long.parseLong(r.value("walks")) > 0, "the walker never walked a stack\n" + r);
    List<RecordedEvent> all = RecordingFile.readAllEvents(rec);

    Schedule s = new Schedule(all, Integer.parseInt(r.value("gomaxprocs_start")));
    try {
      s.checkCounts(r);
      s.checkGoroutines();
      s.checkProcs();
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "\n" + s.summary() + "\n" + r, e);
    }
    System.out.println("JfrIT: " + s.summary());

    String summary = jfrTool("summary", rec.toString());
    assertTrue(summary.contains("gmp4j.GoRun"), summary);
    System.out.println(
        "JfrIT: jfr summary (types with events)\n"
            + summary
                .lines()
                .filter(l -> !l.matches("\\s*[\\w.]+\\s+0\\s+0\\s*"))
                .collect(Collectors.joining("\n")));
    String print = jfrTool("print", "--events", "gmp4j.*", rec.toString());
    for (String type : TYPES.keySet()) {
      assertTrue(print.contains(type + " {"), type + " missing from jfr print");
    }
    String view = jfrTool("view", "gmp4j.GoRun", rec.toString());
    assertTrue(view.contains("Goroutine Run") && view.contains("Scheduling Latency"), view);
    System.out.println(
        "JfrIT: jfr view gmp4j.GoRun (head)\n"
            + view.lines().limit(8).collect(Collectors.joining("\n")));

    checkJmc(rec);
  }

  /** A settings file with every gmp4j event and the workload's marks on, nothing else. */
  private static String settings() {
    StringBuilder sb =
        new StringBuilder(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                + "<configuration version=\"2.0\" label=\"JfrIT: every gmp4j event\">\n");
    for (String type : TYPES.keySet()) {
      sb.append("  <event name=\"")
          .append(type)
          .append("\">")
          .append("<setting name=\"enabled\">true</setting>")
          .append("<setting name=\"stackTrace\">false</setting>")
          .append("<setting name=\"threshold\">0 ms</setting>")
          .append(type.equals("gmp4j.SchedStats") ? "<setting name=\"period\">1 s</setting>" : "")
          .append("</event>\n");
    }
    sb.append("  <event name=\"example.Mark\"><setting name=\"enabled\">true</setting></event>\n")
        .append("</configuration>\n");
    return sb.toString();
  }

  /** What the recording says, between the workload's two marks where it matters. */
  private static final class Schedule {
    final List<RecordedEvent> events;
    final int procsStart;
    final Instant before;
    final Instant after;
    final Map<String, Integer> counts = new TreeMap<>();

    Schedule(List<RecordedEvent> all, int procsStart) {
      this.procsStart = procsStart;
      Instant b = null;
      Instant a = null;
      for (RecordedEvent e : all) {
        if (e.getEventType().getName().equals("example.Mark")) {
          if (e.getString("phase").equals("before")) {
            b = e.getStartTime();
          } else {
            a = e.getStartTime();
          }
        }
      }
      assertNotNull(b, "no before mark");
      assertNotNull(a, "no after mark");
      before = b;
      after = a;
      events =
          all.stream()
              .filter(e -> e.getEventType().getName().startsWith("gmp4j."))
              .sorted(Comparator.comparing(RecordedEvent::getStartTime))
              .toList();
      for (RecordedEvent e : events) {
        counts.merge(e.getEventType().getName(), 1, Integer::sum);
      }
    }

    boolean inWindow(RecordedEvent e) {
      return !e.getStartTime().isBefore(before) && !e.getStartTime().isAfter(after);
    }

    List<RecordedEvent> window(String type) {
      return events.stream()
          .filter(e -> e.getEventType().getName().equals(type))
          .filter(this::inWindow)
          .toList();
    }

    long windowCount(String type, String field, String value) {
      return window(type).stream().filter(e -> e.getString(field).equals(value)).count();
    }

    /**
     * Exact: the event is committed where the counter counts the same act. Within a bound:
     * preemptions honored, because a hog that lost its P honours the request with no P slice
     * open (no GoRun ends "preempted" for it): at most one per hog hand-off.
     */
    void checkCounts(ChildJvm.Result r) {
      assertEquals(
          delta(r, "/sched/goroutines-created:goroutines"),
          window("gmp4j.GoCreate").size(),
          "GoCreate vs goroutines-created");
      assertEquals(
          delta(r, "/sched/steals:steals"),
          window("gmp4j.RunqSteal").size(),
          "RunqSteal vs steals");
      assertEquals(
          delta(r, "/sched/steals/goroutines:goroutines"),
          window("gmp4j.RunqSteal").stream().mapToLong(e -> e.getInt("count")).sum(),
          "RunqSteal counts vs steals/goroutines");
      assertEquals(
          delta(r, "/sched/preemptions/requested:preemptions"),
          window("gmp4j.PreemptRequest").size(),
          "PreemptRequest vs preemptions/requested");
      long syscallHandoffs = windowCount("gmp4j.ProcHandoff", "reason", "syscall");
      long hogHandoffs = window("gmp4j.ProcHandoff").size() - syscallHandoffs;
      assertEquals(
          delta(r, "/sched/syscalls/handoffs:handoffs"),
          syscallHandoffs,
          "ProcHandoff(syscall) vs syscalls/handoffs");
      assertEquals(
          delta(r, "/sched/preemptions/handoffs:handoffs"),
          hogHandoffs,
          "ProcHandoff(ignoredPreemption, pinned) vs preemptions/handoffs");
      assertTrue(syscallHandoffs >= 1, "the FIFO reads should lose their P");
      assertTrue(hogHandoffs >= 1, "Arrays.sort at one P should lose its P");
      long honored = delta(r, "/sched/preemptions/honored:preemptions");
      long preempted = windowCount("gmp4j.GoRun", "end", "preempted");
      assertTrue(
          preempted <= honored && preempted >= honored - hogHandoffs,
          "GoRun(preempted) "
              + preempted
              + " vs preemptions/honored "
              + honored
              + " (hog hand-offs "
              + hogHandoffs
              + ")");
      assertTrue(honored >= 1, "the hog with polls should honour a request");
      List<RecordedEvent> changes = window("gmp4j.ProcsChange");
      assertEquals(
          delta(r, "/sched/gomaxprocs/changes:changes"),
          changes.size(),
          "ProcsChange vs gomaxprocs/changes");
      assertEquals(
          List.of(procsStart + "->1:api", "1->" + procsStart + ":api"),
          changes.stream()
              .map(e -> e.getInt("old") + "->" + e.getInt("new_") + ":" + e.getString("reason"))
              .toList());
      assertTrue(
          window("gmp4j.GoSyscall").stream().anyMatch(e -> e.getBoolean("lostP")),
          "a FIFO read should end blocked (Go's GoSyscallEndBlocked)");
      assertTrue(
          window("gmp4j.ProcHandoff").stream()
              .filter(e -> !e.getString("reason").equals("syscall"))
              .anyMatch(e -> e.getString("frames").contains("java.util.")),
          "a hog hand-off should name the sort's frames");
      assertTrue(counts.getOrDefault("gmp4j.SchedStats", 0) >= 1, "no SchedStats");
    }

    /**
     * Per goroutine created in the window (so its whole life is recorded): one create, then
     * runs that never overlap, each after the G became runnable (created, unblocked, or stopped
     * runnable: gosched, preempted, a syscall, a hand-off), then one destroy after an exit.
     */
    void checkGoroutines() {
      Map<Long, List<RecordedEvent>> byG = new HashMap<>();
      for (RecordedEvent e : events) {
        if (e.getEventType().getName().startsWith("gmp4j.Go")) {
          byG.computeIfAbsent(e.getLong("goid"), k -> new ArrayList<>()).add(e);
        }
      }
      int checked = 0;
      for (RecordedEvent create : window("gmp4j.GoCreate")) {
        long goid = create.getLong("goid");
        List<RecordedEvent> life = byG.get(goid);
        List<RecordedEvent> creates = of(life, "gmp4j.GoCreate");
        List<RecordedEvent> runs = new ArrayList<>(of(life, "gmp4j.GoRun"));
        List<RecordedEvent> destroys = of(life, "gmp4j.GoDestroy");
        List<RecordedEvent> unblocks = of(life, "gmp4j.GoUnblock");
        List<RecordedEvent> syscalls = of(life, "gmp4j.GoSyscall");
        String who = "G" + goid + " " + describe(life);
        assertEquals(1, creates.size(), who);
        assertFalse(runs.isEmpty(), who + ": never ran");
        runs.sort(Comparator.comparing(RecordedEvent::getStartTime));
        assertFalse(
            runs.get(0).getStartTime().isBefore(create.getStartTime()),
            who + ": ran before it was created");
        for (int i = 0; i + 1 < runs.size(); i++) {
          RecordedEvent run = runs.get(i);
          RecordedEvent next = runs.get(i + 1);
          if (run.getEndTime().isAfter(next.getStartTime())) {
            fail("G" + goid + ": runs overlap: " + brief(run) + " and " + brief(next));
          }
          String end = run.getString("end");
          switch (end) {
            case "block" ->
                assertTrue(
                    between(unblocks, run.getStartTime(), next.getStartTime()),
                    who
                        + ": ran again after a block without an unblock, at "
                        + next.getStartTime());
            case "syscall" ->
                assertTrue(
                    between(syscalls, run.getStartTime(), next.getStartTime()),
                    who + ": a syscall end without a syscall, at " + run.getEndTime());
            case "gosched", "preempted", "handoff" -> {
              // runnable when it stopped
            }
            default -> fail(who + ": run " + i + " ended " + end + " and it ran again");
          }
        }
        RecordedEvent last = runs.get(runs.size() - 1);
        assertEquals("exit", last.getString("end"), who);
        assertEquals(1, destroys.size(), who);
        assertFalse(
            destroys.get(0).getStartTime().isBefore(last.getEndTime()),
            who + ": destroyed before its last run ended");
        checked++;
      }
      assertTrue(checked >= 300, "goroutines checked: " + checked);
    }

    /**
     * Per P: every run's P below GOMAXPROCS for the whole run, and the runs and idle spells of
     * one P never overlap. ProcsChange is committed while the world is stopped, so it splits
     * the runs cleanly. Two syscalls of one P overlap only after a hand-off: the first one lost
     * its P (its exitsyscall may have taken it back from the second, as Go's does). A hand-off
     * falls between the P's runs, never inside one: its time is read before the M it wakes can
     * run the P.
     */
    void checkProcs() {
      TreeMap<Instant, Integer> procs = new TreeMap<>();
      procs.put(Instant.MIN, procsStart);
      for (RecordedEvent e : events) {
        if (e.getEventType().getName().equals("gmp4j.ProcsChange")) {
          procs.put(e.getStartTime(), e.getInt("new_"));
        }
      }
      Map<Integer, List<RecordedEvent>> byP = new TreeMap<>();
      for (RecordedEvent e : events) {
        String type = e.getEventType().getName();
        if (type.equals("gmp4j.GoRun") || type.equals("gmp4j.ProcIdle")) {
          byP.computeIfAbsent(e.getInt("p"), k -> new ArrayList<>()).add(e);
        }
        if (type.equals("gmp4j.GoRun")) {
          int p = e.getInt("p");
          int limit = procs.floorEntry(e.getStartTime()).getValue();
          for (int n : procs.subMap(e.getStartTime(), true, e.getEndTime(), true).values()) {
            limit = Math.min(limit, n);
          }
          assertTrue(
              p >= 0 && p < limit,
              "G" + e.getLong("goid") + " ran on P" + p + " at GOMAXPROCS " + limit + ": " + e);
        }
      }
      for (var entry : byP.entrySet()) {
        List<RecordedEvent> spans = new ArrayList<>(entry.getValue());
        spans.sort(Comparator.comparing(RecordedEvent::getStartTime));
        for (int i = 0; i + 1 < spans.size(); i++) {
          RecordedEvent a = spans.get(i);
          RecordedEvent b = spans.get(i + 1);
          if (a.getEndTime().isAfter(b.getStartTime())) {
            fail("P" + entry.getKey() + ": " + brief(a) + " overlaps " + brief(b));
          }
        }
      }
      Map<Integer, List<RecordedEvent>> syscalls = new TreeMap<>();
      Map<Integer, TreeMap<Instant, RecordedEvent>> runsByStart = new TreeMap<>();
      for (RecordedEvent e : events) {
        String type = e.getEventType().getName();
        if (type.equals("gmp4j.GoSyscall")) {
          syscalls.computeIfAbsent(e.getInt("p"), k -> new ArrayList<>()).add(e);
        } else if (type.equals("gmp4j.GoRun")) {
          runsByStart.computeIfAbsent(e.getInt("p"), k -> new TreeMap<>()).put(e.getStartTime(), e);
        }
      }
      for (var entry : syscalls.entrySet()) {
        List<RecordedEvent> l = entry.getValue();
        l.sort(Comparator.comparing(RecordedEvent::getStartTime));
        Instant end = Instant.MIN; // the latest end so far, and its syscall
        RecordedEvent open = null;
        for (RecordedEvent e : l) {
          if (open != null && end.isAfter(e.getStartTime()) && !open.getBoolean("lostP")) {
            fail(
                "P"
                    + entry.getKey()
                    + ": syscalls overlap, the first kept its P: "
                    + brief(open)
                    + " "
                    + open.getLong("goid")
                    + " and "
                    + brief(e)
                    + " "
                    + e.getLong("goid"));
          }
          if (e.getEndTime().isAfter(end)) {
            end = e.getEndTime();
            open = e;
          }
        }
      }
      for (RecordedEvent h : events) {
        if (!h.getEventType().getName().equals("gmp4j.ProcHandoff")) {
          continue;
        }
        // 2us either side: GoRun's times are System.nanoTime mapped onto JFR's clock, which on
        // Linux is off by tens of ns (Trace's calibration), and elsewhere by more
        TreeMap<Instant, RecordedEvent> runs = runsByStart.get(h.getInt("p"));
        var run = runs == null ? null : runs.lowerEntry(h.getStartTime().minusNanos(2_000));
        if (run != null && run.getValue().getEndTime().isAfter(h.getStartTime().plusNanos(2_000))) {
          fail(
              "P"
                  + h.getInt("p")
                  + ": a hand-off inside a run: "
                  + brief(h)
                  + " "
                  + h.getString("reason")
                  + " to M"
                  + h.getInt("toM")
                  + ", "
                  + brief(run.getValue()));
        }
      }
    }

    /**
     * The counts, the window, and the events just outside it (up to 20, with their distance from
     * the nearer mark): a count that differs by one is most often an act at a window's edge.
     */
    String summary() {
      String outside =
          events.stream()
              .filter(e -> !inWindow(e))
              .filter(
                  e ->
                      Duration.between(e.getStartTime(), before).abs().toMillis() < 1_000
                          || Duration.between(after, e.getStartTime()).abs().toMillis() < 1_000)
              .limit(20)
              .map(
                  e ->
                      brief(e)
                          + (e.getStartTime().isBefore(before)
                              ? " "
                                  + Duration.between(e.getStartTime(), before).toNanos()
                                  + "ns before"
                              : " "
                                  + Duration.between(after, e.getStartTime()).toNanos()
                                  + "ns after"))
              .collect(Collectors.joining("\n  "));
      return "events "
          + counts
          + " window "
          + Duration.between(before, after).toMillis()
          + "ms"
          + (outside.isEmpty() ? "" : "\noutside the window, within 1 s of it:\n  " + outside);
    }
  }

  private static long delta(ChildJvm.Result r, String metric) {
    String v = r.value("delta." + metric);
    assertNotNull(v, "no delta for " + metric);
    return Long.parseLong(v);
  }

  private static List<RecordedEvent> of(List<RecordedEvent> life, String type) {
    return life.stream().filter(e -> e.getEventType().getName().equals(type)).toList();
  }

  private static boolean between(List<RecordedEvent> es, Instant from, Instant to) {
    return es.stream()
        .anyMatch(e -> !e.getStartTime().isBefore(from) && !e.getStartTime().isAfter(to));
  }

  private static String brief(RecordedEvent e) {
    String type = e.getEventType().getName();
    return type.substring(type.indexOf('.') + 1)
        + "["
        + e.getStartTime()
        + " +"
        + e.getDuration().toNanos()
        + "ns"
        + (type.equals("gmp4j.GoRun")
            ? " G" + e.getLong("goid") + " M" + e.getInt("m") + " " + e.getString("end")
            : type.equals("gmp4j.PreemptRequest")
                ? " G" + e.getLong("goid") + " P" + e.getInt("p") + " " + e.getString("reason")
                : "")
        + " on "
        + (e.getThread() == null ? "?" : e.getThread().getJavaName())
        + "]";
  }

  private static String describe(List<RecordedEvent> life) {
    return life.stream()
        .sorted(Comparator.comparing(RecordedEvent::getStartTime))
        .limit(40)
        .map(JfrIT::brief)
        .collect(Collectors.joining(", "));
  }

  /** Runs the JDK's {@code jfr} tool; returns its output, failing on a non-zero exit. */
  private static String jfrTool(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "jfr").toString());
    cmd.addAll(Arrays.asList(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Thread drain =
        Thread.ofPlatform()
            .daemon()
            .start(
                () -> {
                  try (var in = p.getInputStream()) {
                    in.transferTo(out);
                  } catch (IOException ignored) {
                    // the tool died; its exit code says so
                  }
                });
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "jfr " + String.join(" ", args) + " hung");
    drain.join(5_000);
    String text = out.toString(StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), "jfr " + String.join(" ", args) + ":\n" + text);
    return text;
  }

  /**
   * JMC's parser loads the file and shows every gmp4j type with its label and category, and
   * the fields with their units: durations as timespans, counts as numbers.
   */
  private static void checkJmc(Path rec) throws Exception {
    IItemCollection items = JfrLoaderToolkit.loadEvents(rec.toFile());
    StringBuilder shown = new StringBuilder();
    try {
      checkJmcTypes(items, shown);
    } finally {
      System.out.print("JfrIT: JMC 9.1 shows\n" + shown);
    }
  }

  /** A count: JMC's NUMBER (a unit) or RAW_NUMBER (a plain long, as @Unsigned ids are). */
  private static void assertNumber(ContentType<?> t, String what) {
    assertTrue(t == UnitLookup.NUMBER || t == UnitLookup.RAW_NUMBER, what + ": " + t);
  }

  private static void checkJmcTypes(IItemCollection items, StringBuilder shown)
      throws ReflectiveOperationException {
    Map<String, IItemIterable> byType = new HashMap<>();
    for (IItemIterable it : items) {
      byType.putIfAbsent(it.getType().getIdentifier(), it);
    }
    for (var t : TYPES.entrySet()) {
      IItemIterable it = byType.get(t.getKey());
      assertNotNull(it, "JMC did not load " + t.getKey());
      IType<?> type = it.getType();
      assertEquals(t.getValue()[0], type.getName(), t.getKey());
      assertFalse(type.getDescription() == null || type.getDescription().isEmpty(), t.getKey());
      String[] category = jmcCategory(it);
      String[] expected =
          t.getValue().length == 1
              ? new String[] {"GMP Scheduler"}
              : new String[] {"GMP Scheduler", t.getValue()[1]};
      assertEquals(List.of(expected), List.of(category), t.getKey() + " category");
      Map<String, ContentType<?>> units = new HashMap<>();
      Map<String, String> labels = new HashMap<>();
      for (Map.Entry<IAccessorKey<?>, ? extends IDescribable> k :
          type.getAccessorKeys().entrySet()) {
        units.put(k.getKey().getIdentifier(), k.getKey().getContentType());
        labels.put(k.getKey().getIdentifier(), k.getValue().getName());
      }
      shown
          .append(t.getKey())
          .append(" \"")
          .append(type.getName())
          .append("\" ")
          .append(String.join("/", category))
          .append(": ")
          .append(
              labels.keySet().stream()
                  .filter(f -> !f.equals("stackTrace"))
                  .sorted()
                  .map(f -> f + "(" + units.get(f).getIdentifier() + ")")
                  .collect(Collectors.joining(" ")))
          .append('\n');
      switch (t.getKey()) {
        case "gmp4j.GoRun" -> {
          assertEquals(UnitLookup.TIMESPAN, units.get("schedLatency"), "GoRun.schedLatency");
          assertEquals(UnitLookup.TIMESPAN, units.get("duration"), "GoRun.duration");
          assertEquals("Scheduling Latency", labels.get("schedLatency"));
          assertNumber(units.get("goid"), "GoRun.goid");
          assertEquals(UnitLookup.PLAIN_TEXT, units.get("end"), "GoRun.end");
          assertEquals(UnitLookup.FLAG, units.get("runnext"), "GoRun.runnext");
        }
        case "gmp4j.PreemptRequest" ->
            assertEquals(UnitLookup.TIMESPAN, units.get("sliceRan"), "sliceRan");
        case "gmp4j.GoSyscall", "gmp4j.ProcIdle" ->
            assertEquals(UnitLookup.TIMESPAN, units.get("duration"), t.getKey());
        case "gmp4j.GoCreate" ->
            assertEquals(UnitLookup.THREAD, units.get("thread"), "GoCreate.thread");
        case "gmp4j.SchedStats" ->
            assertNumber(units.get("goroutinesRunnable"), "SchedStats.goroutinesRunnable");
        default -> assertNotNull(units.get("startTime"), t.getKey());
      }
    }
  }

  /**
   * The category path that JMC's Event Browser files the type under. JMC 9.1 keeps it in its
   * EventArray, which the public IItemIterable does not expose.
   */
  private static String[] jmcCategory(IItemIterable it) throws ReflectiveOperationException {
    Field events = it.getClass().getDeclaredField("events");
    events.setAccessible(true);
    Object array = events.get(it);
    return (String[]) array.getClass().getMethod("getTypeCategory").invoke(array);
  }
}
