package example.servers;

import io.helidon.webserver.WebServer;

/**
 * Helidon SE 4 (Níma): virtual threads by design, one per connection and per request, with no
 * switch to set. See {@link Endpoints}.
 */
public final class HelidonServer {
  private HelidonServer() {}

  public static void main(String[] args) throws Exception {
    WebServer server =
        WebServer.builder()
            .host("127.0.0.1")
            .port(0)
            .routing(
                r ->
                    r.get(
                            "/light",
                            (req, res) -> {
                              res.header("Content-Type", "application/json");
                              res.send(Endpoints.light());
                            })
                        .get(
                            "/cpu",
                            (req, res) -> {
                              res.header("Content-Type", "application/json");
                              res.send(Endpoints.cpu());
                            }))
            .build();
    Endpoints.serve("helidon", () -> server.start().port(), server::stop);
  }
}
