package example.apps;

import java.util.concurrent.locks.LockSupport;

/**
 * 'Running classes' in the agent's Retransformer, seen from the application: with {@code
 * preempt.defer}, a class that some thread is in when the deferral ends waits, and one that a
 * thread never leaves keeps its early polls.
 *
 * <p>Two virtual threads wait in loops from the start: one in {@link Forever#waitLoop} until the
 * end, one in {@link Brief#waitLoop} until main has seen the retransformation begin ({@code
 * gmp4j.retransform} says {@code running}) and 1.5 s more. Main then waits for the property to
 * say {@code done}, at most 30 s, and prints it as {@code done=}, stops {@code Forever}, and
 * prints {@code passes=} (both loops' passes, so the JIT keeps them). Main's own class has a
 * loop too, in {@link #await}, which main is in but for its 1.5 s sleep: a look in that sleep
 * finds it out, and one is likely there, not sure on a loaded machine.
 */
public final class RunningClasses {
  private RunningClasses() {}

  /** Set by main; read by both loops. */
  static volatile boolean stopBrief;

  static volatile boolean stopForever;

  /** A loop that calls: early polls at load. */
  static final class Forever {
    static long waitLoop() {
      long n = 0;
      while (!stopForever) {
        LockSupport.parkNanos(5_000_000L);
        n++;
      }
      return n;
    }
  }

  /** The same loop in a class of its own, left 1.5 s after the retransformation begins. */
  static final class Brief {
    static long waitLoop() {
      long n = 0;
      while (!stopBrief) {
        LockSupport.parkNanos(5_000_000L);
        n++;
      }
      return n;
    }
  }

  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(60_000, "RunningClasses");
    long[] passes = new long[2];
    Thread forever = Thread.ofVirtual().start(() -> passes[0] = Forever.waitLoop());
    Thread brief = Thread.ofVirtual().start(() -> passes[1] = Brief.waitLoop());
    String state = await("running");
    System.out.println("seen=" + state);
    Thread.sleep(1500);
    stopBrief = true;
    brief.join();
    System.out.println("done=" + await("done"));
    stopForever = true;
    forever.join();
    System.out.println("passes=" + (passes[0] + passes[1]));
  }

  /** The property once it starts with {@code prefix} (or 30 s have passed). */
  private static String await(String prefix) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    String state = System.getProperty("gmp4j.retransform");
    while ((state == null || !state.startsWith(prefix)) && System.nanoTime() < deadline) {
      Thread.sleep(20);
      state = System.getProperty("gmp4j.retransform");
    }
    return state;
  }
}
