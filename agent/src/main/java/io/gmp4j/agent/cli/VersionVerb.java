package io.gmp4j.agent.cli;

import java.io.PrintStream;
import java.util.List;

/** {@code gmp4j version}: the agent jar's version and the JDK running the command. */
final class VersionVerb implements Verb {
  @Override
  public String name() {
    return "version";
  }

  @Override
  public String summary() {
    return "print gmp4j's version and the JDK it runs on";
  }

  @Override
  public int run(List<String> args, PrintStream out, PrintStream err) {
    if (!args.isEmpty() && !args.contains("--help")) {
      err.println("gmp4j: version takes no arguments, got " + args);
      return USAGE;
    }
    if (args.contains("--help")) {
      out.println("usage: gmp4j version");
      return OK;
    }
    String v = Cli.class.getPackage().getImplementationVersion();
    out.println(
        "gmp4j "
            + (v == null ? "(unpackaged build)" : v)
            + " on JDK "
            + Runtime.version()
            + " ("
            + System.getProperty("java.home")
            + ")");
    return OK;
  }
}
