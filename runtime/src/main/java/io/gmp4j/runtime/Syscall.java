package io.gmp4j.runtime;

import java.util.concurrent.locks.LockSupport;

/**
 * Blocking calls: Go's entersyscall / exitsyscall (proc.go reentersyscall, exitsyscall,
 * exitsyscallfast, exitsyscall0) for a G that is about to block its carrier in the kernel.
 *
 * <h2>Implementation overview</h2>
 *
 * A JDK 25 virtual thread that reads a file, waits for a process or resolves a host name keeps its
 * carrier blocked for the duration (the JDK's compensation works only on ForkJoinPool carriers).
 * Go's answer: the M keeps blocking, but its P can be taken away and handed to another M.
 *
 * <ol>
 *   <li>entersyscall (the G itself, on its M): the G goes running → syscall; the M records the
 *       P's syscalltick, unwires the P ({@code pp.m = null}, {@code m.p = null}, {@code m.oldp =
 *       pp}) and marks it {@code _Psyscall}. The P is not idle: nobody may take it yet.
 *   <li>sysmon (retake) sees a P in {@code _Psyscall} whose syscalltick it has seen before (so
 *       the call lasted at least one sysmon cycle, 20us or more) and, per Go's rule, unless the P
 *       has no local work, some P is idle or spinning and the call is under 10ms old, CASes it
 *       {@code _Psyscall → _Pidle} and hands it off (Sched.handoffP): another M, new if need be,
 *       runs the P's Gs. So 200 Gs blocked in reads give about 200 threads, and the rest of the
 *       program keeps its GOMAXPROCS.
 *   <li>exitsyscall, fast path: CAS the old P {@code _Psyscall → _Pidle} and wire it again; the
 *       syscalltick counts the call. Not a scheduling point, as in Go. The P may be in another
 *       G's syscall by then (sysmon handed it off, and its new M's G entered a call): as in Go,
 *       the CAS takes it from that call, whose G then finds no P at its own exitsyscall.
 *   <li>slow path (Go: take an idle P): not taken on the G, which must not block on sched.lock
 *       in mid-protocol; the next path's wakep puts an idle P to work instead.
 *   <li>slowest path: no P. Go puts the G on the global queue and stops the M; here the G yields
 *       its virtual thread ({@code Thread.yield}), the M sees that the thread yielded while the
 *       M holds no P and puts the G on the global queue, and the M then stops (stopM) until it
 *       is handed a P. If the thread cannot yield (it is pinned), it parks its carrier until an
 *       idle P turns up, checking every 50us.
 * </ol>
 *
 * <p>entersyscall runs on the G, and so does sysmon's other way of taking a P, the retake from a
 * G that ignores preemption. The two meet in the M's {@code phold} word: entersyscall claims
 * the P there before unwiring it and leaves the word in PHold.SYSCALL, where sysmon's retake
 * never looks; the fast path of exitsyscall reopens it with a new run number. See 'The phold
 * word' in {@link PHold}.
 *
 * The one CAS on the P's status arbitrates between sysmon and exitsyscall. Go 1.26 moved that
 * arbitration to the G's status ({@code setBlockOnExitSyscall}) and prints such a P as running;
 * gmp4j keeps the classic {@code _Psyscall} P status (2, as Go 1.25 printed it), the simplest
 * correct arbitration with one word.
 *
 * <h3>A spurious submit inside the bracket</h3>
 *
 * The G can leave {@code _Gsyscall} in two ways before its exitsyscall: it parks inside the
 * bracket (ready takes it out, and it runs again on some M with a P), or a readying reaches it
 * while it is still mounted in the bracket: JDK 25's stack walker resubmits a thread that it
 * suspended as runnable, maybe after the thread ran and entered a call. Since 'Submits that
 * ready nothing' in Sched, ready drops such a submit, and its CAS from the word it read before
 * looking fails once the G has entered a call; the handling below stays as a defence, and
 * SpuriousSubmitInSyscallTest reaches it with Sched.readyUnlooked. ready takes it out of
 * {@code _Gsyscall} and counts it out of nGsyscall as for a park. The G never left its M, which
 * still holds no P. exitsyscall tells the two apart by that M's phold word: still PHold.SYSCALL
 * means the run that entered the call goes on, so exitsyscall does its work as usual, leaving
 * the G's status and nGsyscall to the ready that changed them. Only this M's G moves its word
 * out of PHold.SYSCALL (sysmon never touches it there), and a park ends the run, whose next one
 * opens the word anew: so the G reads it exactly. exitsyscall's first step is its own CAS out
 * of {@code _Gsyscall}, so that it and a ready racing it have one winner, which alone counts
 * the G out of nGsyscall.
 *
 * <p>The queued entry stays: popped while the G is still mounted, its M finds the thread
 * mounted elsewhere and gives up (Machine.execute); popped after the G yielded or parked, it
 * resumes the G, or its M marks the parked G waiting. Until it is popped the G runs with
 * status runnable: a bracket it enters meanwhile is not entered ({@code casRunningToSyscall}
 * fails), and sysmon's preemption skips it, so only the hog hand-off can take its P. A late
 * readying that reaches a running G outside a bracket queues nothing ('Readied while running'
 * in Goroutine).
 *
 * <p>Nested calls (a FileInputStream read inside a Blocker-bracketed call, say) count a depth;
 * only the outermost enters and exits. A call on a thread that is not one of our Gs does nothing.
 */
final class Syscall {
  private Syscall() {}

  /**
   * Go's entersyscall for the current thread. Takes no lock: it runs on the G (see exit). Returns
   * whether the matching {@link #exit} has anything to undo. Any thread; never throws.
   */
  static boolean enter() {
    Thread t = Thread.currentThread();
    if (!t.isVirtual() || !(VirtualThreads.scheduler(t) instanceof Goroutine gp)) {
      return false;
    }
    if (gp.syscallDepth++ > 0) {
      return true; // nested: the outermost call has entered already
    }
    Machine mp = gp.runningM();
    // The claim keeps sysmon from retaking the P while we unwire it ('Hog hand-off').
    Processor pp = mp == null ? null : mp.tryClaimP(false);
    if (pp == null) {
      return true; // no P to hand off (sysmon retook it); exit undoes only the depth
    }
    if (!gp.casRunningToSyscall()) {
      mp.unclaimP();
      return true;
    }
    // Go's GoSyscallBegin ends the P slice; under the claim, so sysmon cannot take it first.
    if (mp.traceRunBegin != 0) {
      Trace.runEndNow(mp, gp, Trace.END_SYSCALL);
    }
    if (Trace.on(Trace.GO_SYSCALL)) {
      Trace.syscallBegin(gp, mp, pp);
    }
    mp.enterSyscall(pp); // the claim becomes PHold.SYSCALL
    gp.sched.nGsyscall.increment(); // after: an OutOfMemoryError here must not keep the claim
    return true;
  }

  /** Go's exitsyscall; {@code entered} is what {@link #enter} returned. Never throws. */
  static void exit(boolean entered) {
    if (!entered) {
      return;
    }
    Thread t = Thread.currentThread();
    if (!t.isVirtual()
        || !(VirtualThreads.scheduler(t) instanceof Goroutine gp)
        || gp.syscallDepth == 0) {
      return; // not ours, or an exit without its enter (advice on a JDK method that threw)
    }
    if (--gp.syscallDepth > 0) {
      return;
    }
    Machine mp = gp.runningM();
    // First, so that a ready racing us (a spurious submit can come at any moment) and this CAS
    // have one winner, and the one that wins counts the G out of nGsyscall. Go moves the
    // status after the P; no one here reads a G's status to find its P.
    boolean inSyscall = gp.casSyscallToRunning();
    if (!inSyscall && (mp == null || !mp.inSyscallRun())) {
      return; // it parked inside the bracket: that run is over, and this one has a P
    }
    // No park since entersyscall (see 'A spurious submit inside the bracket'), so this is the
    // run, and the M, that began the GoSyscall (if a recording was on then).
    if (inSyscall) {
      gp.sched.nGsyscall.decrement(); // else ready counted it out
    }
    Object sys = mp.traceSyscall;
    mp.traceSyscall = null;
    boolean traced = sys != null;
    if (traced) {
      Trace.syscallStop(sys); // before exitSyscallFast begins the next GoRun slice
    }
    int fast = mp.exitSyscallFast();
    if (fast != Machine.EXIT_NO_P) {
      if (traced) {
        // lostP when sysmon took the P meanwhile, even if this M took it back at the end
        Trace.syscallEnd(sys, mp, fast == Machine.EXIT_LOST_P);
      }
      return;
    }
    if (traced) {
      Trace.syscallEnd(sys, mp, true); // Go's GoSyscallEndBlocked
    }
    // No P for this M. The G yields; the M, holding no P, queues it globally and stops (see
    // the overview); after a spurious submit the entry already queued resumes it instead. Go's
    // slow path (grab an idle P) would take sched.lock here, on the G, and a contended lock
    // would unmount the G in mid-protocol: the M's wakep finds the idle P instead.
    Thread.yield();
    reacquireIfPinned(gp);
  }

  /**
   * After a {@code Thread.yield} that should have given up a G that has no P: if the yield
   * failed (the thread is pinned), the G is still on the same run of its M, which must not run
   * Go code without a P, so it waits until an idle P turns up, checking every 50us. A yield that
   * worked ended that run, and the G now runs with a P. Nothing to do inside a syscall bracket (a
   * poll in the Java code of a native upcall): the M left its P in {@code _Psyscall}, and the
   * bracket's exitsyscall gets it back or gives the G up. Called only by gp itself.
   *
   * <p>Not only a pinned G gets here: the run that a yield led to may have lost its P before
   * the G was back (a mount slower than {@code preempt.handoff}), and then the parkNanos below
   * unmounts the G. That run of the M ends, the M closes its word and stops, and the G comes back
   * on another M. So the G re-reads its M after every wait and never acts on the one it left: see
   * 'Reacquire after an unmount' in {@link PHold}.
   */
  static void reacquireIfPinned(Goroutine gp) {
    try {
      for (; ; ) {
        Machine mp = gp.runningM(); // exact on the G itself; new after an unmount
        if (mp == null || gp.syscallDepth > 0 || !mp.lostP() || mp.tryReacquireP(false)) {
          return;
        }
        if (gp.markWaitingForP()) { // 'Pinned waiters first' in Sched.handoffP
          gp.sched.npinnedwaiting.incrementAndGet();
        }
        // Pinned: blocks the carrier. Otherwise it may unmount, and then the G is not pinned
        // after all and needs a P like any runnable G: its M counts it out after the run.
        LockSupport.parkNanos(50_000);
      }
    } finally {
      gp.sched.leftWaitingForP(gp);
    }
  }
}
