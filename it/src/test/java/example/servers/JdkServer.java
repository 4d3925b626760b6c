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

  /**
   * The server's cap on idle keep-alive connections. The JDK's default is 200
   * ({@code sun.net.httpserver.maxIdleConnections}), and an exchange that ends while 200 are idle
   * has its connection closed at once. The load client's pool keeps every connection it opened
   * and may send its next request on that one before the close reaches it, which fails as
   * "HTTP/1.1 header parser received no bytes". On the JDK's default scheduler beside CPU
   * requests, light requests wait a second or two, 200 a second of them hold 300-400 connections
   * open, and ServersIT's baseline failed so in one of six full runs of the suite. A cap above
   * what the client ever opens takes that race out of both modes alike; one set on the command
   * line wins.
   */
  static final String MAX_IDLE_CONNECTIONS = "10000";

  public static void main(String[] args) throws Exception {
    if (System.getProperty("sun.net.httpserver.maxIdleConnections") == null) {
      // before the first httpserver class loads: ServerConfig reads it once, in its initialiser
      System.setProperty("sun.net.httpserver.maxIdleConnections", MAX_IDLE_CONNECTIONS);
    }
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
