package io.gmp4j;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import io.gmp4j.runtime.Preempt;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Blocking calls marked with {@link Gmp#syscall}: the P hand-off (Go's entersyscall, retake,
 * handoffp, exitsyscall), the not-in-go gauge, and thread growth. The agent marks the JDK's own
 * blocking calls the same way; its end-to-end tests are in it/.
 */
@ExtendWith(SchedTraceOnFailure.class)
class SyscallTest {
  /** Where the FIFOs go; JUnit deletes it after each test. */
  @TempDir Path tmp;

  /**
   * Go's TestPreemptionAfterSyscall: at two Ps, eight Gs loop on short syscalls (a busy wait
   * inside the bracket, as Go's fakeSyscall). A G whose syscalls always take the fast path never
   * goes through the scheduler, so only the hand-off and the time slice let the other six start,
   * and the stop flag reach everyone. All must finish within 5 s.
   */
  @ParameterizedTest
  @ValueSource(longs = {10_000, 100_000, 1_000_000})
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void testPreemptionAfterSyscall(long syscallNanos) throws Exception {
    GmpTesting.withProcs(
        2,
        () -> {
          for (int iter = 0; iter < 2; iter++) {
            final int nroutines = 8;
            CountDownLatch started = new CountDownLatch(nroutines);
            CountDownLatch finished = new CountDownLatch(nroutines);
            AtomicBoolean stop = new AtomicBoolean();
            long t0 = System.nanoTime();
            for (int i = 0; i < nroutines; i++) {
              Gmp.go(
                  () -> {
                    started.countDown();
                    while (!stop.get()) {
                      try {
                        Gmp.syscall(
                            () -> {
                              long end = System.nanoTime() + syscallNanos;
                              while (System.nanoTime() - end < 0) {
                                Thread.onSpinWait();
                              }
                              return null;
                            });
                      } catch (Exception e) {
                        throw new AssertionError(e);
                      }
                      Preempt.poll(); // the loop's back-edge poll, as the agent injects it
                    }
                    finished.countDown();
                  });
            }
            GmpTesting.await(started, 5, "8 Gs start");
            stop.set(true);
            GmpTesting.await(finished, 5, "8 Gs finish");
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms <= 5_000, "took " + ms + " ms, want <= 5 s");
          }
        });
  }

  /** A FIFO and the bracketed blocking read of one byte from it, as a G would do it. */
  private static int blockingRead(Path fifo) throws Exception {
    return Gmp.syscall(
        () -> {
          try (FileInputStream in = new FileInputStream(fifo.toFile())) { // open blocks, too
            return in.read();
          }
        });
  }

  /** One G per FIFO, each blocked in {@link #blockingRead}; counts down {@code done} after. */
  private static void startReaders(List<Path> fifos, CountDownLatch done) {
    for (Path f : fifos) {
      Gmp.go(
          () -> {
            try {
              blockingRead(f);
            } catch (Exception e) {
              throw new AssertionError(e);
            }
            done.countDown();
          });
    }
  }

  private static List<Path> fifos(Path dir, int n) throws IOException, InterruptedException {
    List<Path> out = new ArrayList<>();
    List<String> cmd = new ArrayList<>(List.of("mkfifo"));
    for (int i = 0; i < n; i++) {
      Path p = dir.resolve("f" + i);
      out.add(p);
      cmd.add(p.toString());
    }
    Process p = new ProcessBuilder(cmd).inheritIO().start();
    assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, "mkfifo failed");
    return out;
  }

  private static void release(List<Path> fifos) throws IOException {
    for (Path f : fifos) {
      try (FileOutputStream out = new FileOutputStream(f.toFile())) { // pairs with the reader
        out.write(1);
      }
    }
  }

  /** The process's OS threads, as the seed article counts them. */
  private static long osThreads() throws IOException {
    return Files.readAllLines(Path.of("/proc/self/status")).stream()
        .filter(l -> l.startsWith("Threads:"))
        .mapToLong(l -> Long.parseLong(l.substring(8).trim()))
        .findFirst()
        .orElseThrow();
  }

  private static long metric(String name) {
    return (Long) Gmp.readMetrics().get(name);
  }

  /** Go's TestSchedMetrics "not-in-go" case: 10 Gs block in reads; the gauge reads 10 (+4). */
  @Test
  @Timeout(value = 60, threadMode = SEPARATE_THREAD)
  void notInGoCountsGsBlockedInReads() throws Exception {
    List<Path> fifos = fifos(tmp, 10);
    CountDownLatch done = new CountDownLatch(10);
    long base = metric("/sched/goroutines/not-in-go:goroutines");
    startReaders(fifos, done);
    try {
      assertTrue(
          GmpTesting.poll(
              10_000, () -> metric("/sched/goroutines/not-in-go:goroutines") >= base + 10),
          "not-in-go never reached base "
              + base
              + " + 10: "
              + metric("/sched/goroutines/not-in-go:goroutines")
              + "\n"
              + Gmp.schedtrace(true));
      long n = metric("/sched/goroutines/not-in-go:goroutines") - base;
      assertTrue(n >= 10 && n <= 14, "not-in-go " + n + ", want [10, 14]");
    } finally {
      release(fifos);
    }
    GmpTesting.await(done, 20, "the 10 readers");
    assertTrue(
        GmpTesting.poll(5_000, () -> metric("/sched/goroutines/not-in-go:goroutines") == base));
  }

  /**
   * The seed's table, raw blocking read row: 200 Gs blocked in reads take about one M each (Go:
   * +198 threads), and a G started afterwards still runs at once.
   */
  @Test
  @Timeout(value = 120, threadMode = SEPARATE_THREAD)
  void blockedReadsGrowThreadsAndNewGsStillRun() throws Exception {
    GmpTesting.withProcs(
        2,
        () -> {
          final int n = 200;
          List<Path> fifos = fifos(tmp, n);
          long threads0 = osThreads();
          CountDownLatch done = new CountDownLatch(n);
          startReaders(fifos, done);
          try {
            assertTrue(
                GmpTesting.poll(
                    30_000, () -> metric("/sched/goroutines/not-in-go:goroutines") >= n),
                "not every reader blocked\n" + Gmp.schedtrace(false));
            long threads1 = osThreads();
            System.out.printf(
                "SyscallTest: %d Gs blocked in FIFO reads: threads %d -> %d (+%d)%n",
                n, threads0, threads1, threads1 - threads0);
            assertTrue(
                threads1 - threads0 >= n - 10, "threads grew only by " + (threads1 - threads0));
            long t0 = System.nanoTime();
            Thread late = Gmp.go(() -> {});
            GmpTesting.join(late, 5, "a G started after the readers blocked");
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms < 1_000, "the late G took " + ms + " ms");
          } finally {
            release(fifos);
          }
          GmpTesting.await(done, 30, "the readers");
        });
  }
}
