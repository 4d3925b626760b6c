package example.servers;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Supplier;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

/**
 * Tomcat 11 embedded with its connector's {@code useVirtualThreads=true}: Tomcat's {@code
 * VirtualThreadExecutor} runs each request on a virtual thread created from the connector's
 * platform poller and acceptor threads. Two plain servlets. See {@link Endpoints}.
 */
public final class TomcatServer {
  private TomcatServer() {}

  public static void main(String[] args) throws Exception {
    // The child's java.io.tmpdir, which its parent deletes.
    Path base = Files.createTempDirectory("tomcat");
    Tomcat tomcat = new Tomcat();
    tomcat.setBaseDir(base.toString());
    tomcat.setPort(0);
    Connector connector = tomcat.getConnector();
    connector.setProperty("address", "127.0.0.1");
    connector.setProperty("useVirtualThreads", "true");
    Context ctx = tomcat.addContext("", null);
    Tomcat.addServlet(ctx, "light", servlet(Endpoints::light));
    Tomcat.addServlet(ctx, "cpu", servlet(Endpoints::cpu));
    ctx.addServletMappingDecoded("/light", "light");
    ctx.addServletMappingDecoded("/cpu", "cpu");
    Endpoints.serve(
        "tomcat",
        () -> {
          tomcat.start();
          return connector.getLocalPort();
        },
        () -> {
          tomcat.stop();
          tomcat.destroy();
        });
  }

  private static HttpServlet servlet(Supplier<byte[]> body) {
    return new HttpServlet() {
      @Override
      protected void doGet(HttpServletRequest q, HttpServletResponse p) throws IOException {
        byte[] b = body.get();
        p.setContentType("application/json");
        p.setContentLength(b.length);
        p.getOutputStream().write(b);
      }
    };
  }
}
