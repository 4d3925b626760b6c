package io.gmp4j.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import jdk.internal.vm.annotation.DontInline;

/**
 * Cooperative preemption: the target of the polls that the agent injects at loop back-edges
 * (Go's loop-preemption check {@code goschedguarded}, and the prologue check of newstack).
 *
 * <h2>Implementation overview: 'Preemption'</h2>
 *
 * The JVM cannot interrupt a virtual thread ({@code Continuation.tryPreempt} is unimplemented in
 * JDK 25), so a G that computes without blocking must be asked to yield, and must check.
 *
 * <ol>
 *   <li>sysmon sees a P whose schedtick has not moved for a time slice (Go's forcePreemptNS,
 *       10ms) and calls {@link #preemptOne}: the P's slice is marked ran out ({@code
 *       pp.preempt}), the P's running G gets {@code preempt = true}, and the global count of
 *       {@link #pending} requests goes up.
 *   <li>The slice belongs to the P, not the G: a chain of Gs that ready each other through
 *       runnext shares one schedtick. On the JVM a G spends most of a short turn parking and
 *       unparking (freezing and thawing its stack), so the G that sysmon caught has often
 *       passed its last poll already, and its request is cancelled when it parks (step 6). So
 *       the M ends the chain itself: while {@code pp.preempt} stays set, the G it takes from
 *       runnext goes to the global queue's tail before it runs, as a G preempted at once would
 *       (Machine.endRunnextChain), and the next G starts a new slice. That needs no poll and
 *       no atomic on a switch. (Go's async signal catches the chain's current G instead.) 'A
 *       timer-woken G ends no chain': if the M's own timer check in that findRunnable ran a
 *       timer, the G in runnext is the one it woke, not the chain's next, and it runs at once on
 *       a new slice. Sent to the global queue's tail behind preempted hogs instead, a sleeper
 *       beside four of them at 2 Ps waited two more slices (30 ms).
 *   <li>Every poll reads {@code pending} (one volatile load: the JIT may not hoist it out of the
 *       loop, and it costs what a plain load costs on x86) and branches on zero. Only while a
 *       request is pending somewhere does any poll look further, at its own G.
 *   <li>The G whose request it is clears it and calls {@code Thread.yield()}. The M sees the
 *       thread YIELDED and puts the G on the global queue tail, as gopreempt_m does; the next G
 *       starts a new schedtick.
 *   <li>A pinned G's yield fails; it keeps running, and sysmon asks again at its next tick,
 *       because the schedtick still has not moved.
 *   <li>A request that its G never polled (it blocked first, or its code has no polls) is
 *       cancelled by the M when the run ends, so {@code pending} does not stay up and slow every
 *       other G's polls.
 *   <li>A G that ignores the request for {@code preempt.handoff} more (code without polls, or a
 *       pinned G whose yield keeps failing) loses its P to another M: 'Hog hand-off' in {@link
 *       HogHandoff}. Its request stays set, so its next poll, if it ever reaches one, yields
 *       it into the scheduler, where it waits for a P like any runnable G (or, pinned, parks
 *       its carrier until it has one).
 * </ol>
 *
 * <h2>The poll's slow path</h2>
 *
 * {@link #slowPoll} is a call in every compiled poll, as Go's {@code morestack} is. The
 * early form calls {@link #poll} only when {@code pending} is not zero, so in poll's own profile
 * the call to slowPoll is always taken, and C2 used to inline it ("inline (hot)") into every app
 * method whose loops had met a pending request: slowPoll's VarHandle CASes and add with the
 * guards they force-inline, its LongAdder and its {@code Thread.yield}, about 45 inlined calls
 * for one poll. On the Spring Boot app's cold phase, 44 of about 300 C2 compilations did that
 * (JFR's CompilerInlining), and the app's C2 code was 362 KB by median against 331 KB with
 * slowPoll kept out (BENCHMARKS.md, 'The poll's slow path'). The check, the load and the branch
 * stay inline.
 *
 * <p>Rejected: a flag per P or per M, read through the current carrier (the JDK keeps the carrier
 * private, and finding it costs three dependent loads on every poll); a counter in the loop
 * (measured: it still turns C2's SuperWord off, so it buys nothing over a load); the load as
 * {@code PENDING.getOpaque()}, which is what it was until issue 17. An opaque read orders no more
 * than the loop needs, but on x86 both compile to one {@code mov}, and both keep the poll's
 * memory barrier in C2's graph. The VarHandle call is what differs, and a cold application pays
 * for it everywhere. The interpreter runs each call through the VarHandle's guard and its
 * linked method, and every tier that compiles a method with polls inlines seven methods per poll
 * for it. Without it, Spring Boot's cold phase took the JIT compilers 17-34% less time and the
 * Ms 11-24% less (BENCHMARKS.md, 'The poll's load').
 */
public final class Preempt {
  private static final VarHandle PENDING;

  static {
    try {
      PENDING = MethodHandles.lookup().findStaticVarHandle(Preempt.class, "pending", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /**
   * Requests not yet consumed or cancelled. Incremented by sysmon with each request, decremented
   * by whoever clears one (atomic adds through PENDING); read by every poll (a volatile read of the
   * field itself, never through PENDING: see 'Rejected' above).
   *
   * <p>Public, and written by nothing outside this class: the early polls that the agent puts in
   * a class while its rewrite is deferred ('Early polls' in the agent's EarlyPolls) read it inline
   * at each loop head, {@code GETSTATIC pending; IFEQ}, and call {@link #poll} only when it is not
   * zero, because the interpreter's call per pass was what the early form cost a cold start. Code
   * that wrote it would only make polls look further or later: a G's own request is in the G,
   * and the hog hand-off covers a G whose polls miss it.
   */
  public static volatile int pending;

  private Preempt() {}

  /** The injected poll: yields if sysmon asked this G to. Any thread; never throws. */
  public static void poll() {
    if (pending != 0) { // pairs with getAndAdd in preemptOne
      slowPoll();
    }
  }

  /**
   * The poll's slow path, never inlined ('The poll's slow path' above). The JDK's {@code
   * DontInline} is honoured only in classes of the boot and platform loaders, which is where the
   * agent puts the runtime; in library mode it is ignored, and nothing there has polls anyway.
   */
  @DontInline
  private static void slowPoll() {
    Thread t = Thread.currentThread();
    if (t.isVirtual()
        && VirtualThreads.scheduler(t) instanceof Goroutine gp
        && gp.tryClearPreempt()) {
      PENDING.getAndAdd(-1);
      Machine mp = gp.runningM();
      Processor pp = mp == null ? null : mp.tryClaimP(false);
      if (pp != null) {
        pp.preempt = false; // honoured: the next G starts a new slice
        mp.unclaimP();
      }
      gp.sched.preemptHonored.increment();
      gp.tracePreempted = true; // the trace's GoRun end: see Sched.ready
      Thread.yield(); // gopreempt_m: see 'Readying a G' in Sched
      gp.tracePreempted = false;
      // A pinned G whose P sysmon retook must get one back before it runs on ('Hog hand-off').
      Syscall.reacquireIfPinned(gp);
    }
  }

  /**
   * Go's preemptone: asks the G running on {@code pp} to yield. Returns false if there is no
   * such G. {@code sliceRan} and {@code reason} are for the trace's PreemptRequest. Called by
   * sysmon, and by stop-the-world (Go's preemptall).
   */
  static boolean preemptOne(Processor pp, long sliceRan, String reason) {
    Machine mp = pp.m;
    Goroutine gp = mp == null ? null : mp.curg;
    if (gp == null || !gp.running()) {
      return false;
    }
    pp.preempt = true;
    if (request(gp, pp, sliceRan, reason)) {
      // If the run ended while we asked, its M may already have cancelled nothing: cancel here.
      if (mp.curg != gp) {
        cancel(gp);
      }
    }
    return true;
  }

  /**
   * Asks gp, running on {@code pp} (null if unknown), to yield at its next poll; false if it
   * already was asked. {@code sliceRan} and {@code reason} are for the trace. Called by sysmon
   * (a slice that ran out, an overdue timer) and by stop-the-world.
   */
  static boolean request(Goroutine gp, Processor pp, long sliceRan, String reason) {
    if (gp.trySetPreempt()) {
      PENDING.getAndAdd(1); // pairs with the volatile read in poll
      gp.sched.preemptRequested.increment();
      if (Trace.on(Trace.PREEMPT_REQUEST)) {
        Trace.preemptRequest(pp, gp, sliceRan, reason);
      }
      return true;
    }
    return false;
  }

  /** Cancels gp's request, if any. Called by its M after a run, and by sysmon. */
  static void cancel(Goroutine gp) {
    if (gp.tryClearPreempt()) {
      PENDING.getAndAdd(-1);
    }
  }
}
