package io.gmp4j.exporter;

import io.gmp4j.Float64Histogram;
import io.gmp4j.GoroutineInfo;
import io.gmp4j.MetricDescription;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * gmp4j's state as Go-style text: the {@code /sched} metric lines and goroutine dumps in the
 * shape of Go's {@code pprof/goroutine?debug=1} and {@code debug=2}. The agent's endpoint serves
 * them; an application can serve them from its own server.
 *
 * <h2>Implementation overview</h2>
 *
 * <h3>/sched lines</h3>
 *
 * One {@code name value} line per metric, in {@link io.gmp4j.Gmp#describeMetrics()} order, with
 * Go's names ({@code /sched/goroutines:goroutines 12}). Go has no text format for
 * runtime/metrics, so two shapes are ours, written so that every line still splits at its last
 * space into a key and a number:
 *
 * <ul>
 *   <li>per-P values, one line per P: {@code /sched/runqueue/local:goroutines{p=0} 3};
 *   <li>histograms: first {@code name{count} N}, the number of samples, then one line per
 *       non-empty bucket with Go's half-open bucket {@code [lower,upper)} in the metric's unit and
 *       that bucket's own (not cumulative) count, as in Go's Float64Histogram: {@code
 *       /sched/latencies:seconds{bucket=[2.56e-7,3.2e-7)} 17}. Empty buckets are left out.
 * </ul>
 *
 * <h3>Goroutine dumps</h3>
 *
 * <ul>
 *   <li>debug=1 groups goroutines by identical stack, state and wait reason, largest group first
 *       (Go groups by stack alone; a Java stack does not always say why it waits). Header: {@code
 *       7 @ [<wait reason or state>] <shortest>..<longest> in that state: goroutine 21 22 ...},
 *       then {@code #\tmethod\tFile.java:line} per frame, as Go's {@code #\tpc\tfunc\tfile:line}.
 *   <li>debug=2 lists each goroutine as Go's traceback does: {@code goroutine 21 [park, 2s]:},
 *       then per frame {@code pkg.Class.method(...)} and {@code \tFile.java:line}. Go prints the
 *       waiting time only from one minute on ({@code 3 minutes}); gmp4j prints it always, in ms
 *       or s below a minute.
 * </ul>
 */
public final class SchedText {
  /** At most this many goids are listed in one debug=1 group header. */
  private static final int MAX_GOIDS_PER_HEADER = 32;

  private SchedText() {}

  /**
   * The /sched lines for {@code values} (from readMetrics) in the order of {@code descriptions}.
   */
  public static String metrics(Map<String, Object> values, List<MetricDescription> descriptions) {
    StringBuilder b = new StringBuilder(4096);
    for (MetricDescription d : descriptions) {
      String name = d.name();
      Object v = values.get(name);
      if (v instanceof Long l) {
        b.append(name).append(' ').append(l).append('\n');
      } else if (v instanceof long[] perP) {
        for (int p = 0; p < perP.length; p++) {
          b.append(name).append("{p=").append(p).append("} ").append(perP[p]).append('\n');
        }
      } else if (v instanceof Float64Histogram h) {
        b.append(name).append("{count} ").append(h.total()).append('\n');
        double[] bounds = h.buckets();
        long[] counts = h.counts();
        for (int i = 0; i < counts.length; i++) {
          if (counts[i] != 0) {
            b.append(name)
                .append("{bucket=[")
                .append(number(bounds[i]))
                .append(',')
                .append(number(bounds[i + 1]))
                .append(")} ")
                .append(counts[i])
                .append('\n');
          }
        }
      }
    }
    return b.toString();
  }

  /** A bucket boundary: {@code 0}, {@code 2.56e-7}, {@code -Inf}, {@code +Inf}. */
  static String number(double d) {
    if (d == Double.POSITIVE_INFINITY) {
      return "+Inf";
    }
    if (d == Double.NEGATIVE_INFINITY) {
      return "-Inf";
    }
    if (d == Math.rint(d) && Math.abs(d) < 1e15) {
      return Long.toString((long) d);
    }
    return Double.toString(d).replace('E', 'e');
  }

  /** Go's {@code pprof/goroutine?debug=1}: goroutines grouped by stack. See 'Goroutine dumps'. */
  public static String goroutinesGrouped(List<GoroutineInfo> goroutines) {
    record Key(String state, List<String> frames) {}
    Map<Key, List<GoroutineInfo>> groups = new LinkedHashMap<>();
    Map<Key, List<StackTraceElement>> stacks = new LinkedHashMap<>();
    for (GoroutineInfo g : goroutines) {
      StackTraceElement[] st = stack(g);
      List<String> frames = new ArrayList<>(st.length);
      for (StackTraceElement e : st) {
        frames.add(e.toString());
      }
      Key k = new Key(state(g), frames);
      groups.computeIfAbsent(k, x -> new ArrayList<>()).add(g);
      stacks.putIfAbsent(k, List.of(st));
    }
    List<Map.Entry<Key, List<GoroutineInfo>>> sorted = new ArrayList<>(groups.entrySet());
    sorted.sort((a, c) -> Integer.compare(c.getValue().size(), a.getValue().size()));

    StringBuilder b = new StringBuilder(8192);
    b.append("goroutine profile: total ").append(goroutines.size()).append('\n');
    for (Map.Entry<Key, List<GoroutineInfo>> e : sorted) {
      List<GoroutineInfo> gs = e.getValue();
      b.append(gs.size()).append(" @ [").append(e.getKey().state()).append(']');
      long min = Long.MAX_VALUE;
      long max = 0;
      for (GoroutineInfo g : gs) {
        min = Math.min(min, g.waitNanos());
        max = Math.max(max, g.waitNanos());
      }
      if (max > 0) {
        b.append(' ').append(duration(min));
        if (max != min) {
          b.append("..").append(duration(max));
        }
        b.append(" in that state");
      }
      b.append(": goroutine");
      for (int i = 0; i < gs.size() && i < MAX_GOIDS_PER_HEADER; i++) {
        b.append(' ').append(gs.get(i).goid());
      }
      if (gs.size() > MAX_GOIDS_PER_HEADER) {
        b.append(" ...");
      }
      b.append('\n');
      for (StackTraceElement f : stacks.get(e.getKey())) {
        b.append("#\t")
            .append(f.getClassName())
            .append('.')
            .append(f.getMethodName())
            .append('\t')
            .append(location(f))
            .append('\n');
      }
      b.append('\n');
    }
    return b.toString();
  }

  /** Go's {@code pprof/goroutine?debug=2}: every goroutine with its stack. */
  public static String goroutines(List<GoroutineInfo> goroutines) {
    StringBuilder b = new StringBuilder(8192);
    for (GoroutineInfo g : goroutines) {
      b.append("goroutine ").append(g.goid()).append(" [").append(state(g));
      if (g.waitNanos() > 0) {
        b.append(", ").append(duration(g.waitNanos()));
      }
      b.append("]:\n");
      for (StackTraceElement f : stack(g)) {
        b.append(f.getClassName())
            .append('.')
            .append(f.getMethodName())
            .append("(...)\n\t")
            .append(location(f))
            .append('\n');
      }
      b.append('\n');
    }
    return b.toString();
  }

  /** Go's bracket text: the wait reason of a waiting G, else its status. */
  private static String state(GoroutineInfo g) {
    return g.waitReason() == null || g.waitReason().isEmpty() ? g.status() : g.waitReason();
  }

  private static StackTraceElement[] stack(GoroutineInfo g) {
    Thread t = g.thread();
    return t == null ? new StackTraceElement[0] : t.getStackTrace();
  }

  private static String location(StackTraceElement f) {
    if (f.isNativeMethod()) {
      return "native";
    }
    String file = f.getFileName() == null ? "?" : f.getFileName();
    return f.getLineNumber() >= 0 ? file + ":" + f.getLineNumber() : file;
  }

  /** Go's "3 minutes" from one minute on; below, ms or s. */
  static String duration(long nanos) {
    long minutes = TimeUnit.NANOSECONDS.toMinutes(nanos);
    if (minutes >= 1) {
      return minutes + " minutes";
    }
    long ms = TimeUnit.NANOSECONDS.toMillis(nanos);
    return ms < 1000 ? ms + "ms" : (ms / 1000) + "s";
  }
}
