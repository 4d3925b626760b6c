package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.AttachWorkload;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code gmp4j attach} into a JVM under load that was started without the agent, and without
 * {@code -XX:+EnableDynamicAgentLoading} (the command must work with JEP 451's warning):
 *
 * <ul>
 *   <li>the attach installs gmp4j with the options given, and retransforms the classes loaded
 *       before it: the hog's class gets polls;
 *   <li>new virtual threads run on {@code gmp-m*};
 *   <li>the hog, whose class was loaded and run before the attach, is time-sliced by its polls
 *       at one P: the 1 ms sleeper beside it keeps waking, preemptions are honoured, and no P is
 *       handed off (preempt.handoff=200ms: only code without polls would reach it; a starved
 *       carrier on a loaded machine does not);
 *   <li>a second attach turns schedtrace on live, and refuses an option that works only at start;
 *   <li>the pipeline of virtual threads that ran across the attach lost and duplicated nothing.
 * </ul>
 */
@Timeout(240)
class AttachIT {
  private static final Duration STEP = Duration.ofSeconds(90);

  @Test
  void attachUnderLoadTimeSlicesTheHogAndTakesLiveOptions() throws Exception {
    try (LiveChild app =
        LiveChild.java(List.of("-Xverify:all"), Map.of(), AttachWorkload.class, "1500")) {
      app.awaitOut(l -> l.startsWith("ready"), STEP);

      LiveChild.Run first =
          LiveChild.gmp4j(
              STEP, "attach", Long.toString(app.pid()), "gomaxprocs=1,preempt.handoff=200ms");
      System.out.println("AttachIT first attach:\n" + first.out());
      assertEquals(0, first.exit(), first + "\n" + app);
      assertTrue(first.out().contains("gmp4j: installed by attach"), first.toString());
      assertTrue(first.out().contains("JEP 451"), first.toString());
      Matcher m =
          Pattern.compile(
                  "gmp4j: retransform: (\\d+) class(?:es)? loaded before the"
                      + " attach, in \\d+ ms: (\\d+) given polls")
              .matcher(first.out());
      assertTrue(m.find(), first.toString());
      assertTrue(Integer.parseInt(m.group(2)) >= 1, first.toString());
      assertTrue(
          app.err().contains("WARNING: A Java agent has been loaded dynamically"), app.toString());

      String hog = app.awaitOut(l -> l.startsWith("hog_done"), STEP);
      System.out.println(
          "AttachIT: "
              + hog
              + "; "
              + app.out()
                  .lines()
                  .filter(l -> l.startsWith("carrier="))
                  .findFirst()
                  .orElse("carrier=?"));
      assertTrue(app.out().contains("carrier=gmp-m"), app.toString());
      long ticks = field(hog, "ticks");
      // At one P, without time slicing the sleeper never wakes while the hog runs (1.5 s). With
      // 10 ms slices it wakes up to ~100 times; ask for a tenth of that on a shared machine.
      assertTrue(ticks >= 10, hog + "\n" + app);
      assertTrue(field(hog, "honored") >= 10, hog + "\n" + app);
      assertEquals(0, field(hog, "handoffs"), hog + "\n" + app);
      assertTrue(
          app.err().lines().noneMatch(l -> ChildJvm.HANDOFF_REPORT.matcher(l).matches()),
          app.toString());

      LiveChild.Run second =
          LiveChild.gmp4j(STEP, "attach", Long.toString(app.pid()), "schedtrace=100");
      System.out.println("AttachIT second attach:\n" + second.out());
      assertEquals(0, second.exit(), second + "\n" + app);
      assertTrue(second.out().contains("applied live: schedtrace=100 (was 0)"), second.toString());
      app.awaitErr(
          l -> l.startsWith("SCHED ") && l.contains("gomaxprocs=1"), Duration.ofSeconds(5));

      LiveChild.Run refused =
          LiveChild.gmp4j(
              STEP, "attach", Long.toString(app.pid()), "preempt.include=com.acme.*,scheddetail=1");
      assertEquals(1, refused.exit(), refused.toString());
      assertTrue(refused.out().contains("applied live: scheddetail=1 (was 0)"), refused.toString());
      assertTrue(
          refused
              .out()
              .contains("gmp4j: refused preempt.include: it takes effect only at" + " start"),
          refused.toString());

      app.send("finish");
      assertEquals(0, app.waitFor(STEP), app.toString());
      long produced = Long.parseLong(value(app.out(), "produced"));
      assertTrue(produced > 100, app.toString());
      assertEquals(produced, Long.parseLong(value(app.out(), "consumed")), app.toString());
      assertEquals(produced, Long.parseLong(value(app.out(), "distinct")), app.toString());
      assertEquals(0, Long.parseLong(value(app.out(), "duplicates")), app.toString());
    }
  }

  /** {@code name=N} in a line of {@code k=v} words. */
  static long field(String line, String name) {
    Matcher m = Pattern.compile("\\b" + Pattern.quote(name) + "=(-?\\d+)").matcher(line);
    if (!m.find()) {
      throw new AssertionError("no " + name + " in " + line);
    }
    return Long.parseLong(m.group(1));
  }

  /** The value of the stdout line {@code key=value}. */
  static String value(String out, String key) {
    return out.lines()
        .filter(l -> l.startsWith(key + "="))
        .map(l -> l.substring(key.length() + 1))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + key + "= in\n" + out));
  }
}
