package example.servers;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * One of the servers in a child JVM of the JDK running this code, on this class path: with the
 * agent (and {@code -Xverify:all}) or on the JDK's default scheduler. It reads the child's
 * {@code port=}, keeps its output for failure messages, and on {@link #close} closes the child's
 * standard input (the server stops and exits), kills it if it has not exited within 10 s, and
 * deletes the child's temporary folder.
 */
public final class ServerProcess implements AutoCloseable {
  /**
   * What the child never inherits, so that the shell that runs the tests or the benchmarks
   * changes neither the scheduler nor the JVM's flags: the list of io.gmp4j.it.ChildJvm's
   * SCRUBBED_ENV, which is not visible from this package.
   */
  private static final List<String> SCRUBBED_ENV =
      List.of("GMPDEBUG", "GOMAXPROCS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS");

  private final Process process;
  private final Path tmp;
  private final StringBuilder output = new StringBuilder();
  private final int port;
  private boolean closed;

  /**
   * This class path without gmp4j's own jars (gmp4j-*.jar: the agent, the exporter, the runtime),
   * as an application's class path is: the servers use none of them, and where the agent's
   * classes are on the class path the system class loader takes them, and the runtime the agent
   * extracts, from there rather than from the {@code -javaagent} jar. Run by hand with a
   * baseline jar, SpringBench's two agents were then one: the one last installed in the local
   * Maven repository. (Failsafe, and it/target/test.classpath, name the modules by their jars.)
   */
  static String serverClassPath() {
    return Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(
            e -> {
              Path name = Path.of(e).getFileName();
              return name == null
                  || !(name.toString().startsWith("gmp4j-") && name.toString().endsWith(".jar"));
            })
        .collect(Collectors.joining(File.pathSeparator));
  }

  /**
   * Starts {@code server} (a class with a main, such as {@link JdkServer}); {@code agent} is the
   * agent jar with its options ({@code path=opts}), or null for the JDK's scheduler. Waits up to
   * {@code startSeconds} for the server's port.
   */
  public ServerProcess(Class<?> server, String agent, List<String> jvmArgs, int startSeconds)
      throws IOException, InterruptedException {
    this(server, agent, true, jvmArgs, startSeconds);
  }

  /**
   * As above; {@code verifyAll} false leaves {@code -Xverify:all} out for a child with the agent:
   * for timings of the agent against the JDK (SpringBench), where verifying every JDK class would
   * be charged to the agent.
   */
  public ServerProcess(
      Class<?> server, String agent, boolean verifyAll, List<String> jvmArgs, int startSeconds)
      throws IOException, InterruptedException {
    tmp = Files.createTempDirectory("gmp4j-server");
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Djava.io.tmpdir=" + tmp);
    if (agent != null) {
      if (verifyAll) {
        cmd.add("-Xverify:all");
      }
      cmd.add("-javaagent:" + agent);
    }
    cmd.add("-Dservers.cpu.iterations=" + Endpoints.calibrated());
    cmd.addAll(jvmArgs);
    cmd.add("-cp");
    cmd.add(serverClassPath());
    cmd.add(server.getName());
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    SCRUBBED_ENV.forEach(pb.environment()::remove);
    process = pb.start();
    CompletableFuture<Integer> ready = new CompletableFuture<>();
    Thread.ofPlatform()
        .daemon()
        .name("server-output")
        .start(
            () -> {
              int p = -1;
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                  synchronized (output) {
                    output.append(line).append('\n');
                  }
                  if (line.startsWith("port=")) {
                    p = Integer.parseInt(line.substring(5).trim());
                  } else if (line.equals("ready")) {
                    ready.complete(p);
                  }
                }
              } catch (IOException | RuntimeException ignored) {
                // the child died; ready says so below
              }
              ready.complete(-1);
            });
    int p;
    try {
      p = ready.get(startSeconds, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      p = -1;
    }
    if (p < 0) {
      close();
      throw new IllegalStateException(
          server.getSimpleName() + " did not start within " + startSeconds + " s:\n" + output());
    }
    port = p;
  }

  public int port() {
    return port;
  }

  /** The child's process id. */
  public long pid() {
    return process.pid();
  }

  /** Everything the child printed so far (stdout and stderr). */
  public String output() {
    synchronized (output) {
      return output.toString();
    }
  }

  /** Idempotent. */
  @Override
  public synchronized void close() throws IOException, InterruptedException {
    if (closed) {
      return;
    }
    closed = true;
    try {
      process.getOutputStream().close();
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } finally {
      try (Stream<Path> files = Files.walk(tmp)) {
        for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(f);
        }
      }
    }
  }

  /** The child's exit status, once closed; -1 while it runs. */
  public int exitValue() {
    return process.isAlive() ? -1 : process.exitValue();
  }
}
