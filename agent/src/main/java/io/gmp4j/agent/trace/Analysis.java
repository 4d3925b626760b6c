package io.gmp4j.agent.trace;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * What {@code gmp4j trace summary} and {@code check} report: {@code go tool trace}'s goroutine
 * analysis ({@code internal/trace/summary.go}) and its scheduler-latency profile ({@code
 * cmd/trace/pprof.go computePprofSched}) over a {@link TraceData}, with percentiles where Go
 * gives sums (golang/go#29103).
 *
 * <h2>Implementation overview: 'Goroutine time'</h2>
 *
 * Go's summary walks every G's state transitions and charges the time between two to the state
 * it left: Running to ExecTime, Runnable to SchedWaitTime, Waiting to BlockTimeByReason, Syscall
 * to SyscallTime (and the part after the P was handed off to SyscallBlockTime). gmp4j records
 * runs, not transitions, so the same split comes from each G's runs in time order:
 *
 * <ol>
 *   <li>A run (GoRun) is exec time.
 *   <li>Its {@code schedLatency} is the runnable time before it (the runtime measures it from
 *       the moment the G was queued), charged to sched wait, except for a run that resumes on
 *       the same P after a syscall (latency 0 by definition: no scheduling happened).
 *   <li>After a run that ended {@code block}: the gap to the next run, less that run's latency,
 *       is block time, under the run's wait reason ("unknown" without one).
 *   <li>A GoSyscall is syscall time; with {@code lostP}, the part after the P's {@code syscall}
 *       ProcHandoff (the same P, inside the call) is syscall-blocked time, Go's
 *       SyscallBlockTime.
 *   <li>After a run that ended {@code handoff} (sysmon took the P from a goroutine that kept
 *       it past its slice without polling), the goroutine runs on, on its M, with no P and so
 *       with no GoRun: the time to its next run (less that run's latency) or to its GoDestroy
 *       is "off-P" time. Go has no such state (its hogs are preempted by signal). It is shown
 *       beside the run time, not in it: the runs are what the Ps did.
 * </ol>
 *
 * Rejected: rebuilding Go's state machine from GoUnblock instants. They are off in gmp4j.jfc,
 * and a run's own latency field is measured by the runtime at the queue, which the gap between
 * an unblock and a run is not (the unblock is timed before the G is queued).
 *
 * <h3>'Latency sources'</h3>
 *
 * Go attributes each runnable wait to the stack of the transition into Runnable. Stacks are off
 * in gmp4j's settings, so the source is the transition itself: created; unblocked (by a
 * goroutine or a platform thread, into runnext, the local or the global queue, from the GoUnblock
 * just before the run when the recording has them); gosched; preempted; handed off (the P was
 * taken from it); or a syscall that lost its P.
 *
 * <p>Caveat: with gmp4j.jfc, GoRun has a 10 ms threshold, so short runs are missing and every
 * number below is about long runs only; {@link #warnings} says so.
 */
final class Analysis {
  /** Per goroutine, what it spent where. */
  static final class G {
    final long goid;
    final String group;
    long exec;
    long schedWait;
    long syscall;
    long syscallBlocked;

    /** Ran on, without a P, after sysmon handed its P off (see step 5). */
    long offP;

    int runs;
    long longestRun;
    final Map<String, Long> block = new TreeMap<>();

    G(long goid, String group) {
      this.goid = goid;
      this.group = group;
    }

    long blockTotal() {
      return block.values().stream().mapToLong(Long::longValue).sum();
    }

    /** What it ran, with and without a P. */
    long ran() {
      return exec + offP;
    }
  }

  /** A distribution: count, sum and the percentiles of its values (ns or counts). */
  record Dist(long count, long sum, long p50, long p90, long p99, long max) {
    static Dist of(long[] v) {
      if (v.length == 0) {
        return new Dist(0, 0, 0, 0, 0, 0);
      }
      long[] s = v.clone();
      Arrays.sort(s);
      long sum = 0;
      for (long x : s) {
        sum += x;
      }
      return new Dist(s.length, sum, pct(s, 50), pct(s, 90), pct(s, 99), s[s.length - 1]);
    }

    /** Nearest rank: the smallest value with at least p% of the values at or below it. */
    static long pct(long[] sorted, double p) {
      int rank = (int) Math.ceil(p / 100 * sorted.length);
      return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }
  }

  /** A goroutine group's stats: sums and per-goroutine (or per-run) distributions. */
  record Group(
      String name,
      int goroutines,
      int runs,
      Dist exec,
      Dist latency,
      Dist schedWait,
      Map<String, Long> block,
      Dist syscall,
      long syscallBlocked,
      long offP) {
    long blockTotal() {
      return block.values().stream().mapToLong(Long::longValue).sum();
    }
  }

  /** One scheduling: a run and how long it waited, with the source of the wait. */
  record Latency(long latency, String source, long goid, int p, long at) {}

  /** A goroutine that ignored preemption (or blocked its M while pinned): a hog hand-off. */
  record Ignored(long goid, String group, String reason, int times, String frames) {}

  /** Per P: runs, run time, idle time and time left in a syscall, over the window. */
  record Proc(int p, int runs, long busy, long idle, long syscall) {}

  final TraceData data;
  final List<String> warnings = new ArrayList<>();
  final Map<Long, G> goroutines = new LinkedHashMap<>();
  final List<Group> groups = new ArrayList<>();
  final List<Latency> latencies = new ArrayList<>();

  /** The scheduling latencies, sorted ascending. */
  long[] latencySorted;

  Dist latency;

  /** By source, sorted by p99 descending. */
  final Map<String, Dist> latencyBySource = new LinkedHashMap<>();

  final List<Proc> procs = new ArrayList<>();
  final List<Ignored> ignored = new ArrayList<>();
  final Map<String, Long> handoffsByReason = new TreeMap<>();
  final Map<String, Long> preemptsByReason = new TreeMap<>();
  long stolenGoroutines;
  long schedulings;

  Analysis(TraceData data) {
    this.data = data;
    settingsWarnings();
    goroutineTime();
    groups();
    latencySources();
    procs();
    events();
  }

  double seconds() {
    return data.span() / 1e9;
  }

  /** Goroutines stolen per scheduling, in percent (0 when nothing was scheduled). */
  double stealRatio() {
    return schedulings == 0 ? 0 : 100.0 * stolenGoroutines / schedulings;
  }

  long handoffs() {
    return data.handoffs.size();
  }

  /** Hog hand-offs: sysmon took the P from a goroutine that kept it past its slice. */
  long preemptionsIgnored() {
    return data.handoffs.stream().filter(h -> !h.reason().equals("syscall")).count();
  }

  /**
   * GoRun had a threshold: then the runtime measures schedLatency only for the readyings that
   * take Go's 1-in-8 tracking stamp (Trace.latencySampled), and a 0 means "not measured".
   */
  private boolean runThresholded;

  private void settingsWarnings() {
    String t = data.threshold("gmp4j.GoRun");
    if (t != null && !t.matches("0\\s*[a-z]*")) {
      runThresholded = true;
      warnings.add(
          "gmp4j.GoRun had a threshold of "
              + t
              + " in this recording: shorter runs"
              + " are missing, so run, wait and latency numbers are about long runs only, and"
              + " their latency is measured for one readying in eight (record with"
              + " jfr.settings=detail for all of them)");
    }
    if (!data.recorded("gmp4j.GoRun")) {
      warnings.add("gmp4j.GoRun was not recorded: no run, wait or latency numbers");
    }
    for (String type : List.of("gmp4j.GoCreate", "gmp4j.RunqSteal", "gmp4j.GoSyscall")) {
      if (!data.recorded(type)) {
        warnings.add(
            type
                + " was not recorded"
                + switch (type) {
                  case "gmp4j.GoCreate" -> ": goroutines are not named by group";
                  case "gmp4j.RunqSteal" -> ": no steal numbers";
                  default -> ": no syscall time";
                });
      }
    }
  }

  private G g(long goid) {
    return goroutines.computeIfAbsent(goid, id -> new G(id, data.group(id)));
  }

  private void goroutineTime() {
    for (TraceData.Create c : data.creates) {
      g(c.goid());
    }
    Map<Long, List<TraceData.Run>> byG = new HashMap<>();
    for (TraceData.Run r : data.runs) {
      byG.computeIfAbsent(r.goid(), k -> new ArrayList<>()).add(r);
    }
    Map<Long, List<TraceData.Syscall>> sysByG = new HashMap<>();
    for (TraceData.Syscall s : data.syscalls) {
      sysByG.computeIfAbsent(s.goid(), k -> new ArrayList<>()).add(s);
    }
    Map<Integer, NavigableMap<Long, TraceData.Handoff>> sysHandoffs = new HashMap<>();
    for (TraceData.Handoff h : data.handoffs) {
      if (h.reason().equals("syscall")) {
        sysHandoffs.computeIfAbsent(h.p(), k -> new TreeMap<>()).put(h.time(), h);
      }
    }
    Map<Long, List<TraceData.Unblock>> unblocksByG = new HashMap<>();
    for (TraceData.Unblock u : data.unblocks) {
      unblocksByG.computeIfAbsent(u.goid(), k -> new ArrayList<>()).add(u);
    }
    Map<Long, Long> destroyedAt = new HashMap<>();
    for (TraceData.Destroy x : data.destroys) {
      destroyedAt.putIfAbsent(x.goid(), x.time());
    }
    Map<Long, Long> createdAt = new HashMap<>();
    for (TraceData.Create c : data.creates) {
      createdAt.putIfAbsent(c.goid(), c.time());
    }
    for (var e : byG.entrySet()) {
      G g = g(e.getKey());
      List<TraceData.Run> runs = e.getValue(); // sorted: data.runs is
      List<TraceData.Syscall> sys = sysByG.getOrDefault(e.getKey(), List.of());
      List<TraceData.Unblock> ubs = unblocksByG.getOrDefault(e.getKey(), List.of());
      int si = 0;
      int ui = 0;
      TraceData.Run prev = null;
      for (TraceData.Run r : runs) {
        long d = r.end() - r.start();
        g.exec += d;
        g.runs++;
        g.longestRun = Math.max(g.longestRun, d);
        String source;
        if (prev == null) {
          source = createdAt.containsKey(r.goid()) ? "created" : "runnable before the window";
        } else {
          source =
              switch (prev.endReason()) {
                case "block" -> "unblocked";
                case "gosched" -> "gosched";
                case "preempted" -> "preempted";
                case "handoff" -> "handed off (ignored preemption)";
                case "syscall" -> "syscall";
                default -> prev.endReason();
              };
        }
        if (source.equals("syscall")) {
          // the syscall between prev and r: a resume on the same P, or a wait for a new one
          while (si < sys.size() && sys.get(si).end() < prev.end()) {
            si++;
          }
          boolean lost = si < sys.size() && sys.get(si).start() <= r.start() && sys.get(si).lostP();
          source = lost ? "syscall lost its P" : null;
        }
        if (source != null && source.equals("unblocked")) {
          // the last unblock before the run says who and which queue
          TraceData.Unblock last = null;
          while (ui < ubs.size() && ubs.get(ui).time() <= r.start()) {
            if (ubs.get(ui).time() >= prev.start()) {
              last = ubs.get(ui);
            }
            ui++;
          }
          if (last != null) {
            source =
                "unblocked into "
                    + (last.to().isEmpty() ? "?" : last.to())
                    + " by "
                    + (last.by() == 0 ? "a platform thread" : data.group(last.by()));
          }
          long block = Math.max(0, r.start() - prev.end() - r.latency());
          String why = prev.waitReason().isEmpty() ? "unknown" : prev.waitReason();
          g.block.merge(why, block, Long::sum);
        }
        if (prev != null && prev.endReason().equals("handoff")) {
          g.offP += Math.max(0, r.start() - prev.end() - r.latency());
        }
        if (source != null && !(runThresholded && r.latency() == 0)) { // 0: not measured
          g.schedWait += r.latency();
          latencies.add(new Latency(r.latency(), source, r.goid(), r.p(), r.start()));
        }
        prev = r;
      }
      if (prev != null && prev.endReason().equals("handoff")) {
        Long gone = destroyedAt.get(prev.goid());
        g.offP += Math.max(0, (gone == null ? data.last : gone) - prev.end());
      }
    }
    for (var e : sysByG.entrySet()) {
      G g = g(e.getKey());
      for (TraceData.Syscall s : e.getValue()) {
        g.syscall += s.end() - s.start();
        if (s.lostP()) {
          NavigableMap<Long, TraceData.Handoff> hs = sysHandoffs.get(s.p());
          Map.Entry<Long, TraceData.Handoff> h = hs == null ? null : hs.ceilingEntry(s.start());
          if (h != null && h.getKey() <= s.end()) {
            g.syscallBlocked += s.end() - h.getKey();
          }
        }
      }
    }
    schedulings = latencies.size();
    latencySorted = latencies.stream().mapToLong(Latency::latency).sorted().toArray();
    latency = Dist.of(latencySorted);
  }

  private void groups() {
    Map<String, List<G>> byGroup = new TreeMap<>();
    for (G g : goroutines.values()) {
      byGroup.computeIfAbsent(g.group, k -> new ArrayList<>()).add(g);
    }
    Map<String, List<Long>> latByGroup = new HashMap<>();
    for (Latency l : latencies) {
      latByGroup
          .computeIfAbsent(goroutines.get(l.goid()).group, k -> new ArrayList<>())
          .add(l.latency());
    }
    for (var e : byGroup.entrySet()) {
      List<G> gs = e.getValue();
      Map<String, Long> block = new TreeMap<>();
      long syscallBlocked = 0;
      long offP = 0;
      int runs = 0;
      for (G g : gs) {
        offP += g.offP;
        g.block.forEach((k, v) -> block.merge(k, v, Long::sum));
        syscallBlocked += g.syscallBlocked;
        runs += g.runs;
      }
      groups.add(
          new Group(
              e.getKey(),
              gs.size(),
              runs,
              Dist.of(gs.stream().mapToLong(g -> g.exec).toArray()),
              Dist.of(
                  latByGroup.getOrDefault(e.getKey(), List.of()).stream()
                      .mapToLong(Long::longValue)
                      .toArray()),
              Dist.of(gs.stream().mapToLong(g -> g.schedWait).toArray()),
              block,
              Dist.of(gs.stream().mapToLong(g -> g.syscall).toArray()),
              syscallBlocked,
              offP));
    }
    groups.sort(
        Comparator.comparingLong((Group g) -> g.exec().sum())
            .reversed()
            .thenComparing(Group::name));
  }

  private void latencySources() {
    Map<String, List<Long>> by = new HashMap<>();
    for (Latency l : latencies) {
      by.computeIfAbsent(l.source(), k -> new ArrayList<>()).add(l.latency());
    }
    by.entrySet().stream()
        .map(
            e ->
                Map.entry(
                    e.getKey(),
                    Dist.of(e.getValue().stream().mapToLong(Long::longValue).toArray())))
        .sorted(
            Comparator.comparingLong((Map.Entry<String, Dist> e) -> e.getValue().p99())
                .reversed()
                .thenComparing(Map.Entry::getKey))
        .forEach(e -> latencyBySource.put(e.getKey(), e.getValue()));
  }

  /** The worst single waits, longest first. */
  List<Latency> worst(int n) {
    return latencies.stream()
        .sorted(Comparator.comparingLong(Latency::latency).reversed())
        .limit(n)
        .toList();
  }

  /** Goroutines by run time (Go's ExecTime), most first; off-P time is shown beside it. */
  List<G> topRunners(int n) {
    return goroutines.values().stream()
        .filter(g -> g.runs > 0)
        .sorted(Comparator.comparingLong((G g) -> g.exec).reversed())
        .limit(n)
        .toList();
  }

  private void procs() {
    Map<Integer, long[]> per = new TreeMap<>();
    for (int p : data.procs()) {
      per.put(p, new long[4]);
    }
    Map<Integer, NavigableMap<Long, TraceData.Handoff>> sysHandoffs = new HashMap<>();
    for (TraceData.Handoff h : data.handoffs) {
      if (h.reason().equals("syscall")) {
        sysHandoffs.computeIfAbsent(h.p(), k -> new TreeMap<>()).put(h.time(), h);
      }
    }
    for (TraceData.Syscall s : data.syscalls) {
      long[] a = per.get(s.p());
      if (a == null) {
        continue;
      }
      long end = s.end();
      NavigableMap<Long, TraceData.Handoff> hs = sysHandoffs.get(s.p());
      Map.Entry<Long, TraceData.Handoff> h = hs == null ? null : hs.ceilingEntry(s.start());
      if (s.lostP() && h != null && h.getKey() < end) {
        end = h.getKey(); // the P ran other Gs from the hand-off on
      }
      a[3] += end - s.start();
    }
    for (TraceData.Run r : data.runs) {
      long[] a = per.get(r.p());
      if (a != null) {
        a[0]++;
        a[1] += r.end() - r.start();
      }
    }
    for (TraceData.Idle i : data.idles) {
      long[] a = per.get(i.p());
      if (a != null) {
        a[2] += i.end() - i.start();
      }
    }
    per.forEach((p, a) -> procs.add(new Proc(p, (int) a[0], a[1], a[2], a[3])));
  }

  private void events() {
    for (TraceData.Steal s : data.steals) {
      stolenGoroutines += s.count();
    }
    for (TraceData.Handoff h : data.handoffs) {
      handoffsByReason.merge(h.reason(), 1L, Long::sum);
    }
    for (TraceData.Preempt p : data.preempts) {
      preemptsByReason.merge(p.reason(), 1L, Long::sum);
    }
    Map<String, Ignored> by = new LinkedHashMap<>();
    for (TraceData.Handoff h : data.handoffs) {
      if (h.reason().equals("syscall")) {
        continue;
      }
      String key = h.goid() + "/" + h.reason() + "/" + h.frames();
      Ignored old = by.get(key);
      by.put(
          key,
          new Ignored(
              h.goid(),
              data.group(h.goid()),
              h.reason(),
              old == null ? 1 : old.times() + 1,
              h.frames()));
    }
    ignored.addAll(by.values());
  }

  /** The GOMAXPROCS values over the window: the first, then each change. */
  String gomaxprocs() {
    StringBuilder sb = new StringBuilder();
    if (!data.procsChanges.isEmpty()) {
      sb.append(data.procsChanges.get(0).old());
      for (TraceData.ProcsChange c : data.procsChanges) {
        sb.append(" -> ").append(c.nu());
      }
      return sb.toString();
    }
    if (!data.stats.isEmpty()) {
      Long n = data.stats.get(0).values().get("gomaxprocs");
      if (n != null) {
        return Long.toString(n);
      }
    }
    return Integer.toString(data.procs().size());
  }
}
