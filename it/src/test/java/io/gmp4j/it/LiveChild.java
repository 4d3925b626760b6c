package io.gmp4j.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A child process that keeps running while a test works on it (attaches, reads its output as it
 * comes): unlike {@link ChildJvm}, which waits for the end. Both streams are drained into
 * buffers; {@link #close} kills it. Also runs the {@code gmp4j} command line ({@link #gmp4j}).
 */
final class LiveChild implements AutoCloseable {
  final Process process;
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private LiveChild(Process p) {
    this.process = p;
    ChildJvm.drain(p.getInputStream(), out);
    ChildJvm.drain(p.getErrorStream(), err);
  }

  /**
   * Starts {@code cmd} (the whole command line) without {@link ChildJvm#SCRUBBED_ENV}, as
   * ChildJvm does, and with {@code env}.
   */
  static LiveChild start(List<String> cmd, Map<String, String> env) throws IOException {
    ProcessBuilder pb = new ProcessBuilder(cmd);
    ChildJvm.SCRUBBED_ENV.forEach(pb.environment()::remove);
    pb.environment().putAll(env);
    return new LiveChild(pb.start());
  }

  /** A JVM on one of the it/ apps with the test class path. */
  static LiveChild java(List<String> jvmArgs, Map<String, String> env, Class<?> app, String... args)
      throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(ChildJvm.JAVA.toString());
    cmd.addAll(jvmArgs);
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(app.getName());
    cmd.addAll(List.of(args));
    return start(cmd, env);
  }

  long pid() {
    return process.pid();
  }

  String out() {
    synchronized (out) {
      return out.toString(StandardCharsets.UTF_8);
    }
  }

  String err() {
    synchronized (err) {
      return err.toString(StandardCharsets.UTF_8);
    }
  }

  /** Waits until a stdout line matches; returns it, or fails with both streams. */
  String awaitOut(Predicate<String> line, Duration timeout) throws InterruptedException {
    return await(true, line, timeout);
  }

  /** Waits until a stderr line matches; returns it, or fails with both streams. */
  String awaitErr(Predicate<String> line, Duration timeout) throws InterruptedException {
    return await(false, line, timeout);
  }

  private String await(boolean stdout, Predicate<String> line, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      String s = stdout ? out() : err();
      for (String l : s.split("\n")) {
        if (line.test(l)) {
          return l;
        }
      }
      if (!process.isAlive()) {
        break;
      }
      Thread.sleep(20);
    }
    throw new AssertionError(
        "no such line on "
            + (stdout ? "stdout" : "stderr")
            + " within "
            + timeout
            + (process.isAlive() ? "" : " (the child exited " + process.exitValue() + ")")
            + "\n"
            + this);
  }

  /** Writes one line to the child's stdin. */
  void send(String line) throws IOException {
    OutputStream in = process.getOutputStream();
    in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    in.flush();
  }

  /** Waits for the exit; kills the child at the deadline and returns -1 then. */
  int waitFor(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
      return -1;
    }
    Thread.sleep(50); // the drains finish
    return process.exitValue();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Override
  public String toString() {
    return "--- stdout ---\n" + out() + "--- stderr ---\n" + err();
  }

  /** What a {@code gmp4j} command did. */
  record Run(int exit, String out, String err) {
    @Override
    public String toString() {
      return "exit=" + exit + "\n--- stdout ---\n" + out + "--- stderr ---\n" + err;
    }
  }

  /** Runs {@code java -jar gmp4j-agent.jar <args>} (as the root gmp4j script does). */
  static Run gmp4j(Duration timeout, String... args) throws IOException, InterruptedException {
    List<String> cmd =
        new ArrayList<>(List.of(ChildJvm.JAVA.toString(), "-jar", agentJar().toString()));
    cmd.addAll(List.of(args));
    return run(cmd, timeout);
  }

  /** Runs a command to its end, at most {@code timeout}. */
  static Run run(List<String> cmd, Duration timeout) throws IOException, InterruptedException {
    try (LiveChild c = start(cmd, Map.of())) {
      c.process.getOutputStream().close();
      int exit = c.waitFor(timeout);
      return new Run(exit, c.out(), c.err());
    }
  }

  static Path agentJar() {
    ChildJvm.javaagent(""); // fails with the build hint when the jar is missing
    return ChildJvm.AGENT;
  }
}
