package example.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A service that {@code gmp4j attach} finds running: virtual threads hand numbered items along
 * a three-stage pipeline the whole time, and the CPU hog's class {@link Hog} is loaded and run
 * before the attach. AttachIT drives it:
 *
 * <ol>
 *   <li>prints {@code ready} once the pipeline runs and Hog ran (on the JDK's scheduler);
 *   <li>waits for the attach and for the agent's retransformation to finish ({@code
 *       gmp4j.retransform} = {@code done ...});
 *   <li>starts new virtual threads: one reports its carrier, the hog spins for {@code hogMs}
 *       beside the seed's 1 ms sleeper at the gomaxprocs the attach gave, and prints {@code
 *       hog_done ...} with the ticks and the scheduler counters;
 *   <li>keeps eight Gs computing and sleeping (for {@code gmp4j top}) until a line {@code
 *       finish} on stdin, then stops them and the pipeline and prints what went through it.
 * </ol>
 *
 * Arguments: hogMs.
 */
public final class AttachWorkload {
  private AttachWorkload() {}

  /** The hog: its class is loaded, and spin has run, before the attach. */
  public static final class Hog {
    private Hog() {}

    /** A call-free loop for {@code ms}; returns a value so that C2 keeps the work. */
    public static long spin(long ms) {
      long end = System.nanoTime() + ms * 1_000_000L;
      long x = 1;
      while (System.nanoTime() < end) {
        for (int i = 0; i < 1000; i++) {
          x = x * 6364136223846793005L + 1442695040888963407L;
        }
      }
      return x;
    }
  }

  private static final AtomicBoolean STOP = new AtomicBoolean();
  private static final AtomicLong PRODUCED = new AtomicLong();
  private static final BitSet SEEN = new BitSet();
  private static long consumed;
  private static long duplicates;

  public static void main(String[] args) throws Exception {
    long hogMs = Long.parseLong(args[0]);
    AppSupport.watchdog(120_000, "AttachWorkload");
    long sink = Hog.spin(20); // loads Hog, runs spin on the JDK's scheduler

    // The pipeline: producer -> stage (SynchronousQueue) -> stage (LinkedBlockingQueue) -> sink.
    SynchronousQueue<Long> q1 = new SynchronousQueue<>();
    BlockingQueue<Long> q2 = new LinkedBlockingQueue<>();
    BlockingQueue<Long> q3 = new LinkedBlockingQueue<>();
    Thread producer =
        Thread.ofVirtual()
            .name("producer")
            .start(
                () -> {
                  try {
                    for (long i = 0; !STOP.get(); i++) {
                      q1.put(i);
                      PRODUCED.incrementAndGet();
                      if ((i & 63) == 0) {
                        Thread.sleep(1);
                      }
                    }
                    q1.put(-1L);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                });
    Thread stage1 = Thread.ofVirtual().name("stage1").start(() -> pass(q1, q2));
    Thread stage2 = Thread.ofVirtual().name("stage2").start(() -> pass(q2, q3));
    Thread consumer =
        Thread.ofVirtual()
            .name("consumer")
            .start(
                () -> {
                  try {
                    for (long v; (v = q3.take()) >= 0; ) {
                      synchronized (SEEN) {
                        if (SEEN.get((int) v)) {
                          duplicates++;
                        }
                        SEEN.set((int) v);
                        consumed++;
                      }
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                });
    while (PRODUCED.get() < 100) {
      Thread.sleep(5);
    }
    System.out.println("ready produced=" + PRODUCED.get() + " sink=" + (sink & 1));
    System.out.flush();

    // Step 2: the attach, then the end of the retransformation.
    awaitRetransformed(90);
    System.out.println("attached produced=" + PRODUCED.get());

    // Step 3.
    String[] carrier = new String[1];
    Thread.ofVirtual().start(() -> carrier[0] = AppSupport.carrier()).join();
    System.out.println("carrier=" + carrier[0]);
    System.out.println(hogBesideTicker(hogMs));
    System.out.flush();

    // Step 4: keep gmp4j busy for gmp4j top (eight Gs that compute and sleep) until finish.
    List<Thread> busy = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      long ms = 1 + i % 3;
      busy.add(
          Thread.ofVirtual()
              .name("busy-" + i)
              .start(
                  () -> {
                    try {
                      while (!STOP.get()) {
                        Hog.spin(ms);
                        Thread.sleep(3);
                      }
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  }));
    }
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    for (String line; (line = in.readLine()) != null && !line.equals("finish"); ) {
      // wait for the test
    }
    STOP.set(true);
    producer.join();
    stage1.join();
    stage2.join();
    consumer.join();
    for (Thread t : busy) {
      t.join();
    }
    synchronized (SEEN) {
      System.out.println("produced=" + PRODUCED.get());
      System.out.println("consumed=" + consumed);
      System.out.println("distinct=" + SEEN.cardinality());
      System.out.println("duplicates=" + duplicates);
    }
  }

  /**
   * Step 2's wait: returns once the agent's retransformation of the classes loaded before it is
   * over ({@code gmp4j.retransform} = {@code done ...}); exits 4 after {@code seconds} without it.
   */
  static void awaitRetransformed(long seconds) throws InterruptedException {
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    while (!String.valueOf(System.getProperty("gmp4j.retransform")).startsWith("done ")) {
      if (System.nanoTime() > deadline) {
        System.out.println(
            "no retransformation seen: gmp4j.agent=" + System.getProperty("gmp4j.agent"));
        System.exit(4);
      }
      Thread.sleep(20);
    }
  }

  /**
   * Step 3's hog: {@link Hog#spin} for {@code hogMs} in a new virtual thread beside a 1 ms
   * sleeper, at the agent's gomaxprocs; returns the line {@code hog_done ticks= honored=
   * handoffs= hog=} with the sleeper's ticks and the scheduler's counters over the spin.
   */
  static String hogBesideTicker(long hogMs) throws InterruptedException {
    long handoffs0 = AppSupport.metric("/sched/preemptions/handoffs:handoffs");
    long honored0 = AppSupport.metric("/sched/preemptions/honored:preemptions");
    AtomicBoolean hogRunning = new AtomicBoolean(true);
    long[] ticks = new long[1];
    Thread ticker = AppSupport.ticker("ticker", () -> !hogRunning.get(), hogRunning::get, ticks);
    long[] hogResult = new long[1];
    Thread hog =
        Thread.ofVirtual()
            .name("hog")
            .start(
                () -> {
                  hogResult[0] = Hog.spin(hogMs);
                  hogRunning.set(false);
                });
    hog.join();
    ticker.join();
    return "hog_done ticks="
        + ticks[0]
        + " honored="
        + (AppSupport.metric("/sched/preemptions/honored:preemptions") - honored0)
        + " handoffs="
        + (AppSupport.metric("/sched/preemptions/handoffs:handoffs") - handoffs0)
        + " hog="
        + (hogResult[0] & 1);
  }

  private static void pass(BlockingQueue<Long> from, BlockingQueue<Long> to) {
    try {
      for (; ; ) {
        long v = from.take();
        to.put(v);
        if (v < 0) {
          return;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
