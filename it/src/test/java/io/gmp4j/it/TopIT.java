package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.AttachWorkload;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code gmp4j top} against a running JVM without the agent: {@code --attach} loads gmp4j with an
 * endpoint on a free port, and with stdout to a file top prints one line per refresh with the
 * expected fields; under a pseudo-terminal ({@code script}) it draws the screen. {@code
 * /debug/vars} shows every option with its source, a live change included.
 */
@Timeout(240)
class TopIT {
  private static final Duration STEP = Duration.ofSeconds(90);

  @Test
  void topLinesToAFileAndTheScreenOnATerminal() throws Exception {
    try (LiveChild app =
        LiveChild.java(List.of("-Xverify:all"), Map.of(), AttachWorkload.class, "3000")) {
      app.awaitOut(l -> l.startsWith("ready"), STEP);
      Path file = Files.createTempFile("gmp4j-top", ".txt");
      try {
        Process top =
            new ProcessBuilder(
                    ChildJvm.JAVA.toString(),
                    "-jar",
                    LiveChild.agentJar().toString(),
                    "top",
                    Long.toString(app.pid()),
                    "--attach",
                    "--count=3")
                .redirectOutput(file.toFile())
                .redirectErrorStream(true)
                .start();
        assertTrue(top.waitFor(STEP.toSeconds(), TimeUnit.SECONDS), "top did not end");
        String out = Files.readString(file);
        System.out.println("TopIT, stdout to a file:\n" + out);
        assertEquals(0, top.exitValue(), out + "\n" + app);
        List<String> lines = out.lines().filter(l -> l.matches("\\d\\d:\\d\\d:\\d\\d .*")).toList();
        assertEquals(3, lines.size(), out);
        for (String l : lines) {
          assertTrue(
              l.matches(
                  "\\d\\d:\\d\\d:\\d\\d gomaxprocs=2 idleprocs=\\d+ runqueue=\\d+"
                      + " \\[\\d+ \\d+\\] threads=\\d+\\(running=\\d+ idle=\\d+ syscall=\\d+\\)"
                      + " goroutines=\\d+\\(running=\\d+ runnable=\\d+ waiting=\\d+\\)"
                      + " lat_p50=\\S+ lat_p99=\\S+.* longest=\\S+"),
              l);
        }
        assertTrue(
            lines
                .get(2)
                .matches(
                    ".* steals/s=\\d+ preempt/s=\\d+ handoffs/s=\\d+"
                        + " syscall_handoffs/s=\\d+ longest=.*"),
            lines.get(2));
        assertTrue(lines.stream().noneMatch(l -> l.contains("\033[")), out);

        Matcher m = Pattern.compile("endpoint (http://127\\.0\\.0\\.1:\\d+)").matcher(out);
        assertTrue(m.find(), out);
        String url = m.group(1);

        // On a terminal: the screen, redrawn. The workload runs Gs on gmp4j only once the
        // attach's retransformation is over (AttachWorkload, step 3: "carrier=" comes first, then
        // the hog and its ticker, then the busy Gs until "finish"); before, every G of the app
        // is the JDK's, and the latency line reads "-". That took longer than the first top's
        // three refreshes in one run of CI, and the screen had no G to show.
        app.awaitOut(l -> l.startsWith("carrier="), STEP);
        LiveChild.Run screen =
            LiveChild.run(
                List.of(
                    "script",
                    "-qec",
                    ChildJvm.JAVA
                        + " -jar "
                        + LiveChild.agentJar()
                        + " top --url "
                        + url
                        + " --count=2",
                    "/dev/null"),
                STEP);
        System.out.println(
            "TopIT, on a terminal:\n" + screen.out().replace("\033[H\033[2J", "<clear>\n"));
        assertEquals(0, screen.exit(), screen.toString());
        assertTrue(screen.out().contains("\033[H\033[2J"), screen.toString());
        for (String field :
            List.of(
                "GOMAXPROCS 2  (",
                "P0   ",
                "P1   ",
                "global run queue ",
                "threads ",
                "goroutines ",
                "scheduler latency (last interval): p50 <",
                "per second: steals ",
                "ran longest")) {
          assertTrue(screen.out().contains(field), field + " in\n" + screen);
        }

        // /debug/vars: the options and their sources, a live change included.
        String vars = get(url + "/debug/vars");
        assertTrue(
            vars.contains(
                "\"exporter.port\": {\"value\": \""
                    + url.replaceAll(".*:", "")
                    + "\", \"source\": \"attach\""),
            vars);
        assertTrue(
            vars.contains("\"timeslice\": {\"value\": \"10ms\", \"source\": \"default\""), vars);
        assertTrue(
            vars.contains("\"gomaxprocs\": {\"value\": \"2\", \"source\": \"default\""), vars);
        LiveChild.Run live =
            LiveChild.gmp4j(STEP, "attach", Long.toString(app.pid()), "timeslice=5ms");
        assertEquals(0, live.exit(), live.toString());
        vars = get(url + "/debug/vars");
        assertTrue(
            vars.contains("\"timeslice\": {\"value\": \"5ms\", \"source\": \"attach\""), vars);
        System.out.println("TopIT /debug/vars:\n" + vars);
      } finally {
        Files.deleteIfExists(file);
      }
    }
  }

  private static String get(String url) throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return r.body();
  }
}
