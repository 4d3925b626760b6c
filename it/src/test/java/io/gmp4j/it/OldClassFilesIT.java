package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.MatrixHog;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * 'Old class files' and 'Coverage' in the agent's PollInjector, end to end under {@code
 * -Xverify:all}: a hog inside commons-math3 3.6.1 (Java 5 class files, no stack-map frames) is
 * time-sliced by its own polls at one P, and the agent tells what it instrumented in the exit
 * line ({@code preempt.report=1}), on {@code /debug/instrumentation} and in the metrics.
 */
@Timeout(120)
class OldClassFilesIT {
  private static final Duration LIMIT = Duration.ofSeconds(90);

  /**
   * At one P, a 1 ms sleeper keeps coming back while a virtual thread multiplies 400x400
   * matrices for 1 s in Array2DRowRealMatrix.multiply, and no hand-off was needed: the
   * library's loops polled. Before old class files got polls, the sleeper came back once per
   * product at most (at the poll of the app's own loop between two products), and the first
   * product, 2.5 s while interpreted, cost the hog its P after {@code preempt.handoff} (20 ms of
   * its carrier's CPU) with an "ignored preemption" line: {@link
   * #hogInAJava5LibraryWithoutPollsIsHandedOff} shows that this test would see it.
   *
   * <p>Default {@code preempt.handoff}, and the hog is never handed off ({@link
   * #assertHogKeptItsP}). Twice: by default, where the library's classes load with early polls
   * ('Early polls'; the busy process keeps the deferral from ending, and the exit line says the
   * placed polls are still to come), and with {@code preempt.defer=0}, their placed polls.
   */
  @ParameterizedTest
  @ValueSource(strings = {"preempt.report=1", "preempt.defer=0"})
  void hogInAJava5LibraryIsPreemptedByItsPolls(String options) throws Exception {
    // 1 s, not 500 ms: the time slice is the carrier's CPU time, and on a loaded machine 500 ms
    // of wall time gave as few as 8 slices.
    ChildJvm.Result r =
        ChildJvm.withAgent("gomaxprocs=1," + options, MatrixHog.class, LIMIT, "1000");
    assertEquals(0, r.exit(), r.toString());
    if (options.equals("preempt.report=1")) {
      assertTrue(r.err().contains(" classes with early polls, placed polls to come"), r.toString());
    }
    long ticks = Long.parseLong(r.value("ticks"));
    long hogMs = Long.parseLong(r.value("hog_ms"));
    System.out.printf(
        "OldClassFilesIT (%s): %s products in %d ms at one P; the sleeper's 1 ms sleeps"
            + " came back %d times meanwhile; honored=%s handoffs=%s%n",
        options, r.value("products"), hogMs, ticks, r.value("honored"), r.value("handoffs"));
    assertHogKeptItsP(r);
    // One sleep comes back per 10 ms time slice, about 100 in 1 s; without polls in the
    // library at most one per product. The bounds allow for a machine loaded many times over.
    long products = Long.parseLong(r.value("products"));
    assertTrue(ticks >= 5 && ticks > 2 * products, r.toString());
    assertTrue(Long.parseLong(r.value("honored")) >= 5, r.toString());
  }

  /**
   * The control: the same hog with commons-math3 excluded from the polls ignores preemption
   * inside the product and loses its P, with the line that the test above asserts is absent.
   */
  @Test
  void hogInAJava5LibraryWithoutPollsIsHandedOff() throws Exception {
    ChildJvm.Result r =
        ChildJvm.withAgent(
            "gomaxprocs=1,preempt.exclude=org.apache.commons.math3.*",
            MatrixHog.class,
            LIMIT,
            "300");
    assertEquals(0, r.exit(), r.toString());
    List<String> handoffs =
        r.err().lines().filter(l -> ChildJvm.HANDOFF_REPORT.matcher(l).matches()).toList();
    System.out.println("OldClassFilesIT: without polls in commons-math3: " + handoffs);
    assertTrue(
        handoffs.stream()
            .anyMatch(
                l ->
                    l.contains("ignored preemption")
                        && l.contains(
                            "org.apache.commons.math3.linear.Array2DRowRealMatrix.multiply")),
        r.toString());
    assertTrue(Long.parseLong(r.value("handoffs")) >= 1, r.toString());
  }

  /**
   * MatrixHog's hog never lost its P: no hand-off report names commons-math3, and every hand-off
   * counted has a report line of its own. Not "no hand-off at all": a loaded machine may hand off
   * another G whose carrier the OS starved ({@link ChildJvm#HANDOFF_REPORT}), and that one is
   * reported with its own frames. A hog without polls in the library is handed off in every
   * product longer than a hand-off, and the first of those is reported inside {@code
   * Array2DRowRealMatrix.multiply} ({@link #hogInAJava5LibraryWithoutPollsIsHandedOff}); one
   * that comes within a second of another report is only counted, in a "more" line or suffix,
   * and then the counter is over the report lines. The ticks alone would not tell: a hog handed
   * off lets the sleeper run as often as one that polls.
   */
  static void assertHogKeptItsP(ChildJvm.Result r) {
    List<String> reports =
        r.err().lines().filter(l -> ChildJvm.HANDOFF_REPORT.matcher(l).matches()).toList();
    assertTrue(
        reports.stream().noneMatch(l -> l.contains("org.apache.commons.math3.")),
        "the hog was handed off inside commons-math3: " + r);
    long named = reports.stream().filter(l -> l.startsWith("gmp4j: goroutine ")).count();
    assertTrue(
        Long.parseLong(r.value("handoffs")) <= named
            && reports.stream().noneMatch(l -> l.contains(" more")),
        "hand-offs with no report line of their own, maybe the hog's: " + r);
  }

  /**
   * The exit line, the endpoint's table and the metric agree on what was instrumented. With the
   * rewrite at load ({@code preempt.defer=0}): by default the classes would be counted when the
   * deferral ends, after this short app has exited.
   */
  @Test
  void coverageIsReportedAtExitOnTheEndpointAndInTheMetrics() throws Exception {
    ChildJvm.Result r =
        ChildJvm.onFreePort(
            port -> {
              ChildJvm.Result run =
                  ChildJvm.withAgent(
                      "preempt.report=1,preempt.defer=0,exporter.port="
                          + port
                          + ",preempt.exclude=org.apache.commons.math3.util.*",
                      MatrixHog.class,
                      LIMIT,
                      "1");
              ChildJvm.failIfPortTaken(run.err(), port);
              return run;
            });
    assertEquals(0, r.exit(), r.toString());
    List<String> lines =
        r.err().lines().filter(l -> l.startsWith("gmp4j: preemption polls: ")).toList();
    assertEquals(1, lines.size(), r.toString());
    Matcher line =
        Pattern.compile(
                "gmp4j: preemption polls: (\\d+) classes instrumented, (\\d+)"
                    + " left alone \\(([^)]*)\\) in (\\d+) loaders?")
            .matcher(lines.get(0));
    assertTrue(line.matches(), lines.get(0));
    long instrumented = Long.parseLong(line.group(1));
    assertTrue(instrumented >= 5, lines.get(0)); // the app's classes and commons-math3's
    assertTrue(
        line.group(3).contains("excluded") && line.group(3).contains("no loops"), lines.get(0));
    // The metric was read before exit, when at most as many classes had loaded.
    long metric = Long.parseLong(r.value("instrumented"));
    assertTrue(metric >= 5 && metric <= instrumented, metric + " vs " + lines.get(0));

    String out = r.out();
    String table =
        out.substring(out.indexOf("--- instrumentation ---\n") + 24, out.indexOf("--- end ---"));
    System.out.println("OldClassFilesIT stderr: " + lines.get(0));
    System.out.println("OldClassFilesIT /debug/instrumentation:\n" + table);
    assertTrue(table.startsWith("preemption polls: "), table);
    assertTrue(table.contains("loader  ") && table.contains("frame check failed"), table);
    // Array2DRowRealMatrix's package has instrumented classes, under the app class loader.
    assertTrue(
        table
            .lines()
            .anyMatch(
                l ->
                    l.matches(
                        "app@\\p{XDigit}+ +org\\.apache\\.commons\\.math3\\.linear +[1-9]\\d* .*")),
        table);
    assertTrue(
        table
            .lines()
            .anyMatch(
                l ->
                    l.matches(
                        "app@\\p{XDigit}+ +org\\.apache\\.commons\\.math3\\.util +0 +[1-9]\\d* .*")),
        table);
    assertTrue(table.contains("methods and classes left alone"), table);
  }
}
