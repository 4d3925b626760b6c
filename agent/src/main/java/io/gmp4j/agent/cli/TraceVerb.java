package io.gmp4j.agent.cli;

import io.gmp4j.agent.trace.TraceCommand;
import java.io.PrintStream;
import java.util.List;

/**
 * {@code gmp4j trace summary|check|perfetto|html rec.jfr ...}: Go's {@code go tool trace} for
 * JFR recordings of gmp4j's events. The work is in {@code io.gmp4j.agent.trace}.
 */
final class TraceVerb implements Verb {
  @Override
  public String name() {
    return "trace";
  }

  @Override
  public String summary() {
    return "analyse a JFR recording: summary, check (CI limits), perfetto, html";
  }

  @Override
  public int run(List<String> args, PrintStream out, PrintStream err) {
    return TraceCommand.run(args, out, err);
  }
}
