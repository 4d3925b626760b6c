package io.gmp4j.runtime;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Period;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;
import jdk.jfr.Unsigned;

/**
 * The JFR event types of gmp4j, named after Go's execution-trace v2 events where Go has one
 * ({@code internal/trace/tracev2/events.go}); what Go's tracer cannot see (steals, preemption
 * requests, hand-offs, idle Ps, the scheduler's counters) has events of its own. Who commits
 * each one, and the enabled check that keeps them free when off, are in 'Tracing' in {@link
 * Trace}. Nothing here is called directly by the scheduler: only Trace touches these classes,
 * so a JVM without the {@code jdk.jfr} module never loads them.
 *
 * <p>Every type is in category "GMP Scheduler" (JMC's Event Browser tree), sub-category
 * "Goroutines" for G transitions and "Processors" for P events. Instants carry no stack trace by
 * default: the shipped settings may turn one on for GoCreate, as Go records the creation stack.
 * Goroutine, P and M ids are fields, not threads: JMC keys its lanes by OS thread, and every
 * virtual thread has id 0 there, so the lane of a run is its M (the carrier that commits it).
 *
 * <p>The per-transition events are {@code @Enabled(false)}: a recording whose settings do not
 * name them, such as one with the JDK's own default.jfc, would otherwise record every park and
 * run (measured: gmp4j's ping-pong went from 1.1 to 3.8 us a round trip under default.jfc).
 * gmp4j.jfc and gmp4j-detail.jfc turn them on by name; SchedStats, ProcsChange and ProcHandoff
 * come a few a second at most and stay on by default.
 */
final class TraceEvents {
  private TraceEvents() {}

  static final String CATEGORY = "GMP Scheduler";

  @Name("gmp4j.GoCreate")
  @Enabled(false) // off unless the settings name it: see the class comment
  @Label("Goroutine Create")
  @Category({CATEGORY, "Goroutines"})
  @Description(
      "A virtual thread became a goroutine (Go's GoCreate: NotExist to Runnable),"
          + " committed by the thread that started it")
  @StackTrace(false)
  static final class GoCreate extends Event {
    @Label("Goroutine Id")
    @Unsigned
    long goid;

    @Label("Parent Goroutine Id")
    @Description("The goroutine that started it, 0 for a thread that is not a goroutine")
    @Unsigned
    long parentGoid;

    @Label("Thread")
    @Description("The virtual thread")
    Thread thread;
  }

  @Name("gmp4j.GoRun")
  @Enabled(false) // off unless the settings name it: see the class comment
  @Label("Goroutine Run")
  @Category({CATEGORY, "Goroutines"})
  @Description(
      "A goroutine ran on a P (Go's GoStart until GoStop, GoBlock, GoSyscallBegin or"
          + " GoDestroy), committed on its M, the carrier thread, so JMC draws one lane per M")
  @StackTrace(false)
  static final class GoRun extends Event {
    @Label("Goroutine Id")
    @Unsigned
    long goid;

    @Label("P")
    @Description("The id of the P it ran on")
    int p;

    @Label("M")
    @Description("The id of the M (carrier thread gmp-m<id>) it ran on")
    int m;

    @Label("End")
    @Description(
        "Why the run ended: block, gosched, preempted, syscall, handoff (sysmon took"
            + " the P from a goroutine that ignored preemption) or exit")
    String end;

    @Label("Wait Reason")
    @Description(
        "Go's waitReason when it blocked (semacquire, sleep, sync.Mutex.Lock, IO wait,"
            + " ...), empty otherwise or when it was woken before its M looked")
    String waitReason;

    @Label("Runnext")
    @Description("It came from the P's runnext slot and inherited the time slice")
    boolean runnext;

    @Label("Scheduling Latency")
    @Description(
        "How long it was runnable before this run; 0 for a run that resumes after a"
            + " syscall on the same P, and 0 when not measured: with a GoRun threshold of"
            + " 10 ms or more (gmp4j.jfc), only one readying in eight is timed")
    @Timespan(Timespan.NANOSECONDS)
    long schedLatency;

    /** The slice's begin (System.nanoTime), for sysmon's hand-off. Not recorded. */
    transient long beginNanos;
  }

  @Name("gmp4j.GoUnblock")
  @Enabled(false) // off unless the settings name it: see the class comment
  @Label("Goroutine Unblock")
  @Category({CATEGORY, "Goroutines"})
  @Description(
      "A waiting goroutine became runnable (Go's GoUnblock), committed by the thread"
          + " that woke it")
  @StackTrace(false)
  static final class GoUnblock extends Event {
    @Label("Goroutine Id")
    @Unsigned
    long goid;

    @Label("By Goroutine Id")
    @Description("The goroutine that woke it, 0 for a platform thread (a JDK timer or poller)")
    @Unsigned
    long byGoid;

    @Label("To")
    @Description("Where it was queued: runnext, local or global")
    String to;
  }

  @Name("gmp4j.GoSyscall")
  @Enabled(false) // off unless the settings name it: see the class comment
  @Label("Goroutine Syscall")
  @Category({CATEGORY, "Goroutines"})
  @Description(
      "A goroutine blocked its carrier in a marked call (Go's GoSyscallBegin until"
          + " GoSyscallEnd or GoSyscallEndBlocked), committed on its M when the run ends")
  @StackTrace(false)
  static final class GoSyscall extends Event {
    @Label("Goroutine Id")
    @Unsigned
    long goid;

    @Label("P")
    @Description("The P it left in _Psyscall")
    int p;

    @Label("M")
    @Description("The M whose carrier it blocked")
    int m;

    @Label("Lost P")
    @Description(
        "sysmon handed its P to another M meanwhile (Go's GoSyscallEndBlocked), even when the"
            + " M took the P back at the end from another goroutine's syscall")
    boolean lostP;
  }

  @Name("gmp4j.GoDestroy")
  @Enabled(false) // off unless the settings name it: see the class comment
  @Label("Goroutine Destroy")
  @Category({CATEGORY, "Goroutines"})
  @Description("A goroutine's thread terminated (Go's GoDestroy), committed on its M")
  @StackTrace(false)
  static final class GoDestroy extends Event {
    @Label("Goroutine Id")
    @Unsigned
    long goid;
  }

  @Name("gmp4j.RunqSteal")
  @Enabled(false) // off unless the settings name it: see the class comment
  @Label("Run Queue Steal")
  @Category({CATEGORY, "Processors"})
  @Description(
      "A spinning M took half of another P's run queue (Go's runqsteal, which Go's"
          + " tracer does not record)")
  @StackTrace(false)
  static final class RunqSteal extends Event {
    @Label("Thief P")
    int thiefP;

    @Label("Victim P")
    int victimP;

    @Label("Count")
    @Description("Goroutines taken")
    int count;

    @Label("Runnext")
    @Description("The one goroutine taken came from the victim's runnext slot")
    boolean runnext;
  }

  @Name("gmp4j.PreemptRequest")
  @Enabled(false) // off unless the settings name it: see the class comment
  @Label("Preemption Request")
  @Category({CATEGORY, "Processors"})
  @Description("A goroutine was asked to yield at its next poll (Go's preemptone)")
  @StackTrace(false)
  static final class PreemptRequest extends Event {
    @Label("P")
    int p;

    @Label("Goroutine Id")
    @Unsigned
    long goid;

    @Label("Slice Ran")
    @Description(
        "How long the P's time slice had run when sysmon asked; 0 when not measured"
            + " (stop-the-world, or a runnext goroutine inheriting a slice that ran out)")
    @Timespan(Timespan.NANOSECONDS)
    long sliceRan;

    @Label("Reason")
    @Description(
        "timeslice (sysmon), timer (sysmon: a timer overdue), stopTheWorld or handoff (again,"
            + " after sysmon took the P)")
    String reason;
  }

  @Name("gmp4j.ProcHandoff")
  @Label("P Hand-off")
  @Category({CATEGORY, "Processors"})
  @Description(
      "sysmon took a P from an M whose goroutine blocked in a syscall or ignored"
          + " preemption, and handed it to another M (Go's retake and handoffp; Go's tracer records"
          + " the syscall case as ProcSteal)")
  @StackTrace(false)
  static final class ProcHandoff extends Event {
    @Label("P")
    int p;

    @Label("From M")
    int fromM;

    @Label("To M")
    @Description("The M that runs the P now, -1 if the P went idle")
    int toM;

    @Label("Reason")
    @Description(
        "syscall, ignoredPreemption or pinned (the goroutine blocked its carrier while"
            + " pinned)")
    String reason;

    @Label("Goroutine Id")
    @Description("The goroutine that kept the P, 0 when unknown")
    @Unsigned
    long goid;

    @Label("Top Frames")
    @Description("The goroutine's top stack frames when it lost the P (not for syscalls)")
    String frames;
  }

  @Name("gmp4j.ProcsChange")
  @Label("GOMAXPROCS Change")
  @Category({CATEGORY, "Processors"})
  @Description("GOMAXPROCS changed after a stop-the-world (Go's ProcsChange)")
  @StackTrace(false)
  static final class ProcsChange extends Event {
    @Label("Old")
    int old;

    @Label("New")
    @Name("new_") // "new" is a Java keyword, which JFR refuses as a field name
    int newProcs;

    @Label("Reason")
    @Description("api (GOMAXPROCS(n) from the program) or cpuLimit (sysmon follows the CPUs)")
    String reason;
  }

  @Name("gmp4j.ProcIdle")
  @Enabled(false) // off unless the settings name it: see the class comment
  @Label("P Idle")
  @Category({CATEGORY, "Processors"})
  @Description(
      "A P sat on the idle list (Go's ProcStop until ProcStart); per-P utilisation is"
          + " one minus its idle time")
  @StackTrace(false)
  static final class ProcIdle extends Event {
    @Label("P")
    int p;
  }

  @Name("gmp4j.SchedStats")
  @Label("Scheduler Statistics")
  @Category(CATEGORY)
  @Description("Go's /sched/* gauges and counters (Gmp.readMetrics), once a period")
  @StackTrace(false)
  @Period("1 s")
  static final class SchedStats extends Event {
    @Label("GOMAXPROCS")
    long gomaxprocs;

    @Label("Goroutines Created")
    @Description("/sched/goroutines-created:goroutines")
    long goroutinesCreated;

    @Label("Goroutines Not In Go")
    @Description("/sched/goroutines/not-in-go:goroutines")
    long goroutinesNotInGo;

    @Label("Goroutines Runnable")
    @Description("/sched/goroutines/runnable:goroutines")
    long goroutinesRunnable;

    @Label("Goroutines Running")
    @Description("/sched/goroutines/running:goroutines")
    long goroutinesRunning;

    @Label("Goroutines Waiting")
    @Description("/sched/goroutines/waiting:goroutines")
    long goroutinesWaiting;

    @Label("Goroutines")
    @Description("/sched/goroutines:goroutines")
    long goroutines;

    @Label("Threads")
    @Description("/sched/threads/total:threads")
    long threadsTotal;

    @Label("GOMAXPROCS Changes")
    @Description("/sched/gomaxprocs/changes:changes")
    long gomaxprocsChanges;

    @Label("Preemptions Requested")
    @Description("/sched/preemptions/requested:preemptions")
    long preemptionsRequested;

    @Label("Preemptions Honored")
    @Description("/sched/preemptions/honored:preemptions")
    long preemptionsHonored;

    @Label("Time Slice Overruns")
    @Description("/sched/timeslice/overruns:overruns")
    long timesliceOverruns;

    @Label("Steals")
    @Description("/sched/steals:steals")
    long steals;

    @Label("Goroutines Stolen")
    @Description("/sched/steals/goroutines:goroutines")
    long stealsGoroutines;

    @Label("Runnext Hits")
    @Description("/sched/runnext/hits:goroutines")
    long runnextHits;

    @Label("Syscall Hand-offs")
    @Description("/sched/syscalls/handoffs:handoffs")
    long syscallsHandoffs;

    @Label("Preemption Hand-offs")
    @Description("/sched/preemptions/handoffs:handoffs")
    long preemptionsHandoffs;

    @Label("Global Run Queue")
    @Description("/sched/runqueue/global:goroutines")
    long runqueueGlobal;

    @Label("Local Run Queues")
    @Description("/sched/runqueue/local:goroutines, summed over the Ps")
    long runqueueLocal;

    @Label("Idle Ps")
    @Description("/sched/procs/idle:procs")
    long procsIdle;

    @Label("Idle Threads")
    @Description("/sched/threads/idle:threads")
    long threadsIdle;

    @Label("Spinning Threads")
    @Description("/sched/threads/spinning:threads")
    long threadsSpinning;

    @Label("Scheduling Latency Samples")
    @Description("/sched/latencies:seconds, the count of samples (one run in 8 is sampled)")
    long latenciesCount;

    @Label("Stop-the-world Pauses")
    @Description("/sched/pauses/total/other:seconds, the count of pauses")
    long pausesTotalCount;
  }
}
