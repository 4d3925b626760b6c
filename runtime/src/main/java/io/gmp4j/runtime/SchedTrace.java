package io.gmp4j.runtime;

/**
 * Go's {@code schedtrace} (proc.go), field for field in Go 1.26's format.
 *
 * <pre>
 * SCHED 0ms: gomaxprocs=4 idleprocs=2 threads=7 spinningthreads=1 needspinning=0 idlethreads=3 runqueue=0 [ 1 0 0 0 ] schedticks=[ 57 12 3 0 ]
 * </pre>
 *
 * With detail, the first line ends with {@code gcwaiting nmidlelocked stopwait sysmonwait}, and
 * P, M and G lines follow, indented by two spaces. Go's G lines cover every G ever created; ours
 * cover the live ones (a dead JVM virtual thread is not kept for reuse, so there is nothing to
 * print). Fields with no JVM counterpart print Go's value for "none": mallocing=0, gfreecnt=0,
 * timerslen=0 and so on. Go's lines are racy reads taken under sched.lock; so are ours, and a
 * trace never stops the world. {@code SCHED <n>ms} counts from the scheduler's start, as Go's
 * counts from runtimeInitTime (up to issue 13 it counted from the first trace, so the first line
 * of every JVM said 0ms).
 */
final class SchedTrace {
  private SchedTrace() {}

  /** Any thread. */
  static String format(Sched sched, boolean detailed) {
    StringBuilder sb = new StringBuilder(256);
    long now = System.nanoTime();
    sched.lock.lock();
    try {
      Processor[] allp = sched.allp;
      sb.append("SCHED ")
          .append((now - sched.initTime) / 1_000_000)
          .append("ms: gomaxprocs=")
          .append(sched.gomaxprocs)
          .append(" idleprocs=")
          .append(sched.npidle)
          .append(" threads=")
          .append(sched.mcount())
          .append(" spinningthreads=")
          .append(sched.nmspinning.get())
          .append(" needspinning=")
          .append(sched.needspinning.get())
          .append(" idlethreads=")
          .append(sched.nmidle)
          .append(" runqueue=")
          .append(sched.runq.runqsize());
      if (detailed) {
        sb.append(" gcwaiting=")
            .append(sched.gcwaiting)
            .append(" nmidlelocked=")
            .append(sched.nmidlelocked.get())
            .append(" stopwait=")
            .append(sched.stopwait.get())
            .append(" sysmonwait=")
            .append(sched.sysmonwait())
            .append('\n');
      }
      for (int i = 0; i < allp.length; i++) {
        Processor pp = allp[i];
        if (detailed) {
          Machine mp = pp.m;
          sb.append("  P")
              .append(i)
              .append(": status=")
              .append(pp.status())
              .append(" schedtick=")
              .append(Integer.toUnsignedString(pp.schedtick()))
              .append(" syscalltick=")
              .append(Integer.toUnsignedString(pp.syscalltick))
              .append(" m=")
              .append(mp == null ? "nil" : String.valueOf(mp.id))
              .append(" runqsize=")
              .append(pp.runqSize())
              .append(" gfreecnt=0 timerslen=")
              .append(pp.timers.numTimers())
              .append('\n');
        } else {
          sb.append(' ');
          if (i == 0) {
            sb.append("[ ");
          }
          sb.append(pp.runqSize());
          if (i == allp.length - 1) {
            sb.append(" ]");
          }
        }
      }
      if (!detailed) {
        sb.append(" schedticks=[ ");
        for (Processor pp : allp) {
          sb.append(Integer.toUnsignedString(pp.schedtick())).append(' ');
        }
        sb.append("]\n");
        return sb.toString();
      }
      for (Machine mp : sched.allm) {
        Processor pp = mp.p;
        Goroutine g = mp.curg;
        sb.append("  M")
            .append(mp.id)
            .append(": p=")
            .append(pp == null ? "nil" : pp.id)
            .append(" curg=")
            .append(g == null ? "nil" : String.valueOf(g.goid))
            .append(" mallocing=0 throwing=0 preemptoff= locks=0 dying=0 spinning=")
            .append(mp.spinning)
            .append(" blocked=")
            .append(mp.blocked())
            .append(" lockedg=")
            .append(mp.lockedg == null ? "nil" : String.valueOf(mp.lockedg.goid))
            .append('\n');
      }
    } finally {
      sched.lock.unlock();
    }
    // G lines outside sched.lock: allgs is concurrent and may be large.
    sched.allgs.snapshot().stream()
        .sorted((a, b) -> Long.compare(a.goid, b.goid))
        .forEach(
            gp -> {
              Machine mp = gp.m;
              int st = gp.running() ? Goroutine.RUNNING : gp.status(); // Go's numbers
              sb.append("  G")
                  .append(gp.goid)
                  .append(": status=")
                  .append(st)
                  .append('(')
                  .append(st == Goroutine.WAITING ? gp.waitReason() : "")
                  .append(") m=")
                  .append(st == Goroutine.RUNNING && mp != null ? String.valueOf(mp.id) : "nil")
                  .append(" lockedm=")
                  .append(gp.lockedm == null ? "nil" : String.valueOf(gp.lockedm.id))
                  .append('\n');
            });
    return sb.toString();
  }
}
