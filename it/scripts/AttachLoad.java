import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.LongAdder;

/**
 * Closed-loop light load for it/scripts/attach-dip.sh: 16 platform threads send GET /light to
 * 127.0.0.1:PORT for SECONDS and print, every half second, the seconds since start and the
 * requests per second of that half second. Run as a source file: java AttachLoad.java PORT SECONDS
 */
public class AttachLoad {
  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    long seconds = Long.parseLong(args[1]);
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    HttpRequest light =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/light")).build();
    LongAdder done = new LongAdder();
    long t0 = System.nanoTime();
    long end = t0 + seconds * 1_000_000_000L;
    for (int i = 0; i < 16; i++) {
      Thread.ofPlatform()
          .daemon()
          .start(
              () -> {
                while (System.nanoTime() < end) {
                  try {
                    client.send(light, HttpResponse.BodyHandlers.discarding());
                    done.increment();
                  } catch (Exception e) {
                    // counted as not done; the server's log says why
                  }
                }
              });
    }
    long last = 0;
    while (System.nanoTime() < end) {
      Thread.sleep(500);
      long n = done.sum();
      System.out.printf("%.1f %d%n", (System.nanoTime() - t0) / 1e9, (n - last) * 2);
      last = n;
    }
  }
}
