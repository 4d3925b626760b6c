package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.apps.CustomSchedulerChild;
import example.apps.JitDirectiveProbe;
import example.apps.JmxProbe;
import example.apps.JmxWatch;
import example.apps.Unmodified;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The agent on an unmodified program: every virtual thread runs on gmp4j; schedtrace output;
 * and every bad option prints one line while the program runs on the JDK's scheduler.
 */
@Timeout(120)
class AgentIT {
  private static final Duration LIMIT = Duration.ofSeconds(60);

  @Test
  void unmodifiedProgramRunsOnGmp4j() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("", Unmodified.class, LIMIT);
    assertEquals(0, r.exit(), r.toString());
    for (String key : List.of("executor", "ofVirtual", "startVirtualThread", "nested")) {
      assertTrue(r.value(key) != null && r.value(key).startsWith("gmp-m"), key + ": " + r);
    }
    assertEquals(List.of(), r.notes(), "no warning expected: " + r);
    assertEquals(List.of(), r.leftFiles(), r.toString());
  }

  /**
   * 'JIT directive' (the agent's JitDirective): C2 is kept off the poll injector where C1 takes
   * over, does not inline it into the class-loading path, and C1 is left alone.
   */
  @Test
  void jitDirectiveKeepsC2OffTheInjector() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("inittrace=1", JitDirectiveProbe.class, LIMIT);
    assertEquals(0, r.exit(), r.toString());
    assertEquals("true", r.value("directive"), r.toString());
    assertEquals("true", r.value("c2Excluded"), r.toString());
    assertEquals("false", r.value("c1Excluded"), r.toString());
    assertEquals("true", r.value("c2NoInline"), r.toString());
    assertEquals("false", r.value("c1NoInline"), r.toString());
    assertTrue(r.err().contains("C2 kept off the poll injector"), r.toString());
    assertEquals(List.of(), r.leftFiles(), r.toString());
  }

  /**
   * 'Registered when the server starts' (the agent's Exporters): the agent's start leaves the
   * platform MBean server unstarted, and the MXBean is in it as soon as the application starts
   * it. Neither the JIT directive nor the registration may start it, and the directive's route
   * around it opens nothing to the application.
   */
  @Test
  void mxBeanWaitsForThePlatformMBeanServer() throws Exception {
    ChildJvm.Result r =
        ChildJvm.run(
            List.of(
                "-Xverify:all",
                "--add-opens=java.management/java.lang.management=ALL-UNNAMED",
                ChildJvm.javaagent("gomaxprocs=3,inittrace=1")),
            Map.of(),
            JmxProbe.class,
            LIMIT);
    assertEquals(0, r.exit(), r.toString());
    assertEquals("false", r.value("serverAtStart"), r.toString());
    assertEquals("false", r.value("internalsOpenToApp"), r.toString());
    assertEquals("true", r.value("registered"), r.toString());
    assertEquals("3", r.value("gomaxprocs"), r.toString());
    assertTrue(r.err().contains("C2 kept off the poll injector"), r.toString());
    assertEquals(List.of(), r.leftFiles(), r.toString());
  }

  /**
   * The same for a client from outside: {@code jcmd ManagementAgent.start_local}, what JConsole
   * runs to connect, starts the server on its own thread, and the MXBean is in it by then.
   */
  @Test
  void mxBeanIsInTheServerThatJcmdStarts() throws Exception {
    try (LiveChild child =
        LiveChild.java(
            List.of(
                "-Xverify:all",
                "--add-opens=java.management/java.lang.management=ALL-UNNAMED",
                ChildJvm.javaagent("")),
            Map.of(),
            JmxWatch.class)) {
      child.awaitOut("ready"::equals, Duration.ofSeconds(30));
      child.send("jcmd"); // JmxWatch's 20 s start
      String said = jcmdStartLocal(child.pid());
      String line = child.awaitOut(l -> l.startsWith("registered="), Duration.ofSeconds(30));
      assertEquals("registered=true", line, said + "\n" + child.out() + child.err());
    }
  }

  /**
   * An attach into a JVM whose platform MBean server is not up leaves it so (the agent's own
   * start-up threads do not start it), and the MXBean is in the server that a later {@code jcmd
   * ManagementAgent.start_local} starts. With the eager registration of before, the server came
   * up within half a second of the attach.
   */
  @Test
  void afterAnAttachTheMxBeanWaitsForTheServerToo() throws Exception {
    try (LiveChild child =
        LiveChild.java(
            List.of("-Xverify:all", "--add-opens=java.management/java.lang.management=ALL-UNNAMED"),
            Map.of(),
            JmxWatch.class)) {
      child.awaitOut("ready"::equals, Duration.ofSeconds(30));
      LiveChild.Run attach =
          LiveChild.gmp4j(Duration.ofSeconds(60), "attach", Long.toString(child.pid()), "");
      assertEquals(0, attach.exit(), attach + "\n" + child.out() + child.err());
      assertTrue(attach.out().contains("gmp4j: installed by attach"), attach.toString());
      Thread.sleep(2_000);
      assertTrue(
          !child.out().contains("registered="),
          "the attach started the MBean server:\n" + child.out() + child.err());
      child.send("jcmd"); // JmxWatch's 20 s start here, not at its ready
      String said = jcmdStartLocal(child.pid());
      String line = child.awaitOut(l -> l.startsWith("registered="), Duration.ofSeconds(30));
      assertEquals("registered=true", line, said + "\n" + child.out() + child.err());
    }
  }

  /** {@code jcmd <pid> ManagementAgent.start_local}, what JConsole runs to connect. */
  private static String jcmdStartLocal(long pid) throws Exception {
    Process jcmd =
        new ProcessBuilder(
                ChildJvm.JAVA.resolveSibling("jcmd").toString(),
                Long.toString(pid),
                "ManagementAgent.start_local")
            .redirectErrorStream(true)
            .start();
    String said = new String(jcmd.getInputStream().readAllBytes());
    assertTrue(jcmd.waitFor(30, TimeUnit.SECONDS), "jcmd hangs: " + said);
    assertEquals(0, jcmd.exitValue(), said);
    return said;
  }

  /** Where C2 is the only compiler, excluding it would leave the injector interpreted. */
  @Test
  void jitDirectiveNotPushedWithoutTieredCompilation() throws Exception {
    ChildJvm.Result r =
        ChildJvm.run(
            List.of("-XX:-TieredCompilation", ChildJvm.javaagent("inittrace=1")),
            Map.of(),
            JitDirectiveProbe.class,
            LIMIT);
    assertEquals(0, r.exit(), r.toString());
    assertEquals("false", r.value("directive"), r.toString());
    assertTrue(
        r.err().contains("the poll injector keeps C2: -XX:-TieredCompilation"), r.toString());
  }

  @Test
  void jitDirectiveOffWithPreemptJitC2() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("preempt.jit=c2", JitDirectiveProbe.class, LIMIT);
    assertEquals(0, r.exit(), r.toString());
    assertEquals("false", r.value("directive"), r.toString());
    assertEquals(List.of(), r.notes(), r.toString());
  }

  /**
   * The extracted runtime jar is gone once it is on the boot class path, so a JVM that ends
   * without its exit hooks (halt, a fatal error, a kill) leaves nothing in the temporary folder.
   */
  @Test
  void haltedProgramLeavesNoFileBehind() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("", Unmodified.class, LIMIT, "halt");
    assertEquals(0, r.exit(), r.toString());
    assertEquals("true", r.value("done"), r.toString());
    assertTrue(r.value("nested").startsWith("gmp-m"), r.toString());
    assertEquals(List.of(), r.leftFiles(), r.toString());
  }

  /**
   * JDK 25 gives a virtual thread created by a virtual thread its creator's scheduler: gmp4j
   * takes only the threads the JDK would put on its default pool (issue 9, the JDK's
   * CustomScheduler.testCustomScheduler3).
   */
  @Test
  void childOfCustomSchedulerKeepsItsScheduler() throws Exception {
    ChildJvm.Result r =
        ChildJvm.run(
            List.of(
                "-Xverify:all",
                "-javaagent:" + ChildJvm.AGENT,
                "--add-opens",
                "java.base/java.lang=ALL-UNNAMED"),
            Map.of(),
            CustomSchedulerChild.class,
            LIMIT);
    assertEquals(0, r.exit(), r.toString());
    assertEquals("true", r.value("done"), r.toString());
    assertEquals("custom-carrier", r.value("parent"), r.toString());
    assertEquals("true", r.value("childInherits"), r.toString());
    assertEquals("custom-carrier", r.value("child"), r.toString());
    assertTrue(r.value("fromPlatform").startsWith("gmp-m"), r.toString());
    assertTrue(r.value("fromDefault").startsWith("gmp-m"), r.toString());
    assertEquals(List.of(), r.notes(), "no warning expected: " + r);
  }

  @Test
  void schedtraceOptionPrintsGoLines() throws Exception {
    ChildJvm.Result r = ChildJvm.withAgent("schedtrace=50,scheddetail=1", Unmodified.class, LIMIT);
    assertEquals(0, r.exit(), r.toString());
    assertTrue(
        Pattern.compile(
                "(?m)^SCHED \\d+ms: gomaxprocs=\\d+ idleprocs=\\d+ threads=\\d+ "
                    + "spinningthreads=\\d+ needspinning=\\d idlethreads=\\d+ runqueue=\\d+ gcwaiting=")
            .matcher(r.err())
            .find(),
        r.toString());
    assertTrue(Pattern.compile("(?m)^  P0: status=\\d").matcher(r.err()).find(), r.toString());
  }

  @Test
  void gmpdebugSchedtraceWithoutDetail() throws Exception {
    ChildJvm.Result r =
        ChildJvm.run(
            List.of("-javaagent:" + ChildJvm.AGENT),
            Map.of("GMPDEBUG", "schedtrace=50"),
            Unmodified.class,
            LIMIT);
    assertEquals(0, r.exit(), r.toString());
    assertTrue(
        Pattern.compile("(?m)^SCHED \\d+ms: gomaxprocs=\\d+ .* schedticks=\\[ [0-9 ]+\\]$")
            .matcher(r.err())
            .find(),
        r.toString());
  }

  /** The JDK's scheduler settings mean something under gmp4j, and one line says what. */
  @Test
  void jdkSchedulerSettingsAreMappedWithOneLine() throws Exception {
    ChildJvm.Result r =
        ChildJvm.run(
            List.of(
                "-Xverify:all",
                "-Djdk.virtualThreadScheduler.parallelism=1",
                "-Djdk.virtualThreadScheduler.maxPoolSize=7",
                "-javaagent:" + ChildJvm.AGENT + "=schedtrace=50"),
            Map.of(),
            Unmodified.class,
            LIMIT);
    assertEquals(0, r.exit(), r.toString());
    assertEquals("true", r.value("done"), r.toString());
    assertEquals(
        List.of(
            "gmp4j: -Djdk.virtualThreadScheduler.maxPoolSize=7 is taken as"
                + " maxthreads=8 (7 carriers and sysmon), maxthreads.exceeded=queue;"
                + " -Djdk.virtualThreadScheduler.parallelism=1 is taken as gomaxprocs=1"),
        r.notes(),
        r.toString());
    assertTrue(
        Pattern.compile("(?m)^SCHED \\d+ms: gomaxprocs=1 ").matcher(r.err()).find(), r.toString());
    assertTrue(r.value("executor").startsWith("gmp-m"), r.toString());
  }

  /** Fail open: one line naming the problem, and the program still runs, on the JDK's pool. */
  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "foo=1|           |                  |foo",
        "timeslice=abc|   |                  |abc",
        "gomaxprocs=0|    |                  |gomaxprocs",
        "schedtrace=-1|   |                  |schedtrace",
        "preempt.handoff=fast| |               |fast",
        "|                -Dgmp.timeslice=xyz|  |xyz",
        "|                |                  GMPDEBUG=bogus|bogus",
      })
  void badOptionPrintsOneLineAndTheProgramRuns(
      String agentOpts, String sysprop, String env, String named) throws Exception {
    String agent =
        "-javaagent:" + ChildJvm.AGENT + (agentOpts == null ? "" : "=" + agentOpts.trim());
    List<String> jvm = sysprop == null ? List.of(agent) : List.of(sysprop.trim(), agent);
    Map<String, String> envs =
        env == null ? Map.of() : Map.of(env.trim().split("=")[0], env.trim().split("=", 2)[1]);
    ChildJvm.Result r = ChildJvm.run(jvm, envs, Unmodified.class, LIMIT);
    assertEquals(0, r.exit(), r.toString());
    assertEquals("true", r.value("done"), r.toString());
    List<String> lines = r.err().lines().filter(l -> l.startsWith("gmp4j:")).toList();
    assertEquals(1, lines.size(), "exactly one gmp4j line: " + r);
    assertTrue(lines.get(0).contains(named.trim()), "the line names " + named + ": " + r);
    assertTrue(r.value("executor").startsWith("ForkJoinPool"), "default scheduler: " + r);
    assertEquals(List.of(), r.leftFiles(), r.toString());
  }
}
