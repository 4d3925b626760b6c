package io.gmp4j.agent;

import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.HashMap;
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

  /** Waited on before each batch (null: none); see {@link Gate}. */
  private final Gate gate;

  /** What a caller may make each batch wait for: the deferral's quiet process (DeferredPolls). */
  interface Gate {
    /** Returns when the next batch may run. Only on the retransforming thread. */
    void await() throws InterruptedException;
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
      Gate gate) {
    this.inst = inst;
    this.transformer = transformer;
    this.only = only;
    this.prefix = prefix;
    this.origin = origin;
    this.quiet = quiet;
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
                  inst, transformer, only, "gmp4j: retransform: ", origin, false, null),
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
      AgentState.publish(AgentState.RETRANSFORM, "done " + summary);
    } catch (Throwable t) {
      String line =
          prefix
              + "stopped: "
              + Stderr.describe(t)
              + "; the classes not done yet keep running without polls";
      Stderr.line(line);
      AgentState.publish(AgentState.RETRANSFORM, "done " + line);
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
    long lastProgress = t0;
    for (int i = 0; i < todo.size(); i += BATCH) {
      List<Class<?>> batch = todo.subList(i, Math.min(todo.size(), i + BATCH));
      if (gate != null) {
        gate.await();
      }
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
      if (now - lastProgress >= PROGRESS_MS * 1_000_000L && done < todo.size() && !quiet) {
        lastProgress = now;
        Stderr.line(prefix + done + " of " + todo.size() + " classes");
      }
      Thread.sleep(PAUSE_MS);
    }
    // Counted on this thread: Coverage's counts also move with the classes that other threads
    // load meanwhile (the JVM's verification of a class being redefined loads some), and the
    // reasons a class got no poll are in its summary (preempt.report=1).
    long polls = transformer.retransformedOnThisThread() - changed0;
    List<String> why = new ArrayList<>();
    if (readBack > 0) {
      why.add(
          readBack + " read back from their class files (no loop, or excluded), not retransformed");
    }
    if (unmodifiable > 0) {
      why.add(unmodifiable + " not modifiable");
    }
    if (!failed.isEmpty()) {
      why.add(failed.size() + " refused by the JVM, first: " + failed.get(0));
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    int n = todo.size() + unmodifiable + readBack;
    long unchanged = todo.size() - failed.size() - polls;
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
