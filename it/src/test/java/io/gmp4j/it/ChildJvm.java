package io.gmp4j.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Starts a fresh JVM (the JDK 25 running the tests) on one of the {@code apps}, with the real
 * agent jar and {@code -Xverify:all}, and kills it at a deadline. Each scenario gets its own JVM
 * (STYLE.md rule 10).
 *
 * <p>One behaviour with runtime's {@code io.gmp4j.ChildJvmTest} (the other child-JVM harness,
 * in a module of its own): the child's environment is scrubbed of {@link #SCRUBBED_ENV}, so
 * that the developer's shell cannot change what a test sees, and its stdout and stderr go to
 * files (no pipe to drain, nothing lost when it is killed), read once it has exited.
 */
final class ChildJvm {
  /**
   * Environment variables a child never inherits: gmp4j's own ({@code GMPDEBUG}, {@code
   * GOMAXPROCS}) and the JVM's ({@code JAVA_TOOL_OPTIONS}, {@code JDK_JAVA_OPTIONS}, which would
   * add flags and a "Picked up" line on stderr). A test that wants one passes it in {@code env}.
   * The same list as ChildJvmTest's and example.servers.ServerProcess's; LiveChild uses this one.
   */
  static final List<String> SCRUBBED_ENV =
      List.of("GMPDEBUG", "GOMAXPROCS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS");

  /** The agent jar under test: agent/target/gmp4j-agent.jar, passed in by failsafe. */
  static final Path AGENT =
      Path.of(System.getProperty("gmp.agent.jar", "../agent/target/gmp4j-agent.jar"))
          .toAbsolutePath()
          .normalize();

  static final Path JAVA = Path.of(System.getProperty("java.home"), "bin", "java");

  private ChildJvm() {}

  /**
   * A line of sysmon's hog hand-off report (HogHandoff's report and flushReports). Any program
   * on gmp4j may print one on a loaded machine: a carrier that the OS leaves without a CPU for
   * {@code preempt.handoff} (20 ms) looks to sysmon exactly like a G that ignores preemption,
   * and handing its P to another M is then the right thing to do. Seen in ExporterIT under a
   * parallel build: {@code goroutine 4 ignored preemption for 21ms (running
   * java.lang.VirtualThread.parkNanos <- ... Thread.sleepNanos)}, a G caught inside its own
   * park. Tests about other lines leave these out; HogHandoffIT and ChildJvmTest test them.
   */
  static final Pattern HANDOFF_REPORT =
      Pattern.compile(
          "gmp4j: (goroutine \\d+ (ignored"
              + " preemption|blocked its thread while pinned) for |\\d+ more goroutines? ignored"
              + " preemption in the last ).*");

  /**
   * The {@code gmp4j:} lines of {@code output}, less hand-off reports ({@link #HANDOFF_REPORT}).
   */
  static List<String> notes(String output) {
    return output
        .lines()
        .filter(l -> l.startsWith("gmp4j:"))
        .filter(l -> !HANDOFF_REPORT.matcher(l).matches())
        .toList();
  }

  /**
   * What a child did. {@code timedOut} means it was killed at the deadline. {@code leftFiles}:
   * what the child left in its temporary folder (its own {@code java.io.tmpdir}, deleted after).
   */
  record Result(int exit, String out, String err, boolean timedOut, List<String> leftFiles) {
    @Override
    public String toString() {
      return "exit="
          + exit
          + (timedOut ? " (killed at the deadline)" : "")
          + (leftFiles.isEmpty() ? "" : " left in its temporary folder: " + leftFiles)
          + "\n--- stdout ---\n"
          + out
          + "--- stderr ---\n"
          + err;
    }

    /** The {@code gmp4j:} lines of stderr, less sysmon's hand-off reports (see {@link #notes}). */
    List<String> notes() {
      return ChildJvm.notes(err);
    }

    /** The value of the first stdout line {@code key=value}, or null. */
    String value(String key) {
      for (String line : out.split("\n")) {
        if (line.startsWith(key + "=")) {
          return line.substring(key.length() + 1).trim();
        }
      }
      return null;
    }
  }

  /**
   * A loopback port that was free a moment ago, for {@code exporter.port}. Only a moment: the
   * socket is closed before the child binds the port, and another process may take it in the
   * second or so of the child's start-up. {@link #onFreePort} gives a test a second one then.
   */
  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** A test on a port; see {@link #onFreePort}. */
  interface OnPort<T> {
    T run(int port) throws Exception;
  }

  /** Thrown by {@link #failIfPortTaken}, caught by {@link #onFreePort}. */
  static final class PortTaken extends RuntimeException {
    PortTaken(int port, String output) {
      super("exporter.port " + port + " was taken before the child bound it:\n" + output);
    }
  }

  /**
   * Throws {@link PortTaken} if {@code output}, a child's stderr, has the agent's line for an
   * {@code exporter.port} of {@code port} that another process held (the exporter binds in
   * premain, so the line is there before the app's first line).
   */
  static void failIfPortTaken(String output, int port) {
    if (output.contains(
        "gmp4j: exporter: cannot listen on 127.0.0.1:" + port + ": Address already in use")) {
      throw new PortTaken(port, output);
    }
  }

  /**
   * Runs {@code test} on a {@link #freePort}, and once more on another if it threw {@link
   * PortTaken}: a port taken twice in a row says more than a race.
   */
  static <T> T onFreePort(OnPort<T> test) throws Exception {
    int port = freePort();
    try {
      return test.run(port);
    } catch (PortTaken e) {
      System.out.println("exporter.port " + port + " was taken before the child bound it; again");
      return test.run(freePort());
    }
  }

  /** Runs {@code app} with the agent and {@code agentOptions} (may be empty). */
  static Result withAgent(String agentOptions, Class<?> app, Duration timeout, String... args)
      throws IOException, InterruptedException {
    return run(List.of("-Xverify:all", javaagent(agentOptions)), Map.of(), app, timeout, args);
  }

  /** The {@code -javaagent:} flag for the agent under test with {@code agentOptions}. */
  static String javaagent(String agentOptions) {
    if (!Files.isRegularFile(AGENT)) {
      throw new IllegalStateException(
          "agent jar not found at "
              + AGENT
              + "; build it first: ./mvn25 -q package -DskipTests -pl agent -am");
    }
    return "-javaagent:" + AGENT + (agentOptions.isEmpty() ? "" : "=" + agentOptions);
  }

  /**
   * Runs {@code app} with the given JVM flags and extra environment, on the test class path
   * unless the flags give a {@code -cp} of their own.
   */
  static Result run(
      List<String> jvmArgs, Map<String, String> env, Class<?> app, Duration timeout, String... args)
      throws IOException, InterruptedException {
    return run(List.of(), jvmArgs, env, app, timeout, args);
  }

  /**
   * Runs {@code app} as {@link #run(List, Map, Class, Duration, String...)} does, with the
   * command after {@code prefix} (for example {@code taskset -c 0}).
   */
  static Result run(
      List<String> prefix,
      List<String> jvmArgs,
      Map<String, String> env,
      Class<?> app,
      Duration timeout,
      String... args)
      throws IOException, InterruptedException {
    // The child's own temporary folder: what it leaves there (the agent's runtime jar, an app's
    // FIFO) is reported, and deleted with the folder even when the child was killed. Its output
    // files go in another folder, so that they are not reported as left behind.
    Path tmp = Files.createTempDirectory("gmp4j-child");
    Path outDir = Files.createTempDirectory("gmp4j-child-out");
    try {
      return run(prefix, jvmArgs, env, app, timeout, tmp, outDir, args);
    } finally {
      deleteTree(tmp);
      deleteTree(outDir);
    }
  }

  private static Result run(
      List<String> prefix,
      List<String> jvmArgs,
      Map<String, String> env,
      Class<?> app,
      Duration timeout,
      Path tmp,
      Path outDir,
      String... args)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(prefix);
    cmd.add(JAVA.toString());
    cmd.add("-Djava.io.tmpdir=" + tmp);
    cmd.addAll(jvmArgs);
    if (!jvmArgs.contains("-cp")) { // a jar of the test's own (AotCacheIT), or the test classes
      cmd.add("-cp");
      cmd.add(System.getProperty("java.class.path"));
    }
    cmd.add(app.getName());
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    SCRUBBED_ENV.forEach(pb.environment()::remove);
    pb.environment().putAll(env);
    Path outFile = outDir.resolve("stdout");
    Path errFile = outDir.resolve("stderr");
    pb.redirectOutput(outFile.toFile());
    pb.redirectError(errFile.toFile());
    Process p = pb.start();
    boolean done;
    try {
      done = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } finally {
      if (p.isAlive()) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    }
    String out = Files.readString(outFile, StandardCharsets.UTF_8);
    String err = Files.readString(errFile, StandardCharsets.UTF_8);
    List<String> left;
    try (Stream<Path> files = Files.walk(tmp)) {
      left =
          files
              .filter(f -> !f.equals(tmp))
              .map(f -> tmp.relativize(f).toString())
              .sorted()
              .toList();
    }
    return new Result(done ? p.exitValue() : -1, out, err, !done, left);
  }

  private static void deleteTree(Path root) throws IOException {
    try (Stream<Path> files = Files.walk(root)) {
      for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(f);
      }
    }
  }

  /** Copies {@code in} into {@code sink} on a daemon thread until the child closes it. */
  static Thread drain(InputStream in, ByteArrayOutputStream sink) {
    return Thread.ofPlatform()
        .daemon()
        .start(
            () -> {
              byte[] buf = new byte[8192];
              try (in) {
                for (int n; (n = in.read(buf)) > 0; ) {
                  synchronized (sink) {
                    sink.write(buf, 0, n);
                  }
                }
              } catch (IOException ignored) {
                // the child died; what we have is what it said
              }
            });
  }
}
