package example.apps;

import java.lang.management.ManagementFactory;
import javax.management.ObjectName;

/**
 * Waits for the agent's {@code gmp4j-jit-directive} thread to end (at most 20 s), then prints
 * whether HotSpot's compiler directive stack holds the agent's directive ('JIT directive' in the
 * agent's JitDirective), as {@code jcmd <pid> Compiler.directives_print} would show it,
 * whether C2 is excluded there, and whether C2 is told not to inline the injector into the
 * class-loading path: {@code directive=}, {@code c2Excluded=}, {@code c2NoInline=}.
 */
public final class JitDirectiveProbe {
  private JitDirectiveProbe() {}

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(30_000, "JitDirectiveProbe");
    AppSupport.awaitThreadsEnded(20_000, "gmp4j-jit-directive");
    String stack =
        (String)
            ManagementFactory.getPlatformMBeanServer()
                .invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"),
                    "compilerDirectivesPrint",
                    new Object[] {new String[0]},
                    new String[] {String[].class.getName()});
    // One directive block runs from "Directive:" to the next and opens with its "matching:"
    // line. The agent's are the one that matches its injector's package and the one that
    // matches the JDK's class-loading path into it.
    String ours = "";
    String loading = "";
    for (String block : stack.split("Directive:")) {
      String matching = block.lines().filter(l -> l.contains("matching:")).findFirst().orElse("");
      if (matching.contains("io/gmp4j/agent/poll/")) {
        ours = block;
      } else if (matching.contains("sun/instrument/")) {
        loading = block;
      }
    }
    System.out.println("directive=" + !ours.isEmpty());
    System.out.println("c1Excluded=" + c1(ours).contains("Exclude:true"));
    System.out.println("c2Excluded=" + c2(ours).contains("Exclude:true"));
    // The inline line of the loading path's c2 part: the injector and ASM, not inlined.
    System.out.println(
        "c2NoInline="
            + (c2(loading).contains("-io/gmp4j/agent/poll/*.*")
                && c2(loading).contains("-io/gmp4j/agent/shaded/*.*")));
    System.out.println("c1NoInline=" + c1(loading).contains("-io/gmp4j/agent/"));
  }

  /** Each block lists its c1 directives, then its c2 directives. */
  private static String c1(String block) {
    int c2 = block.indexOf("c2 directives:");
    return c2 < 0 ? block : block.substring(0, c2);
  }

  private static String c2(String block) {
    int c2 = block.indexOf("c2 directives:");
    return c2 < 0 ? "" : block.substring(c2);
  }
}
