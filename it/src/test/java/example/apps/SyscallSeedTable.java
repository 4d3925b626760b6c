package example.apps;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The seed's table of OS threads by blocking kind (Go 1.27.3: sleep, TCP and os.Pipe add 0 to 2
 * threads for 200 waiting goroutines; a raw syscall.Read adds one M per blocked goroutine, 5 to
 * 203), on the JVM: {@code n} virtual threads wait in one way, and the platform thread count
 * from /proc/self/status is printed before and after, then how long a virtual thread started
 * afterwards takes to run.
 *
 * <p>Usage: {@code SyscallSeedTable sleep|tcp|pipe|fifo|fifo-channel n} (fifo-channel reads the
 * FIFO through a FileChannel, whose read the JDK brackets with Blocker). Prints {@code before=},
 * {@code waiting=} (how many reached their blocking call), {@code after=}, {@code late_ms=} or
 * {@code late=starved}, and {@code handoffs=} (gmp4j's hog hand-offs, -1 without gmp4j). Ends with
 * halt: the waiters never finish.
 */
public final class SyscallSeedTable {
  private static final List<Object> keep = new ArrayList<>();
  private static final List<Path> cleanUp = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(40_000, "SyscallSeedTable " + String.join(" ", args));
    String kind = args[0];
    int n = Integer.parseInt(args[1]);
    Runnable[] waits = new Runnable[n];
    switch (kind) {
      case "sleep" -> {
        warmUp(() -> sleep(1));
        for (int i = 0; i < n; i++) {
          waits[i] = () -> sleep(600_000);
        }
      }
      case "tcp" -> {
        ServerSocket server = new ServerSocket(0, n + 10, InetAddress.getLoopbackAddress());
        keep.add(server);
        Socket[] clients = new Socket[n + 1];
        for (int i = 0; i <= n; i++) {
          clients[i] = new Socket();
          clients[i].connect(
              new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()));
          Socket accepted = server.accept();
          keep.add(accepted);
          if (i == n) {
            accepted.getOutputStream().write(1); // the warm-up's read completes
          }
        }
        warmUp(() -> read(clients[n]));
        for (int i = 0; i < n; i++) {
          Socket s = clients[i];
          waits[i] = () -> read(s);
        }
      }
      case "pipe" -> {
        Pipe warm = Pipe.open();
        warm.sink().write(ByteBuffer.wrap(new byte[] {1}));
        warmUp(() -> read(warm.source()));
        for (int i = 0; i < n; i++) {
          Pipe p = Pipe.open();
          keep.add(p);
          waits[i] = () -> read(p.source());
        }
      }
      case "fifo", "fifo-channel" -> {
        Path dir = Files.createTempDirectory("gmp4j-fifo");
        Path fifo = dir.resolve("fifo");
        Process mk = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
        if (mk.waitFor() != 0) {
          throw new IOException("mkfifo failed");
        }
        // The write end, opened read-write so that it does not wait for a reader: with a
        // writer present, each reader's open returns at once and its read() blocks.
        keep.add(new RandomAccessFile(fifo.toFile(), "rw"));
        cleanUp.add(fifo);
        cleanUp.add(dir);
        warmUp(() -> sleep(1));
        boolean channel = kind.equals("fifo-channel");
        for (int i = 0; i < n; i++) {
          waits[i] = channel ? () -> readFifoChannel(fifo) : () -> readFifo(fifo);
        }
      }
      default -> throw new IllegalArgumentException(kind);
    }

    Thread.sleep(200);
    int before = threads();
    CountDownLatch waiting = new CountDownLatch(n);
    for (Runnable w : waits) {
      Thread.ofVirtual()
          .start(
              () -> {
                waiting.countDown();
                w.run();
              });
    }
    waiting.await(2, TimeUnit.SECONDS);
    int after = settle();
    System.out.println("before=" + before);
    System.out.println("waiting=" + (n - waiting.getCount()));
    System.out.println("after=" + after);

    long start = System.nanoTime();
    long[] ran = {-1};
    Thread late = Thread.ofVirtual().start(() -> ran[0] = System.nanoTime());
    late.join(2_000);
    if (ran[0] < 0) {
      System.out.println("late=starved");
    } else {
      System.out.println("late_ms=" + (ran[0] - start) / 1_000_000);
    }
    System.out.println("handoffs=" + handoffs());
    System.out.flush();
    for (Path p : cleanUp) {
      Files.deleteIfExists(p);
    }
    Runtime.getRuntime().halt(0);
  }

  /** Runs one wait of the kind to completion first, so that lazily started threads exist. */
  private static void warmUp(Runnable r) throws InterruptedException {
    Thread a = Thread.ofVirtual().start(r);
    Thread b = Thread.ofVirtual().start(() -> sleep(1));
    a.join();
    b.join();
  }

  /** The thread count once it has not changed for 500 ms (at most 8 s). */
  private static int settle() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
    int last = threads();
    long stableSince = System.nanoTime();
    while (System.nanoTime() < deadline) {
      Thread.sleep(50);
      int now = threads();
      if (now != last) {
        last = now;
        stableSince = System.nanoTime();
      } else if (System.nanoTime() - stableSince > 500_000_000L) {
        break;
      }
    }
    return last;
  }

  /** {@code Threads:} of /proc/self/status: the OS threads of this process. */
  static int threads() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("Threads:")) {
        return Integer.parseInt(line.substring("Threads:".length()).trim());
      }
    }
    throw new IOException("no Threads: line");
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException ignored) {
      // end
    }
  }

  private static void read(Socket s) {
    try {
      InputStream in = s.getInputStream();
      in.read();
    } catch (IOException ignored) {
      // end
    }
  }

  private static void read(Pipe.SourceChannel source) {
    try {
      source.read(ByteBuffer.allocate(1));
    } catch (IOException ignored) {
      // end
    }
  }

  /** Files.newByteChannel: UnixNativeDispatcher.open, then FileChannelImpl.read in Blocker. */
  static void readFifoChannel(Path fifo) {
    try (var ch = Files.newByteChannel(fifo)) {
      ch.read(ByteBuffer.allocate(1));
    } catch (IOException ignored) {
      // end
    }
  }

  static void readFifo(Path fifo) {
    try (FileInputStream in = new FileInputStream(fifo.toFile())) {
      in.read();
    } catch (IOException ignored) {
      // end
    }
  }

  /** gmp4j's /sched/preemptions/handoffs:handoffs, read by name, or -1 on the JDK's scheduler. */
  @SuppressWarnings("unchecked")
  static long handoffs() {
    try {
      java.util.Map<String, Object> m =
          (java.util.Map<String, Object>)
              Class.forName("io.gmp4j.Gmp", true, null).getMethod("readMetrics").invoke(null);
      return ((Number) m.get("/sched/preemptions/handoffs:handoffs")).longValue();
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return -1;
    }
  }
}
