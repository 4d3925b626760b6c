package io.gmp4j.agent.exporter;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.gmp4j.Gmp;
import io.gmp4j.agent.poll.Coverage;
import io.gmp4j.exporter.GmpMetrics;
import io.gmp4j.exporter.SchedText;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The agent's read-only HTTP endpoint ({@code exporter.port}, {@code exporter.host}).
 *
 * <h2>Implementation overview</h2>
 *
 * <pre>
 *   /metrics                Prometheus text format 0.0.4 (GmpMetrics on a PrometheusMeterRegistry)
 *   /sched                  Go's /sched names, one "name value" line each (SchedText.metrics)
 *   /debug/schedtrace       Go's schedtrace line; ?detail=1 adds scheddetail's P, M and G lines
 *   /debug/goroutines       Go's pprof/goroutine?debug=1 (grouped by stack); ?debug=2 each G
 *   /debug/instrumentation  classes with preemption polls and left alone, per loader and package
 *   /debug/flightrecorder   dumps the flight recorder's window (flightrecorder=): "path size"
 *   /debug/vars             JSON as Go's expvar: cmdline, every option with its source, /sched
 * </pre>
 *
 * The dump is written by the agent's JVM into flightrecorder.dir and only its path is sent:
 * the endpoint stays read-only and small, and a window of megabytes never goes through the
 * single handler thread. A GET is enough, though it writes a file, as Go's
 * /debug/pprof/trace is a GET.
 *
 * <h3>Class loaders</h3>
 *
 * This package runs in the system class loader beside the rest of the agent. It links to three
 * worlds: the JDK's {@code com.sun.net.httpserver} (module jdk.httpserver, platform loader: never
 * reachable from the boot-path runtime, hence here); the runtime's {@code io.gmp4j.Gmp}, found
 * through the boot loader, so this class must not load before AgentInstaller step 4; and
 * Micrometer, the Prometheus client and gmp4j-exporter, all three shaded into the agent jar and
 * relocated under {@code io.gmp4j.agent.shaded}, so an application's own copies (another version,
 * or its own gmp4j-exporter) never meet ours.
 *
 * <h3>Threads</h3>
 *
 * <ol>
 *   <li>{@link #start} binds the socket on the caller's thread, so a port in use or a bad host
 *       is reported at once, as one line, and the app keeps running without the endpoint.
 *   <li>It then starts the server from a daemon thread: the JDK's ServerImpl creates its
 *       dispatcher with {@code new Thread(...)}, which inherits daemon status from the thread
 *       that calls {@code start()} (agent-notes 5.4); from premain's main thread it would keep
 *       the JVM alive after main returns.
 *   <li>Handlers run on one daemon platform thread, {@code gmp4j-exporter}: not a virtual
 *       thread, so a scrape neither runs on nor disturbs the scheduler it measures. Requests are
 *       served one at a time.
 * </ol>
 *
 * <h3>Cost</h3>
 *
 * /metrics and /sched call {@code Gmp.readMetrics}, which takes no scheduler lock. Only
 * /debug/schedtrace takes sched.lock, briefly, as Go's schedtrace does; /debug/goroutines walks
 * the Gs and asks each virtual thread for its stack.
 */
public final class Endpoint {
  private static final String TEXT = "text/plain; charset=utf-8";
  private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";
  private static final String INDEX =
      """
      gmp4j endpoint
        /metrics                      Prometheus text format
        /sched                        Go runtime/metrics /sched names, one "name value" a line
        /debug/schedtrace             Go's schedtrace line (?detail=1: with scheddetail)
        /debug/goroutines             goroutines grouped by stack (?debug=2: each goroutine)
        /debug/instrumentation        classes given preemption polls, and left alone with why
        /debug/flightrecorder         dump the flight recorder's window; answers "path size"
        /debug/vars                   JSON (Go's expvar): options with their source, metrics
      """;

  private static final AtomicReference<Endpoint> RUNNING = new AtomicReference<>();

  private final HttpServer server;
  private final ExecutorService handlers;
  private final PrometheusMeterRegistry registry;

  private Endpoint(HttpServer server, ExecutorService handlers, PrometheusMeterRegistry registry) {
    this.server = server;
    this.handlers = handlers;
    this.registry = registry;
  }

  /**
   * Starts the endpoint once per JVM. Returns null on success, or the one line to print: the
   * caller prints it and carries on. Never throws. Called by AgentInstaller after the scheduler
   * started.
   */
  public static String start(String host, int port) {
    String where = (host == null || host.isBlank() ? "127.0.0.1" : host.strip()) + ":" + port;
    try {
      Endpoint e = create(host, port);
      if (!RUNNING.compareAndSet(null, e)) {
        e.server.stop(0);
        e.handlers.shutdownNow();
        return null;
      }
      return null;
    } catch (BindException e) {
      return "gmp4j: exporter: cannot listen on "
          + where
          + ": "
          + e.getMessage()
          + "; the app keeps running without the endpoint";
    } catch (Throwable t) {
      String msg =
          t.getMessage() == null
              ? t.getClass().getName()
              : t.getClass().getSimpleName() + ": " + t.getMessage();
      return "gmp4j: exporter: cannot listen on "
          + where
          + ": "
          + msg
          + "; the app keeps running without the endpoint";
    }
  }

  /** The port the endpoint listens on, or -1. Any thread. */
  public static int port() {
    Endpoint e = RUNNING.get();
    return e == null ? -1 : e.server.getAddress().getPort();
  }

  /** Stops the endpoint if running; for tests. Any thread. */
  public static void stop() {
    Endpoint e = RUNNING.getAndSet(null);
    if (e != null) {
      e.server.stop(0);
      e.handlers.shutdownNow();
      e.registry.close();
    }
  }

  private static Endpoint create(String host, int port) throws Exception {
    InetAddress address =
        host == null || host.isBlank() ? InetAddress.getLoopbackAddress() : resolve(host.strip());
    HttpServer server = HttpServer.create(new InetSocketAddress(address, port), 0); // step 1
    ExecutorService handlers =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "gmp4j-exporter");
              t.setDaemon(true);
              return t;
            });
    try {
      PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      new GmpMetrics().bindTo(registry);
      Endpoint e = new Endpoint(server, handlers, registry);
      server.setExecutor(handlers);
      server.createContext("/", e::handle);
      Thread starter = new Thread(server::start, "gmp4j-exporter-start"); // step 2
      starter.setDaemon(true);
      starter.start();
      starter.join();
      return e;
    } catch (Throwable t) {
      server.stop(0);
      handlers.shutdownNow();
      throw t;
    }
  }

  private static InetAddress resolve(String host) throws UnknownHostException {
    try {
      return InetAddress.getByName(host);
    } catch (UnknownHostException e) {
      throw new UnknownHostException("unknown host " + host);
    }
  }

  /** Routes one request. Runs on the gmp4j-exporter thread. */
  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String method = ex.getRequestMethod();
      boolean head = method.equals("HEAD");
      if (!head && !method.equals("GET")) {
        ex.getResponseHeaders().set("Allow", "GET, HEAD");
        send(ex, 405, TEXT, "method not allowed: the gmp4j endpoint is read-only\n", false);
        return;
      }
      String path = ex.getRequestURI().getPath();
      String query = ex.getRequestURI().getRawQuery();
      switch (path) {
        case "/" -> send(ex, 200, TEXT, INDEX, head);
        case "/metrics" -> send(ex, 200, PROMETHEUS_TEXT, registry.scrape(), head);
        case "/sched" ->
            send(ex, 200, TEXT, SchedText.metrics(Gmp.readMetrics(), Gmp.describeMetrics()), head);
        case "/debug/schedtrace" ->
            send(ex, 200, TEXT, Gmp.schedtrace(param(query, "detail", "0").equals("1")), head);
        case "/debug/goroutines" ->
            send(
                ex,
                200,
                TEXT,
                param(query, "debug", "1").equals("2")
                    ? SchedText.goroutines(Gmp.goroutines())
                    : SchedText.goroutinesGrouped(Gmp.goroutines()),
                head);
        case "/debug/instrumentation" -> send(ex, 200, TEXT, Coverage.global().table(), head);
        case "/debug/flightrecorder" -> flightRecorder(ex, head);
        case "/debug/vars" ->
            send(ex, 200, "application/json; charset=utf-8", DebugVars.json(), head);
        default -> send(ex, 404, TEXT, "not found: " + path + "\n\n" + INDEX, head);
      }
    } catch (RuntimeException | Error e) {
      // the endpoint must never take the app down; the client sees a closed connection
    }
  }

  /** GET /debug/flightrecorder. A HEAD dumps nothing. Runs on the gmp4j-exporter thread. */
  private static void flightRecorder(HttpExchange ex, boolean head) throws IOException {
    if (head) {
      send(ex, 200, TEXT, "", true);
      return;
    }
    String out;
    try {
      out = io.gmp4j.agent.jfr.FlightRecorder.dumpNow();
    } catch (LinkageError e) { // no jdk.jfr in the boot layer
      out = null;
    }
    if (out == null) {
      send(
          ex,
          404,
          TEXT,
          "the flight recorder is off: start the agent with flightrecorder=10s\n",
          false);
    } else if (out.startsWith("gmp4j: ")) {
      send(ex, 500, TEXT, out + "\n", false);
    } else {
      send(ex, 200, TEXT, out + "\n", false);
    }
  }

  private static String param(String query, String key, String dflt) {
    if (query == null) {
      return dflt;
    }
    for (String kv : query.split("&")) {
      int eq = kv.indexOf('=');
      if (eq > 0 && kv.substring(0, eq).equals(key)) {
        return kv.substring(eq + 1);
      }
    }
    return dflt;
  }

  private static void send(HttpExchange ex, int status, String type, String body, boolean head)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", type);
    ex.getResponseHeaders().set("Cache-Control", "no-store");
    if (head) {
      ex.getResponseHeaders().set("Content-Length", Integer.toString(bytes.length));
      ex.sendResponseHeaders(status, -1);
      return;
    }
    ex.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }
}
