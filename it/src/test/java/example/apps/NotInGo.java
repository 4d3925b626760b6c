package example.apps;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The /sched/goroutines/not-in-go gauge while {@code n} virtual threads sit in blocking FIFO
 * reads (Go's TestReadMetricsSched "not-in-go" case: 10 goroutines in a blocking syscall,
 * checked within [10, 14]). The app only reads a FileInputStream: the agent's advice makes the
 * read a syscall. Prints {@code not_in_go=} (the last value read, once it has reached {@code n}
 * or after 10 s) and {@code threads_total=}.
 */
public final class NotInGo {
  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(30_000, "NotInGo");
    int n = Integer.parseInt(args[0]);
    Path dir = Files.createTempDirectory("gmp4j-fifo");
    Path fifo = dir.resolve("fifo");
    try {
      if (new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start().waitFor() != 0) {
        throw new IOException("mkfifo failed");
      }
      RandomAccessFile writer = new RandomAccessFile(fifo.toFile(), "rw"); // opens at once
      CountDownLatch started = new CountDownLatch(n);
      for (int i = 0; i < n; i++) {
        Thread.ofVirtual()
            .start(
                () -> {
                  started.countDown();
                  try (FileInputStream in = new FileInputStream(fifo.toFile())) {
                    in.read();
                  } catch (IOException ignored) {
                    // end
                  }
                });
      }
      started.await(5, TimeUnit.SECONDS);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      Map<String, Object> m = metrics();
      while (gauge(m, "/sched/goroutines/not-in-go:goroutines") < n
          && System.nanoTime() < deadline) {
        Thread.sleep(20);
        m = metrics();
      }
      System.out.println("not_in_go=" + gauge(m, "/sched/goroutines/not-in-go:goroutines"));
      System.out.println("threads_total=" + gauge(m, "/sched/threads/total:threads"));
      writer.write(new byte[n]); // lets every reader go
      writer.close();
    } finally {
      Files.deleteIfExists(fifo);
      Files.deleteIfExists(dir);
    }
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> metrics() throws ReflectiveOperationException {
    return (Map<String, Object>)
        Class.forName("io.gmp4j.Gmp", true, null).getMethod("readMetrics").invoke(null);
  }

  private static long gauge(Map<String, Object> m, String name) {
    return ((Number) m.get(name)).longValue();
  }
}
