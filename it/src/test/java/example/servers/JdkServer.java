package example.servers;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * The JDK's {@code com.sun.net.httpserver.HttpServer} with a virtual thread per exchange, as the
 * JDK documents it ({@code setExecutor(Executors.newVirtualThreadPerTaskExecutor())}). Its
 * dispatcher is a platform thread, so every handler's virtual thread is created from a platform
 * thread: the agent's scheduler swap is what puts them on gmp4j. See {@link Endpoints}.
 */
public final class JdkServer {
  private JdkServer() {}

  public static void main(String[] args) throws Exception {
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    ExecutorService vts = Executors.newVirtualThreadPerTaskExecutor();
    server.setExecutor(vts);
    server.createContext("/light", ex -> answer(ex, Endpoints::light));
    server.createContext("/cpu", ex -> answer(ex, Endpoints::cpu));
    Endpoints.serve(
        "jdk",
        () -> {
          server.start();
          return server.getAddress().getPort();
        },
        () -> {
          server.stop(0);
          vts.shutdownNow();
        });
  }

  private static void answer(HttpExchange ex, Supplier<byte[]> body) throws IOException {
    try (ex) {
      ex.getRequestBody().readAllBytes();
      byte[] b = body.get();
      ex.getResponseHeaders().set("Content-Type", "application/json");
      ex.sendResponseHeaders(200, b.length);
      try (OutputStream o = ex.getResponseBody()) {
        o.write(b);
      }
    }
  }
}
