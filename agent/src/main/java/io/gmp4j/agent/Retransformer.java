package io.gmp4j.agent;

import io.gmp4j.agent.poll.Coverage;
import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * After an attach, gives preemption polls to the application classes loaded before it, by
 * retransformation, in the background.
 *
 * <h2>Implementation overview</h2>
 *
 * In a running service every application class is already loaded when {@code gmp4j attach}
 * comes, so without this step a CPU-bound virtual thread could only ever be handed off ('Hog
 * hand-off' in the runtime's HogHandoff), never time-sliced. Same rules and filter as at load
 * time: the classes go through the same {@link PreemptPollTransformer} (registered with
 * retransform capability for an attach), whose filter and injector decide.
 *
 * <ol>
 *   <li>On the daemon platform thread {@code gmp4j-retransform}, so agentmain returns at once.
 *   <li>Take {@code getAllLoadedClasses()} and keep those the transformer would take at load
 *       time ({@link PreemptPollTransformer#wanted}), that are not hidden or arrays, and that the
 *       JVM can modify.
 *   <li>Retransform them {@value #BATCH} at a time, pausing {@value #PAUSE_MS} ms between
 *       batches. A retransformation runs at a safepoint per batch and deoptimizes compiled code
 *       that depends on the classes; small batches keep each pause short (the JDK's own
 *       retransform of 32 small classes takes about a millisecond here), and the pause lets the
 *       app run between them. A batch that fails is retried one class at a time, so one bad class
 *       leaves only itself without polls.
 *   <li>Progress goes to the {@code gmp4j.retransform} property ('AgentState'), and to stderr
 *       every {@value #PROGRESS_MS} ms when it takes that long; at the end one summary line.
 * </ol>
 *
 * A method already on a stack keeps its old code until it is next entered: a loop that started
 * before the attach and never returns has no poll, and the hog hand-off covers it meanwhile.
 * Retransformation replaces code only: no field, no state, nothing in flight changes.
 *
 * <p>Rejected: one {@code retransformClasses} call for everything (a single pause of up to
 * seconds in a large app), and Byte Buddy's redefinition strategy with its batch allocator (the
 * poll injector is a plain ClassFileTransformer, and this loop is the whole of what it would do).
 */
final class Retransformer implements Runnable {
  static final int BATCH = 32;
  static final long PAUSE_MS = 5;
  static final long PROGRESS_MS = 2000;

  private final Instrumentation inst;
  private final PreemptPollTransformer transformer;

  private Retransformer(Instrumentation inst, PreemptPollTransformer transformer) {
    this.inst = inst;
    this.transformer = transformer;
  }

  /** Starts step 1. Called once, by the installer after an attach. Never throws. */
  static void start(Instrumentation inst, PreemptPollTransformer transformer) {
    try {
      AgentState.publish(AgentState.RETRANSFORM, "running 0/?");
      Thread t = new Thread(new Retransformer(inst, transformer), "gmp4j-retransform");
      t.setDaemon(true);
      t.start();
    } catch (Throwable t) {
      Stderr.line(
          "gmp4j: retransform: cannot start: "
              + Stderr.describe(t)
              + "; classes loaded before the attach keep running without polls");
      AgentState.publish(AgentState.RETRANSFORM, "done gmp4j: retransform did not run");
    }
  }

  @Override
  public void run() {
    try {
      String summary = retransformAll();
      Stderr.line(summary);
      AgentState.publish(AgentState.RETRANSFORM, "done " + summary);
    } catch (Throwable t) {
      String line =
          "gmp4j: retransform: stopped: "
              + Stderr.describe(t)
              + "; the classes not done yet keep running without polls";
      Stderr.line(line);
      AgentState.publish(AgentState.RETRANSFORM, "done " + line);
    }
  }

  /** Steps 2 to 4; returns the summary line. Called only on gmp4j-retransform. */
  private String retransformAll() throws InterruptedException {
    long t0 = System.nanoTime();
    Class<?>[] all = inst.getAllLoadedClasses();
    List<Class<?>> todo = new ArrayList<>();
    int unmodifiable = 0;
    for (Class<?> c : all) {
      if (c.isArray() || c.isPrimitive() || c.isHidden()) {
        continue;
      }
      if (!transformer.wanted(c.getClassLoader(), c.getName().replace('.', '/'), null)) {
        continue; // the JDK's, gmp4j's, Byte Buddy's: never instrumented at load time either
      }
      if (!inst.isModifiableClass(c)) {
        unmodifiable++;
        continue;
      }
      todo.add(c);
    }
    Coverage coverage = Coverage.global();
    long in0 = coverage.instrumented();
    Map<Coverage.Reason, Long> skip0 = skipped(coverage);
    List<String> failed = new ArrayList<>();
    long lastProgress = t0;
    for (int i = 0; i < todo.size(); i += BATCH) {
      List<Class<?>> batch = todo.subList(i, Math.min(todo.size(), i + BATCH));
      try {
        inst.retransformClasses(batch.toArray(new Class<?>[0]));
      } catch (Throwable batchFailed) {
        for (Class<?> c : batch) {
          try {
            inst.retransformClasses(c);
          } catch (Throwable t) {
            failed.add(c.getName() + " (" + Stderr.describe(t) + ")");
          }
        }
      }
      int done = Math.min(todo.size(), i + BATCH);
      AgentState.publish(AgentState.RETRANSFORM, "running " + done + "/" + todo.size());
      long now = System.nanoTime();
      if (now - lastProgress >= PROGRESS_MS * 1_000_000L && done < todo.size()) {
        lastProgress = now;
        Stderr.line("gmp4j: retransform: " + done + " of " + todo.size() + " classes");
      }
      Thread.sleep(PAUSE_MS);
    }
    long polls = coverage.instrumented() - in0;
    Map<Coverage.Reason, Long> skip1 = skipped(coverage);
    List<String> why = new ArrayList<>();
    long alone = 0;
    for (Coverage.Reason r : Coverage.Reason.values()) {
      long n = skip1.get(r) - skip0.get(r);
      if (n > 0) {
        why.add(n + " " + r);
        alone += n;
      }
    }
    if (unmodifiable > 0) {
      why.add(unmodifiable + " not modifiable");
      alone += unmodifiable;
    }
    if (!failed.isEmpty()) {
      why.add(failed.size() + " refused by the JVM, first: " + failed.get(0));
      alone += failed.size();
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    int n = todo.size() + unmodifiable;
    return "gmp4j: retransform: "
        + n
        + (n == 1 ? " class" : " classes")
        + " loaded before the"
        + " attach, in "
        + ms
        + " ms: "
        + polls
        + " given polls, "
        + alone
        + " left alone"
        + (why.isEmpty() ? "" : " (" + String.join(", ", why) + ")");
  }

  private static Map<Coverage.Reason, Long> skipped(Coverage coverage) {
    Map<Coverage.Reason, Long> m = new EnumMap<>(Coverage.Reason.class);
    for (Coverage.Reason r : Coverage.Reason.values()) {
      m.put(r, coverage.skipped(r));
    }
    return m;
  }
}
