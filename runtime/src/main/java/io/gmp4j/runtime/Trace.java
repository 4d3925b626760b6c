package io.gmp4j.runtime;

import io.gmp4j.Float64Histogram;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Map;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;
import jdk.jfr.FlightRecorderListener;
import jdk.jfr.Recording;

/**
 * The scheduler's JFR events: Go's execution tracer (runtime/trace.go, traceruntime.go) on JDK
 * Flight Recorder. The event types are in {@link TraceEvents}.
 *
 * <h2>Implementation overview: 'Tracing'</h2>
 *
 * Go's tracer writes per-M batches and pays one branch when tracing is off ({@code
 * traceAcquire}). gmp4j commits JFR events, which JFR orders by time, and pays one opaque load
 * and a bit test when an event is off:
 *
 * <ol>
 *   <li>{@link #install} (at scheduler start) adds a {@code FlightRecorderListener}; it does not
 *       start JFR. When JFR comes up (a {@code -XX:StartFlightRecording}, a {@code jcmd
 *       JFR.start}, a RecordingStream), the listener registers every event class (they live on
 *       the boot class path, where JFR does not find them by itself before first use) and the
 *       periodic SchedStats hook.
 *   <li>{@link #enabled} has one bit per event type: whether some recording has it on. sysmon
 *       refreshes it from {@code EventType.isEnabled} once a second, and the listener refreshes it
 *       when a recording starts or stops. JDK 25 tells listeners after it applied the
 *       recording's settings ({@code PlatformRecording.start} and {@code stop}), so a
 *       recording's events are on when its {@code start} returns and off when its {@code stop}
 *       returns, even while sysmon sleeps deeply (TraceRefreshTest pins that). sysmon also
 *       refreshes every cycle for 100ms after such a change: a margin for a JDK that told
 *       listeners first, as this comment once wrongly said JDK 25 does. A change to a running
 *       recording's settings, which JFR tells no listener of, shows within a second.
 *   <li>A hot path reads the word once ({@link #on}); only with its bit set does it allocate an
 *       event, read the clock or call into JFR. JFR's own check (threshold, throttle) still
 *       runs at commit, so a stale bit costs at most an event object that JFR drops.
 * </ol>
 *
 * <p>Rejected: {@code new X().isEnabled()} or {@code shouldCommit()} at each site, the pattern in
 * the jdk.jfr docs. An uninstrumented event class makes both free, but once any recording has
 * instrumented it (a recording that has it off included) they cost three dependent loads
 * behind an allocation the JIT must prove dead, on every wake-up. A static {@code EventType}
 * per type and {@code isEnabled()} per call: a volatile read and two calls into JFR each time.
 * The JDK's own virtual-thread events ({@code jdk.internal.event.VirtualThreadStartEvent}) are
 * checked the way we do, through a static flag that JFR flips; user events have no such hook,
 * hence sysmon's refresh.
 *
 * <h3>Who commits what</h3>
 *
 * <pre>
 *   event           committed by                        where
 *   GoCreate        the thread that started the G        Sched.adopt
 *   GoRun           the M (carrier) after the run; the   Machine.execute; Syscall.enter,
 *                   G queues the slice it ends at        Machine.exitSyscallFast and
 *                   entersyscall for its M; sysmon for   tryReacquireP begin one;
 *                   a slice it ends by a hand-off        HogHandoff.retake
 *   GoUnblock       the thread that readied the G        Sched.ready
 *   GoSyscall       begun by the G, ended by it or by    Syscall.enter / exit,
 *                   its M (a run that parked inside the  Machine.execute
 *                   bracket), committed after the run
 *   GoDestroy       the M                                Sched.gdestroy
 *   RunqSteal       the thief M                          Machine.stealWork
 *   PreemptRequest  sysmon or stop-the-world             Preempt.request
 *   ProcHandoff     sysmon                               Sysmon.retake, HogHandoff.retake
 *   ProcsChange     the stop-the-world thread            Sched.stopTheWorldAndResize
 *   ProcIdle        whoever takes the P off the list     Sched.pidleget (begun in pidleput)
 *   SchedStats      JFR's periodic thread                the hook below
 * </pre>
 *
 * A GoRun is a P slice, as in Go: GoStart to GoStop, GoBlock or GoSyscallBegin. A G that
 * enters a syscall ends its slice there, and begins another when it gets a P back without
 * unmounting; so no two slices of one P overlap, and a P that sysmon hands off is free in the
 * recording from the hand-off on.
 *
 * <p>No G commits an event: it takes the timestamps ({@code begin}, {@code end}; both at once for
 * an instant) and leaves the event in its M's {@code tracePending} queue, which the M commits after
 * the run, on its own thread (JFR takes the thread at commit, the times at begin and end). Two
 * reasons. JMC keys lanes by OS thread id, so a G's events would all land in its single
 * virtual-thread lane. And on JDK 25 a carrier that commits events after a virtual thread mounted
 * on it committed some loses most of its own: in JfrIT's workload the Ms committed 17000 GoRun
 * events and the file held 1207 while the Gs committed their GoUnblocks themselves, and all 17388
 * once they did not (found while writing JfrIT; not yet reported). A queue that reaches 16384
 * events in one run is committed by the G. The slice that sysmon ends when it retakes a P from a
 * hog is committed by sysmon (lane gmp-sysmon, field {@code m} still names the M): after the retake
 * the G may take a new P and begin a new slice at any moment, and nothing orders sysmon's end of
 * the old one before the M's next look at it.
 *
 * <h3>The slice record</h3>
 *
 * A GoRun is not an event object until it has to be one. The M keeps the open slice in plain
 * fields of its own (Machine.traceRun*: begin, the coarse clock at the begin, goid, P, runnext,
 * schedLatency), written at the begin from the clock read that schedLatency needs anyway. At
 * the end it makes a GoRun only if the slice is at least {@link #runThreshold}, the smallest
 * GoRun threshold of the running recordings (read from their settings by the listener, on JFR's
 * own thread: getRecordings takes JFR's recorder lock, which sysmon must never wait for). So
 * gmp4j.jfc's 10 ms GoRun costs a clock read and five plain stores per run, and nothing else
 * for the runs below 10 ms, which are nearly all.
 *
 * <p>The end clock read is skipped too when no sysmon tick fell inside the slice ({@code
 * Sched.coarseNow} unchanged since the begin) and the threshold is at least {@link
 * #SKIP_END_MIN}: such a slice is shorter than one sysmon sleep. While that holds, sysmon
 * sleeps at most half the threshold ({@link #sysmonSleepCapUs}), so a slice that reaches the
 * threshold sees a tick unless the OS keeps sysmon off a CPU for longer than that (and then
 * the time slice's preemption, sysmon's job too, is as late).
 *
 * <p>The event gets the slice's times from nanoTime: JFR takes an event's start only from
 * {@code begin()}, so its two implicit fields ({@code startTime}, {@code duration}, in JFR's
 * ticks) are set through VarHandles on our own class, and nanoTime is turned into ticks by
 * {@link TickClock}, measured from a probe event's {@code begin()} between two nanoTime reads
 * (nanosecond ticks since JVM start on Linux: an offset, exact to the probe's 40 ns; any other
 * rate is measured over 2 ms and refined at every refresh). Both are JDK internals; without the
 * fields GoRun is unavailable, with one line. Rejected: an event per run (the design before):
 * an allocation and three clock reads per run made gmp4j.jfc cost 3.0x on ping-pong.
 *
 * <h3>The end of a run</h3>
 *
 * A G that parks or yields can be readied, and run by another M, before its first M is back
 * from {@code runContinuation}: the carrier may be descheduled for a millisecond right after the
 * unmount. A slice ended at that M's clock would then overlap the G's next one. So the end is
 * the earliest of: the M's clock read right after the run returns (before its post-run CAS
 * lets anyone ready the G); the time at which a readier whose CAS found the G still running
 * readied it ({@link #runStoppedBy}, before it queues the G: the M's own carrier-side submit of
 * a yield in {@code Machine.traceRunStopOwn}, any other readier as a {@link StopStamp} in the
 * M's volatile {@code traceRunStoppedBy}, named by goid and readying sequence so that a late
 * readier of an older slice is ignored); and gdestroy's stamp ({@link #destroyStamped}: not
 * for a thresholded GoRun without GoDestroy) when another M destroyed the G after a duplicate
 * submit while the M of the exit was still on its way back. The readier finds
 * the M in {@code gp.m}: the JDK's state write at the park orders the M's write of it before the
 * readier's read. If the M reads no stamp, the readier's write, and so the G's next run, come
 * after the M's read, and so after its clock read.
 *
 * <p>The slice state is confined to the M and the G mounted on it (they never run at once; see
 * 'Hog hand-off' in {@link HogHandoff}); sysmon reads the open slice only between its acquire of
 * the M's phold word and its retake CAS, when the run number pins it.
 *
 * <h3>Reused event objects</h3>
 *
 * An M commits the same GoRun and GoDestroy object again and again, and keeps a stack of the
 * GoUnblocks its Gs queued, which they fill again (Machine.traceRunEvent, traceDestroyEvent,
 * traceUnblockFree). This is safe because of what JDK 25's instrumented event methods do (read
 * in jdk.jfr.internal.EventInstrumentation): {@code begin()} sets {@code startTime}, {@code
 * end()} sets {@code duration}, and {@code commit()} reads the event's fields and writes them
 * to the thread's JFR buffer before it returns; it writes a field of the object only to fill a
 * {@code duration} left at 0 after a begin, or the {@code startTime} of a {@code @Throttle}
 * event (none of ours has one). So an object whose fields are all set again before each
 * commit, by one thread at a time, records what a new one would: GoRun's times are set through
 * the VarHandles, a GoUnblock's through its own (or by {@code begin()} and {@code end()}) each
 * time, and GoDestroy, an instant, never has {@code startTime} set, so commit times it now.
 * Each object is confined like the slice record: to the M and the G mounted on it. A GoRun the
 * G queues (entersyscall) or sysmon commits, and the other events, are still allocated per
 * event.
 *
 * <h3>Cost</h3>
 *
 * Off: one opaque load and a branch per site (ready, execute, the syscall bracket, steal,
 * idle-list operations); nothing in Preempt.poll. gmp4j.jfc: the slice record above, whose
 * begin costs a {@code System.nanoTime} per run (35-75 ns on the 2-vCPU Xeon VM, even with the
 * TSC clock source), and nothing per readying: while every recording's GoRun threshold is at
 * least {@link #SKIP_END_MIN}, the readying takes no clock read of its own, and schedLatency is
 * measured only for the readyings that take Go's tracking stamp (one in eight, the ones {@code
 * /sched/latencies} samples) and is 0 for the others; a readying that finds the G still
 * running still reads the clock, for 'The end of a run'. With a shorter threshold, every
 * readying is timed. Found with JFR's own execution samples at 1 ms: with the readying's clock
 * read, gmp4j.jfc moved about 10% of the ping-pong's samples into the two safepoint polls
 * after the two clock reads. Measured in pairs of forks (bench/jfr-cost), gmp4j.jfc costs the
 * ping-pong 5-10%, and a build whose begin took coarseNow instead of the clock 2%: the begin's
 * nanoTime is most of it, and is what an exact begin costs, since Java code has no cheaper
 * exact clock (Go's tracer reads the TSC). A begin from sysmon's coarse clock would be off by
 * up to a sysmon sleep, half the threshold, and let slices overlap in JMC. gmp4j-detail.jfc:
 * an event object per event but the reused ones above, and JFR's thread-local write per
 * commit.
 *
 * <p>One cost is the machine's, not ours: on AVX-512 CPUs, C2 code that allocates or copies
 * with 512-bit registers leaves their upper halves dirty, and the JDK's thaw, C++ compiled with
 * legacy SSE encodings, then pays the SSE/AVX transition penalty at its first vector
 * instruction. Found with perf (90% of thaw's samples on its prologue) and confirmed three
 * ways on the 2-vCPU Xeon: {@code -XX:UseAVX=2} removes it; a 64-byte object stored per run
 * costs 500-900 ns per ping-pong round trip and a 16-byte one nothing; and one arraycopy stub
 * call (which ends with a vzeroupper) before the thaw took the per-run event design from 3,100
 * to 1,900-2,400 ns. Hence the slice record: on gmp4j.jfc's path the M allocates nothing
 * between two runs. gmp4j-detail.jfc, which makes every event, still pays it. The stub call
 * was tried there before each thaw and left out: in the slice-record design its effect on
 * detail runs was inside the noise (3,037-3,700 against 2,639-3,073 ns with UseAVX=2), and it
 * put a check into every execute.
 */
final class Trace {
  private Trace() {}

  // One bit per event type in enabled, in Listener.TYPES order.
  static final int GO_CREATE = 1;
  static final int GO_RUN = 1 << 1;
  static final int GO_UNBLOCK = 1 << 2;
  static final int GO_SYSCALL = 1 << 3;
  static final int GO_DESTROY = 1 << 4;
  static final int RUNQ_STEAL = 1 << 5;
  static final int PREEMPT_REQUEST = 1 << 6;
  static final int PROC_HANDOFF = 1 << 7;
  static final int PROCS_CHANGE = 1 << 8;
  static final int PROC_IDLE = 1 << 9;

  // GoRun end reasons, as Go's GoStop/GoBlock reasons and the rest.
  static final int END_BLOCK = 0;
  static final int END_GOSCHED = 1;
  static final int END_PREEMPTED = 2;
  static final int END_SYSCALL = 3;
  static final int END_HANDOFF = 4;
  static final int END_EXIT = 5;

  private static final String[] END_NAMES = {
    "block", "gosched", "preempted", "syscall", "handoff", "exit"
  };

  /** Events an M keeps for committing after the run: at first, and at most. */
  private static final int PENDING = 64;

  private static final int PENDING_MAX = 1 << 14;

  /**
   * The event types some recording has on, one bit each. Written by sysmon (refresh) and by
   * the listener; read by every site, as the field itself and not through a VarHandle ('Loads'
   * in {@link Processor}): a stale bit costs an event or loses one around a
   * recording's start or stop, never a wrong event.
   */
  private static volatile int enabled;

  /**
   * The registered EventTypes, in Listener.TYPES order, or null until JFR is up. Written once by
   * the listener (volatile publish); read by refresh.
   */
  private static volatile EventType[] types;

  /** Until when sysmon refreshes every cycle (nanoTime); see the overview. Racy, volatile. */
  private static volatile long refreshEveryCycleUntil;

  private static long lastRefresh;

  /**
   * The smallest GoRun threshold (ns) among the running recordings that have GoRun on: a slice
   * shorter than this gets no event ('The slice record'). 0 when unknown (JFR still filters at
   * commit). Written by refresh; read racily by the Ms: a stale value costs an event that JFR
   * drops, or drops a slice within a sysmon cycle of a settings change.
   */
  private static volatile long runThreshold;

  /** Whether an M may skip the clock read at a slice's end: runThreshold >= SKIP_END_MIN. */
  private static volatile boolean runSkipEnd;

  /** Sysmon's longest sleep, and so the longest slice that can fall between two of its ticks. */
  static final long SKIP_END_MIN = 10_000_000L;

  /**
   * GoRun's and GoUnblock's implicit JFR fields startTime and duration (ticks), or null where
   * not found: static finals of a holder class, so that C2 folds each handle into a plain store
   * (as non-final statics they were calls through the VarHandle guards, 8% of a detail
   * ping-pong's samples). Loaded by {@link #findRunFields}, after JFR registered both classes;
   * read only after a read of {@link #clock}, which is published after that.
   */
  private static final class TimeFields {
    static final VarHandle RUN_START = timeField(TraceEvents.GoRun.class, "startTime");
    static final VarHandle RUN_DURATION = timeField(TraceEvents.GoRun.class, "duration");

    /** GoUnblock's: with them a readying's one clock read times its GoUnblock too ('Cost'). */
    static final VarHandle UNBLOCK_START = timeField(TraceEvents.GoUnblock.class, "startTime");

    static final VarHandle UNBLOCK_DURATION = timeField(TraceEvents.GoUnblock.class, "duration");

    /** Whether GoRun's two fields were found; without them GoRun is unavailable. */
    static final boolean RUN = RUN_START != null && RUN_DURATION != null;

    /** Whether GoUnblock's were; without them it times itself with begin() and end(). */
    static final boolean UNBLOCK = UNBLOCK_START != null && UNBLOCK_DURATION != null;

    private TimeFields() {}
  }

  /** System.nanoTime to JFR ticks, or null until measured: see 'The slice record'. */
  private static volatile TickClock clock;

  /**
   * Whether schedLatency is measured only for the readyings that take Go's tracking stamp (one in
   * eight): while every recording's GoRun threshold is at least {@link #SKIP_END_MIN} ('Cost').
   * Called by Sched.ready with GoRun on.
   */
  static boolean latencySampled() {
    return runSkipEnd;
  }

  /**
   * Whether gdestroy stamps the G for an exit M not back yet ('The end of a run'): the stamp keeps
   * that M's last GoRun of the G before its GoDestroy, so it is needed only while GoDestroy is
   * on or slices are short enough to be many; a thresholded GoRun alone (gmp4j.jfc) goes without,
   * and such a slice may then end up to that M's return later. Called by gdestroy with GoRun on.
   */
  static boolean destroyStamped() {
    return !runSkipEnd || on(GO_DESTROY);
  }

  /** Whether the event with {@code bit} may be on. Any thread; one volatile load. */
  static boolean on(int bit) {
    return (enabled & bit) != 0; // pairs with the store in refresh
  }

  /**
   * Hooks gmp4j into JFR for scheduler {@code s}; see step 1. Never throws: without the jdk.jfr
   * module or on any failure, nothing is traced. Called once, at scheduler start.
   */
  static void install(Sched s) {
    // The hot paths load this class for on(); nothing in its signatures or field types needs
    // jdk.jfr to be verified, so a JVM without that module only fails here, and quietly.
    try {
      FlightRecorder.addListener(new Listener(s));
    } catch (Throwable t) {
      // No JFR in this JVM (a jlink image without jdk.jfr): the bits stay 0.
    }
  }

  private static final class Listener implements FlightRecorderListener {
    // In the bit order of enabled. Here, not in Trace: a class literal loads its class.
    private static final Class<?>[] TYPES = {
      TraceEvents.GoCreate.class,
      TraceEvents.GoRun.class,
      TraceEvents.GoUnblock.class,
      TraceEvents.GoSyscall.class,
      TraceEvents.GoDestroy.class,
      TraceEvents.RunqSteal.class,
      TraceEvents.PreemptRequest.class,
      TraceEvents.ProcHandoff.class,
      TraceEvents.ProcsChange.class,
      TraceEvents.ProcIdle.class,
      TraceEvents.SchedStats.class
    };

    private final Sched sched;

    Listener(Sched sched) {
      this.sched = sched;
    }

    @Override
    public void recorderInitialized(FlightRecorder recorder) {
      try {
        EventType[] t = new EventType[TYPES.length];
        for (int i = 0; i < TYPES.length; i++) {
          @SuppressWarnings("unchecked")
          Class<? extends jdk.jfr.Event> c = (Class<? extends jdk.jfr.Event>) TYPES[i];
          FlightRecorder.register(c);
          t[i] = EventType.getEventType(c);
        }
        FlightRecorder.addPeriodicEvent(TraceEvents.SchedStats.class, () -> schedStats(sched));
        findRunFields();
        types = t;
        runThresholdUpdate();
        refreshSoon();
      } catch (Throwable e) {
        System.err.println("gmp4j: JFR events unavailable: " + e);
      }
    }

    @Override
    public void recordingStateChanged(Recording recording) {
      runThresholdUpdate();
      refreshSoon();
    }
  }

  /**
   * Refreshes now (for a recording already running when JFR came up), and asks sysmon to refresh
   * every cycle for a while. On JFR's thread, inside its recorder lock: so refresh must never
   * call into JFR for anything that takes that lock (getRecordings does: see
   * runThresholdUpdate), or sysmon, inside refresh, and this thread would wait for each other.
   */
  private static void refreshSoon() {
    refreshEveryCycleUntil = System.nanoTime() + 100_000_000L;
    refresh();
  }

  /** sysmon's refresh of {@link #enabled}; see step 2. Called by sysmon every cycle. */
  static void sysmonTick(long now) {
    if (types == null) {
      return;
    }
    if (now - refreshEveryCycleUntil < 0 || now - lastRefresh >= 1_000_000_000L) {
      lastRefresh = now;
      refresh();
    }
  }

  private static synchronized void refresh() {
    EventType[] t = types;
    if (t == null) {
      return;
    }
    int bits = 0;
    for (int i = 0; i < t.length; i++) {
      if (t[i].isEnabled()) {
        bits |= 1 << i;
      }
    }
    if ((bits & GO_RUN) != 0 && !calibrate()) {
      bits &= ~GO_RUN; // no slice without a clock: JFR has not applied the settings yet
    }
    enabled = bits; // single writer: under the class lock
  }

  /**
   * Sysmon's longest sleep while the Ms skip the clock read at a slice's end: half the threshold,
   * so a slice that reaches it has seen a sysmon tick ('The slice record'). In microseconds.
   */
  static long sysmonSleepCapUs() {
    return runSkipEnd && on(GO_RUN) ? runThreshold / 2_000 : Long.MAX_VALUE;
  }

  /**
   * Recomputes {@link #runThreshold} from the recordings' settings. Called on JFR's thread (the
   * listener), which holds the recorder lock that getRecordings takes: never from sysmon, which
   * must not wait for a dump.
   */
  private static void runThresholdUpdate() {
    EventType[] t = types;
    if (t != null) {
      long threshold = runThreshold(t[1]);
      runThreshold = threshold;
      runSkipEnd = threshold >= SKIP_END_MIN;
    }
  }

  /** The GoRun threshold of every running recording that has it on, the smallest; 0 if unsure. */
  private static long runThreshold(EventType type) {
    long min = Long.MAX_VALUE;
    String byId = Long.toString(type.getId());
    try {
      for (Recording r : FlightRecorder.getFlightRecorder().getRecordings()) {
        if (r.getState() != jdk.jfr.RecordingState.RUNNING) {
          continue;
        }
        Map<String, String> settings = r.getSettings();
        String enabled = setting(settings, type.getName(), byId, "enabled");
        if (!"true".equals(enabled)) {
          continue; // off in this one (GoRun is @Enabled(false) unless the settings name it)
        }
        min = Math.min(min, parseNanos(setting(settings, type.getName(), byId, "threshold")));
      }
    } catch (RuntimeException e) {
      return 0; // JFR shutting down, or a recording closed under us: JFR's own filter decides
    }
    return min == Long.MAX_VALUE ? 0 : min;
  }

  /** A recording's value for the event's setting; keyed by name, or by id (Recording.enable). */
  private static String setting(Map<String, String> s, String name, String id, String key) {
    String v = s.get(name + "#" + key);
    return v != null ? v : s.get(id + "#" + key);
  }

  /** A JFR timespan ("10 ms", "0 ns", "1 s"...) in ns; 0 for none or anything else. */
  static long parseNanos(String v) {
    if (v == null) {
      return 0;
    }
    String[] parts = v.trim().split("\\s+");
    if (parts.length != 2) {
      return 0;
    }
    long n;
    try {
      n = Long.parseLong(parts[0]);
    } catch (NumberFormatException e) {
      return 0;
    }
    long unit =
        switch (parts[1]) {
          case "ns" -> 1L;
          case "us" -> 1_000L;
          case "ms" -> 1_000_000L;
          case "s" -> 1_000_000_000L;
          case "m" -> 60_000_000_000L;
          case "h" -> 3_600_000_000_000L;
          case "d" -> 86_400_000_000_000L;
          default -> 0L;
        };
    return n < 0 || unit == 0 || n > Long.MAX_VALUE / unit ? 0 : n * unit;
  }

  /**
   * Finds GoRun's and GoUnblock's startTime and duration fields, which JFR adds to every event
   * class (loads {@link TimeFields}); says in one line if GoRun's are missing.
   */
  private static void findRunFields() {
    if (!TimeFields.RUN) {
      System.err.println("gmp4j: JFR GoRun events unavailable (no startTime/duration field)");
    }
  }

  /**
   * One of the implicit long fields (ticks) that JFR adds to event class {@code type}, or null if
   * it has none.
   */
  private static VarHandle timeField(Class<?> type, String name) {
    try {
      return MethodHandles.privateLookupIn(type, MethodHandles.lookup())
          .findVarHandle(type, name, long.class);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  /**
   * System.nanoTime to JFR ticks: a base pair and a rate. JFR's clock is its own
   * (os::elapsed_counter, nanoseconds since JVM start on Linux, macOS and with most settings; the
   * TSC or QueryPerformanceCounter elsewhere), so it is measured: a probe event's begin between two
   * nanoTime reads.
   */
  private record TickClock(long nanoBase, long tickBase, double rate) {
    long ticks(long nanos) {
      long d = nanos - nanoBase;
      return tickBase + (rate == 1.0 ? d : Math.round(d * rate));
    }
  }

  /**
   * Measures {@link #clock} once, or refines a rate that is not 1: whether slices can be timed.
   * Requires the class lock (refresh); GoRun must be on in JFR, or the probe's begin stays 0.
   */
  private static boolean calibrate() {
    if (!TimeFields.RUN) {
      return false;
    }
    TickClock c = clock;
    if (c != null && c.rate == 1.0) {
      return true;
    }
    long[] first = probe();
    if (first == null) {
      return false;
    }
    if (c == null) {
      long spinUntil = System.nanoTime() + 2_000_000L; // once per JVM: a rate from 2 ms
      while (System.nanoTime() - spinUntil < 0) {
        Thread.onSpinWait();
      }
      long[] second = probe();
      if (second == null) {
        return false;
      }
      c = new TickClock(first[0], first[1], 0);
      first = second;
    }
    double rate = (double) (first[1] - c.tickBase) / (first[0] - c.nanoBase);
    // Nanosecond ticks, as on Linux: exact, from then on. Any other: refined at every refresh.
    clock = new TickClock(c.nanoBase, c.tickBase, Math.abs(rate - 1.0) < 1e-3 ? 1.0 : rate);
    return true;
  }

  /**
   * {nanoTime, ticks} of a GoRun's begin, from the tightest of five tries; null if GoRun is off.
   */
  private static long[] probe() {
    long bestWidth = Long.MAX_VALUE;
    long[] best = null;
    for (int i = 0; i < 5; i++) {
      TraceEvents.GoRun e = new TraceEvents.GoRun();
      long n0 = System.nanoTime();
      e.begin();
      long n1 = System.nanoTime();
      long ticks = (long) TimeFields.RUN_START.get(e);
      if (ticks == 0) {
        return null;
      }
      if (n1 - n0 < bestWidth) {
        bestWidth = n1 - n0;
        best = new long[] {n0 + (n1 - n0) / 2, ticks};
      }
    }
    return best;
  }

  /** Sets a GoRun's JFR start and duration from nanoTimes; false if there is no clock yet. */
  private static boolean setTimes(TraceEvents.GoRun e, long begin, long stop) {
    TickClock c = clock;
    if (c == null) {
      return false;
    }
    long start = c.ticks(begin);
    TimeFields.RUN_START.set(e, start);
    long duration = Math.max(1, c.ticks(stop) - start); // 0 would make commit time it
    TimeFields.RUN_DURATION.set(e, duration);
    return true;
  }

  // ------------------------------------------------------------------------------------------
  // Goroutine events

  /** GoCreate, on the creating thread. Called by Sched.adopt with the bit set. */
  static void goCreate(Goroutine gp) {
    TraceEvents.GoCreate e = new TraceEvents.GoCreate();
    e.goid = gp.goid;
    e.parentGoid = currentGoid();
    e.thread = gp.thread;
    commitInstant(e);
  }

  /**
   * Begins the GoUnblock of gp, timed before Sched.ready queues it; {@link #unblockCommit} says
   * where it went. {@code now}: the readying's System.nanoTime, or 0 if it took none. With one,
   * the event is an instant at that time (its duration one tick), with no clock read of its own;
   * without, {@code begin()} and {@code end()} time it here. {@code byGoid}: the readier's goid
   * (0: a platform thread), another thread's when an M queues a G readied while it ran ('Readied
   * while running' in Goroutine). Called by Sched.ready with the bit set.
   */
  static Object unblockBegin(Goroutine gp, long now, long byGoid) {
    TraceEvents.GoUnblock e = null;
    Machine mp = committer();
    if (mp != null && mp.traceUnblockFreeCount != 0) {
      int n = --mp.traceUnblockFreeCount;
      e = (TraceEvents.GoUnblock) mp.traceUnblockFree[n];
      mp.traceUnblockFree[n] = null;
    }
    if (e == null) {
      e = new TraceEvents.GoUnblock();
    }
    // Both implicit fields set anew ('Reused event objects'), before the G is queued: its next
    // run must not start before its unblock.
    TickClock c = clock;
    if (now != 0 && c != null && TimeFields.UNBLOCK) {
      TimeFields.UNBLOCK_START.set(e, c.ticks(now)); // the readying's own read, on GoRun's clock
      TimeFields.UNBLOCK_DURATION.set(e, 1L); // 0 would make commit time it
    } else {
      e.begin();
      e.end(); // an instant here too, so that commit never times it
    }
    e.goid = gp.goid;
    e.byGoid = byGoid;
    return e;
  }

  /** Commits the GoUnblock of {@link #unblockBegin}, saying where the G went. */
  static void unblockCommit(Object unblock, String to) {
    TraceEvents.GoUnblock e = (TraceEvents.GoUnblock) unblock;
    e.to = to;
    Machine mp = committer();
    if (mp == null) {
      e.commit();
    } else if (Thread.currentThread() == mp) {
      e.commit();
      recycle(mp, e);
    } else {
      commitOn(mp, e); // flush recycles it
    }
  }

  /**
   * The M that commits the caller's events: the caller if it is an M, the carrier if it is a
   * virtual thread mounted on an M, else null. Its reuse stacks are confined to it and its G.
   */
  private static Machine committer() {
    Thread ct = Thread.currentThread();
    if (ct instanceof Machine mp) {
      return mp;
    }
    return ct.isVirtual() && VirtualThreads.carrier(ct) instanceof Machine mp ? mp : null;
  }

  /** Keeps committed GoUnblock {@code e} for mp's next one. Called by mp, or its G. */
  private static void recycle(Machine mp, Object e) {
    Object[] free = mp.traceUnblockFree;
    if (free == null) {
      free = mp.traceUnblockFree = new Object[PENDING];
    }
    int n = mp.traceUnblockFreeCount;
    if (n < free.length) {
      free[n] = e;
      mp.traceUnblockFreeCount = n + 1;
    }
  }

  /** GoDestroy, on the M. Called by Sched.gdestroy with the bit set. */
  static void goDestroy(Goroutine gp) {
    TraceEvents.GoDestroy e;
    if (Thread.currentThread() instanceof Machine mp) {
      e = (TraceEvents.GoDestroy) mp.traceDestroyEvent;
      if (e == null) {
        e = new TraceEvents.GoDestroy();
        mp.traceDestroyEvent = e;
      }
    } else {
      e = new TraceEvents.GoDestroy();
    }
    e.goid = gp.goid;
    e.commit(); // an instant: startTime stays 0, commit takes the time ('Reused event objects')
  }

  /** The goid of the G running the caller, or of an M's current G, else 0. Any thread. */
  static long currentGoid() {
    Thread ct = Thread.currentThread();
    if (ct.isVirtual()) {
      return VirtualThreads.scheduler(ct) instanceof Goroutine g ? g.goid : 0;
    }
    if (ct instanceof Machine mt) {
      Goroutine g = mt.curg; // the JDK's carrier-side code inside a run: that G did it
      return g == null ? 0 : g.goid;
    }
    return 0;
  }

  /**
   * Begins a GoRun slice of gp on pp, held by mp, at {@code now} (System.nanoTime): only the
   * slice record's fields, no event ('The slice record'). Called by mp (execute) or gp on mp
   * (after a syscall or a retake), before the phold release that opens the slice to sysmon.
   */
  static void runBegin(
      Machine mp, Goroutine gp, Processor pp, boolean runnext, long now, long latency) {
    mp.traceRunGoid = gp.goid;
    mp.traceRunP = pp.id;
    mp.traceRunNext = runnext;
    mp.traceRunLatency = latency;
    mp.traceRunCoarse = mp.sched.coarseNow;
    mp.traceRunBegin = now == 0 ? 1 : now; // 0 means no slice
  }

  /**
   * The end time of mp's open slice, read right after its run returned; or 0, and the slice is
   * dropped, when it is surely shorter than every recording's threshold: no sysmon tick fell
   * inside it ('The slice record'). Called only by mp, or its G for a syscall.
   */
  static long runStopTime(Machine mp) {
    if (runSkipEnd && mp.sched.coarseNow == mp.traceRunCoarse) {
      mp.traceRunBegin = 0;
      return 0;
    }
    return System.nanoTime();
  }

  /**
   * Ends mp's open slice, of gp, with {@code end} at {@code stop} (from {@link #runStopTime}),
   * or earlier if a readier or gdestroy stamped gp first ('The end of a run'); commits a GoRun
   * on mp, or queues it there when the caller is mp's G, if the slice is not below the
   * threshold. Called by mp or by the G on it.
   */
  static void runEnd(Machine mp, Goroutine gp, long ran, int end, String waitReason, long stop) {
    long begin = mp.traceRunBegin;
    mp.traceRunBegin = 0;
    long own = mp.traceRunStopOwn;
    if (own != 0) {
      mp.traceRunStopOwn = 0;
      stop = earlier(stop, own, begin);
    }
    Object by = mp.traceRunStoppedBy;
    if (by != null) {
      mp.traceRunStoppedBy = null; // a stale one (a late readier of an older slice) is dropped
      if (by instanceof StopStamp st && st.goid == gp.goid && st.seq == Goroutine.seqOf(ran)) {
        stop = earlier(stop, st.nanos, begin);
      }
    }
    if (gp.status() == Goroutine.DEAD) {
      // Another M destroyed it first (a duplicate submit): its gdestroy stamp.
      stop = earlier(stop, gp.traceRunnableSinceVolatile(), begin);
    }
    commitRun(mp, gp, begin, stop, end, waitReason);
  }

  private static void commitRun(
      Machine mp, Goroutine gp, long begin, long stop, int end, String waitReason) {
    if (stop - begin < runThreshold) {
      return;
    }
    TraceEvents.GoRun e;
    if (Thread.currentThread() == mp) {
      // Committed now, on mp: its own GoRun object again ('Reused event objects').
      e = (TraceEvents.GoRun) mp.traceRunEvent;
      if (e == null) {
        e = new TraceEvents.GoRun();
        mp.traceRunEvent = e;
      }
      fill(e, mp, begin);
    } else {
      e = runEvent(mp, begin); // the G's, queued: an object of its own
    }
    e.end = END_NAMES[end];
    e.waitReason = waitReason == null ? "" : waitReason;
    if (setTimes(e, begin, stop)) {
      commitOn(mp, e);
    }
  }

  /** {@code t} if it falls inside the slice [begin, stop), else stop. */
  private static long earlier(long stop, long t, long begin) {
    return t != 0 && t - begin > 0 && t - stop < 0 ? t : stop;
  }

  /** A readier's end of another thread's slice: that slice's G and readying sequence, and when. */
  private record StopStamp(long goid, long seq, long nanos) {}

  /**
   * Ends the slice of gp, which the caller just readied while its M had not come back from the
   * run ({@code was == RUNNING}), at {@code now}: see 'The end of a run'. Called by Sched.ready
   * right after its CAS, before it queues gp.
   */
  static void runStoppedBy(Goroutine gp, long now) {
    Machine om = gp.m; // the JDK's state write at the park orders the M's write of it before us
    if (om == null) {
      return;
    }
    if (Thread.currentThread() == om) {
      om.traceRunStopOwn = now; // its own carrier-side submit of a yield
    } else {
      om.traceRunStoppedBy = new StopStamp(gp.goid, gp.runSeq() - 1, now);
    }
  }

  /** {@link #runEnd} now, for a slice the running G ends itself (entersyscall). */
  static void runEndNow(Machine mp, Goroutine gp, int end) {
    long stop = runStopTime(mp);
    if (stop != 0) {
      long begin = mp.traceRunBegin;
      mp.traceRunBegin = 0;
      commitRun(mp, gp, begin, stop, end, ""); // running its own code: nobody readied it
    }
  }

  private static TraceEvents.GoRun runEvent(Machine mp, long begin) {
    TraceEvents.GoRun e = new TraceEvents.GoRun();
    fill(e, mp, begin);
    return e;
  }

  /** Sets every field of GoRun {@code e} but its times and end from mp's slice record. */
  private static void fill(TraceEvents.GoRun e, Machine mp, long begin) {
    e.goid = mp.traceRunGoid;
    e.p = mp.traceRunP;
    e.m = mp.id;
    e.runnext = mp.traceRunNext;
    e.schedLatency = mp.traceRunLatency;
    e.beginNanos = begin;
    e.waitReason = ""; // sysmon's hand-off sets none; runEnd's callers set theirs
  }

  /** Drops mp's open slice (a spurious run, or one that sysmon took). Called by mp. */
  static void runDrop(Machine mp) {
    mp.traceRunBegin = 0;
  }

  /**
   * The slice of the run sysmon is about to retake, as an event still to be ended, or null:
   * read before the retake CAS, when the run number pins it (see the overview). Called only by
   * sysmon.
   */
  static Object runPeek(Machine mp) {
    long begin = mp.traceRunBegin;
    return begin == 0 ? null : runEvent(mp, begin);
  }

  /** Ends and commits, on sysmon, a slice whose P sysmon retook. Called only by sysmon. */
  static void runHandedOff(Object slice) {
    TraceEvents.GoRun e = (TraceEvents.GoRun) slice;
    long stop = System.nanoTime();
    if (stop - e.beginNanos < runThreshold) {
      return;
    }
    e.end = END_NAMES[END_HANDOFF];
    if (setTimes(e, e.beginNanos, stop)) {
      e.commit();
    }
  }

  /** Begins gp's GoSyscall on mp, leaving pp. Called by gp in entersyscall with the bit set. */
  static void syscallBegin(Goroutine gp, Machine mp, Processor pp) {
    TraceEvents.GoSyscall e = new TraceEvents.GoSyscall();
    e.begin();
    e.goid = gp.goid;
    e.p = pp.id;
    e.m = mp.id;
    // The last call's event was taken by its exitsyscall, even after a spurious submit ('A
    // spurious submit inside the bracket' in Syscall), or by the end of the run it parked in.
    assert mp.traceSyscall == null : "M" + mp.id + ": a GoSyscall still open at syscallBegin";
    mp.traceSyscall = e;
  }

  /**
   * Takes the end time of GoSyscall {@code sys}, before exitsyscall knows whether it kept its
   * P. Called by its G in exitsyscall, or by the M of a run that parked inside the bracket
   * (Machine.traceSyscall).
   */
  static void syscallStop(Object sys) {
    ((TraceEvents.GoSyscall) sys).end();
  }

  /**
   * Closes stopped GoSyscall {@code sys}, to be committed on mp (null: now, on the caller).
   * Same callers as {@link #syscallStop}.
   */
  static void syscallEnd(Object sys, Machine mp, boolean lostP) {
    TraceEvents.GoSyscall e = (TraceEvents.GoSyscall) sys;
    e.lostP = lostP;
    if (mp == null) {
      commitOnCarrier(e);
    } else {
      commitOn(mp, e);
    }
  }

  /** An instant event: its time now, committed as {@link #commitOnCarrier} says. */
  private static void commitInstant(jdk.jfr.Event e) {
    Thread ct = Thread.currentThread();
    if (ct.isVirtual() && VirtualThreads.carrier(ct) instanceof Machine mp) {
      e.begin(); // the time is now, whenever the M commits it
      e.end();
      commitOn(mp, e);
    } else {
      e.commit();
    }
  }

  /**
   * Commits ended event {@code e} now, or, on a G mounted on one of our Ms, queues it for that
   * M: see 'Who commits what'. Any thread.
   */
  private static void commitOnCarrier(Object e) {
    Thread ct = Thread.currentThread();
    if (ct.isVirtual() && VirtualThreads.carrier(ct) instanceof Machine mp) {
      commitOn(mp, e);
    } else {
      ((jdk.jfr.Event) e).commit();
    }
  }

  /**
   * Commits ended event {@code e} now if the caller is mp, else queues it for mp. Called by mp
   * or the G mounted on it.
   */
  private static void commitOn(Machine mp, Object e) {
    // Object, not jdk.jfr.Event: verifying this class must not load jdk.jfr (see install).
    if (Thread.currentThread() == mp) {
      ((jdk.jfr.Event) e).commit();
      return;
    }
    Object[] q = mp.tracePending;
    int n = mp.tracePendingCount;
    if (q == null || n == q.length) {
      if (n == PENDING_MAX) {
        // A G that readies or creates this many Gs in one run: committed on the G, which on
        // JDK 25 may cost an event of its carrier's ('Who commits what').
        ((jdk.jfr.Event) e).commit();
        return;
      }
      q =
          mp.tracePending =
              java.util.Arrays.copyOf(q == null ? new Object[0] : q, q == null ? PENDING : 2 * n);
    }
    q[n] = e;
    mp.tracePendingCount = n + 1;
  }

  /** Commits what mp's G queued during the run. Called only by mp, after each run. */
  static void flush(Machine mp) {
    int n = mp.tracePendingCount;
    if (n == 0) {
      return;
    }
    Object[] q = mp.tracePending;
    for (int i = 0; i < n; i++) {
      Object e = q[i];
      ((jdk.jfr.Event) e).commit();
      q[i] = null;
      if (e instanceof TraceEvents.GoUnblock) {
        recycle(mp, e);
      }
    }
    mp.tracePendingCount = 0;
  }

  // ------------------------------------------------------------------------------------------
  // P events

  /** RunqSteal, on the thief. Called by Machine.stealWork with the bit set. */
  static void runqSteal(Processor thief, Processor victim, int count, boolean runnext) {
    TraceEvents.RunqSteal e = new TraceEvents.RunqSteal();
    e.thiefP = thief.id;
    e.victimP = victim.id;
    e.count = count;
    e.runnext = runnext;
    e.commit();
  }

  /** PreemptRequest. Called by Preempt.request with the bit set. */
  static void preemptRequest(Processor pp, Goroutine gp, long sliceRan, String reason) {
    TraceEvents.PreemptRequest e = new TraceEvents.PreemptRequest();
    e.p = pp == null ? -1 : pp.id;
    e.goid = gp.goid;
    e.sliceRan = sliceRan;
    e.reason = reason;
    e.commit();
  }

  /**
   * A ProcHandoff timed now, to be committed by {@link #procHandoff}: sysmon reads the time
   * before handoffP, since the M that handoffP wakes may run the P, and a G there enter a
   * syscall, before sysmon commits; a later stamp would put the hand-off after them on the P's
   * lane. Called only by sysmon with the bit set.
   */
  static Object procHandoffBegin() {
    TraceEvents.ProcHandoff e = new TraceEvents.ProcHandoff();
    e.begin();
    e.end();
    return e;
  }

  /**
   * Commits ProcHandoff {@code begun} (from {@link #procHandoffBegin}) of pp from M {@code
   * fromM} to {@code toM} (null: the P went idle), with the G's top frames for a hog. Called
   * only by sysmon.
   */
  static void procHandoff(
      Object begun, Processor pp, int fromM, Machine toM, String reason, Goroutine gp) {
    TraceEvents.ProcHandoff e = (TraceEvents.ProcHandoff) begun;
    e.p = pp.id;
    e.fromM = fromM;
    e.toM = toM == null ? -1 : toM.id;
    e.reason = reason;
    e.goid = gp == null ? 0 : gp.goid;
    e.frames = gp == null || reason.equals("syscall") ? "" : HogHandoff.topFrames(gp.thread);
    e.commit();
  }

  /** ProcsChange. Called by the stop-the-world thread with the bit set. */
  static void procsChange(int old, int nu, boolean api) {
    TraceEvents.ProcsChange e = new TraceEvents.ProcsChange();
    e.old = old;
    e.newProcs = nu;
    e.reason = api ? "api" : "cpuLimit";
    e.commit();
  }

  /** Begins pp's ProcIdle. Requires sched.lock; called by pidleput with the bit set. */
  static void procIdleBegin(Processor pp) {
    TraceEvents.ProcIdle e = new TraceEvents.ProcIdle();
    e.begin();
    e.p = pp.id;
    pp.traceIdle = e;
  }

  /** Ends pp's open ProcIdle. Requires sched.lock; called by pidleget when one is open. */
  static void procIdleEnd(Processor pp) {
    TraceEvents.ProcIdle e = (TraceEvents.ProcIdle) pp.traceIdle;
    pp.traceIdle = null;
    e.end();
    commitOnCarrier(e); // wakeP runs on Gs too
  }

  /** The SchedStats hook, on JFR's periodic thread: SchedMetrics without locks. */
  private static void schedStats(Sched s) {
    Map<String, Object> m = SchedMetrics.read(s);
    TraceEvents.SchedStats e = new TraceEvents.SchedStats();
    e.gomaxprocs = num(m, "/sched/gomaxprocs:threads");
    e.goroutinesCreated = num(m, "/sched/goroutines-created:goroutines");
    e.goroutinesNotInGo = num(m, "/sched/goroutines/not-in-go:goroutines");
    e.goroutinesRunnable = num(m, "/sched/goroutines/runnable:goroutines");
    e.goroutinesRunning = num(m, "/sched/goroutines/running:goroutines");
    e.goroutinesWaiting = num(m, "/sched/goroutines/waiting:goroutines");
    e.goroutines = num(m, "/sched/goroutines:goroutines");
    e.threadsTotal = num(m, "/sched/threads/total:threads");
    e.gomaxprocsChanges = num(m, "/sched/gomaxprocs/changes:changes");
    e.preemptionsRequested = num(m, "/sched/preemptions/requested:preemptions");
    e.preemptionsHonored = num(m, "/sched/preemptions/honored:preemptions");
    e.timesliceOverruns = num(m, "/sched/timeslice/overruns:overruns");
    e.steals = num(m, "/sched/steals:steals");
    e.stealsGoroutines = num(m, "/sched/steals/goroutines:goroutines");
    e.runnextHits = num(m, "/sched/runnext/hits:goroutines");
    e.syscallsHandoffs = num(m, "/sched/syscalls/handoffs:handoffs");
    e.preemptionsHandoffs = num(m, "/sched/preemptions/handoffs:handoffs");
    e.runqueueGlobal = num(m, "/sched/runqueue/global:goroutines");
    long local = 0;
    for (long n : (long[]) m.get("/sched/runqueue/local:goroutines")) {
      local += n;
    }
    e.runqueueLocal = local;
    e.procsIdle = num(m, "/sched/procs/idle:procs");
    e.threadsIdle = num(m, "/sched/threads/idle:threads");
    e.threadsSpinning = num(m, "/sched/threads/spinning:threads");
    e.latenciesCount = total((Float64Histogram) m.get("/sched/latencies:seconds"));
    e.pausesTotalCount = total((Float64Histogram) m.get("/sched/pauses/total/other:seconds"));
    e.commit();
  }

  private static long num(Map<String, Object> m, String name) {
    return (Long) m.get(name);
  }

  private static long total(Float64Histogram h) {
    long n = 0;
    for (long c : h.counts()) {
      n += c;
    }
    return n;
  }
}
