package io.gmp4j.agent.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The attach, list and top verbs' usage errors, in process: one {@code gmp4j: } line and exit
 * status 2. The targets themselves (no such process, JDK 17, attach disabled, another user) are
 * tested with real processes in it/'s AttachErrorsIT.
 */
class AttachVerbTest {
  private record Out(int exit, String out, String err) {}

  private static Out run(String... args) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        Cli.run(
            List.of(args),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Out(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void badPid() throws Exception {
    Out o = run("attach", "abc");
    assertEquals(Verb.USAGE, o.exit());
    assertEquals(
        "gmp4j: bad pid \"abc\": want a process id (gmp4j list shows the JVMs)\n", o.err());
  }

  @Test
  void noSuchProcess() throws Exception {
    Out o = run("attach", "2147483646");
    assertEquals(Verb.USAGE, o.exit());
    assertEquals("gmp4j: no process with pid 2147483646\n", o.err());
  }

  @Test
  void usageWithoutArguments() throws Exception {
    assertEquals(Verb.USAGE, run("attach").exit());
    assertEquals(Verb.USAGE, run("top").exit());
    assertEquals(Verb.OK, run("attach", "--help").exit());
    Out both = run("top", "123", "--url", "http://127.0.0.1:1");
    assertEquals(Verb.USAGE, both.exit());
    assertTrue(both.err().startsWith("gmp4j: top: give a pid or --url"), both.err());
    Out flag = run("attach", "1", "--bogus");
    assertEquals(Verb.USAGE, flag.exit());
    assertTrue(flag.err().startsWith("gmp4j: attach: unknown flag --bogus"), flag.err());
  }

  @Test
  void topWithAnEndpointThatIsNotThere() throws Exception {
    Out o = run("top", "--url", "http://127.0.0.1:1", "--count=1");
    assertEquals(Verb.CHECK_FAILED, o.exit());
    assertTrue(o.err().startsWith("gmp4j: top: cannot read http://127.0.0.1:1: "), o.err());
  }

  @Test
  void helpListsTheVerbs() throws Exception {
    Out o = run("--help");
    for (String verb : List.of("attach", "list", "top")) {
      assertTrue(o.out().contains("  " + verb + " "), o.out());
    }
  }
}
