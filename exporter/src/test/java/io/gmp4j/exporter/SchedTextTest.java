package io.gmp4j.exporter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gmp4j.Float64Histogram;
import io.gmp4j.Gmp;
import io.gmp4j.GoroutineInfo;
import io.gmp4j.MetricDescription;
import io.gmp4j.MetricDescription.Kind;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class SchedTextTest {
  @Test
  void schedLinesSplitAtTheLastSpace() {
    List<MetricDescription> ds =
        List.of(
            new MetricDescription("/sched/gomaxprocs:threads", "", Kind.GAUGE, true),
            new MetricDescription("/sched/runqueue/local:goroutines", "", Kind.PER_P, false),
            new MetricDescription("/sched/latencies:seconds", "", Kind.HISTOGRAM, true));
    Map<String, Object> values =
        Map.of(
            "/sched/gomaxprocs:threads",
            2L,
            "/sched/runqueue/local:goroutines",
            new long[] {3, 0},
            "/sched/latencies:seconds",
            new Float64Histogram(
                new double[] {Double.NEGATIVE_INFINITY, 0, 2.56e-7, Double.POSITIVE_INFINITY},
                new long[] {0, 5, 1}));
    assertEquals(
        """
        /sched/gomaxprocs:threads 2
        /sched/runqueue/local:goroutines{p=0} 3
        /sched/runqueue/local:goroutines{p=1} 0
        /sched/latencies:seconds{count} 6
        /sched/latencies:seconds{bucket=[0,2.56e-7)} 5
        /sched/latencies:seconds{bucket=[2.56e-7,+Inf)} 1
        """,
        SchedText.metrics(values, ds));
  }

  @Test
  void realMetricsAllParse() {
    String text = SchedText.metrics(Gmp.readMetrics(), Gmp.describeMetrics());
    Pattern line = Pattern.compile("/sched/[a-z/-]+:[a-z]+(\\{[^ ]+})? -?[0-9]+");
    for (String l : text.split("\n")) {
      assertTrue(line.matcher(l).matches(), l);
    }
  }

  static void parkHereForSchedTextTest(CountDownLatch release) {
    try {
      release.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void dumpsGroupParkedGoroutines() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    List<Thread> gs = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      gs.add(Gmp.go(() -> parkHereForSchedTextTest(release)));
    }
    try {
      String grouped = "";
      long deadline = System.nanoTime() + 10_000_000_000L;
      Pattern header =
          Pattern.compile(
              "(?m)^5 @ \\[[^\\]]+\\].*: goroutine( [0-9]+){5}\\n"
                  + "(#\\t.*\\n)*#\\tio.gmp4j.exporter.SchedTextTest.parkHereForSchedTextTest\\t"
                  + "SchedTextTest.java:[0-9]+\\n");
      while (!header.matcher(grouped).find()) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError(grouped + "\n" + Gmp.schedtrace(true));
        }
        Thread.sleep(20);
        grouped = SchedText.goroutinesGrouped(Gmp.goroutines());
      }
      assertTrue(grouped.startsWith("goroutine profile: total "), grouped);

      List<GoroutineInfo> all = Gmp.goroutines();
      String each = SchedText.goroutines(all);
      for (Thread t : gs) {
        long goid = all.stream().filter(g -> g.thread() == t).findFirst().orElseThrow().goid();
        assertTrue(
            Pattern.compile(
                    "(?m)^goroutine "
                        + goid
                        + " \\[[^\\]]+]:\\n(.*\\n)*?"
                        + "io.gmp4j.exporter.SchedTextTest.parkHereForSchedTextTest\\(...\\)\\n"
                        + "\\tSchedTextTest.java:[0-9]+\\n")
                .matcher(each)
                .find(),
            each);
      }
    } finally {
      release.countDown();
      GmpMetricsTest.joinAll(gs);
    }
  }

  @Test
  void durationsLikeGo() {
    assertEquals("3 minutes", SchedText.duration(200_000_000_000L));
    assertEquals("12s", SchedText.duration(12_300_000_000L));
    assertEquals("340ms", SchedText.duration(340_000_000L));
  }
}
