package io.gmp4j.agent;

import io.gmp4j.agent.poll.Coverage;
import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * After an attach, gives preemption polls to the application classes loaded before it, by
 * retransformation, in the background; and after premain, to the classes a JDK AOT cache loaded
 * before the agent ran ('Classes loaded before premain' in AgentInstaller).
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
 *       time ({@link PreemptPollTransformer#wantedName}: not hidden, not arrays) and that the JVM
 *       can modify.
 *   <li>Leave out those that {@link PreemptPollTransformer#leavesAlone} says would come back
 *       unchanged, read from their class files ('Class files read back').
 *   <li>Retransform the rest {@value #BATCH} at a time, pausing {@value #PAUSE_MS} ms between
 *       batches, and leaving for later the classes of a batch that some thread is running a
 *       method of ('Running classes'). A retransformation runs at a safepoint per batch and
 *       deoptimizes compiled code that depends on the classes; small batches keep each pause
 *       short (the JDK's own retransform of 32 small classes takes about a millisecond here),
 *       and the pause lets the app run between them. A batch that fails is retried one class at
 *       a time, so one bad class leaves only itself without polls.
 *   <li>Progress goes to the {@code gmp4j.retransform} property ('AgentState'; not for the
 *       deferral's pass at its deadline), and to stderr every {@value #PROGRESS_MS} ms when it
 *       takes that long; at the end one summary line.
 * </ol>
 *
 * A method already on a stack keeps its old code until it is next entered: a loop that started
 * before the attach and never returns has no poll, and the hog hand-off covers it meanwhile.
 * Retransformation replaces code only: no field, no state, nothing in flight changes.
 *
 * <h2>Running classes</h2>
 *
 * A method that is running, or waiting on a parked virtual thread's stack, when its class is
 * retransformed goes on in its old version, and HotSpot never compiles an old version again: it
 * runs in the interpreter until it returns, about 11 times slower in a loop (BENCHMARKS.md,
 * 'Early polls'). For a loop that never returns (a server's accept or poller loop) that is for
 * good. So before each batch one look at every stack ({@link #methodsOnStacks}: every platform
 * thread's and every goroutine's) finds the classes that some thread is in, in a method that the
 * retransformation changes (one with a backward branch, read from the class file as in 'Class
 * files read back'; any method where that is not known), and those wait: after the others they
 * are looked at again, {@value #LOOK_MS} ms apart, {@value #LOOKS} times in all. A class still on
 * a stack at the last look is left as it is by the deferral, the one caller with a {@link Gate}
 * (it has its early polls, 'Deferred polls' in DeferredPolls, and Coverage counts it as
 * instrumented), and retransformed all the same after an attach or for an AOT cache (without it
 * the class would never get a poll). A method without a loop is
 * not changed, so HotSpot keeps running it where it runs. The look is by class and method name,
 * so a class of the same name in another loader, or an overload, waits too.
 *
 * <h2>Prepared rewrites</h2>
 *
 * Between the look and the safepoint that replaces the code, the JVM calls the transformer for
 * each class of the batch, and a thread that enters a changed method meanwhile is not seen. The
 * injector's rewrite is most of that time (on the first batch, with the injector not yet
 * compiled, tens of milliseconds a class). So the injector rewrites the batch before the look,
 * from the class files read back ('Class files read back'), and keeps the results on this
 * thread ({@link PreemptPollTransformer#prepare}); the transformer, called by the JVM on this
 * same thread with the same bytes, takes them and records them as its own. What remains between
 * the look and the safepoint is a hash of each class file. Bytes that differ (another agent's
 * transformer changed them at load) are rewritten there as before.
 *
 * <p>What it cannot see: a thread that enters a changed method in that remaining moment, and
 * virtual threads that the JDK's scheduler runs (where gmp4j's could not be installed). The look
 * costs one safepoint for the platform threads and a stack walk per goroutine, a handshake for a
 * mounted one: measured on the 2-vCPU VM with goroutines parked 23 frames deep, 6-12 ms with 100,
 * 46-59 ms with 1,000, 0.2-0.4 s with 10,000, once per batch. A batch waits for the deferral's
 * quiet process first, so that is spent when little else runs.
 *
 * <h2>Class files read back</h2>
 *
 * Most loaded classes have no loop (on the Spring Boot app of issue 17, 2,997 of the 3,878 that
 * its AOT cache loaded before premain), and a retransformation that changes nothing is not free:
 * HotSpot redefines the class all the same, at a safepoint, and deoptimizes the compiled code
 * that depends on it, which in a warm service is compiled again. So step 3 reads each class's
 * file as the JVM would have handed it to the transformer: from the jar or directory of its code
 * source ({@link #classFile}), and the injector's fast reject ('Fast reject' in the injector's
 * BackEdges) looks for a backward branch. A class without one is counted as the transformer
 * would have counted it, and not retransformed. Anything in doubt is retransformed as before: no
 * code source, no file of that name there, a file that declares another class, bytes the fast
 * reject cannot read, prologue polls. On that app, 886-888 classes were retransformed instead of
 * 3,878, in 3.4-4.9 s instead of 5.7-5.9 s (BENCHMARKS.md, 'Class files read back').
 *
 * <p>What it cannot see: bytes that another agent's transformer changed at load (a loop it
 * added), or a jar replaced on disk after the class was loaded from it. Such a class, left without
 * polls, is handed off like any hog ('Hog hand-off' in the runtime's HogHandoff).
 *
 * <p>Rejected: one {@code retransformClasses} call for everything (a single pause of up to
 * seconds in a large app), and Byte Buddy's redefinition strategy with its batch allocator (the
 * poll injector is a plain ClassFileTransformer, and this loop is the whole of what it would do).
 */
final class Retransformer implements Runnable {
  static final int BATCH = 32;
  static final long PAUSE_MS = 5;
  static final long PROGRESS_MS = 2000;

  /** 'Running classes': how many times a class found on a stack is looked at again. */
  static final int LOOKS = 5;

  /** 'Running classes': the wait between two looks at the classes found on a stack. */
  static final long LOOK_MS = 1000;

  private final Instrumentation inst;
  private final PreemptPollTransformer transformer;

  /** The internal names of the classes to take, or null for every class loaded. */
  private final Set<String> only;

  /** Starts the summary line: {@code gmp4j: retransform: } or {@code gmp4j: preempt.defer: }. */
  private final String prefix;

  /** What the classes are, in the summary line: {@code loaded before the attach}. */
  private final String origin;

  /** Whether the summary and progress lines are left out of stderr (AgentState has them). */
  private final boolean quiet;

  /**
   * Whether progress and the summary go to {@code gmp4j.retransform} (AgentState): false for the
   * deferral's pass at its deadline ('The deadline' in DeferredPolls), after which the property
   * still says {@code deferring}.
   */
  private final boolean publishes;

  /** Waited on before each batch (null: none); see {@link Gate}. */
  private final Gate gate;

  /**
   * What a caller may make each batch wait for, the deferral's quiet process (DeferredPolls),
   * and what becomes of the classes a thread stayed in.
   */
  interface Gate {
    /** Returns when the next batch may run. Only on the retransforming thread. */
    void await() throws InterruptedException;

    /**
     * 'Running classes': {@code kept} were on a thread's stack at every look and keep their
     * early polls; by default they count as instrumented for good. Only on the retransforming
     * thread.
     */
    default void kept(List<Class<?>> kept) {
      for (Class<?> c : kept) {
        Coverage.global().keptEarly(c.getClassLoader(), c.getName().replace('.', '/'));
      }
    }
  }

  /**
   * Steps 2 to 5 for the classes named in {@code only} (internal names; null for all), run on
   * the caller's thread by {@link #run}: 'Deferred polls' in {@link DeferredPolls}, with its
   * {@code gate} before each batch (null: none).
   */
  Retransformer(
      Instrumentation inst,
      PreemptPollTransformer transformer,
      Set<String> only,
      String prefix,
      String origin,
      boolean quiet,
      boolean publishes,
      Gate gate) {
    this.inst = inst;
    this.transformer = transformer;
    this.only = only;
    this.prefix = prefix;
    this.origin = origin;
    this.quiet = quiet;
    this.publishes = publishes;
    this.gate = gate;
  }

  /**
   * Starts step 1 for the classes named in {@code only} (null: every class the transformer
   * would take), {@code origin} saying what they are in the lines. Called once: by the installer
   * after an attach, or by premain for the classes an AOT cache loaded before it ('Classes loaded
   * before premain' in AgentInstaller). Never throws.
   */
  static void start(
      Instrumentation inst, PreemptPollTransformer transformer, Set<String> only, String origin) {
    try {
      AgentState.publish(AgentState.RETRANSFORM, "running 0/?");
      Thread t =
          new Thread(
              new Retransformer(
                  inst, transformer, only, "gmp4j: retransform: ", origin, false, true, null),
              "gmp4j-retransform");
      t.setDaemon(true);
      t.start();
    } catch (Throwable t) {
      Stderr.line(
          "gmp4j: retransform: cannot start: "
              + Stderr.describe(t)
              + "; the classes "
              + origin
              + " keep running without polls");
      AgentState.publish(AgentState.RETRANSFORM, "done gmp4j: retransform did not run");
    }
  }

  @Override
  public void run() {
    try {
      String summary = retransformAll();
      if (!quiet) {
        Stderr.line(summary);
      }
      if (publishes) {
        AgentState.publish(AgentState.RETRANSFORM, "done " + summary);
      }
    } catch (Throwable t) {
      String line =
          prefix
              + "stopped: "
              + Stderr.describe(t)
              + "; the classes not done yet keep running without polls";
      Stderr.line(line);
      if (publishes) {
        AgentState.publish(AgentState.RETRANSFORM, "done " + line);
      }
    }
  }

  /**
   * Retransforms {@code classes} in one call, and one at a time if the JVM refuses the call, so
   * one bad class leaves only itself without polls (added to {@code failed}). Returns how many
   * changes the transformer counted on this thread in calls the JVM then refused: a refused
   * batch's classes are counted again by their retries.
   */
  private long retransform(List<Class<?>> classes, List<String> failed) {
    if (classes.isEmpty()) {
      return 0;
    }
    long before = transformer.retransformedOnThisThread();
    try {
      inst.retransformClasses(classes.toArray(new Class<?>[0]));
      return 0;
    } catch (Throwable batchFailed) {
      long refused = transformer.retransformedOnThisThread() - before;
      for (Class<?> c : classes) {
        long one = transformer.retransformedOnThisThread();
        try {
          inst.retransformClasses(c);
        } catch (Throwable t) {
          refused += transformer.retransformedOnThisThread() - one;
          failed.add(c.getName() + " (" + Stderr.describe(t) + ")");
        }
      }
      return refused;
    }
  }

  /**
   * The classes of {@code batch} that no thread is in, from one look at every stack ('Running
   * classes'); the others are added to {@code running}. A class in {@code changes} counts only
   * if a thread is in one of the methods named there, the ones its retransformation changes.
   * Only on the thread that runs {@link #run}.
   */
  private static List<Class<?>> notRunning(
      List<Class<?>> batch, Map<Class<?>, Set<String>> changes, List<Class<?>> running) {
    Map<String, Set<String>> onStacks = methodsOnStacks();
    List<Class<?>> now = new ArrayList<>(batch.size());
    for (Class<?> c : batch) {
      Set<String> in = onStacks.get(c.getName());
      Set<String> changed = changes.get(c);
      boolean busy =
          in != null && (changed == null || !java.util.Collections.disjoint(in, changed));
      (busy ? running : now).add(c);
    }
    return now;
  }

  /**
   * Binary class name → the names of its methods on some thread's stack: every platform thread
   * (a carrier shows its own frames, not its virtual thread's) and every live goroutine, through
   * {@code Gmp.goroutines()} on the boot class path. Virtual threads the JDK's scheduler runs
   * (where gmp4j's could not be installed) are not seen. Never throws: what cannot be read is
   * left out.
   */
  static Map<String, Set<String>> methodsOnStacks() {
    Map<String, Set<String>> names = new HashMap<>();
    try {
      for (StackTraceElement[] st : Thread.getAllStackTraces().values()) {
        addMethods(st, names);
      }
    } catch (RuntimeException ignored) {
      // a security manager's refusal (JDK 17 and older only): no platform thread seen
    }
    try {
      for (io.gmp4j.GoroutineInfo g : io.gmp4j.Gmp.goroutines()) {
        Thread t = g.thread();
        // Runnable ones too: the JDK submits one again after walking it (a readying that the
        // scheduler drops or leaves to the G's M: 'Readied while running' in Goroutine).
        if (t != null) {
          addMethods(t.getStackTrace(), names); // mounted: a handshake with its carrier
        }
      }
    } catch (RuntimeException | LinkageError ignored) {
      // no gmp4j scheduler: only the platform threads were seen
    }
    return names;
  }

  /** The names of the first {@code max} classes, then how many more. */
  private static String names(List<Class<?>> classes, int max) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < Math.min(max, classes.size()); i++) {
      sb.append(i == 0 ? "" : ", ").append(classes.get(i).getName());
    }
    return classes.size() > max ? sb + " and " + (classes.size() - max) + " more" : sb.toString();
  }

  private static void addMethods(StackTraceElement[] stack, Map<String, Set<String>> names) {
    for (StackTraceElement e : stack) {
      Set<String> methods = names.get(e.getClassName());
      if (methods == null) {
        names.put(e.getClassName(), methods = new HashSet<>());
      }
      methods.add(e.getMethodName());
    }
  }

  /**
   * The class file {@code c} was defined from, or null where that is not sure. Read from its
   * code source: from the jar or directory named by a {@code file:} location directly (each jar
   * opened once, in {@code jars}), else through its loader, as long as the loader serves the
   * class from that same location (a loader whose {@code getResource} delegates another way than
   * its {@code loadClass} may not). Null where there is no code source or no such entry, or a
   * read fails. See 'Class files read back'.
   */
  static byte[] classFile(Class<?> c, String internal, Map<String, JarFile> jars) {
    try {
      CodeSource source = c.getProtectionDomain().getCodeSource();
      URL location = source == null ? null : source.getLocation();
      ClassLoader loader = c.getClassLoader();
      if (location == null || loader == null) {
        return null;
      }
      String path = internal.concat(".class");
      String at = location.toString();
      if (at.startsWith("file:")) {
        Path file = Path.of(location.toURI());
        if (at.endsWith("/")) {
          Path f = file.resolve(path);
          return Files.isRegularFile(f) ? Files.readAllBytes(f) : null;
        }
        JarFile jar = jars.get(at);
        if (jar == null) {
          jars.put(at, jar = new JarFile(file.toFile(), false));
        }
        JarEntry e = jar.getJarEntry(path);
        if (e == null) {
          return null;
        }
        try (InputStream in = jar.getInputStream(e)) {
          return in.readAllBytes();
        }
      }
      URL url = loader.getResource(path); // a nested jar: its location already ends in "!/"
      if (url == null || !url.toString().equals(at.concat(path))) {
        return null;
      }
      try (InputStream in = url.openStream()) {
        return in.readAllBytes();
      }
    } catch (Exception | LinkageError e) {
      return null;
    }
  }

  /** Steps 2 to 5; returns the summary line. Called only on the thread that runs {@link #run}. */
  private String retransformAll() throws InterruptedException {
    long t0 = System.nanoTime();
    List<Class<?>> todo = new ArrayList<>();
    Map<Class<?>, Set<String>> changes = new HashMap<>();
    Map<Class<?>, byte[]> files = new HashMap<>();
    int unmodifiable = 0;
    int readBack = 0;
    Map<String, JarFile> jars = new HashMap<>();
    try {
      for (Class<?> c : inst.getAllLoadedClasses()) {
        String internal = transformer.wantedName(c); // null: never instrumented at load either
        if (internal == null || (only != null && !only.contains(internal))) {
          continue;
        }
        if (!inst.isModifiableClass(c)) {
          unmodifiable++;
          continue;
        }
        byte[] file = classFile(c, internal, jars); // 'Class files read back'
        if (file != null && transformer.leavesAlone(c.getClassLoader(), internal, file)) {
          readBack++;
          continue;
        }
        todo.add(c);
        Set<String> changed = file == null ? null : transformer.changedMethods(file);
        if (changed != null) {
          changes.put(c, changed); // 'Running classes': only these matter on a stack
        }
        if (file != null) {
          files.put(c, file); // 'Prepared rewrites'
        }
      }
    } finally {
      for (JarFile jar : jars.values()) {
        try {
          jar.close();
        } catch (IOException ignored) {
          // read only: nothing was lost
        }
      }
    }
    long changed0 = transformer.retransformedOnThisThread();
    List<String> failed = new ArrayList<>();
    long refused = 0; // counted by the transformer in calls the JVM refused
    List<Class<?>> running = new ArrayList<>(); // 'Running classes': found on a stack
    int total = todo.size();
    int done = 0;
    long lastProgress = t0;
    for (int look = 1; ; look++) {
      for (int i = 0; i < todo.size(); i += BATCH) {
        List<Class<?>> batch = todo.subList(i, Math.min(todo.size(), i + BATCH));
        if (gate != null) {
          gate.await();
        }
        for (Class<?> c : batch) { // 'Prepared rewrites': the work before the look
          byte[] file = files.get(c);
          if (file != null) {
            transformer.prepare(c.getName().replace('.', '/'), file);
          }
        }
        List<Class<?>> now = notRunning(batch, changes, running);
        refused += retransform(now, failed);
        transformer.forgetPrepared();
        for (Class<?> c : now) {
          files.remove(c);
        }
        done += now.size();
        if (publishes) {
          AgentState.publish(AgentState.RETRANSFORM, "running " + done + "/" + total);
        }
        long t = System.nanoTime();
        if (t - lastProgress >= PROGRESS_MS * 1_000_000L && done < total && !quiet) {
          lastProgress = t;
          Stderr.line(prefix + done + " of " + total + " classes");
        }
        Thread.sleep(PAUSE_MS);
      }
      if (running.isEmpty() || look == LOOKS) {
        break;
      }
      todo = running;
      running = new ArrayList<>();
      Thread.sleep(LOOK_MS);
    }
    int keptRunning = 0;
    if (!running.isEmpty() && gate != null) { // the deferral: their early polls stay
      keptRunning = running.size();
      gate.kept(running);
    } else if (!running.isEmpty()) {
      refused += retransform(running, failed); // an attach: else they would have no poll
    }
    // Counted on this thread: Coverage's counts also move with the classes that other threads
    // load meanwhile (the JVM's verification of a class being redefined loads some), and the
    // reasons a class got no poll are in its summary (preempt.report=1).
    long polls = transformer.retransformedOnThisThread() - changed0 - refused;
    List<String> why = new ArrayList<>();
    if (readBack > 0) {
      why.add(
          readBack + " read back from their class files (no loop, or excluded), not retransformed");
    }
    if (unmodifiable > 0) {
      why.add(unmodifiable + " not modifiable");
    }
    if (keptRunning > 0) {
      why.add(
          keptRunning
              + " on a thread's stack at each of "
              + LOOKS
              + " looks, kept as they were: ["
              + names(running, 5)
              + "]");
    }
    if (!failed.isEmpty()) {
      why.add(failed.size() + " refused by the JVM, first: " + failed.get(0));
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    int n = total + unmodifiable + readBack;
    long unchanged = total - keptRunning - failed.size() - polls;
    if (unchanged > 0) {
      why.add(unchanged + " unchanged by the injector (no loop, excluded or too large)");
    }
    return prefix
        + n
        + (n == 1 ? " class " : " classes ")
        + origin
        + ", in "
        + ms
        + " ms: "
        + polls
        + " given polls, "
        + (n - polls)
        + " left alone"
        + (why.isEmpty() ? "" : " (" + String.join(", ", why) + ")");
  }
}
