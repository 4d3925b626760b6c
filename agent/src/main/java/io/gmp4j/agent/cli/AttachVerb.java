package io.gmp4j.agent.cli;

import com.sun.tools.attach.AgentInitializationException;
import com.sun.tools.attach.AgentLoadException;
import io.gmp4j.agent.cli.Targets.Target;
import io.gmp4j.agent.cli.Targets.TargetException;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code gmp4j attach <pid> [key=value,...]}: loads the agent into a running JVM, or, when gmp4j
 * is already there, changes the options that can change live.
 *
 * <h2>Implementation overview</h2>
 *
 * <ol>
 *   <li>{@link Targets#attach}: every check that can fail before anything is loaded.
 *   <li>{@code loadAgent(gmp4j-agent.jar, "attach.id=<random>," + options)}. agentmain returns
 *       nothing and never throws (the agent must not hurt its host), so loadAgent's own
 *       exceptions mean only that the JVM could not load the jar.
 *   <li>Read the target's system properties: the agent left {@code gmp4j.attach.result} =
 *       {@code "<id> <status>\n<lines>"} (see AgentState in the agent). The lines are what the
 *       agent printed on the target's stderr during this attach; print them here too.
 *   <li>After an install, wait (up to {@code --wait}, 60 s by default; 0 does not wait) for the
 *       background retransformation's summary, {@code gmp4j.retransform}.
 * </ol>
 *
 * Exit status: 0 installed or applied; 1 the agent refused an option or failed to install; 2 a
 * bad pid or target, as the checks in Targets say.
 */
final class AttachVerb implements Verb {
  @Override
  public String name() {
    return "attach";
  }

  @Override
  public String summary() {
    return "load gmp4j into a running JVM, or change its live options";
  }

  @Override
  public int run(List<String> args, PrintStream out, PrintStream err) throws Exception {
    if (args.isEmpty() || args.contains("--help")) {
      (args.isEmpty() ? err : out)
          .println(
              """
          usage: gmp4j attach <pid> [--wait=60s] [key=value[,key=value...]]
            Loads gmp4j into the JVM <pid> (of the same user, JDK 25+). In a JVM where gmp4j
            already runs, applies the options that can change live: gomaxprocs, schedtrace,
            scheddetail, timeslice, preempt.handoff, exporter.port.
            --wait  how long to wait for the retransformation of loaded classes (0: not)""");
      return args.isEmpty() ? USAGE : OK;
    }
    long waitMs = 60_000;
    List<String> opts = new ArrayList<>();
    String pidArg = null;
    for (String a : args) {
      if (a.startsWith("--wait=")) {
        String v = a.substring(7);
        try {
          waitMs =
              v.endsWith("ms")
                  ? Long.parseLong(v.substring(0, v.length() - 2))
                  : Long.parseLong(v.endsWith("s") ? v.substring(0, v.length() - 1) : v) * 1000;
        } catch (NumberFormatException e) {
          err.println("gmp4j: bad --wait \"" + v + "\": want seconds, e.g. --wait=30s");
          return USAGE;
        }
      } else if (a.startsWith("--")) {
        err.println("gmp4j: attach: unknown flag " + a + "; gmp4j attach --help");
        return USAGE;
      } else if (pidArg == null) {
        pidArg = a;
      } else {
        opts.add(a);
      }
    }
    try {
      long pid = Targets.pid(pidArg);
      Target t = Targets.attach(pid, true);
      try {
        boolean before = t.gmp4j() != null;
        out.println(
            "gmp4j: pid "
                + pid
                + " ("
                + Targets.command(pid)
                + ", JDK "
                + t.jdk()
                + "): "
                + (before ? "gmp4j " + t.gmp4j() + " is in it" : "loading gmp4j"));
        Result r = load(t, String.join(",", opts));
        r.lines.forEach(out::println);
        if (!before && r.status.equals("installed")) {
          if (!Targets.cmdline(pid).contains("-XX:+EnableDynamicAgentLoading")) {
            out.println(
                "gmp4j: note: the JVM printed JEP 451's warning \"A Java agent has been"
                    + " loaded dynamically\" on its stderr; gmp4j works, and a later JDK may require"
                    + " -XX:+EnableDynamicAgentLoading (see the README)");
          }
          if (waitMs > 0) {
            waitForRetransform(t, waitMs, out);
          }
        }
        return switch (r.status) {
          case "installed", "live" -> OK;
          default -> CHECK_FAILED;
        };
      } finally {
        t.detach();
      }
    } catch (TargetException e) {
      err.println(e.getMessage());
      return USAGE;
    }
  }

  /** What the agent reported: installed, live, refused or failed, and its lines. */
  record Result(String status, List<String> lines) {}

  /** Steps 2 and 3. Throws with the line to print when the JVM could not load the jar. */
  static Result load(Target t, String options) throws TargetException {
    String id = Long.toHexString(ThreadLocalRandom.current().nextLong());
    String jar = Targets.agentJar().toString();
    try {
      t.vm().loadAgent(jar, "attach.id=" + id + (options.isBlank() ? "" : "," + options));
    } catch (AgentLoadException | AgentInitializationException e) {
      throw new TargetException(
          "gmp4j: pid " + t.pid() + " could not load " + jar + ": " + Targets.oneLine(e));
    } catch (IOException e) {
      throw new TargetException(
          "gmp4j: pid "
              + t.pid()
              + ": the attach failed while loading the"
              + " agent: "
              + Targets.oneLine(e));
    }
    Properties p = Targets.props(t);
    String result = p.getProperty("gmp4j.attach.result", "");
    if (!result.startsWith(id + " ")) {
      throw new TargetException(
          "gmp4j: pid " + t.pid() + " loaded the agent but left no result" + " (see its stderr)");
    }
    String[] parts = result.split("\n");
    String status = parts[0].substring(id.length() + 1).trim();
    List<String> lines = new ArrayList<>();
    for (int i = 1; i < parts.length; i++) {
      if (!parts[i].isBlank()) {
        lines.add(parts[i]);
      }
    }
    return new Result(status, lines);
  }

  /** Step 4: prints the summary line, or says it is still running. */
  private static void waitForRetransform(Target t, long waitMs, PrintStream out)
      throws TargetException, InterruptedException {
    long deadline = System.nanoTime() + waitMs * 1_000_000L;
    String last = null;
    long lastPrint = System.nanoTime();
    for (; ; ) {
      String s = Targets.props(t).getProperty("gmp4j.retransform");
      if (s == null) {
        return; // asyncpreemptoff=1 or preempt.retransform=0: nothing runs
      }
      if (s.startsWith("done ")) {
        out.println(s.substring(5));
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        out.println(
            "gmp4j: retransform still "
                + s
                + " classes after "
                + waitMs / 1000
                + " s; it goes on in the background (summary on the JVM's stderr)");
        return;
      }
      if (!s.equals(last) && System.nanoTime() - lastPrint > 2_000_000_000L) {
        out.println("gmp4j: retransform " + s + " classes");
        lastPrint = System.nanoTime();
      }
      last = s;
      Thread.sleep(100);
    }
  }
}
