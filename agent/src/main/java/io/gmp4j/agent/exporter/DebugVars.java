package io.gmp4j.agent.exporter;

import io.gmp4j.Float64Histogram;
import io.gmp4j.Gmp;
import io.gmp4j.agent.AgentState;
import io.gmp4j.runtime.Hooks;
import java.util.List;
import java.util.Map;

/**
 * The endpoint's {@code /debug/vars}: Go's expvar shape ({@code cmdline} first, then one JSON
 * object per variable), with gmp4j's variables:
 *
 * <pre>
 *   "gmp4j":   the agent's state (how it was installed, the endpoint, the retransformation)
 *   "options": every option: {"value": ..., "source": "start" | "attach" | "default", "from": ...}
 *   "sched":   the /sched metrics that are numbers, by Go's names
 * </pre>
 *
 * For the options that change live the value is the one in effect now, read back from the
 * runtime; a default shows the runtime's value where it has one (gomaxprocs, timeslice, ...),
 * else null. Runs on the gmp4j-exporter thread.
 */
final class DebugVars {
  private DebugVars() {}

  static String json() {
    StringBuilder b = new StringBuilder(4096).append("{\n\"cmdline\": [");
    List<String> args = ProcessHandle.current().info().arguments().map(List::of).orElse(List.of());
    String cmd = ProcessHandle.current().info().command().orElse("java");
    b.append(str(cmd));
    for (String a : args) {
      b.append(", ").append(str(a));
    }
    b.append("],\n\"gmp4j\": {\"agent\": ")
        .append(str(System.getProperty("gmp4j.agent")))
        .append(", \"exporter\": ")
        .append(str(System.getProperty("gmp4j.exporter.url")))
        .append(", \"retransform\": ")
        .append(str(System.getProperty("gmp4j.retransform")))
        .append("},\n\"options\": {");
    Map<String, String> live = Hooks.liveOptions();
    boolean first = true;
    for (Map.Entry<String, String[]> e : AgentState.options().entrySet()) {
      String key = e.getKey();
      String[] v = e.getValue();
      String value = live.containsKey(key) ? live.get(key) : v[0];
      String from =
          key.equals("gomaxprocs") && v[1].equals("default") ? live.get("gomaxprocs.source") : v[2];
      b.append(first ? "\n  " : ",\n  ")
          .append(str(key))
          .append(": {\"value\": ")
          .append(str(value))
          .append(", \"source\": ")
          .append(str(v[1]))
          .append(", \"from\": ")
          .append(str(from))
          .append('}');
      first = false;
    }
    b.append("\n},\n\"sched\": {");
    first = true;
    for (Map.Entry<String, Object> e : Gmp.readMetrics().entrySet()) {
      Object v = e.getValue();
      String n =
          v instanceof Long l
              ? l.toString()
              : v instanceof Float64Histogram h ? Long.toString(h.total()) : null;
      if (n == null) {
        continue;
      }
      b.append(first ? "\n  " : ",\n  ").append(str(e.getKey())).append(": ").append(n);
      first = false;
    }
    return b.append("\n}\n}\n").toString();
  }

  /** A JSON string, or null. */
  private static String str(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
