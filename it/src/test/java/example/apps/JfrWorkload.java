package example.apps;

import io.gmp4j.Gmp;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.SynchronousQueue;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * A bit of everything the scheduler traces, for JfrIT to read back from the JFR recording:
 * spawns, ping-pong pairs, a CPU hog whose polls honour preemption, blocking reads of a file
 * and of a FIFO (syscalls, the FIFO ones long enough for sysmon to hand their P off), a
 * GOMAXPROCS change to 1 and back, and at one P a hog in a JDK method without polls (a hog
 * hand-off). With {@code -Djfrworkload.walk=true} a platform thread walks every goroutine's
 * stack over and over meanwhile ({@code Thread.getStackTrace}, as thread dumps do), and prints
 * how many walks it made.
 *
 * <p>The window the test compares is between two {@code example.Mark} events, "before" and
 * "after"; the program reads {@code Gmp.readMetrics()} just before the first and just after
 * the second, while no goroutine runs (it waits for quiet before the second: {@link
 * #awaitQuiet}), and prints each counter's change as {@code
 * delta.<metric>=N}, plus {@code gomaxprocs_start=} and {@code OK} at the end.
 *
 * <p>Usage: {@code JfrWorkload <temp dir> [hog ms]} (the test's own dir, which it deletes; the
 * hog spins 150 ms unless told: TraceToolIT makes it 1000, so that the hog stays the top runner on
 * a loaded machine, where the OS may keep a carrier off the CPU for half a second in the
 * middle of a short run: seen at load 14 on 2 cores, a file reader's run of 614 ms).
 */
public final class JfrWorkload {
  @Name("example.Mark")
  @Label("Workload Mark")
  @StackTrace(false)
  static final class Mark extends Event {
    @Label("Phase")
    String phase;
  }

  static volatile long sink;
  static volatile boolean stop;

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(90_000, "JfrWorkload");
    Path dir = Path.of(args[0]);
    Path file = dir.resolve("data.bin");
    byte[] chunk = new byte[1 << 20];
    new Random(1).nextBytes(chunk);
    try (var out = Files.newOutputStream(file)) {
      for (int i = 0; i < 16; i++) {
        out.write(chunk);
      }
    }
    Path fifo = dir.resolve("fifo");
    if (new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start().waitFor() != 0) {
      throw new IOException("mkfifo failed");
    }
    int[] sortData = new Random(42).ints(4_000_000).toArray();
    // gmp4j's enabled bits follow a recording's settings within a sysmon second.
    Thread.sleep(1_200);

    Thread walker = null;
    if (Boolean.getBoolean("jfrworkload.walk")) {
      walker = Thread.ofPlatform().daemon().name("walker").start(JfrWorkload::walkStacks);
    }
    Map<String, Object> before = Gmp.readMetrics();
    mark("before");
    int procs = Gmp.gomaxprocs();

    // Spawns from a goroutine: 300 Gs on one P's runnext and ring, which the other P steals.
    Thread spawner =
        Thread.ofVirtual()
            .name("spawner")
            .start(
                () -> {
                  List<Thread> kids = new ArrayList<>();
                  for (int i = 0; i < 300; i++) {
                    int k = i;
                    kids.add(Thread.ofVirtual().start(() -> sink += spin(20_000 + k)));
                  }
                  joinAll(kids);
                });
    spawner.join();

    // Ping-pong pairs: each round trip parks and unparks both sides.
    List<Thread> pairs = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      SynchronousQueue<Integer> ping = new SynchronousQueue<>();
      SynchronousQueue<Integer> pong = new SynchronousQueue<>();
      pairs.add(
          Thread.ofVirtual()
              .name("ping" + i)
              .start(
                  () -> {
                    for (int n = 0; n < 2_000; n++) {
                      put(ping, n);
                      take(pong);
                    }
                  }));
      pairs.add(
          Thread.ofVirtual()
              .name("pong" + i)
              .start(
                  () -> {
                    for (int n = 0; n < 2_000; n++) {
                      put(pong, take(ping));
                    }
                  }));
    }
    joinAll(pairs);

    // A CPU hog with polls beside a ticker: sysmon asks it to yield every time slice.
    Thread ticker = Thread.ofVirtual().name("ticker").start(JfrWorkload::tick);
    long hogMillis = args.length > 1 ? Long.parseLong(args[1]) : 150;
    Thread hog = Thread.ofVirtual().name("hog").start(() -> sink += spinFor(hogMillis));
    hog.join();

    // Blocking reads of a file, 1 MiB at a time (the agent marks FileInputStream.read).
    List<Thread> readers = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      readers.add(Thread.ofVirtual().name("reader" + i).start(() -> sink += readAll(file)));
    }
    joinAll(readers);

    // GOMAXPROCS 1, from a goroutine (the stop-the-world runs on gmp-stw meanwhile).
    Thread.ofVirtual().start(() -> Gmp.gomaxprocs(1)).join();

    // At one P: FIFO reads that block 30 ms each, so sysmon hands their P off; then a hog in
    // Arrays.sort, which has no polls, so sysmon hands its P off too.
    try (RandomAccessFile writer = new RandomAccessFile(fifo.toFile(), "rw")) {
      List<Thread> fifoReaders = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        fifoReaders.add(Thread.ofVirtual().name("fifo" + i).start(() -> sink += readOne(fifo)));
      }
      for (int i = 0; i < 3; i++) {
        Thread.sleep(30);
        writer.write(i);
      }
      joinAll(fifoReaders);
    }
    Thread sorter =
        Thread.ofVirtual()
            .name("sorter")
            .start(
                () -> {
                  Arrays.sort(sortData);
                  sink += spinFor(30); // polls: the request that sysmon left set takes it back
                });
    sorter.join();

    Thread.ofVirtual().start(() -> Gmp.gomaxprocs(procs)).join();
    stop = true;
    ticker.join();
    if (walker != null) {
      walker.join();
      System.out.println("walks=" + walks);
    }

    awaitQuiet();
    mark("after");
    Map<String, Object> after = Gmp.readMetrics();
    System.out.println("gomaxprocs_start=" + procs);
    for (var e : after.entrySet()) {
      if (e.getValue() instanceof Long a) {
        System.out.println("delta." + e.getKey() + "=" + (a - (Long) before.get(e.getKey())));
      }
    }
    System.out.println("OK");
    System.out.flush();
  }

  /**
   * Waits until no goroutine is left and every P is idle (at most 5 s), and 200 ms more, so that
   * nothing of the workload is in flight at the "after" mark. Two acts end after the join above
   * saw the last G end. An M commits its G's last GoRun and the GoDestroy after the run has
   * returned (Machine.execute): exiting at once, the JVM stopped the recording first whenever
   * that M was descheduled for the few milliseconds of the prints, and JfrIT found a G of the
   * window that never ended. And sysmon asks the ticker to yield every 10 ms (a timer-woken G
   * runs on runnext and inherits the P's slice, as in Go), counting the request before it
   * commits the PreemptRequest: with the mark taken first, a request in those nanoseconds was
   * counted in the window and recorded after it (CI, 2026-12-05: 57 counted, 56 recorded). The
   * Ps go idle after those commits, but for a P that sysmon took during the run: the 200 ms are
   * for that one, and for a sysmon descheduled between its count and its commit.
   */
  private static void awaitQuiet() throws InterruptedException {
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (System.nanoTime() < deadline
        && !(Gmp.numGoroutine() == 0
            && (Long) Gmp.readMetrics().get("/sched/procs/idle:procs") == Gmp.gomaxprocs())) {
      Thread.sleep(10);
    }
    Thread.sleep(200);
  }

  static long walks;

  /**
   * Walks every goroutine's stack, runnable ones too, until {@link #stop}. The JDK suspends an
   * unmounted thread for its walk and submits it again afterwards if it is runnable.
   */
  private static void walkStacks() {
    while (!stop) {
      for (io.gmp4j.GoroutineInfo g : Gmp.goroutines()) {
        if (g.thread() != null) {
          sink += g.thread().getStackTrace().length;
          walks++;
        }
      }
    }
  }

  private static void mark(String phase) {
    Mark m = new Mark();
    m.phase = phase;
    m.commit();
  }

  private static void tick() {
    try {
      while (!stop) {
        Thread.sleep(1);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** An instrumented loop: polls at its back-edge. */
  private static long spin(long n) {
    long x = 0;
    for (long i = 0; i < n; i++) {
      x += i ^ (x >>> 3);
    }
    return x;
  }

  /** An instrumented loop for about {@code millis}. */
  private static long spinFor(long millis) {
    long end = System.nanoTime() + millis * 1_000_000;
    long x = 0;
    while (System.nanoTime() - end < 0) {
      x++;
    }
    return x;
  }

  private static long readAll(Path file) {
    byte[] buf = new byte[1 << 20];
    long sum = 0;
    try (FileInputStream in = new FileInputStream(file.toFile())) {
      for (int n; (n = in.read(buf)) > 0; ) {
        sum += n + buf[n - 1];
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return sum;
  }

  private static long readOne(Path fifo) {
    try (FileInputStream in = new FileInputStream(fifo.toFile())) {
      return in.read();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void put(SynchronousQueue<Integer> q, int v) {
    try {
      q.put(v);
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  private static int take(SynchronousQueue<Integer> q) {
    try {
      return q.take();
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void joinAll(List<Thread> threads) {
    for (Thread t : threads) {
      try {
        t.join();
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }
  }
}
