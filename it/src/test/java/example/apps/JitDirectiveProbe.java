package example.apps;

import java.lang.management.ManagementFactory;
import javax.management.ObjectName;

/**
 * Waits for the agent's {@code gmp4j-jit-directive} thread to end (at most 20 s), then prints
 * whether HotSpot's compiler directive stack holds the agent's directive ('JIT directive' in the
 * agent's JitDirective), as {@code jcmd <pid> Compiler.directives_print} would show it, and
 * whether C2 is excluded there: {@code directive=} and {@code c2Excluded=}.
 */
public final class JitDirectiveProbe {
  private JitDirectiveProbe() {}

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(30_000, "JitDirectiveProbe");
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (System.nanoTime() < deadline
        && Thread.getAllStackTraces().keySet().stream()
            .anyMatch(t -> t.getName().equals("gmp4j-jit-directive"))) {
      Thread.sleep(10);
    }
    String stack =
        (String)
            ManagementFactory.getPlatformMBeanServer()
                .invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"),
                    "compilerDirectivesPrint",
                    new Object[] {new String[0]},
                    new String[] {String[].class.getName()});
    // One directive block runs from "Directive:" to the next; the agent's is the one matching
    // its injector's package.
    String ours = "";
    for (String block : stack.split("Directive:")) {
      if (block.contains("io/gmp4j/agent/poll/")) {
        ours = block;
      }
    }
    // Each block lists its c1 directives, then its c2 directives.
    int c2 = Math.max(0, ours.indexOf("c2 directives:"));
    System.out.println("directive=" + !ours.isEmpty());
    System.out.println("c1Excluded=" + ours.substring(0, c2).contains("Exclude:true"));
    System.out.println("c2Excluded=" + ours.substring(c2).contains("Exclude:true"));
  }
}
