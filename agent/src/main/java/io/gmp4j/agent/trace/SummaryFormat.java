package io.gmp4j.agent.trace;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.Writer;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code gmp4j trace summary}'s two outputs of one {@link Analysis}: text for people, and
 * {@code --json}, one document with the same numbers (times in nanoseconds, so that a script
 * needs no unit parsing). The sections, in order: the window, the goroutine groups (Go's
 * goroutine analysis), the top runners, the scheduler latency with its sources and worst
 * waits, the scheduler's event rates, the Ps, and the goroutines that ignored preemption.
 */
final class SummaryFormat {
  private SummaryFormat() {}

  static final int TOP = 10;

  /** A duration for people: 850ns, 12.3us, 4.56ms, 1.23s. */
  static String dur(long ns) {
    if (ns < 1_000) {
      return ns + "ns";
    }
    if (ns < 1_000_000) {
      return String.format(Locale.ROOT, "%.1fus", ns / 1e3);
    }
    if (ns < 1_000_000_000) {
      return String.format(Locale.ROOT, "%.2fms", ns / 1e6);
    }
    return String.format(Locale.ROOT, "%.2fs", ns / 1e9);
  }

  static String pct(double p) {
    return String.format(Locale.ROOT, "%.1f%%", p);
  }

  static void text(Analysis a, String file, PrintStream out) {
    TraceData d = a.data;
    out.printf("gmp4j trace summary of %s%n", file);
    out.printf(
        "window %s (%s to %s), GOMAXPROCS %s, %d goroutines, %d runs%n",
        dur(d.span()),
        Instant.ofEpochSecond(0, d.first),
        Instant.ofEpochSecond(0, d.last),
        a.gomaxprocs(),
        a.goroutines.size(),
        d.runs.size());
    for (String w : a.warnings) {
      out.println("note: " + w);
    }

    out.println();
    out.println(
        "Goroutine groups (by thread name, digits folded to N; run time per goroutine,"
            + " latency per run)");
    out.printf(
        "  %-24s %4s %6s | %9s %9s %9s %9s | %9s %9s %9s | %9s %-18s | %9s %9s%n",
        "group",
        "Gs",
        "runs",
        "run",
        "run p50",
        "run max",
        "off-P",
        "wait",
        "lat p99",
        "lat max",
        "block",
        "(top reason)",
        "syscall",
        "sys-lostP");
    for (Analysis.Group g : a.groups) {
      String top =
          g.block().entrySet().stream()
              .max(Map.Entry.comparingByValue())
              .map(e -> "(" + e.getKey() + ")")
              .orElse("");
      out.printf(
          "  %-24s %4d %6d | %9s %9s %9s %9s | %9s %9s %9s | %9s %-18s | %9s %9s%n",
          cut(g.name(), 24),
          g.goroutines(),
          g.runs(),
          dur(g.exec().sum()),
          dur(g.exec().p50()),
          dur(g.exec().max()),
          dur(g.offP()),
          dur(g.schedWait().sum()),
          dur(g.latency().p99()),
          dur(g.latency().max()),
          dur(g.blockTotal()),
          cut(top, 18),
          dur(g.syscall().sum()),
          dur(g.syscallBlocked()));
    }

    out.println();
    out.println("Top runners (by run time; off-P: ran on without a P after a hand-off)");
    for (Analysis.G g : a.topRunners(TOP)) {
      out.printf(
          "  G%-7d %-24s run %9s in %6d runs (longest %s)%s, wait %s, syscall %s%n",
          g.goid,
          cut(g.group, 24),
          dur(g.exec),
          g.runs,
          dur(g.longestRun),
          g.offP == 0 ? "" : " + " + dur(g.offP) + " off-P",
          dur(g.schedWait),
          dur(g.syscall));
    }

    out.println();
    Analysis.Dist l = a.latency;
    out.printf(
        "Scheduler latency (runnable to running), %d schedulings:"
            + " p50 %s  p90 %s  p99 %s  max %s%n",
        l.count(), dur(l.p50()), dur(l.p90()), dur(l.p99()), dur(l.max()));
    histogram(a.latencySorted, out);
    out.println("  by source (worst p99 first):");
    for (var e : a.latencyBySource.entrySet()) {
      Analysis.Dist s = e.getValue();
      out.printf(
          "    %-52s %7d  p50 %9s  p99 %9s  max %9s%n",
          cut(e.getKey(), 52), s.count(), dur(s.p50()), dur(s.p99()), dur(s.max()));
    }
    out.println("  worst waits:");
    for (Analysis.Latency w : a.worst(5)) {
      out.printf(
          "    %9s  G%d %s on P%d at +%s, %s%n",
          dur(w.latency()),
          w.goid(),
          paren(a.goroutines.get(w.goid()).group),
          w.p(),
          dur(w.at() - d.first),
          w.source());
    }

    out.println();
    double s = a.seconds();
    out.printf(
        "Scheduler events: %d steals (%.1f/s, %d goroutines, steal ratio %s of"
            + " schedulings), %d preemption requests (%.1f/s%s), %d hand-offs (%.1f/s%s),"
            + " %d GOMAXPROCS changes%n",
        d.steals.size(),
        d.steals.size() / s,
        a.stolenGoroutines,
        pct(a.stealRatio()),
        d.preempts.size(),
        d.preempts.size() / s,
        byReason(a.preemptsByReason),
        a.handoffs(),
        a.handoffs() / s,
        byReason(a.handoffsByReason),
        d.procsChanges.size());

    out.println();
    out.println("Ps (share of the window; other: spinning, stop-the-world, not yet recorded)");
    for (Analysis.Proc p : a.procs) {
      double busy = 100.0 * p.busy() / d.span();
      double idle = 100.0 * p.idle() / d.span();
      double sys = 100.0 * p.syscall() / d.span();
      out.printf(
          "  Proc %-3d %7d runs  running %6s  in syscall %6s  idle %6s  other %6s%n",
          p.p(),
          p.runs(),
          pct(busy),
          pct(sys),
          pct(idle),
          pct(Math.max(0, 100 - busy - sys - idle)));
    }

    out.println();
    if (a.ignored.isEmpty()) {
      out.println("Goroutines that ignored preemption: none");
    } else {
      out.println("Goroutines that ignored preemption (sysmon handed their P off)");
      for (Analysis.Ignored i : a.ignored) {
        out.printf("  G%d %s %s x%d%n", i.goid(), paren(i.group()), i.reason(), i.times());
        for (String f : frames(i.frames())) {
          out.println("      " + f);
        }
      }
    }
  }

  private static String byReason(Map<String, Long> m) {
    if (m.isEmpty()) {
      return "";
    }
    StringBuilder sb = new StringBuilder(": ");
    m.forEach((k, v) -> sb.append(sb.length() > 2 ? ", " : "").append(k).append(' ').append(v));
    return sb.toString();
  }

  /** HogHandoff.topFrames separates frames by " <- "; one a line, at most 6. */
  static List<String> frames(String frames) {
    if (frames == null || frames.isEmpty()) {
      return List.of();
    }
    return List.of(frames.split(" <- ")).stream().limit(6).toList();
  }

  /** A group name in parentheses, unless it has its own: "(hog)", "(unnamed, by spawner)". */
  private static String paren(String group) {
    return group.startsWith("(") ? group : "(" + group + ")";
  }

  private static String cut(String s, int n) {
    return s.length() <= n ? s : s.substring(0, n - 1) + "~";
  }

  /** Latency buckets by powers of ten and their halves, with a bar each. */
  static final long[] BUCKETS = {
    1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000
  };

  static long[] bucketCounts(long[] sorted) {
    long[] c = new long[BUCKETS.length + 1];
    for (long v : sorted) {
      int i = 0;
      while (i < BUCKETS.length && v >= BUCKETS[i]) {
        i++;
      }
      c[i]++;
    }
    return c;
  }

  static String bucketLabel(int i) {
    if (i == 0) {
      return "< " + dur(BUCKETS[0]);
    }
    if (i == BUCKETS.length) {
      return ">= " + dur(BUCKETS[i - 1]);
    }
    return dur(BUCKETS[i - 1]) + "-" + dur(BUCKETS[i]);
  }

  private static void histogram(long[] sorted, PrintStream out) {
    long[] c = bucketCounts(sorted);
    long max = java.util.Arrays.stream(c).max().orElse(1);
    for (int i = 0; i < c.length; i++) {
      if (c[i] == 0) {
        continue;
      }
      int bar = (int) Math.max(1, Math.round(40.0 * c[i] / Math.max(1, max)));
      out.printf("  %-14s %8d %s%n", bucketLabel(i), c[i], "#".repeat(bar));
    }
  }

  static void json(Analysis a, String file, Writer w) {
    TraceData d = a.data;
    JsonWriter j = new JsonWriter(w, false);
    j.beginObject();
    j.field("file", file);
    j.key("window")
        .beginObject()
        .field("startNs", d.first)
        .field("endNs", d.last)
        .field("durationNs", d.span())
        .endObject();
    j.field("gomaxprocs", a.gomaxprocs());
    j.field("goroutines", (long) a.goroutines.size());
    j.field("runs", (long) d.runs.size());
    j.key("warnings").beginArray();
    a.warnings.forEach(j::value);
    j.endArray();
    j.key("eventCounts").beginObject();
    d.counts.forEach(
        (k, v) -> {
          if (k.startsWith("gmp4j.")) {
            j.field(k, v);
          }
        });
    j.endObject();
    j.key("groups").beginArray();
    for (Analysis.Group g : a.groups) {
      j.beginObject()
          .field("name", g.name())
          .field("goroutines", (long) g.goroutines())
          .field("runs", (long) g.runs());
      dist(j.key("execNs"), g.exec());
      dist(j.key("schedWaitNs"), g.schedWait());
      dist(j.key("latencyNs"), g.latency());
      j.key("blockNsByReason").beginObject();
      g.block().forEach(j::field);
      j.endObject();
      dist(j.key("syscallNs"), g.syscall());
      j.field("syscallBlockedNs", g.syscallBlocked());
      j.field("offPNs", g.offP());
      j.endObject();
    }
    j.endArray();
    j.key("topRunners").beginArray();
    for (Analysis.G g : a.topRunners(TOP)) {
      j.beginObject()
          .field("goid", g.goid)
          .field("group", g.group)
          .field("execNs", g.exec)
          .field("offPNs", g.offP)
          .field("runs", (long) g.runs)
          .field("longestRunNs", g.longestRun)
          .field("schedWaitNs", g.schedWait)
          .field("syscallNs", g.syscall)
          .endObject();
    }
    j.endArray();
    j.key("schedLatency").beginObject();
    dist(j.key("allNs"), a.latency);
    j.key("histogram").beginArray();
    long[] c = bucketCounts(a.latencySorted);
    for (int i = 0; i < c.length; i++) {
      j.beginObject()
          .field("bucket", bucketLabel(i))
          .field("fromNs", i == 0 ? 0 : BUCKETS[i - 1])
          .field("count", c[i])
          .endObject();
    }
    j.endArray();
    j.key("bySource").beginArray();
    for (var e : a.latencyBySource.entrySet()) {
      j.beginObject().field("source", e.getKey());
      dist(j.key("ns"), e.getValue());
      j.endObject();
    }
    j.endArray();
    j.key("worst").beginArray();
    for (Analysis.Latency l : a.worst(TOP)) {
      j.beginObject()
          .field("latencyNs", l.latency())
          .field("goid", l.goid())
          .field("group", a.goroutines.get(l.goid()).group)
          .field("p", (long) l.p())
          .field("atNs", l.at())
          .field("source", l.source())
          .endObject();
    }
    j.endArray();
    j.endObject();
    double s = a.seconds();
    j.key("events")
        .beginObject()
        .field("steals", (long) d.steals.size())
        .field("stealsPerSecond", d.steals.size() / s)
        .field("stolenGoroutines", a.stolenGoroutines)
        .field("schedulings", a.schedulings)
        .field("stealRatioPercent", a.stealRatio())
        .field("preemptionRequests", (long) d.preempts.size())
        .field("preemptionRequestsPerSecond", d.preempts.size() / s)
        .field("handoffs", a.handoffs())
        .field("handoffsPerSecond", a.handoffs() / s)
        .field("preemptionsIgnored", a.preemptionsIgnored())
        .field("gomaxprocsChanges", (long) d.procsChanges.size());
    j.key("preemptionRequestsByReason").beginObject();
    a.preemptsByReason.forEach(j::field);
    j.endObject();
    j.key("handoffsByReason").beginObject();
    a.handoffsByReason.forEach(j::field);
    j.endObject();
    j.endObject();
    j.key("procs").beginArray();
    for (Analysis.Proc p : a.procs) {
      j.beginObject()
          .field("p", (long) p.p())
          .field("runs", (long) p.runs())
          .field("runningNs", p.busy())
          .field("idleNs", p.idle())
          .field("syscallNs", p.syscall())
          .field("runningPercent", 100.0 * p.busy() / d.span())
          .field("idlePercent", 100.0 * p.idle() / d.span())
          .endObject();
    }
    j.endArray();
    j.key("ignoredPreemption").beginArray();
    for (Analysis.Ignored i : a.ignored) {
      j.beginObject()
          .field("goid", i.goid())
          .field("group", i.group())
          .field("reason", i.reason())
          .field("times", (long) i.times());
      j.key("frames").beginArray();
      frames(i.frames()).forEach(j::value);
      j.endArray().endObject();
    }
    j.endArray();
    j.endObject();
    j.flush();
  }

  private static void dist(JsonWriter j, Analysis.Dist d) {
    j.beginObject()
        .field("count", d.count())
        .field("sum", d.sum())
        .field("p50", d.p50())
        .field("p90", d.p90())
        .field("p99", d.p99())
        .field("max", d.max())
        .endObject();
  }

  /** For callers that hold a PrintStream: JSON through a writer that does not close it. */
  static void json(Analysis a, String file, PrintStream out) {
    PrintWriter pw = new PrintWriter(out);
    json(a, file, pw);
    pw.println();
    pw.flush();
  }
}
