package io.gmp4j.agent.cli;

import io.gmp4j.agent.cli.Targets.Target;
import io.gmp4j.agent.cli.Targets.TargetException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code gmp4j top <pid> | --url http://127.0.0.1:PORT}: the scheduler live, refreshed once a
 * second, as {@code top} shows processes.
 *
 * <h2>Implementation overview</h2>
 *
 * <ol>
 *   <li>Find the endpoint: {@code --url}, or the target's {@code gmp4j.exporter.url} property.
 *       Without gmp4j or without an endpoint in the target, attach (after asking on a terminal,
 *       or at once with {@code --attach}) with {@code exporter.port} set to a free loopback
 *       port: an install, or a live change on a second attach.
 *   <li>Each refresh reads three pages of the endpoint: {@code /sched} (the metrics),
 *       {@code /debug/schedtrace?detail=1} (per-P state, run queues, which G each M runs) and
 *       {@code /debug/vars} (GOMAXPROCS's source). Rates and the scheduler-latency percentiles
 *       are the differences between two refreshes: the latency histogram's bucket counts, so
 *       p50/p99 cover the last interval only (shown as the bucket's upper bound, as Go's
 *       histograms allow no better).
 *   <li>"Ran longest" is sampled: at each refresh, the G each M runs gets one sample. A G seen
 *       running at every refresh is a CPU hog (or a very busy G).
 *   <li>On a terminal: the screen redrawn with plain ANSI (cursor home, clear); otherwise one
 *       line per refresh, for logs and files.
 * </ol>
 *
 * Rejected: JLine or Lanterna for the screen. top only redraws and never reads keys (Ctrl-C
 * quits), which two escape sequences do; a terminal library would add a megabyte to the agent
 * jar that every application loads.
 */
final class TopVerb implements Verb {
  private static final String CLEAR = "\033[H\033[2J";
  private static final Pattern HIST =
      Pattern.compile("^(\\S+)\\{bucket=\\[([^,]+),([^)]+)\\)\\} (\\d+)$");
  private static final Pattern PER_P = Pattern.compile("^(\\S+)\\{p=(\\d+)\\} (\\d+)$");
  private static final Pattern P_LINE =
      Pattern.compile(
          "^\\s+P(\\d+): status=(\\d+) schedtick=(\\d+) syscalltick=\\d+ m=(\\S+) runqsize=(\\d+)");
  private static final Pattern M_LINE = Pattern.compile("^\\s+M(\\d+): p=(\\S+) curg=(\\S+)");
  private static final Pattern G_SOURCE =
      Pattern.compile(
          "\"gomaxprocs\": \\{\"value\": \"(\\d+)\", \"source\": \"([^\"]*)\", \"from\": "
              + "(?:\"([^\"]*)\"|null)");

  @Override
  public String name() {
    return "top";
  }

  @Override
  public String summary() {
    return "show the scheduler of a JVM live, refreshed once a second";
  }

  @Override
  public int run(List<String> args, PrintStream out, PrintStream err) throws Exception {
    if (args.isEmpty() || args.contains("--help")) {
      (args.isEmpty() ? err : out)
          .println(
              """
          usage: gmp4j top <pid> | --url http://127.0.0.1:PORT [--attach] [--interval=1s]
                           [--count=N] [--plain]
            --attach    load gmp4j, or start its endpoint, without asking
            --count     stop after N refreshes
            --plain     one line per refresh even on a terminal (the default elsewhere)""");
      return args.isEmpty() ? USAGE : OK;
    }
    String url = null;
    String pidArg = null;
    boolean attach = false;
    boolean plain = false;
    long intervalMs = 1000;
    long count = Long.MAX_VALUE;
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      try {
        if (a.equals("--url") && i + 1 < args.size()) {
          url = args.get(++i);
        } else if (a.startsWith("--url=")) {
          url = a.substring(6);
        } else if (a.equals("--attach")) {
          attach = true;
        } else if (a.equals("--plain")) {
          plain = true;
        } else if (a.startsWith("--count=")) {
          count = Long.parseLong(a.substring(8));
        } else if (a.startsWith("--interval=")) {
          String v = a.substring(11);
          intervalMs =
              v.endsWith("ms")
                  ? Long.parseLong(v.substring(0, v.length() - 2))
                  : Long.parseLong(v.replace("s", "")) * 1000;
        } else if (a.startsWith("--") || pidArg != null) {
          err.println("gmp4j: top: unexpected argument " + a + "; gmp4j top --help");
          return USAGE;
        } else {
          pidArg = a;
        }
      } catch (NumberFormatException e) {
        err.println("gmp4j: top: bad number in " + a);
        return USAGE;
      }
    }
    if ((url == null) == (pidArg == null)) {
      err.println("gmp4j: top: give a pid or --url, not both or neither; gmp4j top --help");
      return USAGE;
    }
    String where;
    try {
      if (url == null) {
        long pid = Targets.pid(pidArg);
        url = endpointOf(pid, attach, out, err);
        if (url == null) {
          return USAGE;
        }
        where = "pid " + pid + " " + url;
      } else {
        where = url;
      }
    } catch (TargetException e) {
      err.println(e.getMessage());
      return USAGE;
    }
    boolean terminal = !plain && System.console() != null && System.console().isTerminal();
    return loop(url.replaceAll("/+$", ""), where, terminal, intervalMs, count, out, err);
  }

  /** Step 1: the target's endpoint, attaching if needed and allowed; null after a line. */
  private static String endpointOf(long pid, boolean attach, PrintStream out, PrintStream err)
      throws TargetException, IOException {
    Target t = Targets.attach(pid, true);
    try {
      String url = t.props().getProperty("gmp4j.exporter.url");
      if (url != null) {
        return url;
      }
      String what =
          t.gmp4j() == null
              ? "gmp4j is not in pid " + pid
              : "gmp4j in pid " + pid + " has no endpoint";
      if (!attach) {
        if (System.console() == null || !System.console().isTerminal()) {
          err.println(
              "gmp4j: "
                  + what
                  + "; run gmp4j top --attach "
                  + pid
                  + " to "
                  + (t.gmp4j() == null ? "load it" : "start the endpoint")
                  + " on a free loopback port");
          return null;
        }
        out.print(
            what
                + ". "
                + (t.gmp4j() == null ? "Load it" : "Start its endpoint")
                + " now, on a free loopback port? [y/N] ");
        out.flush();
        String answer = new BufferedReader(new InputStreamReader(System.in)).readLine();
        if (answer == null || !answer.trim().toLowerCase().startsWith("y")) {
          err.println("gmp4j: top: nothing to show without the endpoint");
          return null;
        }
      }
      int port;
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        port = s.getLocalPort();
      }
      AttachVerb.Result r = AttachVerb.load(t, "exporter.port=" + port);
      r.lines().forEach(out::println);
      url = Targets.props(t).getProperty("gmp4j.exporter.url");
      if (url == null) {
        err.println("gmp4j: pid " + pid + " did not start the endpoint (see the lines above)");
      }
      return url;
    } finally {
      t.detach();
    }
  }

  /** Steps 2 to 4. */
  private static int loop(
      String url,
      String where,
      boolean terminal,
      long intervalMs,
      long count,
      PrintStream out,
      PrintStream err)
      throws InterruptedException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
    Sample prev = null;
    Map<Long, Integer> samples = new HashMap<>();
    long refreshes = 0;
    for (long n = 0; n < count; n++) {
      Sample s;
      try {
        s = Sample.read(http, url);
      } catch (IOException e) {
        err.println(
            "gmp4j: top: cannot read "
                + url
                + ": "
                + Targets.oneLine(e)
                + (refreshes > 0 ? " (did the JVM exit?)" : ""));
        return CHECK_FAILED;
      }
      refreshes++;
      for (long g : s.running.values()) {
        samples.merge(g, 1, Integer::sum);
      }
      if (terminal) {
        out.print(CLEAR + screen(where, s, prev, samples, refreshes, intervalMs));
      } else {
        out.println(line(s, prev, samples, intervalMs));
      }
      out.flush();
      prev = s;
      if (n + 1 < count) {
        Thread.sleep(intervalMs);
      }
    }
    return OK;
  }

  /** One refresh of the endpoint. */
  static final class Sample {
    final long nanos = System.nanoTime();
    final Map<String, Long> metrics = new LinkedHashMap<>();
    final TreeMap<Double, Long> latency = new TreeMap<>(); // bucket upper bound -> count
    final List<int[]> ps = new ArrayList<>(); // {id, status, runq, m}
    final List<Long> schedticks = new ArrayList<>();
    final Map<Integer, Long> running = new TreeMap<>(); // M id -> goid of a G it runs with a P
    String gomaxprocsSource = "?";

    static Sample read(HttpClient http, String url) throws IOException, InterruptedException {
      Sample s = new Sample();
      for (String l : get(http, url + "/sched").split("\n")) {
        Matcher h = HIST.matcher(l);
        Matcher p = PER_P.matcher(l);
        if (h.matches()) {
          if (h.group(1).equals("/sched/latencies:seconds")) {
            s.latency.put(parse(h.group(3)), Long.parseLong(h.group(4)));
          }
        } else if (!p.matches()) {
          int sp = l.lastIndexOf(' ');
          if (sp > 0 && !l.contains("{")) {
            try {
              s.metrics.put(l.substring(0, sp), Long.parseLong(l.substring(sp + 1)));
            } catch (NumberFormatException ignored) {
              // not a number: not shown
            }
          }
        }
      }
      for (String l : get(http, url + "/debug/schedtrace?detail=1").split("\n")) {
        Matcher p = P_LINE.matcher(l);
        Matcher m = M_LINE.matcher(l);
        if (p.find()) {
          s.ps.add(
              new int[] {
                Integer.parseInt(p.group(1)),
                Integer.parseInt(p.group(2)),
                Integer.parseInt(p.group(5)),
                p.group(4).equals("nil") ? -1 : Integer.parseInt(p.group(4))
              });
          s.schedticks.add(Long.parseLong(p.group(3)));
        } else if (m.find() && !m.group(2).equals("nil") && !m.group(3).equals("nil")) {
          s.running.put(Integer.parseInt(m.group(1)), Long.parseLong(m.group(3)));
        }
      }
      Matcher g = G_SOURCE.matcher(get(http, url + "/debug/vars"));
      if (g.find()) {
        s.gomaxprocsSource =
            g.group(2) + (g.group(3) == null || g.group(3).isEmpty() ? "" : ": " + g.group(3));
      }
      return s;
    }

    long m(String name) {
      return metrics.getOrDefault(name, 0L);
    }

    private static double parse(String bound) {
      return bound.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(bound);
    }

    private static String get(HttpClient http, String url)
        throws IOException, InterruptedException {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
              HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() != 200) {
        throw new IOException("HTTP " + r.statusCode() + " for " + url);
      }
      return r.body();
    }
  }

  private static final String[] P_STATE = {"idle", "running", "syscall", "gcstop", "dead"};

  private static String screen(
      String where,
      Sample s,
      Sample prev,
      Map<Long, Integer> samples,
      long refreshes,
      long intervalMs) {
    StringBuilder b = new StringBuilder(2048);
    b.append("gmp4j top  ")
        .append(where)
        .append("  ")
        .append(LocalTime.now().format(DateTimeFormatter.ofPattern("HH:mm:ss")))
        .append("  every ")
        .append(intervalMs)
        .append(" ms  (Ctrl-C quits)\n");
    b.append("GOMAXPROCS ")
        .append(s.m("/sched/gomaxprocs:threads"))
        .append("  (")
        .append(s.gomaxprocsSource)
        .append(")  updates ")
        .append(s.m("/sched/gomaxprocs/updates:changes"))
        .append('\n');
    b.append(
        String.format("%-4s %-8s %-28s %12s  %s%n", "P", "state", "run queue", "schedtick", "M"));
    for (int i = 0; i < s.ps.size(); i++) {
      int[] p = s.ps.get(i);
      b.append(
          String.format(
              "P%-3d %-8s %-28s %12d  %s%n",
              p[0],
              p[1] < P_STATE.length ? P_STATE[p[1]] : String.valueOf(p[1]),
              bar(p[2]),
              s.schedticks.get(i),
              p[3] < 0 ? "-" : "m" + p[3]));
    }
    b.append("global run queue ").append(s.m("/sched/runqueue/global:goroutines")).append('\n');
    b.append("threads ")
        .append(s.m("/sched/threads/total:threads"))
        .append(": ")
        .append(runningPs(s))
        .append(" running, ")
        .append(s.m("/sched/threads/idle:threads"))
        .append(" idle, ")
        .append(s.m("/sched/threads/spinning:threads"))
        .append(" spinning, ")
        .append(s.m("/sched/goroutines/not-in-go:goroutines"))
        .append(" in syscall\n");
    b.append("goroutines ")
        .append(s.m("/sched/goroutines:goroutines"))
        .append(": ")
        .append(s.m("/sched/goroutines/running:goroutines"))
        .append(" running, ")
        .append(s.m("/sched/goroutines/runnable:goroutines"))
        .append(" runnable, ")
        .append(s.m("/sched/goroutines/waiting:goroutines"))
        .append(" waiting, ")
        .append(s.m("/sched/goroutines/not-in-go:goroutines"))
        .append(" not in Go\n");
    b.append("scheduler latency (last interval): ").append(latency(s, prev)).append('\n');
    b.append("per second: ").append(rates(s, prev)).append('\n');
    b.append("ran longest (sampled at each refresh, ").append(refreshes).append(" so far):\n");
    List<Map.Entry<Long, Integer>> top = new ArrayList<>(samples.entrySet());
    top.sort((x, y) -> y.getValue() - x.getValue());
    for (Map.Entry<Long, Integer> e : top.subList(0, Math.min(5, top.size()))) {
      String now =
          s.running.entrySet().stream()
              .filter(r -> r.getValue().equals(e.getKey()))
              .map(r -> "running now on m" + r.getKey())
              .findFirst()
              .orElse("");
      b.append(
          String.format(
              "  goroutine %-8d %4d of %d samples  %s%n",
              e.getKey(), e.getValue(), refreshes, now));
    }
    if (top.isEmpty()) {
      b.append("  (no goroutine seen running yet)\n");
    }
    return b.toString();
  }

  private static String line(Sample s, Sample prev, Map<Long, Integer> samples, long intervalMs) {
    StringBuilder q = new StringBuilder("[");
    for (int[] p : s.ps) {
      q.append(q.length() > 1 ? " " : "").append(p[2]);
    }
    q.append(']');
    String longest =
        samples.entrySet().stream()
            .max(Map.Entry.comparingByValue())
            .map(e -> "g" + e.getKey() + "(" + e.getValue() + ")")
            .orElse("-");
    return LocalTime.now().format(DateTimeFormatter.ofPattern("HH:mm:ss"))
        + " gomaxprocs="
        + s.m("/sched/gomaxprocs:threads")
        + " idleprocs="
        + s.m("/sched/procs/idle:procs")
        + " runqueue="
        + s.m("/sched/runqueue/global:goroutines")
        + " "
        + q
        + " threads="
        + s.m("/sched/threads/total:threads")
        + "(running="
        + runningPs(s)
        + " idle="
        + s.m("/sched/threads/idle:threads")
        + " syscall="
        + s.m("/sched/goroutines/not-in-go:goroutines")
        + ")"
        + " goroutines="
        + s.m("/sched/goroutines:goroutines")
        + "(running="
        + s.m("/sched/goroutines/running:goroutines")
        + " runnable="
        + s.m("/sched/goroutines/runnable:goroutines")
        + " waiting="
        + s.m("/sched/goroutines/waiting:goroutines")
        + ")"
        + " "
        + latency(s, prev)
            .replace("p50 <", "lat_p50=")
            .replace("p99 <", "lat_p99=")
            .replaceAll(" \\((\\d+) runs\\)", " runs=$1")
            .replace("p50 -", "lat_p50=-")
            .replace("p99 -", "lat_p99=-")
            .replace(" (no G ran)", "")
        + (prev == null
            ? ""
            : " steals/s="
                + rate(s, prev, "/sched/steals:steals", secs(s, prev))
                + " preempt/s="
                + rate(s, prev, "/sched/preemptions/honored:preemptions", secs(s, prev))
                + " handoffs/s="
                + rate(s, prev, "/sched/preemptions/handoffs:handoffs", secs(s, prev))
                + " syscall_handoffs/s="
                + rate(s, prev, "/sched/syscalls/handoffs:handoffs", secs(s, prev)))
        + " longest="
        + longest;
  }

  private static double secs(Sample s, Sample prev) {
    return Math.max(1e-3, (s.nanos - prev.nanos) / 1e9);
  }

  private static long runningPs(Sample s) {
    return s.ps.stream().filter(p -> p[1] == 1).count();
  }

  /** A run-queue bar: one block per 8 Gs up to 20 blocks (160 Gs), then the number. */
  private static String bar(int n) {
    int blocks = Math.min(20, (n + 7) / 8);
    return "#".repeat(blocks) + ".".repeat(20 - blocks) + " " + n;
  }

  private static String latency(Sample s, Sample prev) {
    if (prev == null) {
      return "p50 - p99 -";
    }
    TreeMap<Double, Long> d = new TreeMap<>();
    long total = 0;
    for (Map.Entry<Double, Long> e : s.latency.entrySet()) {
      long n = e.getValue() - prev.latency.getOrDefault(e.getKey(), 0L);
      if (n > 0) {
        d.put(e.getKey(), n);
        total += n;
      }
    }
    if (total == 0) {
      return "p50 - p99 - (no G ran)";
    }
    return "p50 <"
        + percentile(d, total, 0.50)
        + " p99 <"
        + percentile(d, total, 0.99)
        + " ("
        + total
        + " runs)";
  }

  private static String percentile(TreeMap<Double, Long> d, long total, double q) {
    long want = (long) Math.ceil(total * q);
    long seen = 0;
    for (Map.Entry<Double, Long> e : d.entrySet()) {
      seen += e.getValue();
      if (seen >= want) {
        return seconds(e.getKey());
      }
    }
    return seconds(d.lastKey());
  }

  private static String seconds(double s) {
    if (Double.isInfinite(s)) {
      return "inf";
    }
    if (s < 1e-6) {
      return String.format("%.0fns", s * 1e9);
    }
    if (s < 1e-3) {
      return String.format("%.0fus", s * 1e6);
    }
    if (s < 1) {
      return String.format("%.1fms", s * 1e3);
    }
    return String.format("%.2fs", s);
  }

  private static String rates(Sample s, Sample prev) {
    if (prev == null) {
      return "steals -, preemptions -, hand-offs -";
    }
    double secs = Math.max(1e-3, (s.nanos - prev.nanos) / 1e9);
    return "steals "
        + rate(s, prev, "/sched/steals:steals", secs)
        + ", preemptions "
        + rate(s, prev, "/sched/preemptions/honored:preemptions", secs)
        + " (requested "
        + rate(s, prev, "/sched/preemptions/requested:preemptions", secs)
        + "), hand-offs "
        + rate(s, prev, "/sched/preemptions/handoffs:handoffs", secs)
        + " (syscall "
        + rate(s, prev, "/sched/syscalls/handoffs:handoffs", secs)
        + ")";
  }

  private static long rate(Sample s, Sample prev, String name, double secs) {
    return Math.round((s.m(name) - prev.m(name)) / secs);
  }
}
