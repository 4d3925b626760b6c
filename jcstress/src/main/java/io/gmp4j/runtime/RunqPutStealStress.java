package io.gmp4j.runtime;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The local run queue's put against a thief's steal ('Implementation overview' in Processor, Go's
 * runqput and runqsteal): the owner puts two Gs and takes one while a thief steals; afterwards
 * each G is in exactly one place. r1: Gs found, counting what both took and what is left in both
 * rings; r2: Gs found twice. Detached Ps and Gs, as in RunqTest.
 */
public final class RunqPutStealStress {
  private RunqPutStealStress() {}

  private static Goroutine g(long goid) {
    return new Goroutine(null, goid, null, null);
  }

  /** Counts gp in seen[goid - 1]. */
  private static void see(int[] seen, Goroutine gp) {
    if (gp != null) {
      seen[(int) gp.goid - 1]++;
    }
  }

  private static void drain(int[] seen, Processor pp) {
    for (Goroutine gp; (gp = pp.runqGet()) != null; ) {
      see(seen, gp);
    }
  }

  private static void result(int[] seen, II_Result r) {
    int found = 0;
    int twice = 0;
    for (int n : seen) {
      found += n > 0 ? 1 : 0;
      twice += n > 1 ? 1 : 0;
    }
    r.r1 = found;
    r.r2 = twice;
  }

  /** Put, put, get on the owner; one steal (half, rounded up) by the thief. */
  @JCStressTest
  @Outcome(id = "2, 0", expect = ACCEPTABLE, desc = "every G in exactly one place")
  @Outcome(expect = FORBIDDEN, desc = "a G lost or run twice")
  @State
  public static class Ring {
    final Processor owner = new Processor(null, 0);
    final Processor thief = new Processor(null, 1);
    final int[] seen = new int[2];
    Goroutine ownerGot;
    Goroutine thiefGot;

    @Actor
    public void owner() {
      owner.runqPut(g(1), false);
      owner.runqPut(g(2), false);
      ownerGot = owner.runqGet();
    }

    @Actor
    public void thief() {
      thiefGot = thief.runqSteal(owner, false);
    }

    @Arbiter
    public void arbiter(II_Result r) {
      see(seen, ownerGot);
      see(seen, thiefGot);
      drain(seen, owner);
      drain(seen, thief);
      result(seen, r);
    }
  }

  /**
   * runnext against a thief on its last pass (stealRunNextG): the owner puts a G to runnext and
   * takes it; the thief's CAS on runnext and the owner's race. r1: the owner got it, r2: the thief.
   */
  @JCStressTest
  @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the owner ran it")
  @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the thief stole it")
  @Outcome(expect = FORBIDDEN, desc = "lost, or taken twice")
  @State
  public static class Runnext {
    final Processor owner = new Processor(null, 0);
    final Processor thief = new Processor(null, 1);
    Goroutine ownerGot;
    Goroutine thiefGot;

    @Actor
    public void owner() {
      owner.runqPut(g(1), true);
      ownerGot = owner.runqGet();
    }

    @Actor
    public void thief() {
      thiefGot = thief.runqSteal(owner, true);
    }

    @Arbiter
    public void arbiter(II_Result r) {
      int[] seen = new int[1];
      see(seen, thiefGot);
      drain(seen, thief);
      int byThief = seen[0];
      seen[0] = 0;
      see(seen, ownerGot);
      drain(seen, owner);
      r.r1 = seen[0];
      r.r2 = byThief;
    }
  }
}
