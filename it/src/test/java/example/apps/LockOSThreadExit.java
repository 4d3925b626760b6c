package example.apps;

import io.gmp4j.Gmp;
import java.util.ArrayList;
import java.util.List;

/**
 * Go's TestLockOSThreadExit (testprog LockOSThreadMain and LockOSThreadAlt), with carrier
 * threads for thread ids: the carrier of a virtual thread is the {@code gmp-m<id>} after the
 * {@code @} of its {@code toString()}, and ids are never reused, so a name is an identity.
 *
 * <p>As in LockOSThreadAlt, main (a virtual thread here) locks first. A second virtual thread
 * locks, yields and sleeps ten times checking that it never moves, and ends still locked. Main
 * unlocks, then for up to 1 s checks every millisecond that it never runs on that carrier and
 * whether the carrier thread still exists ({@link Thread#getAllStackTraces()} names). Then 50
 * later virtual threads record where they ran.
 *
 * <p>Prints {@code gmp_loader=} (boot when the agent's boot-path copy of the runtime is the one
 * linked), {@code main_carrier=}, {@code locked_carrier=}, {@code moved=}, {@code gone_ms=} (or
 * {@code gone=never}), {@code main_on_dead=}, {@code later_on_dead=}, {@code later_carriers=}.
 */
public final class LockOSThreadExit {
  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(30_000, "LockOSThreadExit");
    ClassLoader loader = Gmp.class.getClassLoader();
    System.out.println("gmp_loader=" + (loader == null ? "boot" : loader.toString()));
    List<String> lines = new ArrayList<>();
    Thread main =
        Thread.ofVirtual()
            .start(
                () -> {
                  try {
                    run(lines);
                  } catch (Throwable t) {
                    lines.add("error=" + t);
                  }
                });
    main.join();
    lines.forEach(System.out::println);
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }

  private static void run(List<String> out) throws Exception {
    Gmp.lockOSThread(); // LockOSThreadAlt: main is locked (Go: in init)
    String mainCarrier = AppSupport.carrier();
    out.add("main_carrier=" + mainCarrier);

    String[] mine = new String[1];
    boolean[] moved = {false};
    Thread sub =
        Thread.ofVirtual()
            .start(
                () -> {
                  Gmp.lockOSThread();
                  mine[0] = AppSupport.carrier();
                  for (int i = 0; i < 10; i++) {
                    Thread.yield();
                    try {
                      Thread.sleep(1);
                    } catch (InterruptedException e) {
                      return;
                    }
                    if (!mine[0].equals(AppSupport.carrier())) {
                      moved[0] = true;
                    }
                  }
                  // ends while locked: takes its carrier with it
                });
    sub.join();
    String dead = mine[0];
    out.add("locked_carrier=" + dead);
    out.add("moved=" + moved[0]);
    Gmp.unlockOSThread();

    boolean mainOnDead = false;
    long start = System.nanoTime();
    long goneMs = -1;
    for (int i = 0; i < 1000; i++) { // Go: up to 100 x 1 ms; we allow 1 s
      if (AppSupport.carrier().equals(dead)) {
        mainOnDead = true;
      }
      if (!exists(dead)) {
        goneMs = (System.nanoTime() - start) / 1_000_000;
        break;
      }
      Thread.sleep(1);
    }
    out.add(goneMs < 0 ? "gone=never" : "gone_ms=" + goneMs);
    out.add("main_on_dead=" + mainOnDead);

    List<String> later = new ArrayList<>();
    List<Thread> gs = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      gs.add(
          Thread.ofVirtual()
              .start(
                  () -> {
                    String c = AppSupport.carrier();
                    synchronized (later) {
                      later.add(c);
                    }
                  }));
    }
    for (Thread t : gs) {
      t.join();
    }
    out.add("later_on_dead=" + later.stream().filter(dead::equals).count());
    out.add("later_carriers=" + later.stream().distinct().sorted().toList());
  }

  private static boolean exists(String threadName) {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals(threadName));
  }
}
