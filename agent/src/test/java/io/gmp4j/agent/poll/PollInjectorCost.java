package io.gmp4j.agent.poll;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * What {@link FrameCheck} costs class loading ('Cost' in FrameCheck, BENCHMARKS.md 'Poll injector
 * frame check'): transforms every class of each jar given, with and without the check, and prints
 * the median thread CPU time of several passes. A plain program, not a test: it runs for tens of
 * seconds.
 *
 * <pre>
 * ./mvn25 -B -q -pl agent -am test-compile -DskipRandomized
 * java -cp agent/target/classes:agent/target/test-classes:BYTE_BUDDY_JAR \
 *     io.gmp4j.agent.poll.PollInjectorCost 15 ecj-3.33.0.jar scala-library-2.13.16.jar
 * </pre>
 */
final class PollInjectorCost {
  private PollInjectorCost() {}

  public static void main(String[] args) {
    int passes = Integer.parseInt(args[0]);
    for (String jar : Arrays.copyOfRange(args, 1, args.length)) {
      Map<String, byte[]> classes = TestClasses.jar(Path.of(jar));
      List<String> names = new ArrayList<>(classes.keySet());
      List<byte[]> bytes = new ArrayList<>(classes.values());
      PollInjector on = new PollInjector(null, null, false, true);
      PollInjector off = new PollInjector(null, null, false, false);
      long[] withCheck = new long[passes];
      long[] without = new long[passes];
      int rewritten = 0;
      int failed = 0;
      for (int p = -3; p < passes; p++) { // 3 warm-up passes, then alternate to share the noise
        long t0 = cpu();
        int r = pass(off, names, bytes)[0];
        long t1 = cpu();
        int[] checked = pass(on, names, bytes);
        long t2 = cpu();
        if (p >= 0) {
          without[p] = t1 - t0;
          withCheck[p] = t2 - t1;
        }
        rewritten = r;
        failed = checked[1];
      }
      long a = median(without);
      long b = median(withCheck);
      int n = names.size();
      System.out.printf(
          "%s: %d classes, %d rewritten, %d failed the check%n"
              + "  without check: %7.1f ms a pass, %6.1f us a class, %7.0f classes/s%n"
              + "  with check:    %7.1f ms a pass, %6.1f us a class, %7.0f classes/s%n"
              + "  check: +%.1f ms a pass (+%.0f%%), %.1f us a class, %.1f us a rewritten class%n",
          Path.of(jar).getFileName(),
          n,
          rewritten,
          failed,
          a / 1e6,
          a / 1e3 / n,
          n / (a / 1e9),
          b / 1e6,
          b / 1e3 / n,
          n / (b / 1e9),
          (b - a) / 1e6,
          100.0 * (b - a) / a,
          (b - a) / 1e3 / n,
          (b - a) / 1e3 / rewritten);
    }
  }

  /** {rewritten classes, classes that threw FrameCheckException}. */
  private static int[] pass(PollInjector injector, List<String> names, List<byte[]> bytes) {
    int rewritten = 0;
    int failed = 0;
    for (int i = 0; i < names.size(); i++) {
      try {
        rewritten += injector.transform(null, names.get(i), bytes.get(i)) == null ? 0 : 1;
      } catch (FrameCheckException e) {
        failed++;
      }
    }
    return new int[] {rewritten, failed};
  }

  /**
   * CPU time of this thread: on a shared machine (2 cores, load 10-20 while measured) wall time
   * varied 10x from pass to pass, and the transform is single-threaded.
   */
  private static long cpu() {
    return ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
  }

  private static long median(long[] t) {
    long[] s = t.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }
}
