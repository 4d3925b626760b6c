package io.gmp4j.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * schedtrace in Go 1.26's format (proc.go schedtrace, quoted in go-scheduler.md section 2), and
 * Go's timeHistogram bucket scheme (histogram.go), on a detached scheduler with no Ms.
 */
class SchedTraceTest {
  @Test
  void summaryLineIsGo126Format() {
    Sched s = new Sched(4);
    Goroutine g = new Goroutine(s, 1, null, null);
    s.allp[2].runqPut(g, false);
    String line = s.schedtrace(false);
    assertTrue(
        Pattern.matches(
            "SCHED \\d+ms: gomaxprocs=4 idleprocs=4 threads=0 spinningthreads=0"
                + " needspinning=0 idlethreads=0 runqueue=0 \\[ 0 0 1 0 \\] schedticks=\\[ 0 0 0 0 \\]\n",
            line),
        line);
  }

  @Test
  void schedMillisCountFromTheSchedulersStartNotTheFirstTrace() throws Exception {
    Sched s = new Sched(1);
    Thread.sleep(60);
    java.util.regex.Matcher m = Pattern.compile("^SCHED (\\d+)ms: ").matcher(s.schedtrace(false));
    assertTrue(m.find(), s.schedtrace(false));
    assertTrue(Long.parseLong(m.group(1)) >= 60, s.schedtrace(false));
  }

  @Test
  void onePBrackets() {
    Sched s = new Sched(1);
    assertTrue(s.schedtrace(false).endsWith(" runqueue=0 [ 0 ] schedticks=[ 0 ]\n"));
  }

  @Test
  void detailLinesAreGo126Format() {
    Sched s = new Sched(2);
    String[] lines = s.schedtrace(true).split("\n");
    assertTrue(
        Pattern.matches(
            "SCHED \\d+ms: gomaxprocs=2 idleprocs=2 threads=0 spinningthreads=0"
                + " needspinning=0 idlethreads=0 runqueue=0 gcwaiting=false nmidlelocked=0 stopwait=0"
                + " sysmonwait=false",
            lines[0]),
        lines[0]);
    assertEquals(
        "  P0: status=0 schedtick=0 syscalltick=0 m=nil runqsize=0 gfreecnt=0" + " timerslen=0",
        lines[1]);
    assertEquals(
        "  P1: status=0 schedtick=0 syscalltick=0 m=nil runqsize=0 gfreecnt=0" + " timerslen=0",
        lines[2]);
    assertEquals(3, lines.length);
  }

  @Test
  void timeHistogramBucketsAreGos() {
    double[] b = TimeHistogram.boundaries();
    assertEquals(163, b.length);
    assertEquals(Double.NEGATIVE_INFINITY, b[0]);
    assertEquals(0.0, b[1]);
    assertEquals(64e-9, b[2], 1e-18);
    assertEquals(256e-9, b[5], 1e-18);
    assertEquals(320e-9, b[6], 1e-18);
    assertEquals((double) (1L << 47) / 1e9, b[161]);
    assertEquals(Double.POSITIVE_INFINITY, b[162]);
    for (int i = 1; i < b.length; i++) {
      assertTrue(b[i] > b[i - 1], "boundaries ascend at " + i);
    }
    TimeHistogram h = new TimeHistogram();
    long[] samples = {-1, 0, 63, 64, 255, 256, 300, 1_000_000, 10_000_000_000L, 1L << 48};
    for (long d : samples) {
      h.record(d);
    }
    long[] c = h.counts();
    assertEquals(162, c.length);
    assertEquals(1, c[0], "underflow");
    assertEquals(1, c[161], "overflow");
    // Every in-range sample lands in the bucket whose boundaries enclose it.
    for (long d : samples) {
      if (d < 0 || d >= 1L << 47) {
        continue;
      }
      double sec = d / 1e9;
      int k = 1;
      while (!(b[k] <= sec && sec < b[k + 1])) {
        k++;
      }
      assertTrue(c[k] >= 1, "sample " + d + "ns not in bucket [" + b[k] + ", " + b[k + 1] + ")");
    }
    assertEquals(samples.length, java.util.Arrays.stream(c).sum());
  }
}
