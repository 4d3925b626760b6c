package io.gmp4j.runtime;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;

/**
 * Go's stop-the-world and procresize (proc.go stopTheWorldWithSema, startTheWorldWithSema,
 * procresize, updatemaxprocs), for GOMAXPROCS changes. The state they share with the Ms
 * (gcwaiting, stopwait, stopnote, allp, gomaxprocs) is schedt's and stays in {@link Sched},
 * where the M's hot path reads it with no indirection; this class holds the protocol.
 *
 * <h2>Implementation overview: 'Stop-the-world'</h2>
 *
 * {@code gomaxprocs(n)} stops the world as Go does: it sets gcwaiting, takes the idle Ps, and
 * waits until every M that holds a P reaches its scheduler and gives the P up (gcstopM). A
 * running G gives its P up when it blocks or yields, or, if it ignores the stop's preemption
 * request, when sysmon retakes the P ('Hog hand-off' in {@link HogHandoff}). Go runs this on
 * the system stack; we run it on a platform thread ({@code gmp-stw} when the caller is itself a
 * G, since a G that waited in place would hold its own P, or sysmon, which the stop may need).
 * procresize then moves the queues of removed Ps to the global head in order, and the world
 * restarts with an M for every P that has work.
 */
final class StopTheWorld {
  private final Sched sched;

  /** One stop-the-world at a time (Go's worldsema). */
  private final Semaphore worldsema = new Semaphore(1);

  StopTheWorld(Sched sched) {
    this.sched = sched;
  }

  /**
   * Go's updatemaxprocs: follows a changed CPU limit. Called only by sysmon, which must not wait
   * for the stop itself: the stop may need sysmon to hand off the P of a G that ignores
   * preemption ('Hog hand-off'), so it runs on its own {@code gmp-stw} thread, one at a time.
   */
  void updateMaxProcs(int n) {
    assert Thread.currentThread() == sched.sysmon() : "updatemaxprocs: not on sysmon";
    if (updatingMaxProcs) {
      return; // the previous update is still stopping the world; sysmon asks again later
    }
    updatingMaxProcs = true;
    Thread.ofPlatform()
        .daemon()
        .name("gmp-stw")
        .start(
            () -> {
              try {
                resize(n, false);
              } finally {
                updatingMaxProcs = false;
              }
            });
  }

  /**
   * An updateMaxProcs stop is under way. Set by sysmon, cleared by its gmp-stw thread; volatile.
   */
  private volatile boolean updatingMaxProcs;

  /** A stop-the-world resize to n Ps; {@code api}: asked by the program, else by sysmon. */
  int resize(int n, boolean api) {
    int[] prev = new int[1];
    runOnSystemThread(() -> prev[0] = stopTheWorldAndResize(n, api));
    return prev[0];
  }

  /**
   * Runs {@code r} on a platform thread that is not an M: the caller itself if it is one, or a
   * fresh {@code gmp-stw} thread that the calling G waits for (see 'Stop-the-world').
   */
  private static void runOnSystemThread(Runnable r) {
    Thread ct = Thread.currentThread();
    if (!ct.isVirtual() && !(ct instanceof Machine)) {
      r.run();
      return;
    }
    Throwable[] failure = new Throwable[1];
    Thread t =
        Thread.ofPlatform()
            .daemon()
            .name("gmp-stw")
            .unstarted(
                () -> {
                  try {
                    r.run();
                  } catch (Throwable e) {
                    failure[0] = e;
                  }
                });
    t.start();
    boolean interrupted = false;
    for (; ; ) {
      try {
        t.join();
        break;
      } catch (InterruptedException e) {
        interrupted = true; // the world must restart whatever the caller wants
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    if (failure[0] instanceof RuntimeException re) {
      throw re;
    } else if (failure[0] instanceof Error err) {
      throw err;
    }
  }

  private int stopTheWorldAndResize(int n, boolean api) {
    worldsema.acquireUninterruptibly();
    try {
      long t0 = System.nanoTime();
      stopTheWorld();
      long stopped = System.nanoTime();
      sched.stwStopping.record(stopped - t0);
      int prev = sched.gomaxprocs;
      if (Trace.on(Trace.PROCS_CHANGE)) {
        // While stopped: every run on the old Ps ended before, every run on the new ones
        // begins after, so a reader can check each GoRun's P against it.
        Trace.procsChange(prev, n, api);
      }
      startTheWorld(n);
      sched.gomaxprocsChanges.increment();
      sched.stwTotal.record(System.nanoTime() - t0);
      return prev;
    } finally {
      worldsema.release();
    }
  }

  /**
   * Go's stopTheWorldWithSema: on return every P is stopped (GCSTOP) and no G runs. Called only
   * on a system thread, holding worldsema.
   */
  private void stopTheWorld() {
    assert !(Thread.currentThread() instanceof Machine) && !Thread.currentThread().isVirtual()
        : "stopTheWorld: on an M or a G";
    sched.lock.lock();
    try {
      // before gcwaiting: every M that sees gcwaiting counts down
      sched.stopwait.set(sched.gomaxprocs);
      sched.gcwaiting = true;
      for (Processor pp; (pp = sched.pidleget()) != null; ) {
        pp.setStatus(Processor.GCSTOP, "stopTheWorld");
        sched.stopOneP();
      }
      // stop Ps in syscalls (their Ms find them gone at exitsyscall)
      for (Processor pp : sched.allp) {
        if (pp.status() == Processor.SYSCALL
            && pp.casStatus(Processor.SYSCALL, Processor.GCSTOP, "stopTheWorld")) {
          pp.syscalltick++; // as Go's stopTheWorldWithSema: ours until the world starts
          sched.stopOneP();
        }
      }
    } finally {
      sched.lock.unlock();
    }
    // An M spinning in stealWork sees gcwaiting at its next victim; a running G is asked to
    // yield at its next poll (Go's preemptall), or gives its P up when it next blocks, or has it
    // retaken by sysmon if it ignores the request (see 'Hog hand-off' in HogHandoff).
    for (Processor pp : sched.allp) {
      if (pp.status() == Processor.RUNNING) {
        Preempt.preemptOne(pp, 0, "stopTheWorld");
      }
    }
    sched.stopnote.acquireUninterruptibly(); // released by whoever stops the last P, maybe us
    sched.lock.lock();
    try {
      if (sched.stopwait.get() != 0) {
        throw new InternalError("stopTheWorld: not stopped (stopwait=" + sched.stopwait + ")");
      }
      for (Processor pp : sched.allp) {
        if (pp.status() != Processor.GCSTOP) {
          throw new InternalError("stopTheWorld: not stopped: " + pp);
        }
      }
    } finally {
      sched.lock.unlock();
    }
  }

  /** Go's startTheWorldWithSema with newprocs. Called only on a stopped world. */
  private void startTheWorld(int newprocs) {
    List<Processor> runnable;
    sched.lock.lock();
    try {
      runnable = procresize(newprocs);
      sched.gcwaiting = false;
    } finally {
      sched.lock.unlock();
    }
    for (Processor pp : runnable) {
      sched.startM(pp, false);
    }
    sched.wakeP(); // Go: wakep in case there are more idle Ps than work
  }

  /**
   * Go's procresize: makes {@code nprocs} Ps. Removed Ps hand their Gs to the global head in
   * order; Ps with work are returned (to be started), the rest go idle. Requires sched.lock and
   * a stopped world (or a scheduler with no Ms yet).
   */
  List<Processor> procresize(int nprocs) {
    assert sched.lock.isHeldByCurrentThread() : "requires sched.lock";
    Processor[] old = sched.allp == null ? new Processor[0] : sched.allp;
    Processor[] next = new Processor[nprocs];
    for (int i = 0; i < nprocs; i++) {
      next[i] = i < old.length ? old[i] : new Processor(sched, i);
    }
    for (int i = old.length - 1; i >= nprocs; i--) {
      old[i].runqDrainToGlobalHead(); // Go's p.destroy
      next[i % nprocs].timers.moveTimers(old[i].timers); // Go's p.destroy: moveTimers
      old[i].setStatus(Processor.DEAD, "procresize");
    }
    sched.allp = next;
    sched.stealOrder = new RandomOrder(nprocs);
    sched.gomaxprocs = nprocs;
    sched.pidleReset();
    List<Processor> runnable = new ArrayList<>();
    for (int i = nprocs - 1; i >= 0; i--) {
      Processor pp = next[i];
      pp.m = null;
      if (pp.runqEmpty()) {
        sched.pidleput(pp);
      } else {
        pp.setStatus(Processor.IDLE, "procresize");
        runnable.add(pp);
      }
    }
    return runnable;
  }

  @Override
  public String toString() {
    return "stw{gcwaiting="
        + sched.gcwaiting
        + " stopwait="
        + sched.stopwait
        + " updating="
        + updatingMaxProcs
        + "}";
  }
}
