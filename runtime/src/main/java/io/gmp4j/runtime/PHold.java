package io.gmp4j.runtime;

/**
 * Beyond Go: the M's hold on its P while a G runs, the {@code phold} word, with its layout,
 * decode helpers, transition table and dump. The word itself (the field and its VarHandle) stays
 * in {@link Machine}, so that the hot path reads it with no indirection; every write goes through
 * {@code Machine.setPHoldRelease} or {@code Machine.casPHold}, which check the edge against
 * {@link #TABLE} under {@code assert}. sysmon's side of the protocol (when to retake, the
 * hand-off, pauses and carrier time) is 'Hog hand-off' in {@link HogHandoff}.
 *
 * <h2>Implementation overview: 'The phold word'</h2>
 *
 * <h3>The race</h3>
 *
 * While a G runs, its thread may use its M's P at any moment: {@code Sched.ready} puts a woken
 * G on the P's run queue, which is single-producer and owner-only; entersyscall unwires the P;
 * a poll clears the P's preempt flag; and the JDK's carrier-side code after an unmount readies
 * threads too. sysmon must not take the P in the middle of any of these, and none of them may
 * start after sysmon took it. Each M therefore has one word, {@code Machine.phold}:
 *
 * <pre>
 *   bits:  31 .................................. 3 | 2 .. 0
 *          run number (new with every run and     | state
 *          every time the G gets a P back)        |
 *
 *   state          who holds m.p
 *   SCHED    0     the M's scheduler code (between runs); sysmon never takes from it
 *   G        1     the running G, between P operations; sysmon may retake
 *   G_BUSY   2     the running G, inside a P operation (a claim); sysmon waits
 *   SYSCALL  3     nobody: the G unwired the P in entersyscall (see Syscall)
 *   RETAKEN  4     nobody: sysmon took the P; m.p is dead to this M
 *
 *   from        to         by whom                                          where
 *   SCHED    →  G          the M, before the run (new run number)           openPHold
 *   G        →  G_BUSY     the running G, or the JDK's code on the carrier  tryClaimP (CAS)
 *   G_BUSY   →  G          the same thread                                  unclaimP
 *   G_BUSY   →  SYSCALL    the G in entersyscall                            enterSyscall
 *   SYSCALL  →  G          exitsyscall's fast path (new run number)         exitSyscallFast
 *   G        →  RETAKEN    sysmon                                           tryRetakeP (CAS)
 *   SYSCALL  →  G          a G that got an idle P back (new run number)     tryReacquireP
 *   RETAKEN  →  G          a G that got an idle P back (new run number)     tryReacquireP
 *   G, SYSCALL,
 *   RETAKEN  →  SCHED      the M, after the run (keeps the run number)      closePHold (CAS)
 * </pre>
 *
 * Only sysmon writes the word from another thread, and only with the CAS from G. Everything
 * else is done by the M's own thread: the M between runs, and during a run the G mounted on it
 * or the JDK's code that runs on the carrier around the mount, never two at once. A claim never
 * spans an unmount: the JDK pins the virtual thread around every submit (JDK 25's
 * VirtualThread.submitRunContinuation), so a contended sched.lock in runqPutSlow parks the
 * carrier, not the G; entersyscall and the poll take no lock under a claim.
 *
 * <p>Invariants: in G and G_BUSY, {@code m.p} is wired to the M and running; in G_BUSY only
 * the claiming thread uses it; in SCHED the M's own code owns it outright. In RETAKEN the P
 * that was taken belongs to sysmon until it hands it off. Non-invariants: just after a retake,
 * {@code m.p} may still name the P that was taken, until sysmon's CAS or the M's own write
 * clears it; readers that only look ({@code Hooks.hasKnownQueuedWork}, schedtrace, metrics)
 * may act on that stale P, which costs them at most a wrong guess.
 *
 * <h3>Reacquire after an unmount</h3>
 *
 * A G that finds its M without a P after a {@code Thread.yield} (the poll's, or exitsyscall's)
 * waits for an idle P ({@code Syscall.reacquireIfPinned}). Up to issue 16 it read its M once and
 * assumed that only a pinned G gets there (a yield that works ends the run, and the next run holds
 * a P), so that its 50us parks block the carrier. But the next run can lose its P before the G is
 * back: the M opens the run and calls {@code runContinuation}, and if mounting takes {@code
 * preempt.handoff} (the carrier descheduled on a loaded machine, GC pauses; see 'Pauses' in
 * HogHandoff) sysmon sees a G that ignores its request and retakes the P. The G then returns from
 * its yield unpinned, on an M in RETAKEN, and its park unmounts it (seen in
 * MonitorChannelHandoffStressTest: before the yield M0 in RETAKEN/1305, after it M2 in
 * RETAKEN/748):
 *
 * <pre>
 *   T1 the G, unpinned                     T2 M2, sysmon, M5
 *   Thread.yield on M0 (no P): queued      M2: openPHold (r,G), runContinuation, slow mount
 *                                          sysmon: request, handoff later CAS (r,RETAKEN)
 *   back from the yield on M2
 *   lostP(M2): (r,RETAKEN)
 *   tryReacquireP(M2): no idle P
 *   parkNanos(50us): unmounts              M2: runContinuation returns
 *                                          closePHold (r,RETAKEN) → (r,SCHED); stopM
 *                                          M5: runs the G (r5,G), holding a P
 *   tryReacquireP(M2): reads (r,SCHED)     InternalError "holds a P" into the application
 *                                          (Skynet100kWithMonitors: M4 phold 218120, SCHED);
 *                                          had M2 been in a new run in RETAKEN, the G would
 *                                          have wired an idle P to M2 for another G
 * </pre>
 *
 * A contended sched.lock in tryAcquireIdleP parked the G the same way, and then wired the P to
 * the M it had left. Now the G re-reads its M ({@code runningM}, exact on the G itself) after
 * every park, and from its own code takes sched.lock only if it is free, so that nothing
 * between its {@code lostP} and its reacquire can unmount it. Between those two reads only the
 * G itself takes its M's word out of RETAKEN or SYSCALL (closePHold needs the run to end, sysmon
 * CASes only from G), so a word found held there can only be G, where the G holds m.p:
 * tryReacquireP returns true for it (and asserts it), rather than throwing into the
 * application. An unpinned G that waits so is parked 50us at a time, each time on a new run of
 * some M, like a G that sleeps; Go would queue it globally (exitsyscall0), which the park
 * amounts to.
 *
 * <p>The table in code has one row per (from, to, where) above; the edges marked "new run
 * number" must add {@link #RUN_ONE} to the run, every other edge must keep it (checked too).
 */
final class PHold {
  static final int SCHED = 0;
  static final int G = 1;
  static final int G_BUSY = 2;
  static final int SYSCALL = 3;
  static final int RETAKEN = 4;

  /** The state bits; the run number is above them. */
  static final int STATE_MASK = 7;

  /** One step of the run number. It wraps, which is harmless: sysmon compares for equality. */
  static final int RUN_ONE = STATE_MASK + 1;

  /** 'The phold word', held in code. */
  static final StateTable TABLE =
      new StateTable("phold", "SCHED", "G", "G_BUSY", "SYSCALL", "RETAKEN")
          .edge(SCHED, G, "openPHold")
          .edge(G, G_BUSY, "tryClaimP")
          .edge(G_BUSY, G, "unclaimP")
          .edge(G_BUSY, SYSCALL, "enterSyscall")
          .edge(SYSCALL, G, "exitSyscallFast", "tryReacquireP")
          .edge(G, RETAKEN, "tryRetakeP")
          .edge(RETAKEN, G, "tryReacquireP")
          .edge(G, SCHED, "closePHold")
          .edge(SYSCALL, SCHED, "closePHold")
          .edge(RETAKEN, SCHED, "closePHold");

  private PHold() {}

  /** The state of word {@code h}. */
  static int state(int h) {
    return h & STATE_MASK;
  }

  /** The run number of word {@code h}, in place (a multiple of RUN_ONE). */
  static int run(int h) {
    return h & ~STATE_MASK;
  }

  /** Word {@code h} in state {@code st}, same run. */
  static int with(int h, int st) {
    return run(h) | st;
  }

  /** Word {@code h} in state {@code st}, with a new run number. */
  static int nextRun(int h, int st) {
    return (run(h) + RUN_ONE) | st;
  }

  /**
   * Returns true if {@code fn} may move M {@code mp}'s word from {@code from} to {@code to}: the
   * state edge is in the table and the run number moves on exactly where it must. Else throws
   * InternalError. Meant for {@code assert}. Any thread.
   */
  static boolean check(String fn, Machine mp, int from, int to) {
    TABLE.check(fn, mp, state(from), state(to));
    boolean newRun =
        switch (fn) {
          case "openPHold", "exitSyscallFast", "tryReacquireP" -> true;
          default -> false;
        };
    int want = newRun ? run(from) + RUN_ONE : run(from);
    if (run(to) != want) {
      throw new InternalError(
          fn
              + ": "
              + mp
              + " phold "
              + toString(from)
              + " → "
              + toString(to)
              + (newRun ? " must take a new run number" : " must keep the run number"));
    }
    return true;
  }

  /** "G/12": word {@code h}'s state and run number, for dumps. */
  static String toString(int h) {
    int st = state(h);
    return TABLE.name(st) + "/" + (h >>> 3); // the run number, unsigned
  }
}
