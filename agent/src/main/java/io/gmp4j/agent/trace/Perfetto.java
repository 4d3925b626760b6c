package io.gmp4j.agent.trace;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * {@code gmp4j trace perfetto}: a recording as Chrome trace-event JSON, laid out as {@code go
 * tool trace}'s "View trace by proc" ({@code cmd/trace/procgen.go}, the Catapult viewer's format
 * in {@code internal/trace/traceviewer/format}), for ui.perfetto.dev and chrome://tracing.
 *
 * <h2>Implementation overview: 'Proc lanes'</h2>
 *
 * <pre>
 *   pid 0 "PROCS"  tid N = P N, named "Proc N"
 *     X  a slice per GoRun (name "G12 reader0", args: end reason, wait reason, M, runnext,
 *        latency); a slice per GoSyscall from its start until the P was handed off (or the
 *        syscall ended), as Go draws a syscall on its P until ProcStop
 *     i  instants (s=t, on the P): steal, preemption request, hand-off; (s=g) GOMAXPROCS change
 *     s/f flow arrows, id per arrow: from the waker's slice at a GoUnblock to the woken G's
 *        next slice (bp=e: bound to the slice that encloses the arrow's end)
 *   pid 1 "STATS"
 *     C  Goroutines {Running, Runnable}, Threads {Running, InSyscall}, as Go's counters;
 *        "runq Proc N": Gs runnable that ran next on P N; "Run queues (SchedStats)" {global,
 *        local}, the runtime's own gauges once a second
 * </pre>
 *
 * <ol>
 *   <li>Every event of the output is built in memory with its time, then sorted: JFR orders
 *       nothing, and Perfetto's JSON importer wants the slices of a lane in start order to
 *       nest them.
 *   <li>Slices of one lane must nest or be disjoint (Perfetto drops or misdraws a partial
 *       overlap). GoRun slices of one P never overlap (the runtime ends a slice before its P
 *       changes hands; JfrIT checks it), so they are written as recorded, and a test can catch
 *       a runtime that breaks that. The derived syscall slices are cut at the P's next run,
 *       and at its next syscall slice: two runs can hold several syscalls between them (the P
 *       was handed off and its new M's G entered a syscall of its own).
 *   <li>Counters are a sweep over +1/-1 steps; steps at the same nanosecond give one sample.
 *       Per-P run-queue lengths are not recorded by gmp4j; "runq Proc N" counts a G in the
 *       queue of the P it ran on next, from the time it became runnable (its run's
 *       schedLatency), so a stolen G counts at the thief.
 *   <li>The output is split into parts of about {@link #SPLIT_BYTES} (Go's own splitting size:
 *       "the trace viewer can hardly handle more"); each part is a whole trace with the lane
 *       metadata, named {@code <name>.0.json}, {@code <name>.1.json}, ... Arrows between parts
 *       are lost. One part keeps the name given.
 * </ol>
 *
 * Rejected: Perfetto's protobuf TrackEvent format. It scales better, but needs the proto
 * classes (protobuf-java, 2 MB in the agent jar) and chrome://tracing does not read it.
 */
final class Perfetto {
  static final long SPLIT_BYTES = 100L * 1000 * 1000;

  static final int PROCS_PID = 0;
  static final int STATS_PID = 1;

  /** One output event at time {@code t} (ns since the epoch), in {@code seq} order for ties. */
  private record Ev(long t, int seq, Consumer<JsonWriter> body) {}

  private final TraceData d;
  private final long split;
  private final List<Ev> events = new ArrayList<>();
  private int seq;

  Perfetto(TraceData d, long split) {
    this.d = d;
    this.split = split;
  }

  /** Writes the trace to {@code o} (or its parts); returns the files written. */
  List<Path> write(Path o) throws IOException {
    build();
    events.sort(Comparator.comparingLong(Ev::t).thenComparingInt(Ev::seq));
    List<Path> parts = new ArrayList<>();
    Path dir = o.toAbsolutePath().getParent();
    String base = o.getFileName().toString();
    String stem = base.endsWith(".json") ? base.substring(0, base.length() - 5) : base;
    int i = 0;
    try {
      while (i < events.size() || parts.isEmpty()) {
        Path part = dir.resolve(stem + "." + parts.size() + ".json.tmp");
        parts.add(part);
        try (Writer w =
            new BufferedWriter(Files.newBufferedWriter(part, StandardCharsets.UTF_8), 1 << 16)) {
          JsonWriter j = new JsonWriter(w, true);
          j.beginObject().field("displayTimeUnit", "ns");
          j.key("otherData")
              .beginObject()
              .field("source", "gmp4j trace perfetto")
              .field("part", (long) parts.size() - 1)
              .endObject();
          j.key("traceEvents").beginArray();
          metadata(j);
          while (i < events.size() && j.written() < split) {
            events.get(i++).body().accept(j);
          }
          j.endArray().endObject();
          j.flush();
        }
      }
    } catch (IOException | UncheckedIOException e) {
      for (Path p : parts) {
        Files.deleteIfExists(p);
      }
      throw e instanceof UncheckedIOException u ? u.getCause() : (IOException) e;
    }
    List<Path> out = new ArrayList<>();
    for (int k = 0; k < parts.size(); k++) {
      Path target = parts.size() == 1 ? o : dir.resolve(stem + "." + k + ".json");
      Files.move(parts.get(k), target, StandardCopyOption.REPLACE_EXISTING);
      out.add(target);
    }
    return out;
  }

  /** Microseconds since the window's start, with nanosecond precision. */
  private double us(long t) {
    return (t - d.first) / 1000.0;
  }

  private void add(long t, Consumer<JsonWriter> body) {
    events.add(new Ev(t, seq++, body));
  }

  private void metadata(JsonWriter j) {
    meta(j, "process_name", PROCS_PID, 0, "name", "PROCS");
    meta(j, "process_sort_index", PROCS_PID, 0, "sort_index", 0);
    meta(j, "process_name", STATS_PID, 0, "name", "STATS");
    meta(j, "process_sort_index", STATS_PID, 0, "sort_index", 1);
    for (int p : d.procs()) {
      meta(j, "thread_name", PROCS_PID, p, "name", "Proc " + p);
      meta(j, "thread_sort_index", PROCS_PID, p, "sort_index", p);
    }
  }

  private static void meta(JsonWriter j, String name, int pid, int tid, String k, Object v) {
    j.beginObject()
        .field("name", name)
        .field("ph", "M")
        .field("pid", (long) pid)
        .field("tid", (long) tid)
        .key("args")
        .beginObject();
    if (v instanceof String s) {
      j.field(k, s);
    } else {
      j.field(k, ((Integer) v).longValue());
    }
    j.endObject().endObject();
  }

  private void build() {
    slices();
    instants();
    flows();
    counters();
  }

  /** A slice on P lane {@code p}: start, end (ns), and its name and args. */
  private record Slice(
      int p, long start, long end, String name, String cat, Consumer<JsonWriter> args) {}

  private void slices() {
    Map<Integer, List<Slice>> lanes = new TreeMap<>();
    for (TraceData.Run r : d.runs) {
      String label = d.name(r.goid()).isEmpty() ? d.group(r.goid()) : d.name(r.goid());
      lanes
          .computeIfAbsent(r.p(), k -> new ArrayList<>())
          .add(
              new Slice(
                  r.p(),
                  r.start(),
                  r.end(),
                  "G" + r.goid() + " " + label,
                  "run",
                  j -> {
                    j.field("goid", r.goid())
                        .field("group", d.group(r.goid()))
                        .field("end", r.endReason())
                        .field("m", (long) r.m())
                        .field("runnext", r.runnext())
                        .field("schedLatencyUs", r.latency() / 1000.0);
                    if (!r.waitReason().isEmpty()) {
                      j.field("waitReason", r.waitReason());
                    }
                  }));
    }
    Map<Integer, NavigableMap<Long, TraceData.Handoff>> sysHandoffs = new HashMap<>();
    for (TraceData.Handoff h : d.handoffs) {
      sysHandoffs.computeIfAbsent(h.p(), k -> new TreeMap<>()).put(h.time(), h);
    }
    List<Slice> syscalls = new ArrayList<>();
    for (TraceData.Syscall s : d.syscalls) {
      long end = s.end();
      if (s.lostP()) {
        NavigableMap<Long, TraceData.Handoff> hs = sysHandoffs.get(s.p());
        Map.Entry<Long, TraceData.Handoff> h = hs == null ? null : hs.ceilingEntry(s.start());
        if (h != null && h.getKey() < end) {
          end = h.getKey();
        }
      }
      syscalls.add(
          new Slice(
              s.p(),
              s.start(),
              end,
              "syscall G" + s.goid(),
              "syscall",
              j ->
                  j.field("goid", s.goid())
                      .field("group", d.group(s.goid()))
                      .field("m", (long) s.m())
                      .field("lostP", s.lostP())
                      .field("syscallUs", (s.end() - s.start()) / 1000.0)));
    }
    // fit each syscall slice between the runs of its lane (step 2): it starts where the
    // run that entered it ended (the two stamps are taken apart) and ends by the next run
    Map<Integer, List<Slice>> fitted = new HashMap<>();
    for (Slice s : syscalls) {
      List<Slice> lane = lanes.getOrDefault(s.p(), List.of()); // runs only, in start order
      long start = s.start();
      long end = s.end();
      int lo = 0;
      int hi = lane.size() - 1;
      int before = -1;
      while (lo <= hi) {
        int mid = (lo + hi) >>> 1;
        if (lane.get(mid).start() <= start) {
          before = mid;
          lo = mid + 1;
        } else {
          hi = mid - 1;
        }
      }
      if (before >= 0 && lane.get(before).end() > start) {
        start = lane.get(before).end();
      }
      if (before + 1 < lane.size()) {
        end = Math.min(end, lane.get(before + 1).start());
      }
      if (end > start) {
        long st = start;
        long en = end;
        fitted
            .computeIfAbsent(s.p(), k -> new ArrayList<>())
            .add(new Slice(s.p(), st, en, s.name(), s.cat(), s.args()));
      }
    }
    // A P is in one syscall at a time: a syscall that starts on the lane ends the one before
    // (whose G lost the P between the two runs; a recording may lack the runs or hand-off
    // between, or come from a gmp4j that stamped hand-offs after the new M's first run)
    fitted.forEach(
        (p, l) -> {
          l.sort(Comparator.comparingLong(Slice::start));
          List<Slice> lane = lanes.computeIfAbsent(p, k -> new ArrayList<>());
          for (int i = 0; i < l.size(); i++) {
            Slice s = l.get(i);
            long end = i + 1 < l.size() ? Math.min(s.end(), l.get(i + 1).start()) : s.end();
            if (end > s.start()) {
              lane.add(new Slice(s.p(), s.start(), end, s.name(), s.cat(), s.args()));
            }
          }
        });
    for (List<Slice> lane : lanes.values()) {
      for (Slice s : lane) {
        add(
            s.start(),
            j -> {
              j.beginObject()
                  .field("name", s.name())
                  .field("cat", s.cat())
                  .field("ph", "X")
                  .field("ts", us(s.start()))
                  .field("dur", (s.end() - s.start()) / 1000.0)
                  .field("pid", (long) PROCS_PID)
                  .field("tid", (long) s.p());
              j.key("args").beginObject();
              s.args().accept(j);
              j.endObject().endObject();
            });
      }
    }
  }

  private void instant(long t, int p, String name, String cat, Consumer<JsonWriter> args) {
    add(
        t,
        j -> {
          j.beginObject()
              .field("name", name)
              .field("cat", cat)
              .field("ph", "i")
              .field("ts", us(t))
              .field("pid", (long) PROCS_PID);
          if (p >= 0) {
            j.field("tid", (long) p).field("s", "t");
          } else {
            j.field("tid", 0L).field("s", "g");
          }
          j.key("args").beginObject();
          args.accept(j);
          j.endObject().endObject();
        });
  }

  private void instants() {
    for (TraceData.Steal s : d.steals) {
      instant(
          s.time(),
          s.thief(),
          "steal " + s.count() + " from Proc " + s.victim(),
          "steal",
          j ->
              j.field("victimP", (long) s.victim())
                  .field("count", (long) s.count())
                  .field("runnext", s.runnext()));
    }
    for (TraceData.Preempt p : d.preempts) {
      instant(
          p.time(),
          Math.max(0, p.p()),
          "preempt G" + p.goid() + " (" + p.reason() + ")",
          "preempt",
          j ->
              j.field("goid", p.goid())
                  .field("reason", p.reason())
                  .field("sliceRanUs", p.sliceRan() / 1000.0));
    }
    for (TraceData.Handoff h : d.handoffs) {
      instant(
          h.time(),
          h.p(),
          "hand-off (" + h.reason() + ") G" + h.goid(),
          "handoff",
          j ->
              j.field("reason", h.reason())
                  .field("goid", h.goid())
                  .field("fromM", (long) h.fromM())
                  .field("toM", (long) h.toM())
                  .field("frames", h.frames()));
    }
    for (TraceData.ProcsChange c : d.procsChanges) {
      instant(
          c.time(),
          -1,
          "GOMAXPROCS " + c.old() + " -> " + c.nu(),
          "procs",
          j ->
              j.field("old", (long) c.old())
                  .field("new", (long) c.nu())
                  .field("reason", c.reason()));
    }
  }

  private void flows() {
    Map<Long, List<TraceData.Run>> byG = new HashMap<>();
    for (TraceData.Run r : d.runs) {
      byG.computeIfAbsent(r.goid(), k -> new ArrayList<>()).add(r);
    }
    long id = 0;
    for (TraceData.Unblock u : d.unblocks) {
      if (u.by() == 0) {
        continue; // a platform thread (timer, poller) has no slice to start from
      }
      TraceData.Run from = enclosing(byG.get(u.by()), u.time());
      TraceData.Run to = next(byG.get(u.goid()), u.time());
      if (from == null || to == null) {
        continue;
      }
      long flow = ++id;
      add(
          u.time(),
          j ->
              j.beginObject()
                  .field("name", "unblock")
                  .field("cat", "flow")
                  .field("ph", "s")
                  .field("id", flow)
                  .field("ts", us(u.time()))
                  .field("pid", (long) PROCS_PID)
                  .field("tid", (long) from.p())
                  .endObject());
      add(
          to.start(),
          j ->
              j.beginObject()
                  .field("name", "unblock")
                  .field("cat", "flow")
                  .field("ph", "f")
                  .field("bp", "e")
                  .field("id", flow)
                  .field("ts", us(to.start()))
                  .field("pid", (long) PROCS_PID)
                  .field("tid", (long) to.p())
                  .endObject());
    }
  }

  /** The run of the list (sorted by start) that holds time t, or null. */
  private static TraceData.Run enclosing(List<TraceData.Run> runs, long t) {
    if (runs == null) {
      return null;
    }
    int i = lastStartingBy(runs, t);
    return i >= 0 && runs.get(i).end() >= t ? runs.get(i) : null;
  }

  /** The first run of the list that starts at or after t, or null. */
  private static TraceData.Run next(List<TraceData.Run> runs, long t) {
    if (runs == null) {
      return null;
    }
    int i = lastStartingBy(runs, t - 1) + 1;
    return i < runs.size() ? runs.get(i) : null;
  }

  private static int lastStartingBy(List<TraceData.Run> runs, long t) {
    int lo = 0;
    int hi = runs.size() - 1;
    int found = -1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      if (runs.get(mid).start() <= t) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  private void counters() {
    // Goroutines {Running, Runnable} and Threads {Running, InSyscall}: one sweep each
    TreeMap<Long, long[]> g = new TreeMap<>();
    for (TraceData.Run r : d.runs) {
      g.computeIfAbsent(r.start(), k -> new long[2])[0]++;
      g.computeIfAbsent(r.end(), k -> new long[2])[0]--;
      if (r.latency() > 0) {
        g.computeIfAbsent(r.start() - r.latency(), k -> new long[2])[1]++;
        g.computeIfAbsent(r.start(), k -> new long[2])[1]--;
      }
    }
    sweep("Goroutines", g, "Running", "Runnable");
    TreeMap<Long, long[]> t = new TreeMap<>();
    for (TraceData.Run r : d.runs) {
      t.computeIfAbsent(r.start(), k -> new long[2])[0]++;
      t.computeIfAbsent(r.end(), k -> new long[2])[0]--;
    }
    for (TraceData.Syscall s : d.syscalls) {
      t.computeIfAbsent(s.start(), k -> new long[2])[1]++;
      t.computeIfAbsent(s.end(), k -> new long[2])[1]--;
    }
    sweep("Threads", t, "Running", "InSyscall");
    Map<Integer, TreeMap<Long, long[]>> q = new TreeMap<>();
    for (TraceData.Run r : d.runs) {
      if (r.latency() > 0) {
        TreeMap<Long, long[]> m = q.computeIfAbsent(r.p(), k -> new TreeMap<>());
        m.computeIfAbsent(r.start() - r.latency(), k -> new long[1])[0]++;
        m.computeIfAbsent(r.start(), k -> new long[1])[0]--;
      }
    }
    q.forEach((p, m) -> sweep("runq Proc " + p, m, "Runnable"));
    for (TraceData.Stats s : d.stats) {
      Long global = s.values().get("runqueueGlobal");
      Long local = s.values().get("runqueueLocal");
      if (global != null && local != null) {
        add(
            s.time(),
            j ->
                j.beginObject()
                    .field("name", "Run queues (SchedStats)")
                    .field("ph", "C")
                    .field("ts", us(s.time()))
                    .field("pid", (long) STATS_PID)
                    .key("args")
                    .beginObject()
                    .field("global", global)
                    .field("local", local)
                    .endObject()
                    .endObject());
      }
    }
  }

  /** A counter track from +/- steps: one C event per instant at which a value changes. */
  private void sweep(String name, TreeMap<Long, long[]> steps, String... series) {
    long[] now = new long[series.length];
    for (var e : steps.entrySet()) {
      long[] step = e.getValue();
      boolean changed = false;
      for (int i = 0; i < now.length; i++) {
        now[i] += step[i];
        changed |= step[i] != 0;
      }
      if (!changed) {
        continue;
      }
      long[] v = Arrays.copyOf(now, now.length);
      long at = e.getKey();
      add(
          at,
          j -> {
            j.beginObject()
                .field("name", name)
                .field("ph", "C")
                .field("ts", us(at))
                .field("pid", (long) STATS_PID)
                .key("args")
                .beginObject();
            for (int i = 0; i < series.length; i++) {
              j.field(series[i], Math.max(0, v[i]));
            }
            j.endObject().endObject();
          });
    }
  }
}
