package io.gmp4j.exporter;

import io.gmp4j.Float64Histogram;
import io.gmp4j.Gmp;

/**
 * The {@link SchedulerMXBean} over the shared {@link MetricsReader}: each getter reads one
 * {@code /sched} name; a JConsole refresh of all attributes costs one readMetrics. Any thread.
 */
final class Scheduler implements SchedulerMXBean {
  private final MetricsReader reader;

  Scheduler(MetricsReader reader) {
    this.reader = reader;
  }

  private long get(String name) {
    double v = reader.value(name);
    return Double.isNaN(v) ? -1 : (long) v;
  }

  private long count(String name) {
    Float64Histogram h = reader.histogram(name);
    return h == null ? 0 : h.total();
  }

  private double quantile(String name, double q) {
    Float64Histogram h = reader.histogram(name);
    return h == null ? Double.NaN : Histograms.quantile(h, q);
  }

  @Override
  public long getGomaxprocs() {
    return get("/sched/gomaxprocs:threads");
  }

  @Override
  public long getGomaxprocsChanges() {
    return get("/sched/gomaxprocs/changes:changes");
  }

  @Override
  public long getGomaxprocsUpdates() {
    return get("/sched/gomaxprocs/updates:changes");
  }

  @Override
  public long getGoroutinesLive() {
    return get("/sched/goroutines:goroutines");
  }

  @Override
  public long getGoroutinesCreated() {
    return get("/sched/goroutines-created:goroutines");
  }

  @Override
  public long getGoroutinesRunning() {
    return get("/sched/goroutines/running:goroutines");
  }

  @Override
  public long getGoroutinesRunnable() {
    return get("/sched/goroutines/runnable:goroutines");
  }

  @Override
  public long getGoroutinesWaiting() {
    return get("/sched/goroutines/waiting:goroutines");
  }

  @Override
  public long getGoroutinesNotInGo() {
    return get("/sched/goroutines/not-in-go:goroutines");
  }

  @Override
  public long getLatenciesCount() {
    return count("/sched/latencies:seconds");
  }

  @Override
  public double getLatenciesP50() {
    return quantile("/sched/latencies:seconds", 0.5);
  }

  @Override
  public double getLatenciesP99() {
    return quantile("/sched/latencies:seconds", 0.99);
  }

  @Override
  public long getPausesStoppingOtherCount() {
    return count("/sched/pauses/stopping/other:seconds");
  }

  @Override
  public double getPausesStoppingOtherP50() {
    return quantile("/sched/pauses/stopping/other:seconds", 0.5);
  }

  @Override
  public double getPausesStoppingOtherP99() {
    return quantile("/sched/pauses/stopping/other:seconds", 0.99);
  }

  @Override
  public long getPausesTotalOtherCount() {
    return count("/sched/pauses/total/other:seconds");
  }

  @Override
  public double getPausesTotalOtherP50() {
    return quantile("/sched/pauses/total/other:seconds", 0.5);
  }

  @Override
  public double getPausesTotalOtherP99() {
    return quantile("/sched/pauses/total/other:seconds", 0.99);
  }

  @Override
  public long getThreadsLive() {
    return get("/sched/threads/total:threads");
  }

  @Override
  public long getThreadsIdle() {
    return get("/sched/threads/idle:threads");
  }

  @Override
  public long getThreadsSpinning() {
    return get("/sched/threads/spinning:threads");
  }

  @Override
  public long getInstrumentationClassesInstrumented() {
    return get("/sched/instrumentation/classes/instrumented:classes");
  }

  @Override
  public long getInstrumentationClassesSkipped() {
    return get("/sched/instrumentation/classes/skipped:classes");
  }

  @Override
  public long getProcsIdle() {
    return get("/sched/procs/idle:procs");
  }

  @Override
  public long getRunqueueGlobal() {
    return get("/sched/runqueue/global:goroutines");
  }

  @Override
  public long[] getRunqueueLocal() {
    return reader.values().get("/sched/runqueue/local:goroutines") instanceof long[] a
        ? a.clone()
        : new long[0];
  }

  @Override
  public long getPreemptionsRequested() {
    return get("/sched/preemptions/requested:preemptions");
  }

  @Override
  public long getPreemptionsHonored() {
    return get("/sched/preemptions/honored:preemptions");
  }

  @Override
  public long getTimesliceOverruns() {
    return get("/sched/timeslice/overruns:overruns");
  }

  @Override
  public long getSteals() {
    return get("/sched/steals:steals");
  }

  @Override
  public long getStealsGoroutines() {
    return get("/sched/steals/goroutines:goroutines");
  }

  @Override
  public long getRunnextHits() {
    return get("/sched/runnext/hits:goroutines");
  }

  @Override
  public long getSyscallsHandoffs() {
    return get("/sched/syscalls/handoffs:handoffs");
  }

  @Override
  public long getPreemptionsHandoffs() {
    return get("/sched/preemptions/handoffs:handoffs");
  }

  @Override
  public String getSchedtrace() {
    return Gmp.schedtrace(false).strip();
  }

  @Override
  public String getSchedtraceDetail() {
    return Gmp.schedtrace(true).strip();
  }
}
