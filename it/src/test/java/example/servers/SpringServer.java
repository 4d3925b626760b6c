package example.servers;

import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Spring Boot 4 with {@code spring-boot-starter-web} (Spring MVC on embedded Tomcat 11) and
 * {@code spring.threads.virtual.enabled=true}, as a new user writes it: auto-configuration, one
 * {@code @RestController}, records that Jackson turns into JSON (issue 17). Tomcat then runs
 * each request on a virtual thread. The two endpoints do what {@link Endpoints} says.
 *
 * <p>No component scan ({@code @Import} names the controller): the package holds the other
 * servers, and a scan of it would only add start-up work unrelated to gmp4j. Its {@code
 * startup.ms=} ({@link Endpoints}) is the JVM's uptime when the application context is ready:
 * what Spring's own log line calls "process running for".
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(SpringServer.Controller.class)
public class SpringServer {
  /** The light endpoint's JSON. */
  public record Light(boolean ok, long n, String thread) {}

  /** The CPU endpoint's JSON. */
  public record Cpu(boolean ok, long x, long ms) {}

  /** The two endpoints. */
  @RestController
  public static class Controller {
    @GetMapping("/light")
    public Light light() {
      return new Light(true, Endpoints.nextServed(), Thread.currentThread().toString());
    }

    @GetMapping("/cpu")
    public Cpu cpu() {
      long t0 = System.nanoTime();
      long x = Endpoints.spin(Endpoints.cpuIterations());
      return new Cpu(true, x, (System.nanoTime() - t0) / 1_000_000);
    }
  }

  public static void main(String[] args) throws Exception {
    ConfigurableApplicationContext[] ctx = new ConfigurableApplicationContext[1];
    Endpoints.serve(
        "spring",
        () -> {
          SpringApplication app = new SpringApplication(SpringServer.class);
          app.setDefaultProperties(
              Map.of(
                  "server.address", "127.0.0.1",
                  "server.port", "0",
                  "spring.threads.virtual.enabled", "true"));
          ctx[0] = app.run(args);
          return ((WebServerApplicationContext) ctx[0]).getWebServer().getPort();
        },
        () -> ctx[0].close());
  }
}
