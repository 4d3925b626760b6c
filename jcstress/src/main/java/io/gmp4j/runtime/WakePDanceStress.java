package io.gmp4j.runtime;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The 'Delicate dance' of Sched, with the submitter's fence left to runnext's CAS ({@link
 * Sched#wakeP(boolean)}): a submitter puts a G to runnext and then reads nmspinning, as ready
 * does; the last spinner drops nmspinning and then looks at the P's queues, as findRunnable does.
 * Both missing each other (the submitter sees the spinner, so wakes nobody, and the spinner sees
 * an empty P, so stops) would strand the G. r1: nmspinning the submitter read; r2: 1 if the
 * spinner saw the P empty. A detached P and G, as in RunqPutStealStress. It can fail: a put to
 * the ring (a release store) without the fence gave "1, 1" in 0.01-0.03% of samples of {@code -m
 * quick} on the 2-vCPU EPYC VM of BENCHMARKS.md; the runnext CAS alone, never.
 */
@JCStressTest
@Outcome(id = "1, 1", expect = FORBIDDEN, desc = "both missed: the G waits with no M looking")
@Outcome(expect = ACCEPTABLE, desc = "at least one of the two saw the other")
@State
public class WakePDanceStress {
  final Processor pp = new Processor(null, 0);
  final AtomicInteger nmspinning = new AtomicInteger(1);

  @Actor
  public void submitter(II_Result r) {
    if (!pp.runqPut(new Goroutine(null, 1, null, null), true)) {
      java.lang.invoke.VarHandle.fullFence(); // as wakeP(false)
    }
    r.r1 = nmspinning.get();
  }

  @Actor
  public void spinner(II_Result r) {
    nmspinning.decrementAndGet();
    r.r2 = pp.runqEmpty() ? 1 : 0;
  }
}
