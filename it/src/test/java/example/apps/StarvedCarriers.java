package example.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Gs that all honour preemption (polled loops, sleeps, a producer and consumer) on a JVM whose
 * carriers the OS keeps off the CPU for long stretches: StarvedCarriersIT runs it on one CPU beside
 * busy processes. No G here ignores preemption, so sysmon must hand no P off and report nothing.
 *
 * <p>Prints {@code key=value} lines: {@code handoffs} (hog hand-offs in the run), {@code honored}
 * (preemptions honoured), {@code spins} (loop iterations, in millions), {@code sleeps}, {@code
 * pairs} (queue hand-overs), {@code max_gap_ms}: the longest a platform thread that asked to
 * sleep 1 ms stayed away, and {@code max_spin_gap_ms}: the longest a platform thread that spins,
 * as the carriers of the spinning Gs do, went between two reads of the clock: how long the OS
 * kept a thread that wants a CPU off it. The sleeper's gap alone undersells it: Linux's EEVDF
 * lets a thread that wakes from a short sleep in ahead of the busy ones (seen: 19 ms).
 *
 * <p>Prints {@code ready} once started, and runs when a line {@code go} comes on stdin: the
 * test starts the busy processes in between.
 */
public final class StarvedCarriers {
  private StarvedCarriers() {}

  public static void main(String[] args) throws Exception {
    long millis = Long.parseLong(args[0]);
    // Start-up (the agent, -Xverify:all) and the first metric read run before the test starves
    // this JVM: starved, they took most of a minute of the test's deadline on a slow machine.
    AppSupport.metric("/sched/preemptions/handoffs:handoffs");
    System.out.println("ready");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    if (!"go".equals(in.readLine())) {
      return; // the test gave up on us
    }
    AppSupport.watchdog(millis + 60_000, "StarvedCarriers");
    long end = System.nanoTime() + millis * 1_000_000L;
    long handoffs0 = AppSupport.metric("/sched/preemptions/handoffs:handoffs");
    long honored0 = AppSupport.metric("/sched/preemptions/honored:preemptions");
    AtomicLong spins = new AtomicLong();
    AtomicLong sleeps = new AtomicLong();
    AtomicLong pairs = new AtomicLong();
    AtomicLong maxGap = new AtomicLong();
    Thread gauge =
        Thread.ofPlatform()
            .daemon()
            .start(
                () -> {
                  long last = System.nanoTime();
                  while (System.nanoTime() < end) {
                    try {
                      Thread.sleep(1);
                    } catch (InterruptedException e) {
                      return;
                    }
                    long now = System.nanoTime();
                    maxGap.accumulateAndGet(now - last, Math::max);
                    last = now;
                  }
                });
    AtomicLong maxSpinGap = new AtomicLong();
    Thread spinGauge =
        Thread.ofPlatform()
            .daemon()
            .start(
                () -> {
                  long last = System.nanoTime();
                  long max = 0;
                  for (long now = last; now < end; now = System.nanoTime()) {
                    max = Math.max(max, now - last);
                    last = now;
                  }
                  maxSpinGap.set(max);
                });
    Thread[] ts = new Thread[8];
    for (int i = 0; i < 4; i++) {
      ts[i] = Thread.ofVirtual().start(() -> spins.addAndGet(spin(end)));
    }
    for (int i = 4; i < 6; i++) {
      ts[i] =
          Thread.ofVirtual()
              .start(
                  () -> {
                    while (System.nanoTime() < end) {
                      try {
                        Thread.sleep(1);
                      } catch (InterruptedException e) {
                        return;
                      }
                      sleeps.incrementAndGet();
                    }
                  });
    }
    // A lock-based queue: SynchronousQueue spins in JDK code (no polls) before it parks, which is
    // CPU time that really ignores preemption.
    ArrayBlockingQueue<Long> q = new ArrayBlockingQueue<>(1);
    ts[6] =
        Thread.ofVirtual()
            .start(
                () -> {
                  try {
                    for (long n = 0; ; n++) {
                      long v = System.nanoTime() < end ? n : -1;
                      q.put(v);
                      if (v < 0) {
                        return;
                      }
                    }
                  } catch (InterruptedException e) {
                    // done
                  }
                });
    ts[7] =
        Thread.ofVirtual()
            .start(
                () -> {
                  try {
                    while (q.take() >= 0) {
                      pairs.incrementAndGet();
                    }
                  } catch (InterruptedException e) {
                    // done
                  }
                });
    for (Thread t : ts) {
      t.join();
    }
    gauge.join();
    spinGauge.join();
    System.out.println(
        "handoffs=" + (AppSupport.metric("/sched/preemptions/handoffs:handoffs") - handoffs0));
    System.out.println(
        "honored=" + (AppSupport.metric("/sched/preemptions/honored:preemptions") - honored0));
    System.out.println("spins=" + spins.get() / 1_000_000);
    System.out.println("sleeps=" + sleeps.get());
    System.out.println("pairs=" + pairs.get());
    System.out.println("max_gap_ms=" + maxGap.get() / 1_000_000);
    System.out.println("max_spin_gap_ms=" + maxSpinGap.get() / 1_000_000);
  }

  /** A polled loop (the agent puts a poll at its back-edge): honours every request. */
  private static long spin(long end) {
    long n = 0;
    long x = 1;
    while ((n & 1023) != 0 || System.nanoTime() < end) {
      x = x * 31 + n;
      n++;
    }
    return n + (x == 42 ? 1 : 0);
  }
}
