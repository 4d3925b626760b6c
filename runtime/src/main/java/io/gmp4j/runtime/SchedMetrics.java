package io.gmp4j.runtime;

import io.gmp4j.Float64Histogram;
import io.gmp4j.MetricDescription;
import io.gmp4j.MetricDescription.Kind;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Go's {@code /sched/*} metrics (runtime/metrics description.go), computed as metrics.go's
 * schedStatsAggregate does: running and runnable from the Ps and the global queue, waiting as
 * the rest of the live Gs. Values are racy reads; like Go's, the goroutine-state gauges are
 * approximate and need not add up to {@code /sched/goroutines:goroutines}. Reading takes no
 * scheduler lock: Ps, Ms and the global queue length are read with plain racy loads.
 */
final class SchedMetrics {
  private SchedMetrics() {}

  /** Every metric {@link #read} returns, in its order, with Go's descriptions (verbatim). */
  static final List<MetricDescription> ALL =
      List.of(
          go(
              "/sched/gomaxprocs:threads",
              Kind.GAUGE,
              "The current runtime.GOMAXPROCS setting, or"
                  + " the number of operating system threads that can execute user-level Go code"
                  + " simultaneously."),
          go(
              "/sched/goroutines-created:goroutines",
              Kind.COUNTER,
              "Count of goroutines created since program start."),
          go(
              "/sched/goroutines/not-in-go:goroutines",
              Kind.GAUGE,
              "Approximate count of goroutines"
                  + " running or blocked in a system call or cgo call. Not guaranteed to add up to"
                  + " /sched/goroutines:goroutines with other goroutine metrics."),
          go(
              "/sched/goroutines/runnable:goroutines",
              Kind.GAUGE,
              "Approximate count of goroutines"
                  + " ready to execute, but not executing. Not guaranteed to add up to"
                  + " /sched/goroutines:goroutines with other goroutine metrics."),
          go(
              "/sched/goroutines/running:goroutines",
              Kind.GAUGE,
              "Approximate count of goroutines"
                  + " executing. Always less than or equal to /sched/gomaxprocs:threads. Not guaranteed"
                  + " to add up to /sched/goroutines:goroutines with other goroutine metrics."),
          go(
              "/sched/goroutines/waiting:goroutines",
              Kind.GAUGE,
              "Approximate count of goroutines"
                  + " waiting on a resource (I/O or sync primitives). Not guaranteed to add up to"
                  + " /sched/goroutines:goroutines with other goroutine metrics."),
          go("/sched/goroutines:goroutines", Kind.GAUGE, "Count of live goroutines."),
          go(
              "/sched/latencies:seconds",
              Kind.HISTOGRAM,
              "Distribution of the time goroutines have"
                  + " spent in the scheduler in a runnable state before actually running. Bucket counts"
                  + " increase monotonically."),
          go(
              "/sched/pauses/stopping/other:seconds",
              Kind.HISTOGRAM,
              "Distribution of individual"
                  + " non-GC-related stop-the-world stopping latencies. This is the time it takes from"
                  + " deciding to stop the world until all Ps are stopped. This is a subset of the total"
                  + " non-GC-related stop-the-world time (/sched/pauses/total/other:seconds). During"
                  + " this time, some threads may be executing. Bucket counts increase monotonically."),
          go(
              "/sched/pauses/total/other:seconds",
              Kind.HISTOGRAM,
              "Distribution of individual"
                  + " non-GC-related stop-the-world pause latencies. This is the time from deciding to"
                  + " stop the world until the world is started again. Some of this time is spent"
                  + " getting all threads to stop (measured directly in"
                  + " /sched/pauses/stopping/other:seconds). Bucket counts increase monotonically."),
          go(
              "/sched/threads/total:threads",
              Kind.GAUGE,
              "The current count of live threads that are owned by the Go runtime."),
          extra(
              "/sched/gomaxprocs/changes:changes",
              Kind.COUNTER,
              "Count of GOMAXPROCS changes since program start, by the program or by sysmon"
                  + " following the CPU limit."),
          extra(
              "/sched/gomaxprocs/updates:changes",
              Kind.COUNTER,
              "Count of GOMAXPROCS changes"
                  + " sysmon made to follow the CPU limit or affinity (Go 1.25's updatemaxprocs)."),
          extra(
              "/sched/preemptions/requested:preemptions",
              Kind.COUNTER,
              "Count of requests to"
                  + " yield made to goroutines whose time slice ran out (sysmon, stop-the-world)."),
          extra(
              "/sched/preemptions/honored:preemptions",
              Kind.COUNTER,
              "Count of preemption" + " requests that a goroutine honored at a poll by yielding."),
          extra(
              "/sched/timeslice/overruns:overruns",
              Kind.COUNTER,
              "Count of times sysmon found a P"
                  + " running the same time slice for longer than the time slice: Gs over the time"
                  + " slice."),
          extra(
              "/sched/steals:steals",
              Kind.COUNTER,
              "Count of successful work-stealing operations between Ps."),
          extra(
              "/sched/steals/goroutines:goroutines",
              Kind.COUNTER,
              "Count of goroutines moved between Ps by work stealing."),
          extra(
              "/sched/runnext/hits:goroutines",
              Kind.COUNTER,
              "Count of goroutines run from a P's" + " runnext slot, inheriting the time slice."),
          extra(
              "/sched/syscalls/handoffs:handoffs",
              Kind.COUNTER,
              "Count of Ps handed off from a goroutine blocked in a system call to another thread."),
          extra(
              "/sched/preemptions/handoffs:handoffs",
              Kind.COUNTER,
              "Count of Ps handed off to"
                  + " another thread from a goroutine that ignored a preemption request for longer than"
                  + " preempt.handoff (code without preemption polls, or pinned)."),
          extra(
              "/sched/runqueue/global:goroutines",
              Kind.GAUGE,
              "Approximate length of the global run queue."),
          extra(
              "/sched/runqueue/local:goroutines",
              Kind.PER_P,
              "Approximate length of each P's"
                  + " local run queue, runnext included, indexed by P id."),
          extra("/sched/procs/idle:procs", Kind.GAUGE, "Count of Ps on the idle list."),
          extra(
              "/sched/threads/idle:threads",
              Kind.GAUGE,
              "Count of threads parked on the idle list."),
          extra(
              "/sched/threads/spinning:threads",
              Kind.GAUGE,
              "Count of threads holding a P and looking for work to steal."),
          extra(
              "/sched/instrumentation/classes/instrumented:classes",
              Kind.COUNTER,
              "Count of" + " classes the agent gave preemption polls since program start."),
          extra(
              "/sched/instrumentation/classes/skipped:classes",
              Kind.COUNTER,
              "Count of classes"
                  + " the agent was handed and left without polls since program start: excluded, no"
                  + " loops, old version, too large, failed (see the agent's /debug/instrumentation)."));

  /**
   * The agent's class counts, {instrumented, skipped}, or null before the agent registers them
   * (Hooks.instrumentationCounts). The runtime is on the boot class path and cannot see the
   * agent's classes, so the agent hands over its counters once rather than pushing an increment
   * per class load. Written once by the agent's premain thread, read by any metrics reader
   * (volatile: a reader sees both suppliers or none).
   */
  static volatile LongSupplier[] instrumentation;

  private static MetricDescription go(String name, Kind kind, String description) {
    return new MetricDescription(name, description, kind, true);
  }

  private static MetricDescription extra(String name, Kind kind, String description) {
    return new MetricDescription(name, description, kind, false);
  }

  /** Any thread. */
  static Map<String, Object> read(Sched s) {
    long running = 0;
    long runnable = s.runq.runqsize();
    Processor[] allp = s.allp;
    long[] perP = new long[allp.length];
    for (int i = 0; i < allp.length; i++) {
      perP[i] = allp[i].runqSize() + (allp[i].hasRunnext() ? 1 : 0);
      runnable += perP[i];
    }
    long retaken = 0;
    for (Machine mp : s.allm) {
      Goroutine g = mp.curg;
      if (g != null && g.running()) {
        // A G whose P sysmon handed off runs outside GOMAXPROCS, as Go's cgo calls do: it is
        // not in Go, and running stays within GOMAXPROCS (see 'Hog hand-off' in HogHandoff).
        if (mp.lostP()) {
          retaken++;
        } else {
          running++;
        }
      }
    }
    long nonGo = Math.max(0, s.nGsyscall.sum()) + retaken;
    long total = s.allgs.size();
    long waiting = Math.max(0, total - (running + runnable + nonGo));
    double[] bounds = TimeHistogram.boundaries();

    Map<String, Object> m = new LinkedHashMap<>();
    m.put("/sched/gomaxprocs:threads", (long) s.gomaxprocs);
    long[] mc = s.mCounters(); // exited Ms included: a counter never goes back
    m.put("/sched/goroutines-created:goroutines", s.goroutinesCreatedOutside.sum() + mc[4]);
    m.put("/sched/goroutines/not-in-go:goroutines", nonGo);
    m.put("/sched/goroutines/runnable:goroutines", runnable);
    m.put("/sched/goroutines/running:goroutines", running);
    m.put("/sched/goroutines/waiting:goroutines", waiting);
    m.put("/sched/goroutines:goroutines", total);
    m.put("/sched/latencies:seconds", new Float64Histogram(bounds, s.timeToRun.counts()));
    m.put(
        "/sched/pauses/stopping/other:seconds",
        new Float64Histogram(bounds, s.stwStopping.counts()));
    m.put("/sched/pauses/total/other:seconds", new Float64Histogram(bounds, s.stwTotal.counts()));
    m.put("/sched/threads/total:threads", (long) s.mcount());
    long runnextHits = mc[0];
    long steals = mc[1];
    long stolen = mc[2];
    m.put("/sched/gomaxprocs/changes:changes", s.gomaxprocsChanges.sum());
    m.put("/sched/gomaxprocs/updates:changes", MaxProcsLimit.UPDATES.sum());
    m.put("/sched/preemptions/requested:preemptions", s.preemptRequested.sum());
    m.put("/sched/preemptions/honored:preemptions", s.preemptHonored.sum());
    m.put("/sched/timeslice/overruns:overruns", s.timesliceOverruns.sum());
    m.put("/sched/steals:steals", steals);
    m.put("/sched/steals/goroutines:goroutines", stolen);
    m.put("/sched/runnext/hits:goroutines", runnextHits);
    m.put("/sched/syscalls/handoffs:handoffs", s.syscallHandoffs.sum());
    m.put("/sched/preemptions/handoffs:handoffs", s.preemptHandoffs.sum());
    m.put("/sched/runqueue/global:goroutines", (long) s.runq.runqsize());
    m.put("/sched/runqueue/local:goroutines", perP);
    m.put("/sched/procs/idle:procs", (long) s.npidle);
    m.put("/sched/threads/idle:threads", (long) s.nmidle);
    m.put("/sched/threads/spinning:threads", (long) s.nmspinning.get());
    LongSupplier[] counts = instrumentation;
    m.put(
        "/sched/instrumentation/classes/instrumented:classes",
        counts == null ? 0L : counts[0].getAsLong());
    m.put(
        "/sched/instrumentation/classes/skipped:classes",
        counts == null ? 0L : counts[1].getAsLong());
    return Collections.unmodifiableMap(m);
  }
}
