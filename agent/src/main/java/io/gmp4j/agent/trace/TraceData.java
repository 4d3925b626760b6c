package io.gmp4j.agent.trace;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The gmp4j events of one recording, as plain records sorted by start time: what {@link
 * TraceReader} read, and what {@link Analysis}, {@link Perfetto} and {@link HtmlReport} work
 * from. Go's counterpart is {@code internal/trace}'s ordered event stream; JFR orders nothing
 * (a chunk holds events in commit order, and the M commits a run after it ended), so the reader
 * sorts once here.
 *
 * <p>Times are nanoseconds since the epoch, as JFR gives them ({@code Instant}). Every list is
 * sorted by its start time when {@link #seal} returns. Field names follow the JFR events' own
 * (see the runtime's TraceEvents and the README's "JFR events" table).
 *
 * <p>Memory: about 60 to 100 bytes an event. A 100 MB recording of gmp4j-detail.jfc holds about
 * 3 million gmp4j events, so reading it takes a few hundred MB of heap.
 */
final class TraceData {
  /** A GoRun: one P slice of a goroutine. {@code end} is Go's reason for the stop. */
  record Run(
      long goid,
      int p,
      int m,
      long start,
      long end,
      String endReason,
      String waitReason,
      boolean runnext,
      long latency) {}

  /** A GoSyscall: the goroutine blocked its M in a marked call; {@code p} was left in syscall. */
  record Syscall(long goid, int p, int m, long start, long end, boolean lostP) {}

  /** A GoUnblock: {@code by} (0: a platform thread) readied goid into queue {@code to}. */
  record Unblock(long time, long goid, long by, String to) {}

  /** A GoCreate: {@code name} is the thread's name ("" for an unnamed virtual thread). */
  record Create(long time, long goid, long parent, String name, String site) {}

  record Destroy(long time, long goid) {}

  record Steal(long time, int thief, int victim, int count, boolean runnext) {}

  record Preempt(long time, int p, long goid, long sliceRan, String reason) {}

  /** A ProcHandoff: sysmon took P {@code p} from M {@code fromM} (reason syscall or a hog). */
  record Handoff(long time, int p, int fromM, int toM, String reason, long goid, String frames) {}

  record ProcsChange(long time, int old, int nu, String reason) {}

  record Idle(int p, long start, long end) {}

  /** A SchedStats: the /sched counters and gauges at {@code time}, by field name. */
  record Stats(long time, Map<String, Long> values) {}

  final List<Run> runs = new ArrayList<>();
  final List<Syscall> syscalls = new ArrayList<>();
  final List<Unblock> unblocks = new ArrayList<>();
  final List<Create> creates = new ArrayList<>();
  final List<Destroy> destroys = new ArrayList<>();
  final List<Steal> steals = new ArrayList<>();
  final List<Preempt> preempts = new ArrayList<>();
  final List<Handoff> handoffs = new ArrayList<>();
  final List<ProcsChange> procsChanges = new ArrayList<>();
  final List<Idle> idles = new ArrayList<>();
  final List<Stats> stats = new ArrayList<>();

  /**
   * The settings the recording applied, from its {@code jdk.ActiveSetting} events: event name
   * to setting name to value, the last one read winning. Empty when the settings recorded none.
   */
  final Map<String, Map<String, String>> settings = new TreeMap<>();

  /** Event type names of the file, gmp4j's and others', with their counts. */
  final Map<String, Long> counts = new TreeMap<>();

  /**
   * The first and last time of gmp4j's events of the file, less SchedStats (see the reader):
   * the window, in ns since the epoch.
   */
  long first = Long.MAX_VALUE;

  long last = Long.MIN_VALUE;

  /** The same for SchedStats alone, the window of a recording that holds nothing else. */
  long firstStats = Long.MAX_VALUE;

  long lastStats = Long.MIN_VALUE;

  /** The names of the goroutines, by goid, from their GoCreate. */
  private final Map<Long, Create> created = new HashMap<>();

  /** Sorts every list; then the lookups below work. Called once by the reader. */
  void seal() {
    runs.sort(Comparator.comparingLong(Run::start));
    syscalls.sort(Comparator.comparingLong(Syscall::start));
    unblocks.sort(Comparator.comparingLong(Unblock::time));
    creates.sort(Comparator.comparingLong(Create::time));
    destroys.sort(Comparator.comparingLong(Destroy::time));
    steals.sort(Comparator.comparingLong(Steal::time));
    preempts.sort(Comparator.comparingLong(Preempt::time));
    handoffs.sort(Comparator.comparingLong(Handoff::time));
    procsChanges.sort(Comparator.comparingLong(ProcsChange::time));
    idles.sort(Comparator.comparingLong(Idle::start));
    stats.sort(Comparator.comparingLong(Stats::time));
    for (Create c : creates) {
      created.putIfAbsent(c.goid(), c);
    }
  }

  /** The window's length in ns, at least 1. */
  long span() {
    return Math.max(1, last - first);
  }

  /** How many gmp4j events the file holds. */
  long gmp4jEvents() {
    return counts.entrySet().stream()
        .filter(e -> e.getKey().startsWith("gmp4j."))
        .mapToLong(Map.Entry::getValue)
        .sum();
  }

  /** Whether the recording had {@code type} on (its settings say so, or it holds one). */
  boolean recorded(String type) {
    Map<String, String> s = settings.get(type);
    if (s != null && s.containsKey("enabled")) {
      return Boolean.parseBoolean(s.get("enabled"));
    }
    return counts.getOrDefault(type, 0L) > 0;
  }

  /** The recording's threshold for {@code type} ("0 ms" when none was set), or null. */
  String threshold(String type) {
    Map<String, String> s = settings.get(type);
    return s == null ? null : s.get("threshold");
  }

  /**
   * The group a goroutine belongs to, as {@code go tool trace} groups by start function: its
   * thread's name with digit runs folded to {@code N} ("reader3" and "reader0" are both
   * "readerN"), else the site that started it (GoCreate's stack, when the settings record it),
   * else the group of the goroutine that started it ("(unnamed, by spawner)"), else
   * "(unnamed)"; "(before the recording)" when its GoCreate is not in the file.
   */
  String group(long goid) {
    Create c = created.get(goid);
    if (c == null) {
      return "(before the recording)";
    }
    if (!c.name().isEmpty()) {
      return c.name().replaceAll("[0-9]+", "N");
    }
    if (!c.site().isEmpty()) {
      return "started at " + c.site();
    }
    Create parent = created.get(c.parent());
    return parent != null && !parent.name().isEmpty()
        ? "(unnamed, by " + parent.name().replaceAll("[0-9]+", "N") + ")"
        : "(unnamed)";
  }

  /** The goroutine's own thread name, or "" when unknown. */
  String name(long goid) {
    Create c = created.get(goid);
    return c == null ? "" : c.name();
  }

  /** The Ps that appear in the recording (runs, idle spells, syscalls, steals), sorted. */
  TreeSet<Integer> procs() {
    TreeSet<Integer> ps = new TreeSet<>();
    for (Run r : runs) {
      ps.add(r.p());
    }
    for (Idle i : idles) {
      ps.add(i.p());
    }
    for (Syscall s : syscalls) {
      ps.add(s.p());
    }
    for (Steal s : steals) {
      ps.add(s.thief());
      ps.add(s.victim());
    }
    ps.remove(-1);
    return ps;
  }
}
