package example.apps;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Waits, without starting it, for someone else to start the platform MBean server (a {@code
 * jcmd <pid> ManagementAgent.start_local}, as JConsole does to connect), then prints whether the
 * agent's MXBean was already in it: {@code registered=}. Reads ManagementFactory's private field
 * (the child runs with {@code --add-opens java.management/java.lang.management=ALL-UNNAMED}) so
 * that it never calls {@code getPlatformMBeanServer()} itself. Prints {@code ready} first; then
 * the test sends a line on stdin just before its jcmd, and {@code registered=none} comes if no
 * server came in 20 s after that line. Then it sleeps until the test kills it.
 */
public final class JmxWatch {
  private JmxWatch() {}

  /** When the wait for the server ends (System.nanoTime), or 0 until the test's line. */
  private static volatile long deadline;

  public static void main(String[] args) throws Exception {
    // The test's steps before its jcmd (an attach from a JVM of its own, a 2 s look) take what
    // a loaded machine gives them: the 20 s start at the test's line, and this bounds the whole.
    AppSupport.watchdog(150_000, "JmxWatch");
    Thread.ofPlatform()
        .daemon()
        .start(
            () -> {
              try {
                new BufferedReader(new InputStreamReader(System.in)).readLine();
              } catch (IOException e) {
                // the test is gone: start the 20 s anyway
              }
              deadline = System.nanoTime() + 20_000_000_000L;
            });
    System.out.println("ready");
    MBeanServer server = null;
    while (server == null && (deadline == 0 || System.nanoTime() < deadline)) {
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
