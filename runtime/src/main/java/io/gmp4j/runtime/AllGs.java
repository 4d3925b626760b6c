package io.gmp4j.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * Go's allgs, the registry of live Gs that schedtrace's G lines, the goroutine dump and the
 * {@code /sched/goroutines} metrics walk.
 *
 * <h2>Implementation overview</h2>
 *
 * Go appends every G to one slice under allglock and never removes it: dead Gs go to a free list
 * and are reused, so a G costs the registry nothing after its first life. A JVM G is a virtual
 * thread, which cannot be reused, so every G is added once and removed once, and those two
 * operations are on the path of every spawn. A ConcurrentHashMap key set cost a quarter of
 * spawn's samples (a hash insert, a bin CAS or monitor, and a striped-counter update each way)
 * and 32 bytes a G.
 *
 * Instead the registry is a set of stripes, each an intrusive doubly-linked list through {@link
 * Goroutine#allPrev}/{@link Goroutine#allNext}, guarded by its own spin lock (one CAS to take,
 * one release store to give back; held for a few stores). A G is added to the stripe of the
 * thread that creates it (an M by its id, any other thread by its thread id), remembers that
 * stripe, and is unlinked from it by the M that destroys it. Creations on different Ms touch
 * different stripes; a destroy contends with at most the creations of one other thread.
 *
 * Readers (schedtrace, goroutine dumps, metrics) take each stripe's lock in turn and copy its
 * Gs, so a snapshot is consistent per stripe and racy across stripes, as Go's racy allglen reads
 * are. The count is a per-stripe int under the lock, summed racily.
 */
final class AllGs {
  /** Stripes: a power of two above the Ms a busy process has, so creators rarely share one. */
  private static final int NSTRIPES = 64;

  private final Stripe[] stripes = new Stripe[NSTRIPES];

  AllGs() {
    for (int i = 0; i < NSTRIPES; i++) {
      stripes[i] = new Stripe();
    }
  }

  /** Go's allgadd. Any thread; never parks (spins on one stripe's lock). */
  void add(Goroutine gp) {
    Thread ct = Thread.currentThread();
    long key = ct instanceof Machine mp ? mp.id : ct.threadId();
    Stripe s = stripes[(int) (key ^ (key >>> 6)) & (NSTRIPES - 1)];
    s.lock();
    try {
      gp.allStripe = s;
      Goroutine h = s.head;
      gp.allNext = h;
      gp.allPrev = null;
      if (h != null) {
        h.allPrev = gp;
      }
      s.head = gp;
      s.count++;
    } finally {
      s.unlock();
    }
  }

  /** Unlinks a dead G (Go's gfput, minus the reuse). Called once per G, by the M that ran it. */
  void remove(Goroutine gp) {
    Stripe s = gp.allStripe; // written under s's lock by add, on this or an earlier thread
    if (s == null) {
      throw new InternalError("allgs: G" + gp.goid + " removed twice or never added");
    }
    s.lock();
    try {
      assert gp.allStripe == s : "remove: G" + gp.goid + " moved stripes";
      gp.allStripe = null;
      Goroutine p = gp.allPrev;
      Goroutine n = gp.allNext;
      if (p == null) {
        assert s.head == gp : "remove: G" + gp.goid + " is not in its stripe";
        s.head = n;
      } else {
        p.allNext = n;
      }
      if (n != null) {
        n.allPrev = p;
      }
      gp.allPrev = null;
      gp.allNext = null;
      s.count--;
    } finally {
      s.unlock();
    }
  }

  /** Live Gs, system ones included (Go's allglen minus the dead). Any thread; racy sum. */
  int size() {
    int n = 0;
    for (Stripe s : stripes) {
      n += (int) Stripe.COUNT.getOpaque(s);
    }
    return n;
  }

  /** A snapshot of the live Gs, in no order. Any thread; holds one stripe's lock at a time. */
  List<Goroutine> snapshot() {
    List<Goroutine> all = new ArrayList<>(size() + 16);
    for (Stripe s : stripes) {
      s.lock();
      try {
        for (Goroutine g = s.head; g != null; g = g.allNext) {
          all.add(g);
        }
      } finally {
        s.unlock();
      }
    }
    return all;
  }

  /**
   * One list and its lock. The lock word is 0 (free) or 1 (held); taken with a CAS (acquire), given
   * back with a release store. Spins with onSpinWait, and after a while an M or platform thread
   * yields the OS thread: a holder descheduled by the OS must get the CPU back. It never parks, so
   * the JDK cannot unmount a G that waits for it (the callers run with the G pinned or on an M),
   * and the holders never run anything but list stores. head, count and the links of its Gs: under
   * the lock; count also read opaquely by size().
   */
  static final class Stripe {
    private volatile int locked;
    Goroutine head;
    int count;

    // Keeps two stripes' lock words off one cache line (creators on different Ms).
    @SuppressWarnings("unused")
    private long p0, p1, p2, p3, p4, p5, p6;

    static final VarHandle LOCKED;
    static final VarHandle COUNT;

    static {
      try {
        MethodHandles.Lookup l = MethodHandles.lookup();
        LOCKED = l.findVarHandle(Stripe.class, "locked", int.class);
        COUNT = l.findVarHandle(Stripe.class, "count", int.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    void lock() {
      if (LOCKED.compareAndSet(this, 0, 1)) {
        return;
      }
      for (int spins = 0; ; spins++) {
        if (locked == 0 && LOCKED.compareAndSet(this, 0, 1)) {
          return;
        }
        if (spins < 64 || Thread.currentThread().isVirtual()) {
          Thread.onSpinWait(); // a G here is pinned (inside a submit): Thread.yield would not yield
        } else {
          Thread.yield(); // an M or a platform thread: the OS yield, as Go's osyield
        }
      }
    }

    void unlock() {
      assert locked == 1 : "unlock: stripe not locked";
      LOCKED.setRelease(this, 0);
    }
  }
}
