package io.gmp4j.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gmp4j.runtime.Config;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * AgentOptions against the real {@code io.gmp4j.runtime.Config}, reached the way the agent
 * reaches it: by reflection. Nothing here touches the JVM's own system properties or environment.
 */
class AgentOptionsTest {
  private static final AgentOptions.Checker CONFIG = checker();

  private static AgentOptions.Checker checker() {
    try {
      return AgentOptions.reflective(Config.class);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }

  private static AgentOptions parse(String args, Properties props, Map<String, String> env) {
    return AgentOptions.parse(args, props, env, CONFIG);
  }

  private static Properties props(String... kv) {
    Properties p = new Properties();
    for (int i = 0; i < kv.length; i += 2) {
      p.setProperty(kv[i], kv[i + 1]);
    }
    return p;
  }

  /** The message of the one-line error that parse throws. */
  private static String error(String args, Properties props, Map<String, String> env) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> parse(args, props, env));
    String line = e.getMessage();
    assertTrue(line.startsWith("gmp4j: "), line);
    assertFalse(line.contains("\n") || line.contains("\r"), line);
    return line;
  }

  @Test
  void parsesAgentArgumentsInOrderAndNormalises() {
    AgentOptions o = parse("timeslice=5ms, schedtrace=1000,,scheddetail=1", props(), Map.of());
    assertEquals(
        List.of("timeslice", "schedtrace", "scheddetail"),
        List.copyOf(o.agentArguments().keySet()));
    assertEquals("5000000ns", o.get("timeslice")); // Config.check's normal form
    assertEquals("1000", o.get("schedtrace"));
    assertTrue(o.flag("scheddetail"));
    assertEquals("the -javaagent argument", o.source("timeslice"));
  }

  @Test
  void noArgumentsMeansDefaults() {
    for (String args : new String[] {null, "", " , "}) {
      AgentOptions o = parse(args, props(), Map.of());
      assertTrue(o.agentArguments().isEmpty());
      assertNull(o.get("timeslice"));
      assertNull(o.source("timeslice"));
      assertFalse(o.flag("asyncpreemptoff"));
    }
  }

  @Test
  void agentArgumentBeatsSystemPropertyBeatsEnvironment() {
    Properties p = props("gmp.schedtrace", "2000", "gmp.gomaxprocs", "3");
    Map<String, String> env =
        Map.of("GMPDEBUG", "schedtrace=3000,asyncpreemptoff=1", "GOMAXPROCS", "5");
    AgentOptions o = parse("schedtrace=1000", p, env);
    assertEquals("1000", o.get("schedtrace"));
    assertEquals("the -javaagent argument", o.source("schedtrace"));
    assertEquals("3", o.get("gomaxprocs"));
    assertEquals("-Dgmp.gomaxprocs", o.source("gomaxprocs"));
    assertTrue(o.flag("asyncpreemptoff"));
    assertEquals("GMPDEBUG", o.source("asyncpreemptoff"));

    AgentOptions envOnly = parse(null, props(), env);
    assertEquals("3000", envOnly.get("schedtrace"));
    assertEquals("5", envOnly.get("gomaxprocs"));
    assertEquals("GOMAXPROCS", envOnly.source("gomaxprocs"));
  }

  @Test
  void agentArgumentCanTurnAnEnvironmentFlagOff() {
    AgentOptions o = parse("asyncpreemptoff=0", props(), Map.of("GMPDEBUG", "asyncpreemptoff=1"));
    assertFalse(o.flag("asyncpreemptoff"));
  }

  @Test
  void applyToWritesOnlyAgentArgumentsAsGmpProperties() {
    Properties p = props("gmp.schedtrace", "2000", "gmp.gomaxprocs", "3");
    parse("schedtrace=1000,timeslice=2ms", p, Map.of()).applyTo(p);
    assertEquals("1000", p.getProperty("gmp.schedtrace"));
    assertEquals("2000000ns", p.getProperty("gmp.timeslice"));
    assertEquals("3", p.getProperty("gmp.gomaxprocs"));
    assertEquals(3, p.size());
  }

  @Test
  void unknownAgentKeyNamesItAndListsTheValidKeys() {
    String line = error("foo=1", props(), Map.of());
    assertTrue(line.contains("\"foo\""), line);
    for (String key : Config.keys()) {
      assertTrue(line.contains(key), key + " missing from: " + line);
    }
    assertTrue(line.contains("-javaagent argument"), line);
  }

  @Test
  void itemWithoutEqualsSignIsRejected() {
    String line = error("timeslice", props(), Map.of());
    assertTrue(line.startsWith("gmp4j: bad agent argument \"timeslice\""), line);
    assertTrue(line.contains("gomaxprocs"), line);
    error("=5ms", props(), Map.of());
  }

  @Test
  void badAgentValueIsConfigsMessagePlusItsSource() {
    String line = error("timeslice=abc", props(), Map.of());
    String config =
        assertThrows(IllegalArgumentException.class, () -> Config.check("timeslice", "abc"))
            .getMessage();
    assertEquals(config + " (in the -javaagent argument)", line);
  }

  @Test
  void badSystemPropertyIsRejectedEvenWithoutAgentArguments() {
    String line = error(null, props("gmp.timeslice", "abc"), Map.of());
    assertTrue(line.contains("\"abc\"") && line.endsWith("(in -Dgmp.timeslice)"), line);
  }

  @Test
  void otherGmpPropertiesAreNotOptionsAndAreLeftAlone() {
    AgentOptions o =
        parse(null, props("gmp.randomizeScheduler", "true", "gmp.stress", "4"), Map.of());
    assertTrue(o.agentArguments().isEmpty());
  }

  @Test
  void badGmpdebugItemNamesTheKeysGmpdebugAccepts() {
    String line = error(null, props(), Map.of("GMPDEBUG", "timeslice=5ms"));
    assertTrue(line.startsWith("gmp4j: bad GMPDEBUG item \"timeslice=5ms\""), line);
    assertTrue(line.contains("schedtrace, scheddetail, asyncpreemptoff"), line);
    error(null, props(), Map.of("GMPDEBUG", "schedtrace"));
  }

  @Test
  void badGmpdebugValueNamesGmpdebug() {
    String line = error(null, props(), Map.of("GMPDEBUG", "schedtrace=1000,asyncpreemptoff=2"));
    assertTrue(line.contains("\"2\"") && line.contains("asyncpreemptoff"), line);
    assertTrue(line.endsWith("(in GMPDEBUG)"), line);
  }

  @Test
  void badGomaxprocsEnvironmentVariable() {
    String line = error(null, props(), Map.of("GOMAXPROCS", "0"));
    assertTrue(line.contains("\"0\"") && line.contains("gomaxprocs"), line);
    assertTrue(line.endsWith("(in the GOMAXPROCS environment variable)"), line);
    // Go treats an empty GOMAXPROCS as unset
    assertNull(parse(null, props(), Map.of("GOMAXPROCS", "")).get("gomaxprocs"));
  }

  @Test
  void badValueAnywhereFailsEvenWhenAHigherSourceOverridesIt() {
    // A typo is reported wherever it is, rather than lying in wait for the day the
    // overriding setting is removed.
    error("schedtrace=1000", props(), Map.of("GMPDEBUG", "schedtrace=soon"));
  }

  @Test
  void jfrAndFlightRecorderOptionsAreNormalised() {
    AgentOptions o =
        parse(
            "jfr=/tmp/x.jfr,jfr.settings=detail,flightrecorder=on,"
                + "flightrecorder.maxsize=64m,flightrecorder.latency=50ms,flightrecorder.dir=/tmp,"
                + "flightrecorder.settings=/tmp/my.jfc",
            props(),
            Map.of());
    assertEquals("/tmp/x.jfr", o.get("jfr"));
    assertEquals("detail", o.get("jfr.settings"));
    assertEquals("10000000000ns", o.get("flightrecorder")); // Go's MinAge default
    assertEquals(String.valueOf(64L << 20) + "b", o.get("flightrecorder.maxsize"));
    assertEquals("50000000ns", o.get("flightrecorder.latency"));
    assertEquals("/tmp", o.get("flightrecorder.dir"));
    assertEquals("/tmp/my.jfc", o.get("flightrecorder.settings"));
    assertEquals(
        "30000000000ns", parse("flightrecorder=30s", props(), Map.of()).get("flightrecorder"));
    assertEquals("off", parse("flightrecorder=off", props(), Map.of()).get("flightrecorder"));
    assertEquals(
        "off", parse("flightrecorder.latency=0", props(), Map.of()).get("flightrecorder.latency"));
    for (String size : new String[] {"10MiB", "10mb", "10m", "10485760", "10485760b"}) {
      assertEquals(
          "10485760b",
          parse("flightrecorder.maxsize=" + size, props(), Map.of()).get("flightrecorder.maxsize"),
          size);
    }
    assertEquals(
        "1073741824b",
        parse("flightrecorder.maxsize=1g", props(), Map.of()).get("flightrecorder.maxsize"));
    // -D works for the JFR options as for the others
    assertEquals("/tmp/y.jfr", parse(null, props("gmp.jfr", "/tmp/y.jfr"), Map.of()).get("jfr"));
  }

  @Test
  void badJfrAndFlightRecorderValuesAreOneLineEach() {
    String line = error("flightrecorder=500ms", props(), Map.of());
    assertTrue(
        line.startsWith("gmp4j: bad value \"500ms\" for option flightrecorder: want on"), line);
    line = error("flightrecorder=soon", props(), Map.of());
    assertTrue(
        line.contains("flightrecorder") && line.endsWith("(in the -javaagent argument)"), line);
    for (String size : new String[] {"100k", "10x", "m", "-5m", "99999999999999g", ""}) {
      line = error("flightrecorder.maxsize=" + size, props(), Map.of());
      assertTrue(line.contains("flightrecorder.maxsize: want a size"), line);
    }
    line = error("flightrecorder.latency=fast", props(), Map.of());
    assertTrue(line.contains("flightrecorder.latency"), line);
    line = error("jfr=", props(), Map.of());
    assertTrue(line.contains("for option jfr: want a file"), line);
    line = error(null, props("gmp.flightrecorder.dir", " "), Map.of());
    assertTrue(line.endsWith("(in -Dgmp.flightrecorder.dir)"), line);
  }

  @Test
  void jdkParallelismBecomesGomaxprocsAndSaysSo() {
    AgentOptions o = parse("", props(AgentOptions.JDK_PARALLELISM, "3"), Map.of());
    assertEquals("3", o.get("gomaxprocs"));
    assertEquals(
        "gmp4j: -Djdk.virtualThreadScheduler.parallelism=3 is taken as gomaxprocs=3",
        o.jdkSettingsLine());
    Properties written = props();
    o.applyTo(written);
    assertEquals("3", written.getProperty("gmp.gomaxprocs"));
  }

  @Test
  void gomaxprocsFromAnyGmp4jSourceWinsOverJdkParallelism() {
    Properties jdk = props(AgentOptions.JDK_PARALLELISM, "3");
    AgentOptions env = parse("", jdk, Map.of("GOMAXPROCS", "5"));
    assertEquals("5", env.get("gomaxprocs"));
    assertEquals(
        "gmp4j: -Djdk.virtualThreadScheduler.parallelism=3 is ignored: gomaxprocs=5"
            + " from GOMAXPROCS wins",
        env.jdkSettingsLine());
    Properties written = props();
    env.applyTo(written);
    assertNull(written.getProperty("gmp.gomaxprocs"), "GOMAXPROCS is left to the runtime");
    assertEquals("2", parse("gomaxprocs=2", jdk, Map.of()).get("gomaxprocs"));
    assertEquals(
        "4",
        parse("", props(AgentOptions.JDK_PARALLELISM, "3", "gmp.gomaxprocs", "4"), Map.of())
            .get("gomaxprocs"));
  }

  @Test
  void jdkMaxPoolSizeBoundsThreadsAndQueuesAndCapsParallelism() {
    AgentOptions o =
        parse(
            "",
            props(AgentOptions.JDK_PARALLELISM, "8", AgentOptions.JDK_MAX_POOL_SIZE, "4"),
            Map.of());
    assertEquals("5", o.get("maxthreads"));
    assertEquals("queue", o.get("maxthreads.exceeded"));
    assertEquals("4", o.get("gomaxprocs"));
    assertEquals(
        "gmp4j: -Djdk.virtualThreadScheduler.maxPoolSize=4 is taken as maxthreads=5"
            + " (4 carriers and sysmon), maxthreads.exceeded=queue;"
            + " -Djdk.virtualThreadScheduler.parallelism=8 is taken as gomaxprocs=4"
            + " (at most maxPoolSize, as the JDK does)",
        o.jdkSettingsLine());
    AgentOptions own =
        parse("maxthreads=100", props(AgentOptions.JDK_MAX_POOL_SIZE, "4"), Map.of());
    assertEquals("100", own.get("maxthreads"));
    assertNull(own.get("maxthreads.exceeded"));
    assertTrue(
        own.jdkSettingsLine()
            .startsWith(
                "gmp4j: -Djdk.virtualThreadScheduler.maxPoolSize=4"
                    + " is ignored: maxthreads=100 from the -javaagent argument wins"),
        own.jdkSettingsLine());
  }

  @Test
  void jdkMinRunnableIsIgnoredWithALine() {
    AgentOptions o = parse("", props(AgentOptions.JDK_MIN_RUNNABLE, "2"), Map.of());
    assertNull(o.get("gomaxprocs"));
    assertTrue(o.jdkSettingsLine().contains("minRunnable=2 is ignored"), o.jdkSettingsLine());
    assertNull(parse("", props(), Map.of()).jdkSettingsLine(), "no JDK setting, no line");
  }

  @Test
  void badJdkSettingIsOneLineNamingIt() {
    String line = error("", props(AgentOptions.JDK_PARALLELISM, "many"), Map.of());
    assertTrue(line.contains("\"many\"") && line.contains(AgentOptions.JDK_PARALLELISM), line);
  }

  /**
   * 'Deferred polls by default': 1 s at premain unless set, and off with preempt.cache or
   * preempt.prologue, after an attach, or when set to 0.
   */
  @Test
  void deferralIsOnByDefaultAtPremainOnly() {
    long quiet = DeferredPolls.DEFAULT_QUIET_NANOS;
    assertEquals(quiet, AgentInstaller.defaultDeferNanos(parse("", props(), Map.of()), true));
    assertEquals(0, AgentInstaller.defaultDeferNanos(parse("", props(), Map.of()), false));
    assertEquals(
        0,
        AgentInstaller.defaultDeferNanos(parse("preempt.cache=/tmp/x", props(), Map.of()), true));
    assertEquals(
        0, AgentInstaller.defaultDeferNanos(parse("preempt.prologue=1", props(), Map.of()), true));
    AgentOptions off = parse("preempt.defer=0", props(), Map.of());
    assertEquals("off", off.get("preempt.defer")); // set: the default is not asked
    assertEquals(0, off.nanos("preempt.defer"));
  }
}
