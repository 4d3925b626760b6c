package example.apps;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
      Thread.sleep(200); // every reader is parked in its read by now
      Class<?> gmp = Class.forName("io.gmp4j.Gmp", true, null);
      @SuppressWarnings("unchecked")
      Map<String, Object> m = (Map<String, Object>) gmp.getMethod("readMetrics").invoke(null);
      System.out.println("num_goroutine=" + gmp.getMethod("numGoroutine").invoke(null));
      List<?> dump = (List<?>) gmp.getMethod("goroutines").invoke(null);
      System.out.println("dump=" + dump.size());
      java.util.Set<Object> reasons = new java.util.TreeSet<>();
      for (Object g : dump) {
        reasons.add(g.getClass().getMethod("waitReason").invoke(g));
      }
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
