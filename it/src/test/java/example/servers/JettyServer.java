package example.servers;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.VirtualThreadPool;

/**
 * Jetty 12.1 (core API) on virtual threads the way its programming guide prefers: a {@code
 * QueuedThreadPool} for the selectors and acceptors, with a {@code VirtualThreadPool} as its
 * virtual-threads executor, so that blocking handlers ({@code Handler.Abstract} is {@code
 * BLOCKING}) run on virtual threads created from Jetty's platform threads. See {@link
 * Endpoints}.
 */
public final class JettyServer {
  private JettyServer() {}

  public static void main(String[] args) throws Exception {
    QueuedThreadPool qtp = new QueuedThreadPool();
    qtp.setVirtualThreadsExecutor(new VirtualThreadPool());
    Server server = new Server(qtp);
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    server.setHandler(
        new Handler.Abstract() {
          @Override
          public boolean handle(Request request, Response response, Callback callback) {
            String path = Request.getPathInContext(request);
            byte[] body;
            if (path.equals("/light")) {
              body = Endpoints.light();
            } else if (path.equals("/cpu")) {
              body = Endpoints.cpu();
            } else {
              return false; // Jetty answers 404
            }
            response.setStatus(200);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
            response.write(true, ByteBuffer.wrap(body), callback);
            return true;
          }
        });
    Endpoints.serve(
        "jetty",
        () -> {
          server.start();
          return connector.getLocalPort();
        },
        server::stop);
  }
}
