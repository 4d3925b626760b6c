package io.gmp4j.agent.cli;

import java.io.PrintStream;
import java.util.List;

/**
 * One command-line verb of {@code gmp4j} ({@code trace}, {@code attach}, ...). See {@link Cli}.
 *
 * <p>Exit statuses, the same for every verb: {@link #OK} 0, {@link #CHECK_FAILED} 1 (the command
 * ran and a check it was asked to make failed), {@link #USAGE} 2 (bad usage, or an input that is
 * not what the verb reads: a bad file, a pid that does not exist). A verb prints its errors as one
 * line starting with {@code gmp4j: } that names the input and what is wrong.
 */
public interface Verb {
  int OK = 0;
  int CHECK_FAILED = 1;
  int USAGE = 2;

  /** The word a user types: {@code gmp4j <name> ...}. */
  String name();

  /** One line for {@code gmp4j --help}. */
  String summary();

  /**
   * Runs the verb with the words after its name, printing results on {@code out} and errors on
   * {@code err}. {@code --help} anywhere in {@code args} prints the verb's usage and returns {@link
   * #OK}. Never calls {@code System.exit}: {@link Cli} does, so that tests can call a verb in
   * process.
   */
  int run(List<String> args, PrintStream out, PrintStream err) throws Exception;
}
