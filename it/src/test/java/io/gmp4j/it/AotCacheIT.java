package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.AotCacheHog;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent and a JDK AOT cache ({@code -XX:AOTCache}, JEP 483 and 514): with the cache, the JVM
 * loads and links every class the cache holds before the agent's premain runs, so the
 * ClassFileLoadHook never sees them. Before, such an application ran with the agent's scheduler
 * and none of its polls: on issue 17's Spring Boot app the injector was handed 11 classes in all,
 * 2,856 Spring classes having loaded before premain. Now premain finds them and retransforms them
 * in the background, as after an attach ('Classes loaded before premain' in AgentInstaller).
 *
 * <p>The cache is made the way README's 'With a JDK AOT cache' says: trained and created without
 * the agent, with {@code --add-modules java.instrument} (the module an agent adds; without it the
 * JVM refuses the cache when the agent is there), from a jar (a class-path directory disables
 * the cache). Then {@link AotCacheHog} runs from it with the agent at one P, and the test checks
 * that the hog's class came from the cache, that the agent said so and retransformed it, and
 * that the hog was time-sliced by its polls: the 1 ms sleeper beside it ticks, preemptions are
 * honoured and nothing is handed off. Before this change the program waited for a
 * retransformation that never came and exited 4.
 */
@Timeout(300)
class AotCacheIT {
  private static final Duration LIMIT = Duration.ofSeconds(90);

  private static final Pattern SUMMARY =
      Pattern.compile(
          "gmp4j: retransform: (\\d+) class(?:es)? loaded before the agent, in \\d+ ms:"
              + " (\\d+) given polls");

  @Test
  void classesLoadedFromAnAotCacheGetTheirPolls(@TempDir Path dir) throws Exception {
    Path jar = dir.resolve("app.jar");
    Path classes =
        Path.of(AotCacheHog.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    jarOf(jar, classes, "example/apps");
    Path conf = dir.resolve("app.aotconf");
    Path aot = dir.resolve("app.aot");
    List<String> dump =
        List.of("-Xverify:all", "--add-modules", "java.instrument", "-cp", jar.toString());

    ChildJvm.Result train =
        ChildJvm.run(
            concat(dump, "-XX:AOTMode=record", "-XX:AOTConfiguration=" + conf),
            Map.of(),
            AotCacheHog.class,
            LIMIT,
            "train");
    assertEquals(0, train.exit(), train.toString());
    ChildJvm.Result create =
        ChildJvm.run(
            concat(
                dump, "-XX:AOTMode=create", "-XX:AOTConfiguration=" + conf, "-XX:AOTCache=" + aot),
            Map.of(),
            AotCacheHog.class,
            LIMIT);
    assertEquals(0, create.exit(), create.toString());
    assertTrue(Files.size(aot) > 0, create.toString());

    Path classLog = dir.resolve("class-load.log");
    ChildJvm.Result r =
        ChildJvm.run(
            List.of(
                "-Xverify:all",
                "-XX:AOTCache=" + aot,
                "-Xlog:class+load=info:file=" + classLog,
                ChildJvm.javaagent("gomaxprocs=1,preempt.handoff=200ms,preempt.report=1"),
                "-cp",
                jar.toString()),
            Map.of(),
            AotCacheHog.class,
            LIMIT,
            "run",
            "1500");
    assertEquals(0, r.exit(), r.toString());
    // The condition this test is about: the hog's class came from the cache, not its jar.
    String loads = Files.readString(classLog);
    assertTrue(
        loads.contains("example.apps.AttachWorkload$Hog source: shared objects file"),
        "the hog's class was not loaded from the AOT cache:\n"
            + loads.lines().filter(l -> l.contains("example.apps")).toList()
            + "\n"
            + r);

    assertTrue(r.err().contains("loaded before the agent (by an AOT cache"), r.toString());
    Matcher m = SUMMARY.matcher(r.err());
    assertTrue(m.find(), r.toString());
    assertTrue(Integer.parseInt(m.group(2)) >= 1, m.group() + "\n" + r); // the hog's class at least
    String hog = r.out().lines().filter(l -> l.startsWith("hog_done")).findFirst().orElse("");
    System.out.println("AotCacheIT: " + m.group() + "\n  " + hog);
    assertTrue(AttachIT.field(hog, "ticks") >= 10, hog + "\n" + r);
    assertTrue(AttachIT.field(hog, "honored") >= 10, hog + "\n" + r);
    assertEquals(0, AttachIT.field(hog, "handoffs"), hog + "\n" + r);
  }

  /** Writes {@code jar} with the classes under {@code root/dir}, with the JDK's jar tool. */
  private static void jarOf(Path jar, Path root, String dir) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8);
    int rc =
        ToolProvider.findFirst("jar")
            .orElseThrow()
            .run(ps, ps, "--create", "--file", jar.toString(), "-C", root.toString(), dir);
    assertEquals(0, rc, "jar: " + out.toString(StandardCharsets.UTF_8));
  }

  private static List<String> concat(List<String> head, String... tail) {
    List<String> all = new ArrayList<>(head);
    all.addAll(List.of(tail));
    return all;
  }
}
