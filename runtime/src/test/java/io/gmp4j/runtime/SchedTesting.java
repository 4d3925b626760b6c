package io.gmp4j.runtime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/** Helpers shared by the tests: waits, and the state of a scheduler of a test's own. */
public final class SchedTesting {
  private SchedTesting() {}

  /** Polls {@code cond} every millisecond or so until it holds or {@code millis} pass. */
  public static boolean poll(long millis, BooleanSupplier cond) throws InterruptedException {
    long deadline = System.nanoTime() + millis * 1_000_000;
    while (!cond.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      Thread.sleep(1);
    }
    return true;
  }

  /**
   * A scheduler of a test's own, with {@code nprocs} Ps, whose idle Ms exit after 20 ms, so that
   * no gmp-m thread of it outlives the test. Sysmon is the caller's to start.
   */
  static Sched newSched(int nprocs) {
    Sched s = new Sched(nprocs);
    s.idleThreadTimeoutNanos = 20_000_000L;
    return s;
  }

  /** A test body that runs on a G and may throw. */
  interface GBody {
    void run() throws Exception;
  }

  /**
   * Runs {@code body} on a new G of {@code s} and waits up to {@code seconds} for it; a failure
   * or exception of the body, or a G that does not finish, fails the caller with {@link #dump}.
   */
  static void runOnG(Sched s, int seconds, GBody body) throws InterruptedException {
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread g =
        s.newBuilder()
            .start(
                () -> {
                  try {
                    body.run();
                  } catch (Throwable t) {
                    failure.set(t);
                  }
                });
    if (!g.join(Duration.ofSeconds(seconds))) {
      throw new AssertionError("the G did not finish in " + seconds + " s\n" + dump(s));
    }
    Throwable t = failure.get();
    if (t != null) {
      throw new AssertionError(t.getMessage() + "\n" + dump(s), t);
    }
  }

  /**
   * Environment variables a child JVM never inherits: gmp4j's own and the JVM's (which would add
   * flags and a "Picked up" line on stderr). The same list as it/'s ChildJvm.SCRUBBED_ENV.
   */
  public static final List<String> SCRUBBED_ENV =
      List.of("GMPDEBUG", "GOMAXPROCS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS");

  /**
   * Runs {@code main} in a child JVM on this test class path (java.lang opened to it, {@code
   * jvmArgs} before the class, {@code args} after it), its output in files of {@code dir}, and
   * waits up to 90 s; fails the caller unless it exits 0. Returns its stdout.
   */
  static String runChildJvm(Path dir, List<String> jvmArgs, Class<?> main, String... args)
      throws IOException, InterruptedException {
    Path out = dir.resolve("child.out");
    Path err = dir.resolve("child.err");
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("--add-opens=java.base/java.lang=ALL-UNNAMED");
    cmd.addAll(jvmArgs);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    SCRUBBED_ENV.forEach(pb.environment()::remove);
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    Process p = pb.start();
    try {
      boolean done = p.waitFor(90, TimeUnit.SECONDS);
      String shown =
          "\n--- stdout:\n" + Files.readString(out) + "--- stderr:\n" + Files.readString(err);
      if (!done) {
        throw new AssertionError("the child did not finish" + shown);
      }
      if (p.exitValue() != 0) {
        throw new AssertionError("the child exited " + p.exitValue() + shown);
      }
      return Files.readString(out);
    } finally {
      p.destroyForcibly();
    }
  }

  /**
   * Readies the calling G {@code me} from a platform thread without ready's look at the thread
   * (Sched.readyUnlooked), as the JDK 25 stack walker's late submits did before that look, and
   * spins until that thread is done: a park would be a readying of its own. Called only by
   * {@code me}.
   */
  static void readyUnlooked(Goroutine me) {
    Thread walker = Thread.ofPlatform().start(() -> me.sched.readyUnlooked(me));
    while (walker.isAlive()) {
      Thread.onSpinWait();
    }
  }

  /**
   * Leaves an entry of the calling G {@code me} queued while it runs on, status runnable, as the
   * JDK 25 stack walker's late submits did before ready's look: {@link #readyUnlooked} while me
   * is in a syscall bracket ('A spurious submit inside the bracket' in Syscall; outside one the
   * readying would leave it to me's M). Called only by {@code me}, which must not park meanwhile.
   */
  static void queueEntryUnlooked(Goroutine me) {
    boolean entered = Syscall.enter();
    readyUnlooked(me);
    Syscall.exit(entered);
  }

  /**
   * Submits the calling G {@code me} again from a platform thread, as JDK 25's stack walker
   * resubmits a thread it suspended and that has run since (me is mounted), and spins until that
   * thread is done. Called only by {@code me}.
   */
  static void submitLikeTheStackWalker(Goroutine me) {
    Thread walker = Thread.ofPlatform().start(() -> me.execute(me.runContinuation));
    while (walker.isAlive()) {
      Thread.onSpinWait();
    }
  }

  /** schedtrace detail, each P's state, and the stack of each M of {@code s} and of sysmon. */
  static String dump(Sched s) {
    StringBuilder sb = new StringBuilder(s.schedtrace(true));
    for (Processor pp : s.allp) {
      sb.append(pp).append('\n');
    }
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t instanceof Machine mp ? mp.sched == s : t.getName().equals("gmp-sysmon")) {
        sb.append(t).append(' ').append(t.getState()).append('\n');
        for (StackTraceElement e : t.getStackTrace()) {
          sb.append("    at ").append(e).append('\n');
        }
      }
    }
    return sb.toString();
  }
}
