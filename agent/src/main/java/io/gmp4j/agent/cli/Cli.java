package io.gmp4j.agent.cli;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;

/**
 * The {@code gmp4j} command line: one launcher for every verb of the project, reached through the
 * root {@code gmp4j} script or {@code java -jar gmp4j-agent.jar <verb> ...} (via
 * {@code io.gmp4j.agent.Launcher}, which checks the JDK first).
 *
 * <p>A verb is a {@link Verb}; add it to {@link #VERBS}. The verbs run in their own JVM, never in
 * the application's, so they may use anything in the agent jar.
 */
public final class Cli {
  /** Every verb, in the order {@code --help} lists them. */
  static final List<Verb> VERBS =
      List.of(new VersionVerb(), new TraceVerb(), new AttachVerb(), new ListVerb(), new TopVerb());

  private Cli() {}

  /** Runs {@code args} and returns the exit status. Called by Launcher. */
  static int run(String[] args) throws Exception {
    return run(Arrays.asList(args), System.out, System.err);
  }

  /** Runs {@code args} with the given streams and returns the exit status. Any thread. */
  public static int run(List<String> args, PrintStream out, PrintStream err) throws Exception {
    if (args.isEmpty()
        || args.get(0).equals("--help")
        || args.get(0).equals("-h")
        || args.get(0).equals("help")) {
      usage(args.isEmpty() ? err : out);
      return args.isEmpty() ? Verb.USAGE : Verb.OK;
    }
    String name = args.get(0);
    for (Verb v : VERBS) {
      if (v.name().equals(name)) {
        return v.run(args.subList(1, args.size()), out, err);
      }
    }
    err.println("gmp4j: unknown command '" + name + "'; run gmp4j --help for the list");
    return Verb.USAGE;
  }

  private static void usage(PrintStream s) {
    s.println("usage: gmp4j <command> [args...]   (gmp4j <command> --help for its usage)");
    s.println();
    s.println("commands:");
    for (Verb v : VERBS) {
      s.printf("  %-10s %s%n", v.name(), v.summary());
    }
    s.println();
    s.println("As an agent: java -javaagent:gmp4j-agent.jar[=key=value,...] -jar app.jar");
  }
}
