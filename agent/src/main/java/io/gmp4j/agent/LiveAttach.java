package io.gmp4j.agent;

import io.gmp4j.agent.exporter.Endpoint;
import io.gmp4j.runtime.Hooks;
import io.gmp4j.runtime.LiveOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/**
 * A second attach into a JVM where gmp4j runs: applies the options that can change live and
 * refuses the others by name.
 *
 * <h2>Implementation overview</h2>
 *
 * <ol>
 *   <li>Parse and validate the attach's arguments alone (the {@code -D} and environment settings
 *       were read at start and are not read again). A bad value changes nothing: one line, result
 *       "failed".
 *   <li>For each argument: a live key ({@link LiveOptions#KEYS} in the runtime, plus {@code
 *       exporter.port} here) whose value differs is applied and recorded with source "attach";
 *       one whose value is already in effect is "unchanged"; any other key is refused by name,
 *       unless it asks for the value already in effect.
 *   <li>One line each for applied, unchanged and refused; result "live", or "refused" when any
 *       key was refused (the live ones are still applied: each option stands alone).
 * </ol>
 *
 * Loaded only after the runtime is on the boot class path (it links to {@code io.gmp4j.runtime}),
 * that is by an attach after an install. Called on the attach thread, a platform thread, so a
 * GOMAXPROCS change stops the world right there.
 */
final class LiveAttach {
  /** The live keys, in the order the lines list them. */
  static final List<String> KEYS;

  static {
    List<String> k = new ArrayList<>(LiveOptions.KEYS);
    k.add("exporter.port");
    KEYS = List.copyOf(k);
  }

  private LiveAttach() {}

  /** Steps 1 to 3; returns the result status. Requires the installer's lock. */
  static String apply(String args) throws ReflectiveOperationException {
    Class<?> config = Class.forName("io.gmp4j.runtime.Config", true, null);
    AgentOptions.Checker checker = AgentOptions.reflective(config);
    AgentOptions parsed;
    try {
      parsed = AgentOptions.parse(args, new Properties(), Map.of(), checker);
    } catch (IllegalArgumentException e) {
      Stderr.line(
          Stderr.message(e).replace("(in the -javaagent argument)", "(in the attach)")
              + "; nothing changed");
      return "failed";
    }
    String since = System.getProperty(AgentState.AGENT, "?");
    Map<String, String> want = parsed.agentArguments();
    if (want.isEmpty()) {
      Stderr.line("gmp4j: already installed (" + since + "); no options given, nothing changed");
      return "live";
    }
    List<String> applied = new ArrayList<>();
    List<String> unchanged = new ArrayList<>();
    List<String> refused = new ArrayList<>();
    for (Map.Entry<String, String> e : want.entrySet()) {
      String key = e.getKey();
      String value = e.getValue();
      if (KEYS.contains(key)) {
        String before = current(key);
        if (Objects.equals(checker.check(key, before), value)) {
          unchanged.add(key + "=" + before);
          continue;
        }
        String line = set(key, value);
        if (line != null) {
          Stderr.line(line);
          continue;
        }
        applied.add(key + "=" + display(value) + " (was " + before + ")");
        AgentState.option(key, value, "attach", "gmp4j attach, live");
      } else if (Objects.equals(AgentState.value(key), value)) {
        unchanged.add(key + "=" + display(value));
      } else {
        refused.add(key);
      }
    }
    Stderr.line(
        "gmp4j: already installed ("
            + since
            + "); "
            + (applied.isEmpty()
                ? "nothing applied"
                : "applied live: " + String.join(", ", applied))
            + (unchanged.isEmpty() ? "" : "; unchanged: " + String.join(", ", unchanged)));
    if (!refused.isEmpty()) {
      Stderr.line(
          "gmp4j: refused "
              + String.join(", ", refused)
              + ": "
              + (refused.size() == 1 ? "it takes" : "they take")
              + " effect only at start"
              + " (-javaagent:gmp4j-agent.jar=...); options that change live: "
              + String.join(", ", KEYS));
    }
    return refused.isEmpty() ? "live" : "refused";
  }

  /** The value in effect for a live key, as a user writes it. */
  private static String current(String key) {
    if (key.equals("exporter.port")) {
      return String.valueOf(Math.max(0, Endpoint.port()));
    }
    return Hooks.liveOptions().get(key);
  }

  /** Applies one live value; returns null, or the line saying why it could not. */
  private static String set(String key, String value) {
    if (!key.equals("exporter.port")) {
      Hooks.setOption(key, value);
      return null;
    }
    Endpoint.stop();
    int port = Integer.parseInt(value);
    String line = port > 0 ? Endpoint.start(System.getProperty("gmp.exporter.host"), port) : null;
    publishExporter();
    return line;
  }

  /** Publishes (or clears) the endpoint's URL for the CLI. Never throws. */
  static void publishExporter() {
    int port = Endpoint.port();
    String host = System.getProperty("gmp.exporter.host");
    if (host == null || host.isBlank() || host.strip().equals("0.0.0.0")) {
      host = "127.0.0.1";
    }
    AgentState.publish(
        AgentState.EXPORTER_URL, port > 0 ? "http://" + host.strip() + ":" + port : null);
  }

  /** The line an attach that installed prints. */
  static String installedLine(Map<String, String> args) {
    Map<String, String> live = Hooks.liveOptions();
    List<String> shown = new ArrayList<>();
    args.forEach((k, v) -> shown.add(k + "=" + display(v)));
    String url = System.getProperty(AgentState.EXPORTER_URL);
    return "gmp4j: installed by attach ("
        + AgentInstaller.version()
        + "): gomaxprocs="
        + live.get("gomaxprocs")
        + " ("
        + live.get("gomaxprocs.source")
        + ")"
        + (shown.isEmpty() ? "" : ", options " + String.join(",", shown))
        + (url == null ? "" : ", endpoint " + url);
  }

  /** A normalised value as a user writes it: 10000000ns → 10ms. */
  static String display(String v) {
    if (v != null
        && v.endsWith("ns")
        && v.length() > 2
        && v.substring(0, v.length() - 2).chars().allMatch(Character::isDigit)) {
      long ns = Long.parseLong(v.substring(0, v.length() - 2));
      return ns % 1_000_000_000L == 0 && ns >= 1_000_000_000L
          ? ns / 1_000_000_000L + "s"
          : ns % 1_000_000 == 0 ? ns / 1_000_000 + "ms" : ns / 1_000 + "us";
    }
    return v;
  }
}
