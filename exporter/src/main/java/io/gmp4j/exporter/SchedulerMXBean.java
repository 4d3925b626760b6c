package io.gmp4j.exporter;

/**
 * gmp4j's scheduler in JConsole and JMC: the MXBean {@value GmpJmx#OBJECT_NAME}, registered by
 * the agent (when the platform MBean server starts) or by {@link
 * GmpJmx#register()}.
 *
 * <p>Each attribute is one {@code /sched} metric, named after its Micrometer name without {@code
 * gmp.sched.} in UpperCamelCase (README.md has the table): {@code GoroutinesRunning} is {@code
 * /sched/goroutines/running:goroutines}. A histogram gives three attributes: {@code <Name>Count}
 * (samples so far), {@code <Name>P50} and {@code <Name>P99} (seconds, the upper bound of the
 * bucket that holds the quantile, over all samples since start). Values are at most 100 ms old.
 * Reading them takes no scheduler lock; {@link #getSchedtrace()} and {@link
 * #getSchedtraceDetail()} take sched.lock briefly, as Go's schedtrace does.
 */
public interface SchedulerMXBean {
  /** {@code /sched/gomaxprocs:threads}. */
  long getGomaxprocs();

  /** {@code /sched/gomaxprocs/changes:changes}. */
  long getGomaxprocsChanges();

  /** {@code /sched/gomaxprocs/updates:changes}. */
  long getGomaxprocsUpdates();

  /** {@code /sched/goroutines:goroutines}. */
  long getGoroutinesLive();

  /** {@code /sched/goroutines-created:goroutines}. */
  long getGoroutinesCreated();

  /** {@code /sched/goroutines/running:goroutines}. */
  long getGoroutinesRunning();

  /** {@code /sched/goroutines/runnable:goroutines}. */
  long getGoroutinesRunnable();

  /** {@code /sched/goroutines/waiting:goroutines}. */
  long getGoroutinesWaiting();

  /** {@code /sched/goroutines/not-in-go:goroutines}. */
  long getGoroutinesNotInGo();

  /** {@code /sched/latencies:seconds}: samples. */
  long getLatenciesCount();

  /** {@code /sched/latencies:seconds}: median, seconds. */
  double getLatenciesP50();

  /** {@code /sched/latencies:seconds}: 99th percentile, seconds. */
  double getLatenciesP99();

  /** {@code /sched/pauses/stopping/other:seconds}: samples. */
  long getPausesStoppingOtherCount();

  /** {@code /sched/pauses/stopping/other:seconds}: median, seconds. */
  double getPausesStoppingOtherP50();

  /** {@code /sched/pauses/stopping/other:seconds}: 99th percentile, seconds. */
  double getPausesStoppingOtherP99();

  /** {@code /sched/pauses/total/other:seconds}: samples. */
  long getPausesTotalOtherCount();

  /** {@code /sched/pauses/total/other:seconds}: median, seconds. */
  double getPausesTotalOtherP50();

  /** {@code /sched/pauses/total/other:seconds}: 99th percentile, seconds. */
  double getPausesTotalOtherP99();

  /** {@code /sched/threads/total:threads}. */
  long getThreadsLive();

  /** {@code /sched/threads/idle:threads}. */
  long getThreadsIdle();

  /** {@code /sched/threads/spinning:threads}. */
  long getThreadsSpinning();

  /** {@code /sched/instrumentation/classes/instrumented:classes}. */
  long getInstrumentationClassesInstrumented();

  /** {@code /sched/instrumentation/classes/skipped:classes}. */
  long getInstrumentationClassesSkipped();

  /** {@code /sched/procs/idle:procs}. */
  long getProcsIdle();

  /** {@code /sched/runqueue/global:goroutines}. */
  long getRunqueueGlobal();

  /** {@code /sched/runqueue/local:goroutines}, indexed by P id. */
  long[] getRunqueueLocal();

  /** {@code /sched/preemptions/requested:preemptions}. */
  long getPreemptionsRequested();

  /** {@code /sched/preemptions/honored:preemptions}. */
  long getPreemptionsHonored();

  /** {@code /sched/timeslice/overruns:overruns}. */
  long getTimesliceOverruns();

  /** {@code /sched/steals:steals}. */
  long getSteals();

  /** {@code /sched/steals/goroutines:goroutines}. */
  long getStealsGoroutines();

  /** {@code /sched/runnext/hits:goroutines}. */
  long getRunnextHits();

  /** {@code /sched/syscalls/handoffs:handoffs}. */
  long getSyscallsHandoffs();

  /** {@code /sched/preemptions/handoffs:handoffs}. */
  long getPreemptionsHandoffs();

  /** Go's {@code GODEBUG=schedtrace} line, now. Takes sched.lock briefly. */
  String getSchedtrace();

  /**
   * Go's {@code schedtrace} with {@code scheddetail}: P, M and G lines. Takes sched.lock briefly.
   */
  String getSchedtraceDetail();
}
