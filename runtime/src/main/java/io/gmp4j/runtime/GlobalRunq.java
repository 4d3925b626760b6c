package io.gmp4j.runtime;

/**
 * Go's global run queue (schedt's {@code runq} and {@code runqsize}; proc.go globrunqput,
 * globrunqputhead, globrunqputbatch, globrunqget, globrunqgetbatch), with gmp4j's wake-up segment
 * at its head.
 *
 * <h2>Implementation overview</h2>
 *
 * A FIFO list of Gs linked through {@code Goroutine.schedlink}, under sched.lock, as in Go. Gs
 * come here when a local ring overflows (runqPutSlow, half of it in one batch), when a G
 * yields or is preempted (goschedImpl puts it at the tail), when a G is readied without a P
 * (a G whose P was retaken, an M whose G's syscall outlived its P), when procresize drains a
 * removed P (at the head, in order), and from threads that are not ours, which go to the
 * wake-up segment: see 'Wake-ups from JDK threads' in {@link Sched}. An M takes one G every
 * 61st schedtick for fairness, the segment's head before its own ring, and a batch
 * ({@code size/gomaxprocs+1}) when its ring is empty; see findRunnable in {@link Machine}.
 *
 * <p>The length is volatile so that findRunnable and handoffP can look without the lock and
 * take it only when there is something; a racy zero is rechecked under the lock before a P goes
 * idle ('Delicate dance' in Machine).
 *
 * <p>Its own class, one protocol per file (see docs/DESIGN.md), but not its own lock: the global
 * queue, the idle lists and procresize share sched.lock, as in Go. Machine holds a reference of
 * its own ({@code Machine.runq}), so findRunnable's racy looks cost the loads they cost when the
 * queue's fields were Sched's.
 */
final class GlobalRunq {
  /** For gomaxprocs, which sizes a batch. Final. */
  private final Sched sched;

  /** sched.lock. Final. */
  private final SchedLock lock;

  // head, tail and links under lock
  private Goroutine runqHead;
  private Goroutine runqTail;

  /**
   * The last G of the wake-up segment, the Gs at the head of the global queue that threads
   * other than ours readied ('Wake-ups from JDK threads'), or null when there are none. Under
   * lock. Invariants: null, or a G in the queue; every G from runqHead to it was queued by
   * globRunqPutWoken or globRunqPutHead, and none after it by globRunqPutWoken.
   */
  private Goroutine runqWokenTail;

  /**
   * Gs from runqHead to runqWokenTail, 0 when it is null. Written under lock; read racily by
   * findRunnable, which takes the lock only when it sees one.
   */
  private volatile int runqwoken;

  /**
   * How many Gs globRunqPutWoken ever queued (wrapping). Written under lock; read racily by an
   * M's idle spin ('Waiting for JDK threads' in Machine), which only asks whether it moved.
   */
  private volatile int wokenPuts;

  /**
   * 'Overdue wake-ups' in {@link Sysmon}: when the wake-up segment last went from empty to not
   * empty, in {@link Timers#nanotime()}; 0 while it is empty. Written under lock; read racily by
   * sysmon, which at worst asks one slice to end for a G already taken, or a cycle late.
   *
   * <p>Under a flow of wake-ups that never lets the segment empty, this stays at the flow's start,
   * so while every P runs, sysmon cuts each slice at 1 ms for as long as the flow lasts, whether
   * or not the G at the head has waited that long: a server's JDK-woken requests then share the
   * Ps in 1 ms slices. Dating it from the head's own queueing instead (a stamp per G) was tried
   * in issue 17 and not kept: the same preemptions in a cold Spring Boot burst, a higher p99
   * (BENCHMARKS.md, 'Who the cold phase waits for').
   */
  private volatile long wokenSince;

  /** Global queue length. Written under lock; read racily by the fairness check and observers. */
  private volatile int runqsize;

  /**
   * globRunqGetBatch's scratch space, so that taking a batch allocates nothing (a yield at 1 P
   * takes one every time). Used and cleared under lock.
   */
  private final Goroutine[] batch = new Goroutine[Processor.RUNQ_SIZE / 2];

  GlobalRunq(Sched sched, SchedLock lock) {
    this.sched = sched;
    this.lock = lock;
  }

  /** Go's globrunqput: appends to the tail. Takes sched.lock. */
  void globRunqPut(Goroutine gp) {
    lock.lock();
    try {
      gp.schedlink = null;
      if (runqTail == null) {
        runqHead = gp;
      } else {
        runqTail.schedlink = gp;
      }
      runqTail = gp;
      runqsize++;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Queues a G readied by a thread that is not ours (case 3 of 'Readying a G') after the other
   * such Gs but ahead of every G queued by globRunqPut: see 'Wake-ups from JDK threads'. Returns
   * the segment's new {@link #wokenSince} if gp started it, else 0. Takes sched.lock.
   */
  long globRunqPutWoken(Goroutine gp) {
    long now = runqwoken == 0 ? Timers.nanotime() : 0; // the clock outside the lock, if needed
    lock.lock();
    try {
      long started = 0;
      if (runqWokenTail == null) {
        started = now != 0 ? now : Timers.nanotime();
        wokenSince = started;
        gp.schedlink = runqHead;
        runqHead = gp;
      } else {
        gp.schedlink = runqWokenTail.schedlink;
        runqWokenTail.schedlink = gp;
      }
      if (gp.schedlink == null) {
        runqTail = gp;
      }
      runqWokenTail = gp;
      runqwoken++;
      wokenPuts++;
      runqsize++;
      return started;
    } finally {
      lock.unlock();
    }
  }

  /** Go's globrunqputhead: pushes to the head. Requires sched.lock. */
  void globRunqPutHead(Goroutine gp) {
    assert lock.isHeldByCurrentThread() : "requires sched.lock";
    gp.schedlink = runqHead;
    runqHead = gp;
    if (runqTail == null) {
      runqTail = gp;
    }
    if (runqWokenTail != null) {
      runqwoken++; // ahead of the wake-up segment, so counted in it: see runqWokenTail
    }
    runqsize++;
  }

  /** Go's globrunqputbatch: appends {@code n} Gs in order. Takes sched.lock. */
  void globRunqPutBatch(Goroutine[] batch, int n) {
    for (int i = 0; i < n - 1; i++) {
      batch[i].schedlink = batch[i + 1];
    }
    batch[n - 1].schedlink = null;
    lock.lock();
    try {
      if (runqTail == null) {
        runqHead = batch[0];
      } else {
        runqTail.schedlink = batch[0];
      }
      runqTail = batch[n - 1];
      runqsize += n;
    } finally {
      lock.unlock();
    }
  }

  /** Go's globrunqget: one G, or null. Requires sched.lock. */
  Goroutine globRunqGet() {
    assert lock.isHeldByCurrentThread() : "requires sched.lock";
    Goroutine gp = runqHead;
    if (gp != null) {
      runqHead = gp.schedlink;
      if (runqHead == null) {
        runqTail = null;
      }
      if (runqWokenTail != null) {
        runqwoken--;
        if (gp == runqWokenTail) {
          runqWokenTail = null; // the wake-up segment is empty
          wokenSince = 0;
          if (runqwoken != 0) {
            throw new InternalError("globrunqget: runqwoken " + runqwoken + " at the end");
          }
        }
      }
      gp.schedlink = null;
      runqsize--;
    }
    return gp;
  }

  /**
   * The head of the wake-up segment, or null when it is empty: see 'Wake-ups from JDK threads'.
   * Requires sched.lock.
   */
  Goroutine globRunqGetWoken() {
    assert lock.isHeldByCurrentThread() : "requires sched.lock";
    return runqWokenTail == null ? null : globRunqGet();
  }

  /** See {@link #wokenSince}. Any thread; racy. */
  long wokenSince() {
    return wokenSince;
  }

  /** Gs in the wake-up segment. Any thread; racy. */
  int runqwoken() {
    return runqwoken;
  }

  /** See {@link #wokenPuts}. Any thread; racy. */
  int wokenPuts() {
    return wokenPuts;
  }

  /**
   * Go's globrunqgetbatch: takes {@code min(n, size, size/gomaxprocs+1)} Gs; returns the first
   * and puts the rest on {@code pp}'s ring. Requires sched.lock and ownership of pp.
   */
  Goroutine globRunqGetBatch(Processor pp, int n) {
    assert lock.isHeldByCurrentThread() : "requires sched.lock";
    int size = runqsize;
    n = Math.min(n, Math.min(size, size / sched.gomaxprocs + 1));
    if (n <= 0) {
      return null;
    }
    Goroutine gp = globRunqGet();
    if (--n > 0) {
      Goroutine[] q = batch;
      assert n < q.length : "globRunqGetBatch: " + n + " Gs is more than half a run queue";
      for (int i = 0; i < n; i++) {
        q[i] = globRunqGet();
      }
      int put = pp.runqPutBatch(q, 0, n);
      java.util.Arrays.fill(q, 0, n, null); // no G stays reachable from here
      if (put != n) {
        throw new InternalError("findRunnable: couldn't put Gs into empty local runq");
      }
    }
    return gp;
  }

  /** Global queue length. Any thread; racy. */
  int runqsize() {
    return runqsize;
  }

  @Override
  public String toString() {
    return "runq{size=" + runqsize + " woken=" + runqwoken + "}";
  }
}
