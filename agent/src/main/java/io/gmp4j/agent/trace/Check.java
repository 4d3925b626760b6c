package io.gmp4j.agent.trace;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code gmp4j trace check}: the CI scheduler audit of seed 003, done on what the scheduler
 * recorded rather than on a CPU profile. The seed's script greps {@code go tool pprof -top} for
 * {@code runtime.findrunnable}, a function Go renamed ({@code findRunnable}, 1.19), so its grep
 * finds nothing, the value defaults to 0, and the gate always passes. Here every limit is
 * measured from the recording's own events, and a limit whose events the recording does not
 * hold is an error (exit 2), never a pass: a check that cannot measure must not say "ok".
 *
 * <p>Limits (each may be given more than once; all must hold):
 *
 * <pre>
 *   --max-sched-latency p50=D,p90=D,p99=D,max=D   runnable-to-running wait (D: 500us, 5ms, 1s)
 *   --max-steal-ratio P%                          goroutines stolen per scheduling
 *   --max-handoffs N                              P hand-offs by sysmon, any reason
 *   --max-syscall-handoffs N                      ... of a P left in a syscall
 *   --max-preemptions-ignored N                   ... from a goroutine that kept its P
 *   --min-schedulings N                           the recording must hold this many (guards
 *                                                 against a run that recorded nothing)
 * </pre>
 */
final class Check {
  /** One limit: what it bounds, its option text, and its bound (ns, percent or a count). */
  record Limit(String what, String option, double bound, boolean min) {}

  /** The measured value of a limit, and whether it holds. */
  record Result(Limit limit, double measured, String shown, boolean ok) {}

  /** A limit the user wrote badly; the message is the one line for stderr. */
  static final class BadLimit extends Exception {
    BadLimit(String msg) {
      super(msg);
    }
  }

  /** A limit the recording cannot measure (its events are not in it). */
  static final class NotRecorded extends Exception {
    NotRecorded(String msg) {
      super(msg);
    }
  }

  private static final Pattern DURATION =
      Pattern.compile("([0-9]+(?:\\.[0-9]+)?)\\s*(ns|us|µs|ms|s)");

  final List<Limit> limits = new ArrayList<>();

  /** Adds the limits of one option and its value. */
  void add(String option, String value) throws BadLimit {
    switch (option) {
      case "--max-sched-latency" -> {
        for (String part : value.split(",")) {
          String[] kv = part.split("=", 2);
          if (kv.length != 2 || !List.of("p50", "p90", "p99", "max").contains(kv[0].trim())) {
            throw new BadLimit(
                "gmp4j: --max-sched-latency "
                    + value
                    + ": expected p50=, p90=,"
                    + " p99= or max= with a duration, e.g. p99=5ms");
          }
          limits.add(
              new Limit(
                  "sched-latency " + kv[0].trim(),
                  option + " " + part.trim(),
                  duration(option, kv[1].trim()),
                  false));
        }
      }
      case "--max-steal-ratio" -> {
        String v = value.endsWith("%") ? value.substring(0, value.length() - 1) : value;
        limits.add(new Limit("steal-ratio", option + " " + value, number(option, value, v), false));
      }
      case "--max-handoffs", "--max-syscall-handoffs", "--max-preemptions-ignored" ->
          limits.add(
              new Limit(
                  option.substring("--max-".length()),
                  option + " " + value,
                  count(option, value),
                  false));
      case "--min-schedulings" ->
          limits.add(new Limit("schedulings", option + " " + value, count(option, value), true));
      default ->
          throw new BadLimit(
              "gmp4j: trace check: unknown option " + option + "; run gmp4j trace check --help");
    }
  }

  static boolean isLimit(String option) {
    return List.of(
            "--max-sched-latency",
            "--max-steal-ratio",
            "--max-handoffs",
            "--max-syscall-handoffs",
            "--max-preemptions-ignored",
            "--min-schedulings")
        .contains(option);
  }

  static long duration(String option, String s) throws BadLimit {
    Matcher m = DURATION.matcher(s);
    if (!m.matches()) {
      throw new BadLimit("gmp4j: " + option + " " + s + ": not a duration (e.g. 500us, 5ms, 1s)");
    }
    double v = Double.parseDouble(m.group(1));
    double unit =
        switch (m.group(2)) {
          case "ns" -> 1;
          case "us", "µs" -> 1e3;
          case "ms" -> 1e6;
          default -> 1e9;
        };
    return Math.round(v * unit);
  }

  private static double number(String option, String shown, String s) throws BadLimit {
    try {
      double d = Double.parseDouble(s);
      if (d < 0) {
        throw new NumberFormatException();
      }
      return d;
    } catch (NumberFormatException e) {
      throw new BadLimit("gmp4j: " + option + " " + shown + ": not a percentage (e.g. 15%)");
    }
  }

  private static long count(String option, String s) throws BadLimit {
    try {
      long n = Long.parseLong(s);
      if (n < 0) {
        throw new NumberFormatException();
      }
      return n;
    } catch (NumberFormatException e) {
      throw new BadLimit("gmp4j: " + option + " " + s + ": not a count (0, 1, 2, ...)");
    }
  }

  /** Measures every limit on {@code a}. Throws NotRecorded for one it cannot measure. */
  List<Result> run(Analysis a) throws NotRecorded {
    List<Result> out = new ArrayList<>();
    for (Limit l : limits) {
      double v;
      String shown;
      if (l.what().startsWith("sched-latency")) {
        need(a, "gmp4j.GoRun", l);
        if (a.schedulings == 0) {
          throw new NotRecorded(
              "gmp4j: "
                  + l.option()
                  + ": the recording holds no scheduling"
                  + " (no gmp4j.GoRun after a wait), so there is no latency to check");
        }
        long ns =
            switch (l.what().substring("sched-latency ".length())) {
              case "p50" -> a.latency.p50();
              case "p90" -> a.latency.p90();
              case "p99" -> a.latency.p99();
              default -> a.latency.max();
            };
        v = ns;
        shown = SummaryFormat.dur(ns);
      } else if (l.what().equals("steal-ratio")) {
        need(a, "gmp4j.RunqSteal", l);
        need(a, "gmp4j.GoRun", l);
        v = a.stealRatio();
        shown =
            String.format(
                Locale.ROOT,
                "%.2f%% (%d stolen / %d schedulings)",
                v,
                a.stolenGoroutines,
                a.schedulings);
      } else if (l.what().equals("schedulings")) {
        v = a.schedulings;
        shown = Long.toString(a.schedulings);
      } else {
        need(a, "gmp4j.ProcHandoff", l);
        v =
            switch (l.what()) {
              case "handoffs" -> a.handoffs();
              case "syscall-handoffs" -> a.handoffsByReason.getOrDefault("syscall", 0L);
              default -> a.preemptionsIgnored();
            };
        shown = Long.toString((long) v);
      }
      boolean ok = l.min() ? v >= l.bound() : v <= l.bound();
      out.add(new Result(l, v, shown, ok));
    }
    return out;
  }

  private static void need(Analysis a, String type, Limit l) throws NotRecorded {
    if (!a.data.recorded(type)) {
      throw new NotRecorded(
          "gmp4j: "
              + l.option()
              + " needs "
              + type
              + " events, which this"
              + " recording does not have on; record with jfr.settings=detail");
    }
  }

  /** Prints the results; returns whether all held. */
  static boolean print(List<Result> results, String file, PrintStream out, PrintStream err) {
    int broken = 0;
    out.printf("gmp4j trace check of %s: %d limits%n", file, results.size());
    for (Result r : results) {
      String bound = r.limit().option().substring(r.limit().option().indexOf(' ') + 1);
      out.printf(
          "  %-4s  %-26s %s %s %s%n",
          r.ok() ? "ok" : "FAIL",
          r.limit().what(),
          r.shown(),
          r.ok() ? (r.limit().min() ? ">=" : "<=") : (r.limit().min() ? "<" : ">"),
          bound.contains("=") ? bound.substring(bound.indexOf('=') + 1) : bound);
      if (!r.ok()) {
        broken++;
        err.println(
            "gmp4j: trace check: limit broken: " + r.limit().option() + ", measured " + r.shown());
      }
    }
    if (broken > 0) {
      err.printf(
          "gmp4j: trace check: %d of %d limits broken in %s%n", broken, results.size(), file);
    }
    return broken == 0;
  }
}
