package io.gmp4j.agent.trace;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code gmp4j trace <summary|check|perfetto|html> rec.jfr ...}: argument parsing and exit
 * statuses for the trace verbs (the verb itself, {@code io.gmp4j.agent.cli.TraceVerb}, only
 * delegates here, so the analysis classes stay package-private). Exit statuses as {@code
 * Verb}'s: 0 ok, 1 a check failed, 2 bad usage or a bad file (one {@code gmp4j: } line).
 */
public final class TraceCommand {
  private TraceCommand() {}

  static final String USAGE =
      """
      usage: gmp4j trace summary  <rec.jfr> [--json]
             gmp4j trace check    <rec.jfr> <limit>...
             gmp4j trace perfetto <rec.jfr> -o <trace.json> [--split-mb N]
             gmp4j trace html     <rec.jfr> -o <report.html>

      Reads a JFR recording of gmp4j's events (-javaagent:gmp4j-agent.jar=jfr=rec.jfr,
      jfr.settings=detail for every run; the default gmp4j.jfc keeps only runs of 10 ms+).

        summary   go tool trace's goroutine analysis per goroutine group (run time, scheduler
                  wait, block time by reason, syscall time, syscall time after the P was handed
                  off; percentiles), the scheduler-latency distribution and its sources, steals,
                  preemptions and hand-offs per second, per-P utilisation, and the goroutines
                  that ignored preemption. --json: the same as one JSON document.
        check     exit 1 if a limit is broken, naming it and the measured value; exit 0 if all
                  hold; exit 2 if the recording cannot measure one. Limits:
                    --max-sched-latency p50=D,p90=D,p99=D,max=D   (D: 500us, 5ms, 1s)
                    --max-steal-ratio P%          goroutines stolen per scheduling
                    --max-handoffs N              P hand-offs by sysmon, any reason
                    --max-syscall-handoffs N      ... from a goroutine in a syscall
                    --max-preemptions-ignored N   ... from a goroutine that kept its P
                    --min-schedulings N           the recording must hold N schedulings
        perfetto  Chrome trace-event JSON for ui.perfetto.dev or chrome://tracing: one lane per
                  P ("Proc N"), a slice per run, instants for steals, preemption requests,
                  hand-offs and GOMAXPROCS changes, arrows from an unblock to its run, counters.
                  Split into <name>.0.json, <name>.1.json, ... past --split-mb (default 100).
        html      one self-contained page (no network): per-P timeline (zoom with the wheel,
                  drag to pan), scheduler-latency histogram, goroutine table, hand-off list.

      Recordings of 100 MB and more show progress on stderr.
      """;

  /** Runs {@code gmp4j trace args...}; returns the exit status. Any thread. */
  public static int run(List<String> args, PrintStream out, PrintStream err) {
    if (args.contains("--help") || args.contains("-h")) {
      out.print(USAGE);
      return 0;
    }
    if (args.size() < 2) {
      err.println(
          "gmp4j: trace needs a sub-command and a recording, e.g. gmp4j trace summary"
              + " rec.jfr; run gmp4j trace --help");
      return 2;
    }
    String sub = args.get(0);
    Path file = Path.of(args.get(1));
    List<String> rest = args.subList(2, args.size());
    try {
      return switch (sub) {
        case "summary" -> summary(file, rest, out, err);
        case "check" -> check(file, rest, out, err);
        case "perfetto" -> perfetto(file, rest, out, err);
        case "html" -> html(file, rest, out, err);
        default -> {
          err.println(
              "gmp4j: trace: unknown sub-command '"
                  + sub
                  + "' (summary, check, perfetto or html); run gmp4j trace --help");
          yield 2;
        }
      };
    } catch (TraceReader.BadFile e) {
      err.println(e.getMessage());
      return 2;
    } catch (Usage e) {
      err.println(e.getMessage());
      return 2;
    } catch (IOException e) {
      err.println("gmp4j: trace " + sub + ": " + e);
      return 2;
    } catch (OutOfMemoryError e) {
      // every gmp4j event of the file is held at once (see TraceData): about 1.5 GB of heap
      // for a 100 MB recording
      err.println(
          "gmp4j: "
              + file
              + ": too large for this JVM's heap ("
              + Runtime.getRuntime().maxMemory() / (1 << 20)
              + " MB); give it more, e.g."
              + " JAVA_TOOL_OPTIONS=-Xmx4g gmp4j trace "
              + sub
              + " ...");
      return 2;
    }
  }

  private static final class Usage extends Exception {
    Usage(String msg) {
      super(msg);
    }
  }

  static TraceData read(Path file, PrintStream err) throws TraceReader.BadFile {
    return new TraceReader(err, TraceReader.PROGRESS_BYTES).read(file);
  }

  private static int summary(Path file, List<String> rest, PrintStream out, PrintStream err)
      throws TraceReader.BadFile, Usage {
    boolean json = false;
    for (String a : rest) {
      if (a.equals("--json")) {
        json = true;
      } else {
        throw new Usage("gmp4j: trace summary: unknown argument '" + a + "' (only --json)");
      }
    }
    Analysis a = new Analysis(read(file, err));
    if (json) {
      SummaryFormat.json(a, file.toString(), out);
    } else {
      SummaryFormat.text(a, file.toString(), out);
    }
    return 0;
  }

  private static int check(Path file, List<String> rest, PrintStream out, PrintStream err)
      throws TraceReader.BadFile, Usage {
    Check c = new Check();
    try {
      for (int i = 0; i < rest.size(); i++) {
        String opt = rest.get(i);
        String value;
        int eq = opt.indexOf('=');
        if (opt.startsWith("--") && eq > 0 && Check.isLimit(opt.substring(0, eq))) {
          value = opt.substring(eq + 1); // --max-handoffs=0
          opt = opt.substring(0, eq);
        } else if (Check.isLimit(opt)) {
          if (i + 1 == rest.size()) {
            throw new Usage("gmp4j: trace check: " + opt + " needs a value");
          }
          value = rest.get(++i);
        } else {
          throw new Usage(
              "gmp4j: trace check: unknown argument '"
                  + opt
                  + "'; run gmp4j trace --help for the limits");
        }
        c.add(opt, value);
      }
    } catch (Check.BadLimit e) {
      throw new Usage(e.getMessage());
    }
    if (c.limits.isEmpty()) {
      throw new Usage("gmp4j: trace check: no limits given, e.g. --max-sched-latency p99=5ms");
    }
    Analysis a = new Analysis(read(file, err));
    List<Check.Result> results;
    try {
      results = c.run(a);
    } catch (Check.NotRecorded e) {
      err.println(e.getMessage());
      return 2;
    }
    return Check.print(results, file.toString(), out, err) ? 0 : 1;
  }

  /** The value of {@code -o} (or {@code --output}), and the other arguments left. */
  private static Path output(String sub, List<String> rest, List<String> left) throws Usage {
    Path o = null;
    for (int i = 0; i < rest.size(); i++) {
      String a = rest.get(i);
      if (a.equals("-o") || a.equals("--output")) {
        if (i + 1 == rest.size()) {
          throw new Usage("gmp4j: trace " + sub + ": " + a + " needs a file name");
        }
        o = Path.of(rest.get(++i));
      } else {
        left.add(a);
      }
    }
    if (o == null) {
      throw new Usage("gmp4j: trace " + sub + ": -o <file> is required");
    }
    return o;
  }

  private static int perfetto(Path file, List<String> rest, PrintStream out, PrintStream err)
      throws TraceReader.BadFile, Usage, IOException {
    List<String> left = new ArrayList<>();
    Path o = output("perfetto", rest, left);
    long split = Perfetto.SPLIT_BYTES;
    for (int i = 0; i < left.size(); i++) {
      if (left.get(i).equals("--split-mb") && i + 1 < left.size()) {
        try {
          split = Math.max(1, Long.parseLong(left.get(++i))) * 1_000_000L;
        } catch (NumberFormatException e) {
          throw new Usage(
              "gmp4j: trace perfetto: --split-mb " + left.get(i) + ": not a number of MB");
        }
      } else {
        throw new Usage("gmp4j: trace perfetto: unknown argument '" + left.get(i) + "'");
      }
    }
    TraceData d = read(file, err);
    List<Path> parts = new Perfetto(d, split).write(o);
    for (Path p : parts) {
      out.println("wrote " + p + " (" + Files.size(p) + " bytes)");
    }
    return 0;
  }

  private static int html(Path file, List<String> rest, PrintStream out, PrintStream err)
      throws TraceReader.BadFile, Usage, IOException {
    List<String> left = new ArrayList<>();
    Path o = output("html", rest, left);
    if (!left.isEmpty()) {
      throw new Usage("gmp4j: trace html: unknown argument '" + left.get(0) + "'");
    }
    Analysis a = new Analysis(read(file, err));
    try (Writer w = new BufferedWriter(Files.newBufferedWriter(o, StandardCharsets.UTF_8))) {
      new HtmlReport(a, file.getFileName().toString()).write(w);
    }
    out.println("wrote " + o + " (" + Files.size(o) + " bytes)");
    return 0;
  }
}
