package io.gmp4j.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * The P of Go's GMP model (runtime2.go {@code type p}): the right to run Gs, with its local run
 * queue.
 *
 * <h2>Implementation overview</h2>
 *
 * The local run queue is Go's (proc.go runqput, runqputslow, runqputbatch, runqget, runqgrab,
 * runqsteal, runqempty), slot for slot:
 *
 * <ol>
 *   <li>A ring of 256 Gs between {@code runqhead} and {@code runqtail}, single-producer and
 *       multi-consumer. Only the owner puts (it alone writes the tail); the owner and thieves take
 *       from the head with a CAS. Slots are plain: a thief reads them after a load-acquire of the
 *       tail and then CASes the head, and the CAS fails if the owner could have reused a slot it
 *       read.
 *   <li>{@code runnext}: a G readied by the running G, run next and inheriting the time slice
 *       ({@code inheritTime}), so a communicate-and-wait set of Gs runs as a unit. Only the owner
 *       sets it to a G; thieves may CAS it to null, and only on their last steal pass.
 *   <li>A put to a full ring moves half of it plus the new G (128 + 1) to the global queue
 *       ({@link #runqPutSlow}); a thief takes half, rounded up, and runs the last G it took.
 * </ol>
 *
 * "The owner" is the thread running on the M that holds this P: the M itself in the scheduler,
 * or the G it has mounted (a virtual thread runs on its carrier's stack, so the two never run at
 * once). Rejected: a lock per P (Kotlin's first scheduler), which makes every wake-up contend
 * with every thief; and an unbounded queue per P (ForkJoinPool), which loses Go's overflow to the
 * global queue and with it the fairness that the global queue gives.
 *
 * <h3>'Loads'</h3>
 *
 * The indices and runnext are loaded as the volatile fields themselves, at least the acquire
 * that Go's atomic.LoadAcq asks; only the release stores and the CASes go through the
 * VarHandles. Compiled, a load through a VarHandle and a volatile load are the same {@code mov}
 * on x86, but the interpreter runs each VarHandle call through its guard and linked methods, and
 * a cold process runs the scheduler interpreted for its first seconds: PingPongBenchmark's round
 * trip under {@code -Xint} took 75 us with the loads through VarHandles and 55 us without, the
 * JDK's scheduler 15-19 us (BENCHMARKS.md, 'The scheduler interpreted'). The same holds for {@code Machine.phold},
 * {@code Trace.enabled} and, since issue 17, the poll's own load ('Rejected' in {@link Preempt}).
 *
 * <h3>'P status'</h3>
 *
 * Status values are Go's ({@code _Pidle} 0, {@code _Prunning} 1, {@code _Psyscall} 2, {@code
 * _Pgcstop} 3, {@code _Pdead} 4), because {@code schedtrace} prints them. Who owns the P in
 * each, which is what the status is for:
 *
 * <ul>
 *   <li>{@code IDLE}: nobody runs on it. It is on the idle list (sched.pidle, under sched.lock),
 *       or in the hands of whoever is moving it between owners: the M that released it, sysmon
 *       after a retake, a stopper. Its ring is empty when it goes on the list.
 *   <li>{@code RUNNING}: owned by the M wired to it ({@code pp.m}, {@code m.p}), which alone may
 *       change the status, and used by that M's scheduler or its running G under a claim (see
 *       {@link PHold}). Beyond Go: sysmon may take a running P from a G that ignores preemption
 *       ({@code HogHandoff.retake}): once its phold CAS wins, sysmon owns the P, still marked
 *       running, until it writes IDLE and hands it off.
 *   <li>{@code SYSCALL}: owned by nobody. The M whose G entered the syscall unwired it; one CAS
 *       out of this state decides who gets it: that M back from the syscall, sysmon's retake, or
 *       a stop-the-world (see 'Syscall' in {@link Syscall}). Go 1.26 reads "in a syscall" off
 *       the G instead; gmp4j keeps Go 1.25's status.
 *   <li>{@code GCSTOP}: stopped for a stop-the-world and owned by the stopper (or not yet in use:
 *       a new P starts here), until procresize puts it back.
 *   <li>{@code DEAD}: no longer used (GOMAXPROCS shrank); procresize moved its Gs and timers to
 *       the Ps that stay. Nothing writes it again.
 * </ul>
 *
 * <pre>
 *   from      to        by whom                                   where
 *   GCSTOP  → IDLE      the stopper, world stopped, sched.lock     procresize, pidleput
 *   IDLE    → IDLE      whoever lists a P released just before    pidleput
 *   IDLE    → RUNNING   the M that took it (or was handed it)     acquireP
 *   RUNNING → IDLE      its M                                     releaseP
 *   RUNNING → IDLE      sysmon, after its phold CAS (beyond Go)   HogHandoff.retake
 *   RUNNING → SYSCALL   its M's G, under its claim                enterSyscall
 *   SYSCALL → IDLE      that M back from the syscall (CAS)        exitSyscallFast
 *   SYSCALL → IDLE      sysmon (CAS)                              Sysmon.retake
 *   SYSCALL → GCSTOP    the G, seeing gcwaiting (CAS)             enterSyscall
 *   SYSCALL → GCSTOP    the stopper (CAS)                         stopTheWorld
 *   IDLE    → GCSTOP    an M stopping for gcwaiting               gcstopM
 *   IDLE    → GCSTOP    whoever hands off during a stop           handoffP
 *   IDLE    → GCSTOP    the stopper, for an idle P                stopTheWorld
 *   GCSTOP  → DEAD      the stopper, for a removed P              procresize
 * </pre>
 *
 * Every write goes through {@link #setStatus} (by the P's owner) or {@link #casStatus} (the
 * SYSCALL arbitration), which check the edge against {@link #TABLE} under {@code assert}.
 */
final class Processor {
  static final int IDLE = 0;
  static final int RUNNING = 1;

  /** Go 1.25's _Psyscall (Go 1.26 reads "in a syscall" off the G instead); see Syscall. */
  static final int SYSCALL = 2;

  static final int GCSTOP = 3;
  static final int DEAD = 4;

  /** 'P status', held in code. */
  static final StateTable TABLE =
      new StateTable("P status", "idle", "running", "syscall", "gcstop", "dead")
          .edge(GCSTOP, IDLE, "procresize", "pidleput")
          .edge(IDLE, IDLE, "pidleput")
          .edge(IDLE, RUNNING, "acquireP")
          .edge(RUNNING, IDLE, "releaseP", "HogHandoff.retake")
          .edge(RUNNING, SYSCALL, "enterSyscall")
          .edge(SYSCALL, IDLE, "exitSyscallFast", "Sysmon.retake")
          .edge(SYSCALL, GCSTOP, "enterSyscall", "stopTheWorld")
          .edge(IDLE, GCSTOP, "gcstopM", "handoffP", "stopTheWorld")
          .edge(GCSTOP, DEAD, "procresize");

  /** len(pp.runq) in Go. A power of two, so a slot index is {@code i & RUNQ_MASK}. */
  static final int RUNQ_SIZE = 256;

  private static final int RUNQ_MASK = RUNQ_SIZE - 1;
  private static final VarHandle RUNQ_HEAD;
  private static final VarHandle RUNQ_TAIL;
  private static final VarHandle RUNNEXT;
  private static final VarHandle SCHEDTICK;
  private static final VarHandle STATUS;
  private static final VarHandle PREEMPT;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      RUNQ_HEAD = l.findVarHandle(Processor.class, "runqhead", int.class);
      RUNQ_TAIL = l.findVarHandle(Processor.class, "runqtail", int.class);
      RUNNEXT = l.findVarHandle(Processor.class, "runnext", Goroutine.class);
      SCHEDTICK = l.findVarHandle(Processor.class, "schedtick", int.class);
      STATUS = l.findVarHandle(Processor.class, "status", int.class);
      PREEMPT = l.findVarHandle(Processor.class, "preempt", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final Sched sched;

  /** Index in allp. Final. */
  final int id;

  /**
   * Go's pp.status; see 'P status'. Written only through setStatus (by the P's owner of the
   * moment: its M, sysmon after a retake, the stopper) and casStatus (out of SYSCALL, any
   * thread); read racily (volatile) by thieves, sysmon and schedtrace.
   */
  private volatile int status = GCSTOP;

  /** Go's pp.status. Any thread; volatile read. */
  int status() {
    return status;
  }

  /**
   * Writes the status, an edge of 'P status' taken by function {@code fn} (checked under
   * assert). Called only by the P's owner of the moment, which the edge names.
   */
  void setStatus(int to, String fn) {
    assert checkSet(to, fn);
    status = to; // volatile: publishes the owner's writes before the new status
  }

  /** setStatus's edge check: out of SYSCALL only the CAS may move a P, which nobody owns. */
  private boolean checkSet(int to, String fn) {
    int from = status;
    if (from == SYSCALL) {
      throw new InternalError(
          fn + ": " + this + " " + TABLE.name(from) + " → " + TABLE.name(to) + " must be a CAS");
    }
    return TABLE.check(fn, this, from, to);
  }

  /**
   * The CAS that arbitrates a P in a syscall between sysmon (retake), the stopper and the M
   * that left it there (exitsyscall), an edge of 'P status' (checked under assert). Any thread.
   */
  boolean casStatus(int from, int to, String fn) {
    assert TABLE.check(fn, this, from, to);
    return STATUS.compareAndSet(this, from, to);
  }

  /**
   * The M that holds this P, or null. Written by that M, under sched.lock, and by sysmon when
   * it retakes this P from a G that ignores preemption; racy reads.
   */
  volatile Machine m;

  /** The idle-P list (sched.pidle); read and written only under sched.lock. */
  Processor link;

  /**
   * Incremented by the owner on every schedule that does not inherit the time slice, and by
   * sysmon, as the P's owner, when it retakes it from a G that ignores preemption (opaque);
   * read by sysmon, the fairness check and schedtrace.
   */
  private int schedtick;

  /**
   * Go's pp.preempt: the time slice that this P's current schedtick counts has run out. Set by
   * sysmon; cleared by the owner when a new slice starts or when a G honours the request (and by
   * sysmon when it retakes the P from a G that ignored it). While
   * set, the owner does not run a G from runnext on the spent slice: it ends the chain (see
   * 'Preemption' in {@link Preempt}). Volatile, but the owner's clear at a new slice is a release
   * store ({@link #clearPreempt}): a request that races the new slice is as stale either way,
   * and sysmon asks again.
   */
  volatile boolean preempt;

  /**
   * Go's syscalltick: syscalls completed on this P, or taken from it. Incremented by the one
   * thread whose CAS took the P out of {@code _Psyscall}, before it publishes the P again:
   * exitsyscall's M, sysmon's retake, the stop-the-world thread, or entersyscall's G when a
   * stop-the-world is waiting. Read racily by sysmon's retake check.
   */
  volatile int syscalltick;

  /**
   * The M that left this P in _Psyscall: for the trace's ProcHandoff, and for exitsyscall, to
   * tell its own call from another M's. Written by that M's G in entersyscall before the status
   * write that publishes it; read by whoever then CASes the status out of _Psyscall (sysmon, or
   * an M in exitsyscall).
   */
  Machine syscallM;

  /** The open ProcIdle event (a TraceEvents.ProcIdle), or null. Under sched.lock. */
  Object traceIdle;

  /** Go's pp.timers: this P's timer heap, 'Timers on the P' in {@link Timers}. Final. */
  final Timers timers = new Timers(this);

  private final Goroutine[] runq = new Goroutine[RUNQ_SIZE];

  /** Consumers' index. CAS by the owner and thieves; loaded as the field ('Loads'). */
  private volatile int runqhead;

  /** Producer's index. Written by the owner only, with release; loaded as the field ('Loads'). */
  private volatile int runqtail;

  /** See the overview. The owner CASes in a G; anyone CASes it out. */
  private volatile Goroutine runnext;

  Processor(Sched sched, int id) {
    this.sched = sched;
    this.id = id;
  }

  int schedtick() {
    return (int) SCHEDTICK.getOpaque(this); // racy reader: sysmon, schedtrace
  }

  /**
   * Clears {@link #preempt} as a new slice starts: a release store, after the schedtick
   * increment. Called only by the owner.
   */
  void clearPreempt() {
    PREEMPT.setRelease(this, false);
  }

  /**
   * Go's execute: {@code if !inheritTime { pp.schedtick++ }}. Called only by the owner P (which
   * is sysmon for a P it retook from a G, until it hands it off).
   */
  void incSchedtick() {
    SCHEDTICK.setOpaque(this, schedtick + 1); // single writer: its own plain read is current
  }

  /**
   * Go's runqput: puts gp on the local queue. With {@code next}, gp goes to runnext and the old
   * runnext is kicked to the tail. A full ring spills half to the global queue. Returns true if
   * gp went to runnext: published by runnext's CAS, a volatile write that no later volatile read
   * of this thread can pass, so the submitter's half of the 'Delicate dance' needs no fence of its
   * own (see {@link Sched#wakeP(boolean)}). Called only by the owner P.
   */
  boolean runqPut(Goroutine gp, boolean next) {
    if (Sched.RANDOMIZE && next && ThreadLocalRandom.current().nextBoolean()) {
      next = false;
    }
    if (next) {
      Goroutine oldnext;
      do {
        oldnext = runnext;
      } while (!RUNNEXT.compareAndSet(this, oldnext, gp)); // pairs with runqGet/runqGrab CAS
      if (oldnext == null) {
        return true;
      }
      gp = oldnext; // kick the old runnext out to the regular run queue; a spinner sees gp
    }
    for (; ; ) {
      int h = runqhead; // synchronize with consumers
      int t = runqtail; // owner's own field
      if (t - h < RUNQ_SIZE) {
        runq[t & RUNQ_MASK] = gp;
        RUNQ_TAIL.setRelease(this, t + 1); // makes the slot available for consumption
        return next;
      }
      if (runqPutSlow(gp, h, t)) {
        return next;
      }
      // the queue is not full now, so the put above must succeed
    }
  }

  /**
   * Go's runqputslow: moves 128 Gs from the head of the full ring, plus gp, to the global queue
   * tail. Returns false if a thief moved the head first. Called only by the owner P.
   */
  private boolean runqPutSlow(Goroutine gp, int h, int t) {
    int n = (t - h) / 2;
    if (n != RUNQ_SIZE / 2) {
      throw new InternalError("runqputslow: queue is not full");
    }
    Goroutine[] batch = new Goroutine[n + 1];
    for (int i = 0; i < n; i++) {
      batch[i] = runq[(h + i) & RUNQ_MASK];
    }
    if (!RUNQ_HEAD.compareAndSet(this, h, h + n)) { // release: the slots may be reused
      return false;
    }
    batch[n] = gp;
    if (Sched.RANDOMIZE) {
      ThreadLocalRandom r = ThreadLocalRandom.current();
      for (int i = 1; i <= n; i++) {
        int j = r.nextInt(i + 1);
        Goroutine x = batch[i];
        batch[i] = batch[j];
        batch[j] = x;
      }
    }
    sched.runq.globRunqPutBatch(batch, n + 1);
    return true;
  }

  /**
   * Go's runqputbatch: puts {@code n} Gs from {@code batch[from..]} on the local ring, as many as
   * fit; returns how many it put. Called only by the owner P.
   */
  int runqPutBatch(Goroutine[] batch, int from, int n) {
    int h = runqhead; // synchronize with consumers
    int t = runqtail;
    int put = 0;
    while (put < n && t - h < RUNQ_SIZE) {
      runq[t & RUNQ_MASK] = batch[from + put];
      t++;
      put++;
    }
    if (Sched.RANDOMIZE) {
      ThreadLocalRandom r = ThreadLocalRandom.current();
      int base = t - put;
      for (int i = 1; i < put; i++) {
        int j = r.nextInt(i + 1);
        Goroutine x = runq[(base + i) & RUNQ_MASK];
        runq[(base + i) & RUNQ_MASK] = runq[(base + j) & RUNQ_MASK];
        runq[(base + j) & RUNQ_MASK] = x;
      }
    }
    RUNQ_TAIL.setRelease(this, t); // publishes all the slots above
    return put;
  }

  /**
   * Go's runqget: runnext first (inheriting the time slice), then the ring's head. Returns null
   * when both are empty; {@link #lastGetInheritsTime} tells which one it was. Called only by the
   * owner P.
   */
  Goroutine runqGet() {
    Goroutine next = runnext;
    // If the CAS fails, a thief took runnext; the ring may still have Gs.
    if (next != null && RUNNEXT.compareAndSet(this, next, null)) { // pairs with runqPut
      inheritTime = true;
      return next;
    }
    inheritTime = false;
    for (; ; ) {
      int h = runqhead; // synchronize with other consumers
      int t = runqtail;
      if (t == h) {
        return null;
      }
      Goroutine gp = runq[h & RUNQ_MASK];
      if (RUNQ_HEAD.compareAndSet(this, h, h + 1)) { // release: commits the consume
        return gp;
      }
    }
  }

  /** Set by {@link #runqGet}: whether the G it returned came from runnext. Owner only. */
  private boolean inheritTime;

  /**
   * The 1-in-61 global-queue check was put off by one schedule for a G that a timer had just
   * woken into runnext ('A timer-woken G before the fairness check' in Machine.findRunnable).
   * Owner only.
   */
  boolean fairnessOwed;

  boolean lastGetInheritsTime() {
    return inheritTime;
  }

  /**
   * Go's runqempty. Never answers "empty" falsely: a put with runnext kicks the old runnext to
   * the tail, and a reader that saw head == tail and then runnext == null could miss both, so
   * it retries until the tail did not move around its reads. Any thread.
   */
  boolean runqEmpty() {
    for (; ; ) {
      int head = runqhead;
      int tail = runqtail;
      Goroutine next = runnext;
      if (tail == runqtail) {
        return head == tail && next == null;
      }
    }
  }

  /** Gs in the ring, without runnext: schedtrace's per-P number. Any thread; racy. */
  int runqSize() {
    int h = runqhead;
    int t = runqtail;
    int n = t - h;
    return n < 0 ? 0 : Math.min(n, RUNQ_SIZE);
  }

  /** Whether runnext holds a G. Any thread; racy. */
  boolean hasRunnext() {
    return runnext != null;
  }

  /** Whether runnext holds gp, for the trace. Any thread; racy. */
  boolean runnextIs(Goroutine gp) {
    return runnext == gp;
  }

  /** The G in runnext, for the trace. Any thread; racy. */
  Goroutine runnextRacy() {
    return runnext;
  }

  /**
   * Go's runqsteal: grabs half of p2's Gs into this P's ring and returns the last one to run
   * (inheritTime false). Called only by the owner of this P.
   */
  Goroutine runqSteal(Processor p2, boolean stealRunNextG) {
    int t = runqtail;
    int n = p2.runqGrab(runq, t, stealRunNextG);
    if (n == 0) {
      return null;
    }
    n--;
    Goroutine gp = runq[(t + n) & RUNQ_MASK];
    if (n == 0) {
      return gp;
    }
    int h = runqhead; // synchronize with consumers
    if (t - h + n >= RUNQ_SIZE) {
      throw new InternalError("runqsteal: runq overflow");
    }
    RUNQ_TAIL.setRelease(this, t + n); // makes the stolen Gs available for consumption
    return gp;
  }

  /**
   * Go's runqgrab: copies half of this P's ring, rounded up, into {@code batch} from
   * {@code batchHead}; on an empty ring and {@code stealRunNextG}, takes runnext instead. Returns
   * the count. Any thread (a thief).
   */
  int runqGrab(Goroutine[] batch, int batchHead, boolean stealRunNextG) {
    for (; ; ) {
      int h = runqhead; // synchronize with other consumers
      int t = runqtail; // synchronize with the producer
      int d = t - h;
      if (d == 0) {
        if (stealRunNextG) {
          Goroutine next = runnext;
          if (next != null) {
            if (status == RUNNING) {
              // Sleep to ensure that this P is not about to run the G we are about to steal.
              // The important use case is a G readied by a running G that is about to block.
              // Go's usleep(3), which on Linux is a nanosleep that the kernel's timer slack
              // stretches to about 55us; parkNanos(3us) is the same futex wait with the same
              // slack. A 3us spin (gmp4j before) was 20x more eager than Go: whenever the
              // victim's post-run path took longer (a JFR recording's slice bookkeeping, a
              // descheduled carrier), the thief split a ping-pong pair across two Ps and
              // every hand-off became a cross-thread wake-up (steals per round trip went from
              // 0.02 to 0.15 with gmp4j.jfc; see BENCHMARKS.md), and on a small machine it
              // burnt the CPU that the victim needed to get there.
              Machine mp = m;
              Goroutine cur = mp == null ? null : mp.curg;
              if (cur == null || cur.status() != Goroutine.SYSCALL) {
                LockSupport.parkNanos(3_000); // a thief is an M (a platform thread): it sleeps
              }
            }
            if (!RUNNEXT.compareAndSet(this, next, null)) { // pairs with runqPut/runqGet
              continue;
            }
            batch[batchHead & RUNQ_MASK] = next;
            return 1;
          }
        }
        return 0;
      }
      if (d < 0 || d > RUNQ_SIZE) { // read inconsistent h and t
        continue;
      }
      int n = d - d / 2;
      for (int i = 0; i < n; i++) {
        batch[(batchHead + i) & RUNQ_MASK] = runq[(h + i) & RUNQ_MASK];
      }
      if (RUNQ_HEAD.compareAndSet(this, h, h + n)) { // release: commits the consume
        return n;
      }
    }
  }

  /**
   * Go's p.destroy run-queue part: moves every G, in order, to the global queue head (runnext
   * first in line). Requires sched.lock and a stopped world.
   */
  void runqDrainToGlobalHead() {
    assert sched.lock.isHeldByCurrentThread() : "requires sched.lock";
    for (; ; ) {
      int h = runqhead;
      int t = runqtail;
      if (t == h) {
        break;
      }
      Goroutine gp = runq[(t - 1) & RUNQ_MASK];
      runq[(t - 1) & RUNQ_MASK] = null;
      RUNQ_TAIL.setRelease(this, t - 1);
      sched.runq.globRunqPutHead(gp);
    }
    Goroutine next = (Goroutine) RUNNEXT.getAndSet(this, null);
    if (next != null) {
      sched.runq.globRunqPutHead(next);
    }
  }

  @Override
  public String toString() {
    Machine mp = m;
    return "P"
        + id
        + "{status="
        + status
        + " schedtick="
        + schedtick()
        + " m="
        + (mp == null ? "nil" : mp.id)
        + " runqsize="
        + runqSize()
        + " runnext="
        + (runnext == null ? "nil" : runnext.goid)
        + "}";
  }
}
