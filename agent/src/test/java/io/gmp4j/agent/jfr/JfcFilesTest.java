package io.gmp4j.agent.jfr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import jdk.jfr.Configuration;
import org.junit.jupiter.api.Test;

/**
 * The shipped settings files, as built into the agent jar's root: each is the running JDK's
 * default.jfc plus gmp4j's events. A JDK whose default.jfc gained an event or changed a value
 * since the build fails here, and a rebuild (which merges again, see agent/pom.xml) fixes it.
 */
class JfcFilesTest {
  /** The event names of the table; the runtime defines the classes. */
  static final List<String> GMP4J_EVENTS =
      List.of(
          "gmp4j.GoCreate",
          "gmp4j.GoRun",
          "gmp4j.GoUnblock",
          "gmp4j.GoSyscall",
          "gmp4j.GoDestroy",
          "gmp4j.RunqSteal",
          "gmp4j.PreemptRequest",
          "gmp4j.ProcHandoff",
          "gmp4j.ProcsChange",
          "gmp4j.ProcIdle",
          "gmp4j.SchedStats");

  private static Map<String, String> settings(String resource) throws Exception {
    try (InputStream in = JfcFilesTest.class.getResourceAsStream("/" + resource)) {
      assertNotNull(in, resource + " is not on the class path (built by exec-maven-plugin)");
      return Configuration.create(new InputStreamReader(in, StandardCharsets.UTF_8)).getSettings();
    }
  }

  private static void extendsDefault(String resource) throws Exception {
    Map<String, String> jdk = Configuration.getConfiguration("default").getSettings();
    Map<String, String> ours = settings(resource);
    Map<String, String> differ = new TreeMap<>();
    for (Map.Entry<String, String> e : jdk.entrySet()) {
      if (!e.getValue().equals(ours.get(e.getKey()))) {
        differ.put(e.getKey(), e.getValue() + " vs " + ours.get(e.getKey()));
      }
    }
    assertTrue(differ.isEmpty(), resource + " differs from the JDK's default.jfc in " + differ);
    for (String key : ours.keySet()) {
      assertTrue(
          jdk.containsKey(key) || key.startsWith("gmp4j."),
          resource + " sets " + key + ", which default.jfc does not");
    }
  }

  private static Map<String, String> gmp4j(Map<String, String> settings) {
    Map<String, String> out = new TreeMap<>();
    settings.forEach(
        (k, v) -> {
          if (k.startsWith("gmp4j.")) {
            out.put(k, v);
          }
        });
    return out;
  }

  @Test
  void gmp4jJfcExtendsTheJdksDefault() throws Exception {
    extendsDefault("gmp4j.jfc");
  }

  @Test
  void gmp4jDetailJfcExtendsTheJdksDefault() throws Exception {
    extendsDefault("gmp4j-detail.jfc");
  }

  @Test
  void gmp4jJfcEnablesTheLowRateEventsOnly() throws Exception {
    Map<String, String> s = gmp4j(settings("gmp4j.jfc"));
    for (String event : GMP4J_EVENTS) {
      assertTrue(s.containsKey(event + "#enabled"), event + " missing in gmp4j.jfc: " + s);
      assertTrue(
          event.equals("gmp4j.SchedStats") // periodic: no stack trace setting
              || "false".equals(s.get(event + "#stackTrace")),
          event + ": " + s);
    }
    for (String on : List.of("SchedStats", "ProcsChange", "ProcHandoff", "GoRun", "GoSyscall")) {
      assertEquals("true", s.get("gmp4j." + on + "#enabled"), on);
    }
    for (String off :
        List.of("GoCreate", "GoUnblock", "GoDestroy", "RunqSteal", "ProcIdle", "PreemptRequest")) {
      assertEquals("false", s.get("gmp4j." + off + "#enabled"), off);
    }
    assertEquals("10 ms", s.get("gmp4j.GoRun#threshold"));
    assertEquals("20 ms", s.get("gmp4j.GoSyscall#threshold"));
    assertEquals("1 s", s.get("gmp4j.SchedStats#period"));
  }

  @Test
  void gmp4jDetailJfcEnablesEveryEventWithoutThreshold() throws Exception {
    Map<String, String> s = gmp4j(settings("gmp4j-detail.jfc"));
    for (String event : GMP4J_EVENTS) {
      assertEquals("true", s.get(event + "#enabled"), event + ": " + s);
      assertTrue(
          event.equals("gmp4j.SchedStats") || "false".equals(s.get(event + "#stackTrace")),
          event + ": " + s);
    }
    s.forEach(
        (k, v) -> {
          if (k.endsWith("#threshold")) {
            assertEquals("0 ms", v, k);
          }
        });
  }
}
