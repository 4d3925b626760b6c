package io.gmp4j.agent;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the agent tells the world about itself: whether it is installed, every option with its
 * value and source, and the result of each attach, published in the target's system properties.
 *
 * <h2>Implementation overview</h2>
 *
 * {@code gmp4j attach} runs in another JVM and needs to know what happened inside this one.
 * {@code agentmain} returns nothing, and the Attach API's {@code loadAgent} reports only an
 * exception that escaped it (AgentInitializationException), which the agent never lets happen
 * ('Never hurt the host'). The target's stderr belongs to the application. What the CLI can read
 * is {@code VirtualMachine.getSystemProperties()}, so the agent writes:
 *
 * <pre>
 *   gmp4j.agent           "0.1.0-SNAPSHOT attach"   installed, and how (-javaagent or attach)
 *   gmp4j.exporter.url    "http://127.0.0.1:9090"   while the endpoint runs
 *   gmp4j.attach.result   "id status\nline\nline"   one per attach: ok, refused or failed
 *   gmp4j.retransform     "running 120/800" or "done gmp4j: ..." (Retransformer)
 * </pre>
 *
 * The CLI sends an {@code attach.id} of its own with the agent arguments and reads back the
 * result with that id, so a result left by an earlier attach is never taken for its own.
 *
 * <p>Rejected: the VM's agent properties (the place the JDK's own agents use, e.g. JDWP's
 * listener address): writing them needs {@code jdk.internal.vm.VMSupport}, one more
 * non-exported package to open in java.base. System properties under {@code gmp4j.} are visible
 * to the application, harmlessly.
 */
public final class AgentState {
  static final String AGENT = "gmp4j.agent";
  static final String EXPORTER_URL = "gmp4j.exporter.url";
  static final String RESULT = "gmp4j.attach.result";
  static final String RETRANSFORM = "gmp4j.retransform";

  /** The key the CLI adds to the agent arguments; never an option. */
  static final String ATTACH_ID = "attach.id";

  private AgentState() {}

  /**
   * Option key → {value, source, detail}. source is start, attach or default; detail says which
   * setting ("-Dgmp.timeslice", "the -javaagent argument", "gmp4j attach"). Written under the
   * class lock by the installer and by live changes; read by /debug/vars.
   */
  private static final Map<String, String[]> OPTIONS = new LinkedHashMap<>();

  /** Records one option. Any thread. */
  static synchronized void option(String key, String value, String source, String detail) {
    OPTIONS.put(key, new String[] {value, source, detail});
  }

  /** A copy of the option table, in key order. Any thread. */
  public static synchronized Map<String, String[]> options() {
    Map<String, String[]> m = new LinkedHashMap<>();
    OPTIONS.forEach((k, v) -> m.put(k, v.clone()));
    return m;
  }

  /** The recorded value of {@code key}, or null. Any thread. */
  static synchronized String value(String key) {
    String[] v = OPTIONS.get(key);
    return v == null ? null : v[0];
  }

  /** Splits {@code attach.id=N} off the agent arguments: {id or null, the rest}. */
  static String[] splitAttachId(String agentArgs) {
    if (agentArgs == null) {
      return new String[] {null, null};
    }
    String id = null;
    List<String> rest = new ArrayList<>();
    for (String item : agentArgs.split(",")) {
      if (item.startsWith(ATTACH_ID + "=")) {
        id = item.substring(ATTACH_ID.length() + 1).trim();
      } else if (!item.isBlank()) {
        rest.add(item);
      }
    }
    return new String[] {id, String.join(",", rest)};
  }

  /** Publishes one attach's result (no-op without an id: not a {@code gmp4j attach}). */
  static void result(String id, String status, List<String> lines) {
    if (id == null) {
      return;
    }
    try {
      System.setProperty(RESULT, id + " " + status + "\n" + String.join("\n", lines));
    } catch (Throwable ignored) {
      // a security manager or a frozen Properties: the CLI reports "no result"
    }
  }

  /** Sets or clears a gmp4j.* property. Never throws. */
  static void publish(String key, String value) {
    try {
      if (value == null) {
        System.clearProperty(key);
      } else {
        System.setProperty(key, value);
      }
    } catch (Throwable ignored) {
      // as in result
    }
  }
}
