package io.gmp4j.exporter;

import io.gmp4j.MetricDescription;
import io.gmp4j.MetricDescription.Kind;
import java.util.Locale;

/**
 * Maps a Go {@code /sched} metric name to its Micrometer name, base unit and tag.
 *
 * <h2>Implementation overview</h2>
 *
 * Micrometer's convention (agent-notes section 5.1; JvmThreadMetrics is the model): lowercase
 * dotted names, the unit as the meter's base unit and never in the name, dimensions as tags.
 * Prometheus then derives its names: snake case, {@code _<unit>} appended unless the name already
 * ends with it, {@code _total} on counters (added by the Prometheus client, which is why no name
 * here ends in "total").
 *
 * <ol>
 *   <li>The rule: {@code gmp} + the Go name before the colon with {@code /} and {@code -} turned
 *       into dots; the unit after the colon becomes the base unit. {@code
 *       /sched/goroutines-created:goroutines} is {@code gmp.sched.goroutines.created} in {@code
 *       goroutines}.
 *   <li>Goroutine states are one meter with a tag: {@code /sched/goroutines/<state>:goroutines}
 *       is {@code gmp.sched.goroutines{state=<state>}}, as {@code jvm.threads.states{state=}}.
 *   <li>Totals are "live", as {@code jvm.threads.live}: {@code /sched/goroutines:goroutines} is
 *       {@code gmp.sched.goroutines.live} (a meter of its own: Prometheus wants one tag set per
 *       name, and a {@code state="total"} would double every {@code sum()}), and {@code
 *       /sched/threads/total:threads} is {@code gmp.sched.threads.live}.
 * </ol>
 *
 * A metric that a later runtime adds is mapped by the rule, so it shows up without a change here.
 * The table in README.md lists every mapping; {@code MetricNamesTest} checks it against this code.
 *
 * @param meterName the Micrometer name
 * @param baseUnit the base unit (Go's unit)
 * @param tagKey the key of the one tag this metric adds, or null
 * @param tagValue its value, or null
 */
record MetricNames(String meterName, String baseUnit, String tagKey, String tagValue) {
  private static final String GOROUTINE_STATES = "/sched/goroutines/";

  /** The mapping of one metric. */
  static MetricNames of(MetricDescription d) {
    String base = d.base();
    String unit = d.unit();
    if (base.startsWith(GOROUTINE_STATES)
        && unit.equals("goroutines")
        && base.indexOf('/', GOROUTINE_STATES.length()) < 0) {
      return new MetricNames(
          "gmp.sched.goroutines", unit, "state", base.substring(GOROUTINE_STATES.length()));
    }
    String name =
        switch (base) {
          case "/sched/goroutines" -> "gmp.sched.goroutines.live";
          case "/sched/threads/total" -> "gmp.sched.threads.live";
          default -> "gmp" + base.replace('/', '.').replace('-', '.').toLowerCase(Locale.ROOT);
        };
    return d.kind() == Kind.PER_P
        ? new MetricNames(name, unit, "p", null)
        : new MetricNames(name, unit, null, null);
  }

  /**
   * The JMX attribute name: the Micrometer name after {@code gmp.sched.} in UpperCamelCase,
   * with the tag value appended ({@code GoroutinesRunning}, {@code GoroutinesNotInGo}).
   */
  String attributeName() {
    String s = meterName.substring("gmp.sched.".length());
    if (tagValue != null) {
      s = s + "." + tagValue;
    }
    StringBuilder b = new StringBuilder();
    boolean up = true;
    for (char c : s.toCharArray()) {
      if (c == '.' || c == '-') {
        up = true;
      } else {
        b.append(up ? Character.toUpperCase(c) : c);
        up = false;
      }
    }
    return b.toString();
  }
}
