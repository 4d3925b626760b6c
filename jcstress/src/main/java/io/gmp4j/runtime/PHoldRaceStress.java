package io.gmp4j.runtime;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The three T1/T2 race rows of 'Hog hand-off' (HogHandoff) on the phold word ('The phold word' in
 * PHold): one unstarted Machine whose word is opened for run 1 with its P wired, the M or its G
 * on one actor and sysmon's tryRetakeP on the other. The private open and close are reached
 * through a private lookup, as the M would call them.
 */
public final class PHoldRaceStress {
  private PHoldRaceStress() {}

  private static final VarHandle PHOLD;
  private static final VarHandle P;
  private static final MethodHandle CLOSE;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.privateLookupIn(Machine.class, MethodHandles.lookup());
      PHOLD = l.findVarHandle(Machine.class, "phold", int.class);
      P = l.findVarHandle(Machine.class, "p", Processor.class);
      CLOSE = l.findVirtual(Machine.class, "closePHold", MethodType.methodType(int.class));
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** An M in run 1 (phold G/1) holding a running P, as after openPHold; nothing started. */
  static Machine running(Processor pp) {
    Machine mp = new Machine(new Sched(1), 0, null, false);
    mp.p = pp;
    pp.m = mp;
    PHOLD.setVolatile(mp, PHold.nextRun(0, PHold.G));
    return mp;
  }

  static final int RUN1 = PHold.run(PHold.nextRun(0, PHold.G));

  /**
   * Row 1: T1 the G readies another G (a claim around its P operation), T2 sysmon retakes. r1: 0
   * no claim (the P was retaken), 1 claimed and still claimed at the unclaim, 2 claimed but
   * retaken during the claim; r2: the retake succeeded.
   */
  @JCStressTest
  @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "claim first: the retake failed during it")
  @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "claim, unclaim, then the retake")
  @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "retake first: the claim saw RETAKEN")
  @Outcome(expect = FORBIDDEN, desc = "retaken inside a claim, or neither")
  @State
  public static class ClaimVersusRetake {
    final Processor pp = new Processor(null, 0);
    final Machine mp = running(pp);

    @Actor
    public void g(II_Result r) {
      Processor claimed = mp.tryClaimP(false);
      if (claimed == null) {
        r.r1 = 0;
        return;
      }
      r.r1 = PHold.state(mp.phold()) == PHold.G_BUSY ? 1 : 2; // the P operation goes here
      mp.unclaimP();
    }

    @Actor
    public void sysmon(II_Result r) {
      r.r2 = mp.tryRetakeP(RUN1, pp) ? 1 : 0;
    }
  }

  /**
   * Row 2: T1 the M closes its run (closePHold), T2 sysmon retakes with the run it prepared. r1:
   * the state closePHold closed (1 G, 4 RETAKEN); r2: the retake succeeded. Afterwards the word
   * is SCHED with run 1 either way, and a retake never takes from a closed run.
   */
  @JCStressTest
  @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "closed first: the retake failed")
  @Outcome(id = "4, 1", expect = ACCEPTABLE, desc = "retaken first: the close found RETAKEN")
  @Outcome(expect = FORBIDDEN, desc = "both won, or neither")
  @State
  public static class CloseVersusRetake {
    final Processor pp = new Processor(null, 0);
    final Machine mp = running(pp);

    @Actor
    public void m(II_Result r) {
      try {
        r.r1 = (int) CLOSE.invokeExact(mp);
      } catch (Throwable e) {
        r.r1 = -1;
      }
    }

    @Actor
    public void sysmon(II_Result r) {
      r.r2 = mp.tryRetakeP(RUN1, pp) ? 1 : 0;
    }

    @Arbiter
    public void arbiter(II_Result r) {
      if (mp.phold() != PHold.with(RUN1, PHold.SCHED)) {
        r.r1 = -2; // the word is not (run 1, SCHED): forbidden
      }
    }
  }

  /**
   * Row 3: T1 sysmon retakes (its phold CAS, then its CAS of m.p from the P it took to null), T2
   * the M, once it sees RETAKEN, clears m.p and wires another P, as tryReacquireP and acquireP
   * do. r1: whether the M saw RETAKEN within its bounded wait (1) or gave up (0); r2, after
   * both: m.p is null (0), the new P (1) or the retaken one (2). Sysmon's CAS must never clear
   * the P the M acquired after the retake.
   */
  @JCStressTest
  @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the M reacquired another P and kept it")
  @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the M gave up waiting; sysmon cleared m.p")
  @Outcome(expect = FORBIDDEN, desc = "sysmon cleared the new P, or the retaken P stayed wired")
  @State
  public static class RetakeVersusReacquire {
    final Processor pp = new Processor(null, 0);
    final Processor other = new Processor(null, 1);
    final Machine mp = running(pp);

    @Actor
    public void sysmon(II_Result r) {
      mp.tryRetakeP(RUN1, pp);
    }

    @Actor
    public void m(II_Result r) {
      for (int i = 0; i < 1_000_000; i++) {
        if (PHold.state(mp.phold()) == PHold.RETAKEN) {
          P.set(mp, (Processor) null); // tryReacquireP: after a retake, m.p is this M's to clear
          P.set(mp, other); // acquireP of an idle P
          r.r1 = 1;
          return;
        }
        Thread.onSpinWait();
      }
      r.r1 = 0;
    }

    @Arbiter
    public void arbiter(II_Result r) {
      Processor p = (Processor) P.getVolatile(mp);
      r.r2 = p == null ? 0 : p == other ? 1 : 2;
    }
  }
}
