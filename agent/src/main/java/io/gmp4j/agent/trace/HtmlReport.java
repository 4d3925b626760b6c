package io.gmp4j.agent.trace;

import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code gmp4j trace html}: one self-contained page for people who would rather look than read.
 * Inline SVG drawn here, a few lines of inline script for zooming, nothing fetched: the page's
 * Content-Security-Policy is {@code default-src 'none'}, so a browser refuses any request it
 * would make, and TraceToolIT checks with Chromium's net log that it makes none.
 *
 * <h2>Implementation overview: 'Report page'</h2>
 *
 * <ol>
 *   <li>Header: the window, GOMAXPROCS, counts, the latency percentiles.
 *   <li>Timeline: one lane per P ({@code <g class="lane" data-p="N">}, "Proc N" as in {@code go
 *       tool trace}), a rect per run coloured by goroutine group (the groups a golden angle
 *       apart in hue, in the table's order), grey syscall rects until the P was
 *       handed off, red marks for hand-offs and a line per GOMAXPROCS change. Times map to
 *       0..{@link #WIDTH} user units; the script zooms by changing the SVG's viewBox (wheel:
 *       zoom at the pointer; drag: pan; double-click: all) and redraws the time axis.
 *       Above {@link #MAX_RECTS} runs, neighbouring runs of a lane closer than one
 *       {@code MAX_RECTS}-th of the window merge into one rect that says how many it holds,
 *       which keeps a large recording's page loadable.
 *   <li>Scheduler-latency histogram: 1-2-5 buckets from 1 us to 1 s, bar height on a log scale
 *       (counts span five decades in a normal recording), the count above each bar.
 *   <li>Tables: goroutine groups, top runners, latency sources, hand-offs (with the frames of
 *       the goroutines that ignored preemption).
 * </ol>
 *
 * Rejected: a canvas drawn by script from embedded JSON. It scales further, but the page then
 * shows nothing without script, and a test cannot count lanes in the DOM.
 */
final class HtmlReport {
  /** The timeline's width in SVG user units: times map onto 0..WIDTH. */
  static final double WIDTH = 10_000;

  static final int MAX_RECTS = 40_000;
  static final int LANE = 22;
  static final int GAP = 4;

  private final Analysis a;
  private final TraceData d;
  private final String title;

  HtmlReport(Analysis a, String title) {
    this.a = a;
    this.d = a.data;
    this.title = title;
  }

  void write(Writer w) throws IOException {
    StringBuilder sb = new StringBuilder(1 << 16);
    sb.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
        .append(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"
                + " style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n")
        .append("<title>gmp4j trace: ")
        .append(esc(title))
        .append("</title>\n<style>")
        .append(CSS)
        .append("</style></head><body>\n");
    header(sb);
    w.write(sb.toString());
    sb.setLength(0);
    timeline(sb, w);
    histogram(sb);
    tables(sb);
    sb.append("<script>").append(SCRIPT).append("</script>\n</body></html>\n");
    w.write(sb.toString());
  }

  private static final String CSS =
      """
      body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222}
      h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:18px 0 6px}
      .meta{color:#555}.warn{color:#a40}
      table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;border-bottom:1px solid #eee;
      text-align:right;white-space:nowrap}th{background:#f4f4f4}td.l,th.l{text-align:left}
      #tlbox{display:flex;border:1px solid #ccc;user-select:none}
      #labels{flex:none;width:70px;background:#fafafa}#tlwrap{flex:1;overflow:hidden;cursor:grab}
      #tl{display:block;width:100%}#axis{display:block;width:100%;height:18px}
      .hint{color:#777;font-size:11px}pre{margin:0;font-size:11px;color:#444}
      """;

  private void header(StringBuilder sb) {
    Analysis.Dist l = a.latency;
    sb.append("<h1>gmp4j trace: ")
        .append(esc(title))
        .append("</h1>\n<div class=\"meta\">")
        .append("window ")
        .append(SummaryFormat.dur(d.span()))
        .append(", GOMAXPROCS ")
        .append(esc(a.gomaxprocs()))
        .append(", ")
        .append(a.goroutines.size())
        .append(" goroutines, ")
        .append(d.runs.size())
        .append(" runs; scheduler latency p50 ")
        .append(SummaryFormat.dur(l.p50()))
        .append(", p99 ")
        .append(SummaryFormat.dur(l.p99()))
        .append(", max ")
        .append(SummaryFormat.dur(l.max()))
        .append("; ")
        .append(d.steals.size())
        .append(" steals, ")
        .append(a.handoffs())
        .append(" hand-offs (")
        .append(a.preemptionsIgnored())
        .append(" from goroutines that ignored preemption)</div>\n");
    for (String warn : a.warnings) {
      sb.append("<div class=\"warn\">note: ").append(esc(warn)).append("</div>\n");
    }
  }

  private double x(long t) {
    return (t - d.first) * WIDTH / d.span();
  }

  private static String num(double v) {
    return String.format(Locale.ROOT, "%.2f", v);
  }

  /** Group name to hue: see {@link #hue}. */
  private final Map<String, Integer> hues = new HashMap<>();

  /**
   * The group's colour: groups in the order of the table (most run time first) a golden angle
   * (137.5 degrees) apart, so that the groups that fill the timeline get hues far from each
   * other. (A hash of the name gave three reds among nine groups.)
   */
  int hue(String group) {
    if (hues.isEmpty()) {
      for (Analysis.Group g : a.groups) {
        hues.put(g.name(), (int) Math.round((hues.size() * 137.508 + 210) % 360));
      }
    }
    return hues.getOrDefault(group, 0);
  }

  private void timeline(StringBuilder sb, Writer w) throws IOException {
    List<Integer> ps = new ArrayList<>(d.procs());
    Map<Integer, Integer> row = new HashMap<>();
    for (int i = 0; i < ps.size(); i++) {
      row.put(ps.get(i), i);
    }
    int height = Math.max(1, ps.size()) * (LANE + GAP);
    sb.append(
            "<h2>Timeline by P</h2><div class=\"hint\">wheel: zoom at the pointer; drag:"
                + " pan; double-click: the whole window (the page opens on the span of the runs). Colour: goroutine group; grey: syscall;"
                + " red: P hand-off; blue line: GOMAXPROCS change.</div>\n<div id=\"tlbox\">"
                + "<svg id=\"labels\" height=\"")
        .append(height + 18)
        .append("\">");
    for (int i = 0; i < ps.size(); i++) {
      sb.append("<text x=\"6\" y=\"")
          .append(i * (LANE + GAP) + LANE - 6)
          .append("\">Proc ")
          .append(ps.get(i))
          .append("</text>");
    }
    sb.append("</svg><div id=\"tlwrap\"><svg id=\"tl\" height=\"")
        .append(height)
        .append("\" viewBox=\"0 0 ")
        .append(num(WIDTH))
        .append(' ')
        .append(height)
        .append("\" preserveAspectRatio=\"none\" data-span-ns=\"")
        .append(d.span())
        .append("\" data-runs-from=\"")
        .append(num(runsFrom()))
        .append("\" data-runs-to=\"")
        .append(num(runsTo()))
        .append("\">\n");
    Map<Integer, List<TraceData.Run>> lanes = new TreeMap<>();
    for (TraceData.Run r : d.runs) {
      lanes.computeIfAbsent(r.p(), k -> new ArrayList<>()).add(r);
    }
    long mergeGap = d.runs.size() > MAX_RECTS ? d.span() / MAX_RECTS : -1;
    for (int p : ps) {
      int y = row.get(p) * (LANE + GAP);
      sb.append("<g class=\"lane\" data-p=\"")
          .append(p)
          .append("\">")
          .append("<rect class=\"bg\" x=\"0\" y=\"")
          .append(y)
          .append("\" width=\"")
          .append(num(WIDTH))
          .append("\" height=\"")
          .append(LANE)
          .append("\" fill=\"#f6f6f6\"/>\n");
      List<TraceData.Run> runs = lanes.getOrDefault(p, List.of());
      for (int i = 0; i < runs.size(); ) {
        TraceData.Run r = runs.get(i);
        int j = i + 1;
        long end = r.end();
        while (mergeGap > 0 && j < runs.size() && runs.get(j).start() - end < mergeGap) {
          end = Math.max(end, runs.get(j).end());
          j++;
        }
        String g = d.group(r.goid());
        String tip =
            j - i == 1
                ? "G"
                    + r.goid()
                    + " "
                    + g
                    + ": "
                    + SummaryFormat.dur(r.end() - r.start())
                    + ", end "
                    + r.endReason()
                    + (r.waitReason().isEmpty() ? "" : " (" + r.waitReason() + ")")
                    + ", waited "
                    + SummaryFormat.dur(r.latency())
                    + ", M"
                    + r.m()
                : (j - i) + " runs, " + SummaryFormat.dur(end - r.start());
        sb.append("<rect class=\"run\" x=\"")
            .append(num(x(r.start())))
            .append("\" y=\"")
            .append(y + 1)
            .append("\" width=\"")
            .append(num(Math.max(0.02, x(end) - x(r.start()))))
            .append("\" height=\"")
            .append(LANE - 2)
            .append("\" fill=\"hsl(")
            .append(hue(g))
            .append(",65%,50%)\"><title>")
            .append(esc(tip))
            .append("</title></rect>\n");
        i = j;
        if (sb.length() > 1 << 20) {
          w.write(sb.toString());
          sb.setLength(0);
        }
      }
      sb.append("</g>\n");
    }
    for (TraceData.Syscall s : d.syscalls) {
      Integer r = row.get(s.p());
      if (r == null) {
        continue;
      }
      sb.append("<rect class=\"syscall\" x=\"")
          .append(num(x(s.start())))
          .append("\" y=\"")
          .append(r * (LANE + GAP) + LANE / 2 + 2)
          .append("\" width=\"")
          .append(num(Math.max(0.02, x(s.end()) - x(s.start()))))
          .append("\" height=\"")
          .append(LANE / 2 - 3)
          .append("\" fill=\"#999\" fill-opacity=\"0.6\"><title>")
          .append(
              esc(
                  "syscall G"
                      + s.goid()
                      + " "
                      + d.group(s.goid())
                      + ": "
                      + SummaryFormat.dur(s.end() - s.start())
                      + (s.lostP() ? ", lost its P" : "")))
          .append("</title></rect>\n");
    }
    for (TraceData.Handoff h : d.handoffs) {
      Integer r = row.get(h.p());
      if (r == null) {
        continue;
      }
      sb.append("<rect class=\"handoff\" x=\"")
          .append(num(x(h.time())))
          .append("\" y=\"")
          .append(r * (LANE + GAP))
          .append("\" width=\"")
          .append(num(WIDTH / 1500))
          .append("\" height=\"")
          .append(LANE)
          .append("\" fill=\"#d00\"><title>")
          .append(
              esc(
                  "hand-off ("
                      + h.reason()
                      + ") of Proc "
                      + h.p()
                      + " from G"
                      + h.goid()
                      + " "
                      + d.group(h.goid())))
          .append("</title></rect>\n");
    }
    for (TraceData.ProcsChange c : d.procsChanges) {
      sb.append("<rect class=\"procs\" x=\"")
          .append(num(x(c.time())))
          .append("\" y=\"0\"")
          .append(" width=\"")
          .append(num(WIDTH / 2000))
          .append("\" height=\"")
          .append(height)
          .append("\" fill=\"#36c\"><title>GOMAXPROCS ")
          .append(c.old())
          .append(" -&gt; ")
          .append(c.nu())
          .append("</title></rect>\n");
    }
    sb.append("</svg><svg id=\"axis\"></svg></div></div>\n");
  }

  /** Where the runs begin, in timeline units: the page opens on them (step 2). */
  private double runsFrom() {
    return d.runs.isEmpty() ? 0 : Math.max(0, x(d.runs.get(0).start()) - WIDTH / 200);
  }

  private double runsTo() {
    long end = d.first;
    for (TraceData.Run r : d.runs) {
      end = Math.max(end, r.end());
    }
    return d.runs.isEmpty() ? WIDTH : Math.min(WIDTH, x(end) + WIDTH / 200);
  }

  /** 1-2-5 bucket bounds from 1 us to 1 s, in ns. */
  static long[] finerBuckets() {
    List<Long> b = new ArrayList<>();
    for (long decade = 1_000; decade < 1_000_000_000L; decade *= 10) {
      b.add(decade);
      b.add(2 * decade);
      b.add(5 * decade);
    }
    b.add(1_000_000_000L);
    return b.stream().mapToLong(Long::longValue).toArray();
  }

  private void histogram(StringBuilder sb) {
    long[] bounds = finerBuckets();
    long[] counts = new long[bounds.length + 1];
    for (long v : a.latencySorted) {
      int i = 0;
      while (i < bounds.length && v >= bounds[i]) {
        i++;
      }
      counts[i]++;
    }
    double maxLog = 0;
    for (long c : counts) {
      maxLog = Math.max(maxLog, Math.log10(c + 1));
    }
    int bw = 34;
    int h = 160;
    sb.append("<h2>Scheduler latency (runnable to running): ")
        .append(a.latency.count())
        .append(" schedulings</h2><svg id=\"hist\" width=\"")
        .append(counts.length * bw + 20)
        .append("\" height=\"")
        .append(h + 50)
        .append("\">\n");
    for (int i = 0; i < counts.length; i++) {
      double bh = maxLog == 0 ? 0 : (h - 14) * Math.log10(counts[i] + 1) / maxLog;
      int x = 10 + i * bw;
      String label = i == 0 ? "<1us" : shortDur(bounds[i - 1]);
      sb.append("<rect class=\"bar\" x=\"")
          .append(x)
          .append("\" y=\"")
          .append(num(h - bh))
          .append("\" width=\"")
          .append(bw - 4)
          .append("\" height=\"")
          .append(num(bh))
          .append("\" fill=\"#4a7\"><title>")
          .append(counts[i])
          .append(" schedulings ")
          .append(
              esc(
                  i == 0
                      ? "below 1us"
                      : i == bounds.length
                          ? "of 1s and more"
                          : SummaryFormat.dur(bounds[i - 1])
                              + " to "
                              + SummaryFormat.dur(bounds[i])))
          .append("</title></rect>");
      if (counts[i] > 0) {
        sb.append("<text x=\"")
            .append(x + (bw - 4) / 2)
            .append("\" y=\"")
            .append(num(h - bh - 3))
            .append("\" font-size=\"9\" text-anchor=\"middle\">")
            .append(counts[i])
            .append("</text>");
      }
      sb.append("<text x=\"")
          .append(x + (bw - 4) / 2)
          .append("\" y=\"")
          .append(h + 14)
          .append("\" font-size=\"9\" text-anchor=\"middle\">")
          .append(esc(label))
          .append("</text>\n");
    }
    sb.append("<text x=\"10\" y=\"")
        .append(h + 36)
        .append("\" font-size=\"10\" fill=\"#666\">")
        .append("bucket lower bounds; bar heights on a log scale</text></svg>\n");
  }

  /** A bucket bound (a whole number of us, ms or s) in a few characters: 2us, 50ms, 1s. */
  static String shortDur(long ns) {
    return ns < 1_000_000
        ? ns / 1_000 + "us"
        : ns < 1_000_000_000 ? ns / 1_000_000 + "ms" : ns / 1_000_000_000 + "s";
  }

  private void tables(StringBuilder sb) {
    sb.append(
        "<h2>Goroutine groups</h2><table id=\"groups\"><tr><th class=\"l\">group</th>"
            + "<th>goroutines</th><th>runs</th><th>run time</th><th>run p50</th><th>run max</th>"
            + "<th>off-P</th><th>sched wait</th><th>latency p99</th><th>latency max</th>"
            + "<th>block</th><th class=\"l\">top block reason</th><th>syscall</th>"
            + "<th>syscall, P lost</th></tr>\n");
    for (Analysis.Group g : a.groups) {
      String top =
          g.block().entrySet().stream()
              .max(Map.Entry.comparingByValue())
              .map(Map.Entry::getKey)
              .orElse("");
      sb.append("<tr><td class=\"l\"><span style=\"color:hsl(")
          .append(hue(g.name()))
          .append(",65%,45%)\">&#9632;</span> ")
          .append(esc(g.name()))
          .append("</td>");
      cells(
          sb,
          Long.toString(g.goroutines()),
          Long.toString(g.runs()),
          SummaryFormat.dur(g.exec().sum()),
          SummaryFormat.dur(g.exec().p50()),
          SummaryFormat.dur(g.exec().max()),
          SummaryFormat.dur(g.offP()),
          SummaryFormat.dur(g.schedWait().sum()),
          SummaryFormat.dur(g.latency().p99()),
          SummaryFormat.dur(g.latency().max()),
          SummaryFormat.dur(g.blockTotal()));
      sb.append("<td class=\"l\">").append(esc(top)).append("</td>");
      cells(sb, SummaryFormat.dur(g.syscall().sum()), SummaryFormat.dur(g.syscallBlocked()));
      sb.append("</tr>\n");
    }
    sb.append(
        "</table>\n<h2>Top runners</h2><table><tr><th>goroutine</th>"
            + "<th class=\"l\">group</th><th>run time</th><th>runs</th><th>longest</th>"
            + "<th>off-P</th><th>sched wait</th><th>syscall</th></tr>\n");
    for (Analysis.G g : a.topRunners(SummaryFormat.TOP)) {
      sb.append("<tr><td>G")
          .append(g.goid)
          .append("</td><td class=\"l\">")
          .append(esc(g.group))
          .append("</td>");
      cells(
          sb,
          SummaryFormat.dur(g.exec),
          Long.toString(g.runs),
          SummaryFormat.dur(g.longestRun),
          SummaryFormat.dur(g.offP),
          SummaryFormat.dur(g.schedWait),
          SummaryFormat.dur(g.syscall));
      sb.append("</tr>\n");
    }
    sb.append(
        "</table>\n<h2>Latency sources</h2><table><tr><th class=\"l\">became runnable"
            + " by</th><th>count</th><th>p50</th><th>p99</th><th>max</th></tr>\n");
    for (var e : a.latencyBySource.entrySet()) {
      sb.append("<tr><td class=\"l\">").append(esc(e.getKey())).append("</td>");
      Analysis.Dist s = e.getValue();
      cells(
          sb,
          Long.toString(s.count()),
          SummaryFormat.dur(s.p50()),
          SummaryFormat.dur(s.p99()),
          SummaryFormat.dur(s.max()));
      sb.append("</tr>\n");
    }
    sb.append("</table>\n<h2>Hand-offs: ")
        .append(d.handoffs.size())
        .append(
            "</h2><table id=\"handoffs\"><tr><th>at</th><th>P</th><th class=\"l\">reason"
                + "</th><th>goroutine</th><th class=\"l\">group</th><th>M</th>"
                + "<th class=\"l\">frames</th></tr>\n");
    for (TraceData.Handoff h : d.handoffs) {
      sb.append("<tr><td>+")
          .append(SummaryFormat.dur(h.time() - d.first))
          .append("</td><td>")
          .append(h.p())
          .append("</td><td class=\"l\">")
          .append(esc(h.reason()))
          .append("</td><td>G")
          .append(h.goid())
          .append("</td><td class=\"l\">")
          .append(esc(d.group(h.goid())))
          .append("</td><td>M")
          .append(h.fromM())
          .append(" &rarr; ")
          .append(h.toM() < 0 ? "idle" : "M" + h.toM())
          .append("</td><td class=\"l\"><pre>")
          .append(esc(String.join("\n", SummaryFormat.frames(h.frames()))))
          .append("</pre></td></tr>\n");
    }
    sb.append("</table>\n");
  }

  private static void cells(StringBuilder sb, String... v) {
    for (String s : v) {
      sb.append("<td>").append(esc(s)).append("</td>");
    }
  }

  static String esc(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '<' -> sb.append("&lt;");
        case '>' -> sb.append("&gt;");
        case '&' -> sb.append("&amp;");
        case '"' -> sb.append("&quot;");
        default -> sb.append(c);
      }
    }
    return sb.toString();
  }

  /** Zoom and pan by the viewBox, and the time axis; see 'Report page' step 2. */
  private static final String SCRIPT =
      """
      (function(){
      const tl=document.getElementById('tl'),axis=document.getElementById('axis'),
        wrap=document.getElementById('tlwrap'),W=%s,H=tl.viewBox.baseVal.height,
        span=+tl.dataset.spanNs;
      let x0=+tl.dataset.runsFrom,w=Math.max(W*1e-7,+tl.dataset.runsTo-x0),drag=null;
      function fmt(ns){return ns<1e3?ns.toFixed(0)+'ns':ns<1e6?(ns/1e3).toFixed(1)+'us':
        ns<1e9?(ns/1e6).toFixed(2)+'ms':(ns/1e9).toFixed(2)+'s';}
      function draw(){tl.setAttribute('viewBox',x0+' 0 '+w+' '+H);
        const px=wrap.clientWidth||1000,ns=w/W*span,step0=ns/8,
          p=Math.pow(10,Math.floor(Math.log10(step0))),m=step0/p,
          step=(m<2?2:m<5?5:10)*p,t0=x0/W*span;let s='';
        for(let t=Math.ceil(t0/step)*step;t<=t0+ns;t+=step){const x=(t-t0)/ns*px;
          s+='<line x1="'+x+'" x2="'+x+'" y1="0" y2="5" stroke="#888"/><text x="'+(x+2)+
          '" y="14" font-size="10" fill="#555">'+fmt(t)+'</text>';}
        axis.innerHTML=s;}
      wrap.addEventListener('wheel',e=>{e.preventDefault();
        const r=wrap.getBoundingClientRect(),f=(e.clientX-r.left)/r.width,at=x0+f*w,
          k=e.deltaY<0?0.8:1.25;w=Math.min(W,Math.max(W*1e-7,w*k));
        x0=Math.min(W-w,Math.max(0,at-f*w));draw();},{passive:false});
      wrap.addEventListener('mousedown',e=>{drag={x:e.clientX,x0:x0};});
      window.addEventListener('mouseup',()=>{drag=null;});
      window.addEventListener('mousemove',e=>{if(!drag)return;
        const r=wrap.getBoundingClientRect();
        x0=Math.min(W-w,Math.max(0,drag.x0-(e.clientX-drag.x)/r.width*w));draw();});
      wrap.addEventListener('dblclick',()=>{x0=0;w=W;draw();});
      window.addEventListener('resize',draw);draw();
      document.body.dataset.ready=document.querySelectorAll('#tl g.lane').length+' lanes';
      })();
      """
          .formatted(Long.toString((long) WIDTH));
}
