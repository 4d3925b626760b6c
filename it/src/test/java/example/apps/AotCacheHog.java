package example.apps;

/**
 * A program run from a JDK AOT cache, for AotCacheIT. With an AOT cache ({@code -XX:AOTCache},
 * JDK 24+) the JVM loads and links the classes the cache holds at start-up, before any agent
 * runs, so the agent's premain finds them loaded and gives them their polls by retransformation
 * ('Classes loaded before premain' in the agent's AgentInstaller).
 *
 * <p>Usage: {@code AotCacheHog train} loads the hog's class ({@link AttachWorkload.Hog}), runs it
 * 20 ms and prints {@code trained}: what the cache is trained on, without the agent. {@code
 * AotCacheHog run <hogMs>}, with the agent: waits until the agent has retransformed the classes
 * loaded before it, then spins the hog for hogMs beside a 1 ms sleeper and prints {@code
 * hog_done ticks= honored= handoffs=} ({@link AttachWorkload#hogBesideTicker}); without that
 * retransformation it prints {@code no retransformation seen} after 30 s and exits 4.
 */
public final class AotCacheHog {
  private AotCacheHog() {}

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(120_000, "AotCacheHog");
    long sink = AttachWorkload.Hog.spin(20); // loads Hog, which the cache then holds
    if (args[0].equals("train")) {
      System.out.println("trained sink=" + (sink & 1));
      return;
    }
    AttachWorkload.awaitRetransformed(30);
    System.out.println(AttachWorkload.hogBesideTicker(Long.parseLong(args[1])));
  }
}
