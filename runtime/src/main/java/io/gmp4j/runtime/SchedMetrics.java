package io.gmp4j.runtime;

import io.gmp4j.Float64Histogram;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Go's {@code /sched/*} metrics (runtime/metrics description.go), computed as metrics.go's
 * schedStatsAggregate does: running and runnable from the Ps and the global queue, waiting as
 * the rest of the live Gs. Values are racy reads; like Go's, the goroutine-state gauges are
 * approximate and need not add up to {@code /sched/goroutines:goroutines}. Reading takes no
 * scheduler lock: Ps, Ms and the global queue length are read with plain racy loads.
 */
final class SchedMetrics {
  private SchedMetrics() {}

  /** Gs in the not-in-go state (syscalls); the syscall hand-off does not exist yet. */
  private static long notInGo(Sched s) {
    long n = 0;
    for (Goroutine gp : s.allgs) {
      if (gp.status() == Goroutine.SYSCALL) {
        n++;
      }
    }
    return n;
  }

  /** Any thread. */
  static Map<String, Object> read(Sched s) {
    long running = 0;
    long runnable = s.runqsize();
    for (Processor pp : s.allp) {
      runnable += pp.runqSize() + (pp.hasRunnext() ? 1 : 0);
    }
    for (Machine mp = s.allm; mp != null; mp = mp.alllink) {
      Goroutine g = mp.curg;
      if (g != null && g.status() == Goroutine.RUNNING) {
        running++;
      }
    }
    long nonGo = notInGo(s);
    long total = s.allgs.size();
    long waiting = Math.max(0, total - (running + runnable + nonGo));
    double[] bounds = TimeHistogram.boundaries();

    Map<String, Object> m = new LinkedHashMap<>();
    m.put("/sched/gomaxprocs:threads", (long) s.gomaxprocs);
    m.put("/sched/goroutines-created:goroutines", s.goroutinesCreated.sum());
    m.put("/sched/goroutines/not-in-go:goroutines", nonGo);
    m.put("/sched/goroutines/runnable:goroutines", runnable);
    m.put("/sched/goroutines/running:goroutines", running);
    m.put("/sched/goroutines/waiting:goroutines", waiting);
    m.put("/sched/goroutines:goroutines", total);
    m.put("/sched/latencies:seconds", new Float64Histogram(bounds, s.timeToRun.counts()));
    m.put("/sched/pauses/stopping/other:seconds",
        new Float64Histogram(bounds, s.stwStopping.counts()));
    m.put("/sched/pauses/total/other:seconds", new Float64Histogram(bounds, s.stwTotal.counts()));
    m.put("/sched/threads/total:threads", (long) s.mcount());
    // gmp4j extras, in Go's naming style.
    m.put("/sched/preemptions/requested:preemptions", s.preemptRequested.sum());
    m.put("/sched/preemptions/honored:preemptions", s.preemptHonored.sum());
    m.put("/sched/gomaxprocs/changes:changes", s.gomaxprocsChanges.sum());
    return Collections.unmodifiableMap(m);
  }
}
