package example.apps;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Go's TestNumGoroutine with the JDK's own virtual threads in play: {@code n} virtual threads
 * block in loopback TCP reads, which on Linux makes JDK 25 start its I/O pollers as virtual
 * threads, and so as Gs. Prints {@code num_goroutine=} (Gmp.numGoroutine), {@code dump=} (how
 * many Gs the goroutine dump lists) and {@code total=} (/sched/goroutines:goroutines, which
 * counts the JDK's pollers too, as Go's metric counts system goroutines), and {@code reasons=},
 * the wait reasons in the dump: Go's {@code IO wait} for a read parked in the JDK's poller.
 */
public final class SystemGoroutines {
  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(30_000, "SystemGoroutines");
    int n = Integer.parseInt(args[0]);
    try (ServerSocket server = new ServerSocket(0, n, InetAddress.getLoopbackAddress())) {
      CountDownLatch reading = new CountDownLatch(n);
      List<Thread> readers = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        readers.add(
            Thread.ofVirtual()
                .start(
                    () -> {
                      try (Socket s =
                              new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
                          InputStream in = s.getInputStream()) {
                        reading.countDown();
                        in.read(); // parks in the JDK poller until the server side closes
                      } catch (IOException ignored) {
                        // end
                      }
                    }));
      }
      List<Socket> accepted = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        accepted.add(server.accept());
      }
      reading.await(10, TimeUnit.SECONDS);
      Class<?> gmp = Class.forName("io.gmp4j.Gmp", true, null);
      // Until every reader is parked in its read: a fixed 200 ms was not always enough on a
      // loaded machine, for a reader between its countDown and its park.
      List<?> dump;
      Set<Object> reasons;
      long deadline = System.nanoTime() + 10_000_000_000L;
      do {
        Thread.sleep(10);
        dump = (List<?>) gmp.getMethod("goroutines").invoke(null);
        reasons = new TreeSet<>();
        for (Object g : dump) {
          reasons.add(g.getClass().getMethod("waitReason").invoke(g));
        }
      } while (!(dump.size() == n && reasons.equals(Set.of("IO wait")))
          && System.nanoTime() < deadline);
      @SuppressWarnings("unchecked")
      Map<String, Object> m = (Map<String, Object>) gmp.getMethod("readMetrics").invoke(null);
      System.out.println("num_goroutine=" + gmp.getMethod("numGoroutine").invoke(null));
      System.out.println("dump=" + dump.size());
      System.out.println("reasons=" + reasons);
      System.out.println("total=" + m.get("/sched/goroutines:goroutines"));
      for (Socket s : accepted) {
        s.close();
      }
      for (Thread t : readers) {
        t.join(10_000);
      }
    }
    System.out.println("done=true");
  }
}
