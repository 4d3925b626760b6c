package io.gmp4j.runtime;

/**
 * Beyond Go: sysmon's retake of the P of a G that ignores preemption, and its hand-off to another
 * M (Go's retake and handoffp, applied to a G that is not in a syscall). Confined to sysmon.
 *
 * <h2>Implementation overview: 'Hog hand-off'</h2>
 *
 * A G that runs code without polls (JDK code, classes left out by {@code preempt.exclude}, any
 * code in library mode, native code not marked as a syscall) never honours sysmon's request to
 * yield, and neither does a pinned G, whose yield fails. Go since 1.14 preempts such a G with a
 * signal; before 1.14 it kept its P until it blocked, and so would we: at GOMAXPROCS=1 one long
 * {@code Arrays.sort} would stop the whole program. Instead, once the G has ignored the request
 * for {@code preempt.handoff} (20ms), sysmon takes the P away from its M while the G keeps
 * running, exactly as if sysmon had made the G enter a syscall, and hands the P to another M
 * (Sched.handoffP, starting one if need be). The G and its M then hold no P, as after a syscall
 * that was handed off, and must get one back before the G runs scheduled code again. With
 * {@code asyncpreemptoff=1} the hand-off is off unless {@code preempt.handoff} is set: that
 * option asks for Go's behaviour without preemption, where such a G keeps its P.
 *
 * <h3>Blocked carriers, with the hand-off off</h3>
 *
 * A G whose carrier is blocked (parked while pinned, or waiting for a monitor or in a native
 * call that it cannot unmount from) is not computing: to Go it is an M in a syscall, and Go's
 * sysmon retakes such a P with or without preemption. Without the hand-off, such a P stayed
 * with its blocked G for good, and a cold Spring Boot app under {@code asyncpreemptoff=1}
 * deadlocked in about one start in four under a burst of first requests: a G pinned by class
 * loading (the JVM's upcall) came back from a jar read, found its P handed off, and waited for
 * an idle P while holding the class loader's lock, and the G of every P waited, pinned too, for
 * that lock. So with the hand-off off ({@code preempt.handoff=off}, or {@code
 * asyncpreemptoff=1}), sysmon still runs the protocol below, in {@link #blockedOnly} mode, with
 * the default hand-off of 20 ms: it takes the P only from a G whose carrier is blocked, never
 * from one that computes.
 *
 * <p>Rejected:
 *
 * <ul>
 *   <li>Leaving the P with the G (Go before 1.14): the Gs queued on that P wait for the whole
 *       call, and at GOMAXPROCS=1 so does everything.
 *   <li>Letting the other Ps steal the G's queue: there are no other Ps at GOMAXPROCS=1, and
 *       there are GOMAXPROCS-1 Ps for the rest of the program until the G yields.
 *   <li>Interrupting the carrier: {@code Continuation.tryPreempt} is not implemented in JDK 25.
 *   <li>Making sysmon unwire the P with no cooperation from the G, serialising the carrier with
 *       a handshake (a stack walk) as Linux's membarrier does: the JMM gives a handshake no
 *       ordering, and the G would still have to mark its P operations.
 *   <li>A lock per M around the G's P operations: a lock on every wake-up, where a CAS on a line
 *       the M already owns suffices.
 * </ul>
 *
 * <h3>The phold word</h3>
 *
 * While a G runs, its thread may use its M's P at any moment, and sysmon must not take the P in
 * the middle of such a use. Each M's {@code phold} word (run number, state) arbitrates: the G
 * claims the P around each use, and sysmon retakes with one CAS from G to RETAKEN. The word's
 * layout, its transition table, who writes it, its invariants, and the G's 'Reacquire after an
 * unmount' are 'The phold word' in {@link PHold}; this class is sysmon's side.
 *
 * <h3>The protocol</h3>
 *
 * <ol>
 *   <li>sysmon (Sysmon.retake) sees a running P whose schedtick has not moved for a time slice and
 *       asks its G to yield (Preempt.preemptOne); sysmon is awake to see it, since every P that
 *       starts running wakes it ('Deep sleep' in Sysmon). From then on, each cycle it notes the P's
 *       M and that M's run number ({@link #retake}). While the schedtick stands still and the M
 *       stays in the same run for {@code preempt.handoff}, the G has ignored the request: a runnext
 *       chain or a G that parked and ran again starts a new run and starts the count over, and so
 *       does a syscall, which sysmon's syscall rule covers instead. The count adds up what each
 *       cycle took, except that a cycle in which sysmon slept much longer than it asked (maybe a
 *       pause of the whole JVM) counts less: see 'Pauses'.
 *   <li>sysmon CASes the word from (run, G) to (run, RETAKEN). The CAS fails if the G is inside
 *       a P operation (sysmon tries again next cycle) or if the run is over; a new run has
 *       another number, so a CAS prepared for an older run cannot take the P from a newer one.
 *   <li>On success sysmon owns the P, still marked running and wired to the M: it CASes {@code
 *       m.p} from that P to null, unwires the P, ends the G's time slice on it (schedtick++,
 *       preempt cleared, as the next M would start a new one), marks it idle, leaves the G's
 *       preemption request set, hands the P off (Sched.handoffP), counts and reports.
 *   <li>The G runs on with no P. A claim it tries sees RETAKEN: Sched.ready takes an idle P if
 *       there is one (exitsyscall's slow path; the word goes back to G with a new run number)
 *       and otherwise readies into the global queue; entersyscall has no P to hand off; a poll
 *       (the request is still set) yields, and a pinned G whose yield fails parks its carrier
 *       until it gets an idle P (as exitsyscall does).
 *   <li>When the run returns, the M's closing CAS finds RETAKEN: it clears {@code m.p} and its
 *       scheduler stops it (stopM) until it is handed a P, exactly as after a syscall whose P
 *       was handed off. A G that yielded was queued globally by the JDK's carrier-side submit,
 *       which found no P; one that parked waits like any other.
 * </ol>
 *
 * <h3>Races, step by step</h3>
 *
 * <pre>
 *   T1 the G readies G2              T2 sysmon retakes
 *   CAS phold (r,G) → (r,G_BUSY)     CAS phold (r,G) → (r,RETAKEN)      one of the two fails
 *   runq put on m.p                  (failed: tries next cycle)
 *   store-release (r,G)              CAS (r,G) → (r,RETAKEN)            sees T1's put
 *
 *   T1 the M, after the run          T2 sysmon, prepared with run r
 *   CAS phold (r,G) → (r,SCHED)      CAS phold (r,G) → (r,RETAKEN)      one of the two fails
 *   openPHold (r+1,G), runs G3       CAS (r,G) → ... fails              never G3's P
 *
 *   T1 sysmon, after its CAS         T2 the M, seeing RETAKEN
 *                                    m.p = null; stopM; acquires P'
 *   CAS m.p: P → null                                                   fails: P' != P, since
 *   handoffP(P)                                                         P was nobody's to get
 * </pre>
 *
 * <h3>'Pauses'</h3>
 *
 * A G cannot honour a request while the JVM stops it (a GC, a safepoint), and sysmon, a Java
 * thread, stops with it: it sees only that its sleep overran. Up to issue 16 such a cycle
 * ({@link #pauseSlackNs} over what sysmon asked) started every count over. A G that allocates
 * as it computes (issue 16's commons-math3 product, interpreted under {@code -Xverify:all})
 * brings GCs often, and on a loaded machine sysmon's own sleep overruns as often: the count
 * started over every few cycles and never reached {@code preempt.handoff}. Now nothing starts a
 * count over but the G's schedtick or run. A cycle counts its length, as before, but an
 * overslept one (longer than asked plus the slack) counts at most
 *
 * <pre>
 *   max(asked, slack)        asked: the sleep sysmon asked for, 20us to 10ms
 *                            slack: pauseSlackNs, half of preempt.handoff (at least 5ms)
 * </pre>
 *
 * so a pause, however long, counts at most half a hand-off (as a pause just under the slack
 * always could), and never the whole of it; and an overslept cycle still adds at least the
 * slack, a normal one its whole length, so once the request is ignored, two overslept cycles
 * hand the P off whatever else happens. A G stopped by pauses for most of a hand-off may thus
 * lose its P a little early; a loaded machine, whose scheduler delays sysmon by more than the
 * slack every cycle, no longer keeps a hog on its P.
 *
 * <p>Rejected:
 *
 * <ul>
 *   <li>Measuring what the carrier ran (ThreadMXBean CPU time, about 0.5us a read) and what the
 *       GC stopped (GarbageCollectorMXBean pause time), tried for issue 16: exact, but it loads
 *       java.management into the application at run time. On sysmon, in a cold child JVM on a
 *       loaded machine, that took over a second with no hand-off meanwhile; on a thread of its
 *       own it still adds class loading and initialization to the host's, at the moment a hog
 *       already holds a P. The rule above needs nothing, and its error is bounded.
 *   <li>Counting only CPU time in every cycle: a G parked while pinned, or in a native call not
 *       marked as a syscall, holds its P using no CPU and would never be handed off. 'Carrier
 *       time' below counts CPU time only while the carrier wants a CPU.
 *   <li>Bounding the number of restarts: a G that pauses often still keeps its P for that many
 *       hand-offs.
 * </ul>
 *
 * <h3>'Carrier time'</h3>
 *
 * Up to issue 11 the count was wall time only, so a carrier that the OS left without a CPU for
 * {@code preempt.handoff} looked like a G that ignored the request: on a loaded host, benchmarks
 * with no hog at all printed up to 124 "ignored preemption" lines naming {@code
 * VirtualThread.tryYield}, {@code park}, and loops that had polls (StarvedCarriersIT: 22 to 38
 * hand-offs in 4 s on one CPU beside six busy processes). Now, once the count reaches the
 * hand-off, sysmon also asks the OS ({@link CarrierCpu}) and keeps counting instead when the
 * carrier is starved: it wants a CPU (Linux state {@code R}, running or on a run queue) and has
 * had less than the hand-off of CPU time since the count began:
 *
 * <pre>
 *   the carrier, when the count is up     state   CPU since the start   so sysmon
 *   ran the G's code all along            R       about the count       hands the P off
 *   descheduled by the OS                 R       less                  keeps counting
 *   parked while pinned                   S       any                   hands the P off
 *   blocked (a native call not marked,    S, D    less, and none for    hands the P off
 *   a JVM lock, a safepoint)                      half a hand-off
 *   blocked, but it ran just before       S, D    less                  keeps counting
 * </pre>
 *
 * Whatever the OS says, a G that is in the middle of its unmount (JDK 25's PARKING, YIELDING,
 * BLOCKING, WAITING and their timed forms, or YIELDED while its M is still in the carrier-side
 * submit) keeps its P: it has stopped running its own code, and its carrier is only slow to
 * finish (starved, or asleep on a lock that a starved thread holds: in StarvedCarriersIT a
 * carrier in state S with 0.1ms of CPU in the count, its G YIELDED, was handed off before this
 * rule). A transition that pins ends in PINNED, where the G is handed off as before. So does a
 * G (or its carrier, in the JDK's carrier-side submit) queued for sched.lock: it waits for the
 * scheduler, not for itself.
 *
 * The CPU time of a running thread is brought up to date at scheduler ticks and switches, so it
 * may lag by a tick: {@link CarrierCpu#TICK_NS} (4ms, HZ=250) is added before the compare, and a
 * hand-off shorter than a tick is wall time only. A G that ignores us on a busy host is still
 * handed off once it has had {@code preempt.handoff} less a tick of CPU. Where the OS says
 * nothing (not Linux) the count is wall time. Cost: one small {@code /proc} read each cycle
 * while a count runs, and two more each cycle after it is up.
 *
 * <h3>'Blocked carriers'</h3>
 *
 * The state is a snapshot, and a carrier with its G mounted blocks for many reasons: a native
 * call that nobody marked as a syscall (which should lose its P, as Go's sysmon retakes a P in a
 * syscall), but also a JVM-internal lock, a safepoint, or a page fault. Handed off at the first
 * sight of S, a spawn loop with polls at 2 Ps beside twenty busy threads lost its P with 4.9ms
 * of CPU in a 21ms count, its G RUNNING. So a blocked carrier with less than the hand-off of CPU
 * is handed off only once its CPU time has not moved for half a hand-off (sysmon reads it every
 * cycle of the count): a call that really blocks loses its P at most half a hand-off later than
 * before, and a carrier that merely paused keeps it. A G parked while pinned is handed off at
 * once, as before: its carrier will not run until someone unparks it.
 *
 * <h3>Cost</h3>
 *
 * A run costs the M one release store and one CAS on its own word; a wake-up from a G costs one
 * CAS and one release store. sysmon reads the word only for a P that has overrun its slice, so
 * the line stays in the M's cache. Measured with {@code bench/run PingPong -f 3 -p
 * scheduler=gmp4j -p handoff=park} on a 2-core VM, two runs each, interleaved with runs
 * without the word: one P, 415 to 423 ns per round trip (within the run-to-run noise of about
 * 10 ns); two Ps, 536 to 568 ns (noise about 40 ns).
 *
 * <p>'Pauses' costs sysmon a compare per cycle and nothing else.
 *
 * <h3>Reporting</h3>
 *
 * Each hand-off counts in {@code /sched/preemptions/handoffs:handoffs} and prints one stderr
 * line with the goroutine, how long it ignored the request, and its top stack frames. At most
 * one line a second: the rest are counted and summed up in the next line, or in a line of their
 * own once the second is over. The stack is taken after the hand-off, so a slow stack walk never
 * delays it. In {@code schedtrace} detail such a G's M shows {@code p=nil} with its {@code
 * curg}, as an M in a syscall does; Go's format has no field for it, and none is added. In the
 * metrics the G counts as not-in-go, like a Go goroutine in a cgo call, so that running stays
 * within GOMAXPROCS.
 */
final class HogHandoff {
  /** Reports at most this often (the rest are counted). */
  private static final long REPORT_PERIOD_NS = 1_000_000_000L;

  /** Frames printed per report. */
  private static final int REPORT_FRAMES = 3;

  private final Sched sched;

  /** {@code preempt.handoff}, positive. */
  private final long handoffNs;

  // Per P (index in allp): the M and run number last seen on an overrun slice, when sysmon last
  // counted there, and the time counted so far (see 'Pauses'). Confined to sysmon; resized with
  // allp.
  private Machine[] seenM = new Machine[0];
  private int[] seenRun = new int[0];
  private long[] seenLast = new long[0];
  private long[] seenIgnored = new long[0];
  private long[] seenCpu = new long[0]; // the M's CPU time when the count began, or UNKNOWN
  private long[] seenCpuLast = new long[0]; // the M's CPU time at the last look, or UNKNOWN
  private long[] seenCpuMoved = new long[0]; // when sysmon last saw that CPU time move

  /** Whether this cycle's sleep overran by more than {@link #pauseSlackNs}. Confined to sysmon. */
  private boolean overslept;

  /** How long sysmon asked this cycle's sleep to last. Confined to sysmon. */
  private long askedNs;

  // Rate limit of the reports. Confined to sysmon.
  private long lastReport;
  private int suppressed;

  /** Whether to ask the OS what the carrier ran ('Carrier time'); off for hand-driven tests. */
  private final boolean carrierCpu;

  /**
   * Hands off only Ps whose G's carrier is blocked: 'Blocked carriers, with the hand-off off'.
   * Built with {@code preempt.handoff} off, and then counts the default hand-off. Final.
   */
  private final boolean blockedOnly;

  /** The {@code preempt.handoff} this instance was built for: 0 when off. Any thread. */
  long configuredNs() {
    return blockedOnly ? 0 : handoffNs;
  }

  /**
   * The hand-off of {@code preempt.handoff} = {@code handoffNs}; with 0 (off), the hand-off of
   * blocked carriers only, after {@link Config#DEFAULT_HANDOFF_NS}.
   */
  HogHandoff(Sched sched, long handoffNs, boolean carrierCpu) {
    if (handoffNs < 0) {
      throw new IllegalArgumentException("HogHandoff: handoff " + handoffNs + "ns");
    }
    this.sched = sched;
    this.blockedOnly = handoffNs == 0;
    this.handoffNs = blockedOnly ? Config.DEFAULT_HANDOFF_NS : handoffNs;
    this.carrierCpu = carrierCpu;
    this.lastReport = System.nanoTime() - REPORT_PERIOD_NS;
  }

  /**
   * How much longer than asked sysmon may sleep before the cycle may hold a pause of the whole
   * JVM (a GC, or sysmon itself descheduled): see 'Pauses'. Half the hand-off, so that a pause
   * shorter than this, counted in full, costs the G at most half a hand-off early; at least
   * 5ms, far above parkNanos' usual overshoot (the timer slack, about 50us).
   */
  long pauseSlackNs() {
    return Math.max(5_000_000L, handoffNs / 2);
  }

  /**
   * Starts a cycle in which sysmon asked to sleep {@code askedNs} and slept {@code sleptNs}:
   * past {@link #pauseSlackNs} more, the cycle may hold a pause (see 'Pauses'). Called by sysmon
   * every cycle.
   */
  void startCycle(long askedNs, long sleptNs) {
    this.askedNs = askedNs;
    this.overslept = sleptNs - askedNs > pauseSlackNs();
  }

  /** sysmon slept deeply: every P was idle, so whatever was seen is over. Called by sysmon. */
  void forgetAll() {
    java.util.Arrays.fill(seenM, null);
  }

  /** The schedtick of P {@code i} moved: whatever was seen there is over. Called by sysmon. */
  void forget(int i) {
    if (i < seenM.length) {
      seenM[i] = null;
    }
  }

  /**
   * Steps 1 to 3 of the protocol for P {@code pp} (index {@code i} of {@code nprocs}), whose
   * running slice has overrun and whose G sysmon has just asked to yield. Returns whether it
   * retook and handed off the P. Called only by sysmon.
   */
  boolean retake(int i, int nprocs, Processor pp, long now) {
    if (seenM.length != nprocs) {
      seenM = new Machine[nprocs];
      seenRun = new int[nprocs];
      seenLast = new long[nprocs];
      seenIgnored = new long[nprocs];
      seenCpu = new long[nprocs];
      seenCpuLast = new long[nprocs];
      seenCpuMoved = new long[nprocs];
    }
    Machine mp = pp.m;
    if (mp == null) {
      return false;
    }
    int run = PHold.run(mp.phold()); // acquire: curg below is this run's
    if (seenM[i] != mp || seenRun[i] != run) {
      seenM[i] = mp;
      seenRun[i] = run;
      seenLast[i] = now;
      seenIgnored[i] = 0;
      seenCpu[i] = carrierCpu ? CarrierCpu.cpuNanos(mp.tid) : CarrierCpu.UNKNOWN;
      seenCpuLast[i] = seenCpu[i];
      seenCpuMoved[i] = now;
      return false;
    }
    if (seenCpu[i] != CarrierCpu.UNKNOWN) {
      long cpu = CarrierCpu.cpuNanos(mp.tid); // 'Blocked carriers': when did it last run?
      if (cpu != seenCpuLast[i]) {
        seenCpuLast[i] = cpu;
        seenCpuMoved[i] = now;
      }
    }
    long counted = now - seenLast[i];
    if (overslept) {
      // Maybe a pause of the whole JVM, maybe sysmon descheduled: see 'Pauses'.
      counted = Math.min(counted, Math.max(askedNs, pauseSlackNs()));
    }
    seenLast[i] = now;
    long ignored = seenIgnored[i] += Math.max(0, counted);
    if (ignored < handoffNs) {
      return false;
    }
    int verdict = verdict(mp, seenCpu[i], now - seenCpuMoved[i]);
    if (verdict == NOT_IGNORING || (blockedOnly && verdict == COMPUTING)) {
      return false; // with the hand-off off, a G that computes keeps its P, as in Go
    }
    Goroutine gp = mp.curg; // written only between runs, so this run's G
    if (gp == null) {
      return false; // the run is over, and its M is closing the hold (Machine.curg)
    }
    Object slice = Trace.runPeek(mp); // this run's too: see 'Tracing' in Trace
    if (!mp.tryRetakeP(run, pp)) {
      return false; // inside a P operation (try next cycle), or the run is over
    }
    if (slice != null) {
      Trace.runHandedOff(slice);
    }
    seenM[i] = null;
    // sysmon owns pp until handoffP: nobody else may touch it as its owner.
    pp.m = null;
    pp.preempt = false;
    pp.incSchedtick(); // the G's time slice ends with its P; the next M starts a new one
    pp.setStatus(Processor.IDLE, "HogHandoff.retake"); // publishes the unwiring before handoffP
    sched.preemptHandoffs.increment();
    if (gp != null && Preempt.request(gp, pp, ignored, "handoff") && mp.curg != gp) {
      Preempt.cancel(gp); // its run ended meanwhile: the request must not outlive it
    }
    Object handoff = Trace.on(Trace.PROC_HANDOFF) ? Trace.procHandoffBegin() : null;
    Machine to = sched.handoffP(pp);
    boolean pinned = blockedOnly || parkedPinned(gp); // one read for the trace and the report
    if (handoff != null) {
      Trace.procHandoff(handoff, pp, mp.id, to, pinned ? "pinned" : "ignoredPreemption", gp);
    }
    report(gp, pinned, ignored, now);
    return true;
  }

  /** {@link #verdict}: the G is not ignoring the request after all; its P stays. */
  private static final int NOT_IGNORING = 0;

  /** {@link #verdict}: the G ignores the request and its carrier runs its code. */
  private static final int COMPUTING = 1;

  /**
   * {@link #verdict}: the G ignores the request because its carrier is blocked (parked while
   * pinned, or asleep in the OS): the only verdict that {@link #blockedOnly} mode hands off.
   */
  private static final int BLOCKED = 2;

  /**
   * What the G on M {@code mp} is doing now that its count is up, given its carrier's CPU time
   * {@code cpuAtStart} when the count began and how long ago it last moved ({@code
   * sinceCpuMoved}); see 'Carrier time' and 'Blocked carriers'. {@link #NOT_IGNORING}: it is in
   * the middle of its unmount or queued for sched.lock, or its carrier has had less than {@code
   * preempt.handoff} of CPU (less one tick of lag) and wants a CPU, or is asleep but ran within
   * half a hand-off. Otherwise {@link #BLOCKED} if it parked while pinned or its carrier is
   * asleep with its CPU time still for half a hand-off, and {@link #COMPUTING} if not; a carrier
   * the OS cannot tell about computes. At most two small {@code /proc} reads. Called only by
   * sysmon.
   */
  private int verdict(Machine mp, long cpuAtStart, long sinceCpuMoved) {
    Goroutine gp = mp.curg;
    if (unmounting(gp)
        || sched.lock.hasQueuedThread(mp)
        || (gp != null && sched.lock.hasQueuedThread(gp.thread))) {
      return NOT_IGNORING;
    }
    boolean pinnedPark = parkedPinned(gp);
    long cpu = cpuAtStart == CarrierCpu.UNKNOWN ? CarrierCpu.UNKNOWN : CarrierCpu.cpuNanos(mp.tid);
    if (cpu == CarrierCpu.UNKNOWN) {
      return pinnedPark ? BLOCKED : COMPUTING; // the OS says nothing: the count decides
    }
    boolean asleepLong = sinceCpuMoved >= handoffNs / 2;
    if (cpu - cpuAtStart + CarrierCpu.TICK_NS >= handoffNs) {
      // It had the CPU for the whole hand-off: it does ignore us. Blocked since? Only the
      // blocked-only mode needs to know, so only it reads the state.
      return pinnedPark || (blockedOnly && asleepLong && !CarrierCpu.runnable(mp.tid))
          ? BLOCKED
          : COMPUTING;
    }
    if (CarrierCpu.runnable(mp.tid)) {
      return NOT_IGNORING; // starved by the OS
    }
    return pinnedPark || asleepLong ? BLOCKED : NOT_IGNORING; // 'Blocked carriers'
  }

  /**
   * Whether gp, its M's current G, is between its park, yield, monitor block or wait and the
   * end of its M's run (JDK 25's transitional states, and YIELDED while the carrier-side submit
   * runs): it has stopped running its code. A transition that pins ends in PINNED or
   * TIMED_PINNED, which this is not. Any thread; racy.
   */
  static boolean unmounting(Goroutine gp) {
    int js = gp == null ? -1 : VirtualThreads.state(gp.thread);
    return js == VirtualThreads.PARKING
        || js == VirtualThreads.TIMED_PARKING
        || js == VirtualThreads.YIELDING
        || js == VirtualThreads.YIELDED
        || js == VirtualThreads.BLOCKING
        || js == VirtualThreads.WAITING
        || js == VirtualThreads.TIMED_WAITING;
  }

  /**
   * Whether gp parked while pinned (in a class initializer, or under a native frame): it
   * blocks its carrier, and did not so much ignore the request as it could not see it. Any
   * thread; racy.
   */
  static boolean parkedPinned(Goroutine gp) {
    int js = gp == null ? -1 : VirtualThreads.state(gp.thread);
    return js == VirtualThreads.PINNED || js == VirtualThreads.TIMED_PINNED;
  }

  /** Prints the suppressed count once the second is over. Called by sysmon every cycle. */
  void flushReports(long now) {
    if (suppressed > 0 && now - lastReport >= REPORT_PERIOD_NS) {
      System.err.println(
          "gmp4j: "
              + suppressed
              + " more goroutine"
              + (suppressed == 1 ? "" : "s")
              + (blockedOnly ? " blocked their threads while pinned" : " ignored preemption")
              + " in the last "
              + millis(now - lastReport)
              + "; "
              + (suppressed == 1 ? "its P was" : "their Ps were")
              + " handed to other Ms");
      lastReport = now;
      suppressed = 0;
    }
  }

  private void report(Goroutine gp, boolean pinned, long ignoredNs, long now) {
    if (now - lastReport < REPORT_PERIOD_NS) {
      suppressed++;
      return;
    }
    StringBuilder sb =
        new StringBuilder(200)
            .append("gmp4j: goroutine ")
            .append(gp == null ? "?" : String.valueOf(gp.goid))
            .append(pinned ? " blocked its thread while pinned for " : " ignored preemption for ")
            .append(millis(ignoredNs));
    String frames = gp == null ? "" : topFrames(gp.thread);
    if (!frames.isEmpty()) {
      sb.append(" (running ").append(frames).append(')');
    }
    sb.append("; its P was handed to another M");
    if (suppressed > 0) {
      sb.append(" (").append(suppressed).append(" more since the last report)");
    }
    System.err.println(sb);
    lastReport = now;
    suppressed = 0;
  }

  /** "a.B.c(B.java:1) <- a.B.d(B.java:2) <- ..." for the top frames, or "" if unavailable. */
  static String topFrames(Thread t) {
    StackTraceElement[] st;
    try {
      st = t == null ? null : t.getStackTrace(); // mounted: a handshake with its carrier
    } catch (Throwable e) {
      return "";
    }
    if (st == null || st.length == 0) {
      return ""; // it stopped running meanwhile
    }
    StringBuilder sb = new StringBuilder();
    int n = Math.min(REPORT_FRAMES, st.length);
    for (int k = 0; k < n; k++) {
      StackTraceElement e = st[k];
      if (k > 0) {
        sb.append(" <- ");
      }
      sb.append(e.getClassName()).append('.').append(e.getMethodName()).append('(');
      if (e.isNativeMethod()) {
        sb.append("Native Method");
      } else {
        sb.append(e.getFileName() == null ? "Unknown Source" : e.getFileName());
        if (e.getLineNumber() >= 0) {
          sb.append(':').append(e.getLineNumber());
        }
      }
      sb.append(')');
    }
    if (st.length > n) {
      sb.append(" <- ...");
    }
    return sb.toString();
  }

  /** "21ms", or "0.4ms" under a millisecond. */
  private static String millis(long ns) {
    return ns >= 1_000_000 ? (ns / 1_000_000) + "ms" : (ns / 100_000) / 10.0 + "ms";
  }

  @Override
  public String toString() {
    return "HogHandoff{handoff=" + millis(handoffNs) + " suppressed=" + suppressed + "}";
  }
}
