package example.apps;

import java.lang.management.ManagementFactory;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Whether the agent started the platform MBean server by itself, and whether its MXBean is
 * there once the application starts it ('Registered when the server starts' in the agent's
 * Exporters). Waits for the agent's {@code gmp4j-*} start-up threads to end (at most 20 s), then
 * reads ManagementFactory's private field (the child runs with {@code --add-opens
 * java.management/java.lang.management=ALL-UNNAMED}) and prints {@code serverAtStart=}, and
 * whether this class path may open the JDK internals that the JIT directive uses ({@code
 * internalsOpenToApp=}); then starts the server, as any JMX client would, and prints {@code
 * registered=} and the MXBean's {@code gomaxprocs=}.
 */
public final class JmxProbe {
  private JmxProbe() {}

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(30_000, "JmxProbe");
    AppSupport.awaitThreadsEnded(20_000, "gmp4j-jit-directive", "gmp4j-jmx-register");
    // The agent opened jdk.management's internals to its runtime only, not to this class path.
    boolean opened;
    try {
      Class.forName(
              ModuleLayer.boot().findModule("jdk.management").orElseThrow(),
              "com.sun.management.internal.DiagnosticCommandImpl")
          .getDeclaredMethod("getDiagnosticCommandMBean")
          .setAccessible(true);
      opened = true;
    } catch (RuntimeException e) {
      opened = false;
    }
    System.out.println("internalsOpenToApp=" + opened);
    System.out.println("serverAtStart=" + (AppSupport.platformMBeanServerIfStarted() != null));
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    ObjectName name = new ObjectName("io.gmp4j:type=Scheduler");
    boolean registered = server.isRegistered(name);
    System.out.println("registered=" + registered);
    if (registered) {
      System.out.println("gomaxprocs=" + server.getAttribute(name, "Gomaxprocs"));
    }
  }
}
