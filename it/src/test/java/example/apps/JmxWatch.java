package example.apps;

import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Waits, without starting it, for someone else to start the platform MBean server (a {@code
 * jcmd <pid> ManagementAgent.start_local}, as JConsole does to connect), then prints whether the
 * agent's MXBean was already in it: {@code registered=}. Reads ManagementFactory's private field
 * (the child runs with {@code --add-opens java.management/java.lang.management=ALL-UNNAMED}) so
 * that it never calls {@code getPlatformMBeanServer()} itself. Prints {@code ready} first, and
 * {@code registered=none} if no server came in 20 s; then sleeps until the test kills it.
 */
public final class JmxWatch {
  private JmxWatch() {}

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(30_000, "JmxWatch");
    System.out.println("ready");
    long deadline = System.nanoTime() + 20_000_000_000L;
    MBeanServer server = null;
    while (server == null && System.nanoTime() < deadline) {
      server = AppSupport.platformMBeanServerIfStarted();
      Thread.sleep(10);
    }
    System.out.println(
        "registered="
            + (server == null
                ? "none"
                : String.valueOf(server.isRegistered(new ObjectName("io.gmp4j:type=Scheduler")))));
    // Alive until the test kills it: the jcmd that started the server is still waiting for its
    // answer, which an exit now would cut off.
    Thread.sleep(20_000);
  }
}
