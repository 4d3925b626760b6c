package io.gmp4j.agent.trace;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The trace tests' recording: {@link SmallWorkload} in a child JVM on the runtime from the
 * class path, recorded with gmp4j-detail.jfc as the build wrote it (target/classes). One per
 * test JVM ({@link #shared}), shared by the trace test classes, in a temporary folder deleted
 * when the JVM exits.
 */
final class TraceFixture {
  private static TraceFixture shared;

  /** The recording of this JVM, made on first use. */
  static synchronized TraceFixture shared() throws IOException, InterruptedException {
    if (shared == null) {
      TraceFixture f = record();
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    try {
                      deleteTree(f.dir);
                    } catch (IOException e) {
                      System.err.println("TraceFixture: could not delete " + f.dir + ": " + e);
                    }
                  }));
      shared = f;
    }
    return shared;
  }

  final Path dir;
  final Path rec;

  private TraceFixture(Path dir, Path rec) {
    this.dir = dir;
    this.rec = rec;
  }

  private static TraceFixture record() throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("gmp4j-trace-test-");
    Path rec = dir.resolve("small.jfr");
    Path jfc = Path.of("target/classes/gmp4j-detail.jfc").toAbsolutePath();
    if (!Files.isRegularFile(jfc)) {
      throw new IllegalStateException(jfc + " missing: the build writes it at process-classes");
    }
    List<String> cmd =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-opens",
                "java.base/java.lang=ALL-UNNAMED",
                "-XX:StartFlightRecording:filename=" + rec + ",settings=" + jfc,
                "-Xlog:jfr+startup=warning",
                "-cp",
                System.getProperty("java.class.path"),
                SmallWorkload.class.getName()));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("GOMAXPROCS", "2");
    pb.environment().remove("GMPDEBUG");
    Process p = pb.start();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Thread drain =
        Thread.ofPlatform()
            .daemon()
            .start(
                () -> {
                  try (InputStream in = p.getInputStream()) {
                    in.transferTo(out);
                  } catch (IOException ignored) {
                    // the child died; its exit status says so
                  }
                });
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
    drain.join(5_000);
    String text = out.toString(StandardCharsets.UTF_8);
    if (p.exitValue() != 0 || !text.contains("OK") || !Files.isRegularFile(rec)) {
      deleteTree(dir);
      throw new IllegalStateException("SmallWorkload failed, exit " + p.exitValue() + ":\n" + text);
    }
    return new TraceFixture(dir, rec);
  }

  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> s = Files.walk(root)) {
      for (Path f : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(f);
      }
    }
  }
}
