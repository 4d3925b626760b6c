package io.gmp4j.agent;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import javax.management.ObjectName;

/**
 * Keeps C2 off the agent's own class rewriting.
 *
 * <h2>Implementation overview: 'JIT directive'</h2>
 *
 * The loop-poll injector and the ASM it uses run on the loading thread of every class with
 * loops: on Spring Boot's start-up, 786 classes in about three seconds. HotSpot soon finds them
 * hot, and C2 compiles them. ASM's decoder {@code ClassReader.readCode} is 5 KB of bytecode, and
 * each new class's code can hit a branch its profile never saw: in one start C2 compiled it five
 * times, 2.9 s of a compiler thread's time. On two CPUs that is taken from the application's own
 * start-up, which is waiting for those rewrites. With the directive the start is 0.29 s shorter
 * and takes 1.0 s less CPU (BENCHMARKS.md, 'The injector on C1: preempt.jit').
 *
 * <p>So at install the agent pushes a compiler directive (JEP 165, what {@code jcmd <pid>
 * Compiler.directives_add} does; 'Without the MBean server' says how): the methods of {@code
 * io/gmp4j/agent/poll/} and of the agent's shaded ASM are excluded from C2. HotSpot then marks
 * each one not compilable at tier 4 when it first asks, and compiles it at tier 1 (C1, fully
 * optimised, without profiling). Once C2's code would have been ready, C1's runs a rewrite 1.6x
 * slower, but C2 needs some 30,000 rewrites to pay back what compiling ASM costs, and an
 * application has a few thousand classes with loops. {@code preempt.jit=c2} is for one that
 * loads new ones without end.
 *
 * <p>Excluding a method keeps C2 from compiling it, not from inlining it. The JDK's {@code
 * TransformerManager.transform} runs once per class load and per transformer, so C2 compiles
 * it, and it inlined the agent's transformer, {@code PollInjector.transform} and {@code
 * instrument} into it: 200 ms of C2 in one Spring Boot start, for code that calls the tier-1
 * ASM at once. A second directive, matched only where the class-loading path enters the
 * injector ({@code sun/instrument}, {@code java/lang/instrument}, and the agent's transformer,
 * its {@code PollInjectors} and {@code DeferredPolls}), tells C2 not to inline the injector or
 * ASM there. The directives do not overlap; the first in the file is matched first anyway.
 * Only those classes match: the application's, the rest of the JDK's and the runtime's (the
 * scheduler, the poll itself) keep C2 as it was. {@code jcmd <pid> Compiler.directives_print}
 * shows both.
 *
 * <p>Not pushed where C1 is not there to take over: with {@code -XX:-TieredCompilation} or
 * {@code -XX:CompilationMode=high-only} the excluded methods would stay interpreted. Not pushed
 * where C2 does not run anyway ({@code TieredStopAtLevel} below 4, {@code quick-only}), nor with
 * {@code preempt.jit=c2}. A directive that cannot be pushed (no {@code jdk.management} module, a
 * temporary directory that cannot be written, {@code CompilerDirectivesLimit} reached) costs
 * nothing but the start-up it would have saved; {@link #push} says why, for {@code inittrace}.
 *
 * <h2>Without the MBean server</h2>
 *
 * The public route to a diagnostic command is the DiagnosticCommand MBean, and it starts the
 * platform MBean server: on this kind of machine 250-450 ms and about 0.35 s of CPU (every
 * platform MXBean is introspected and registered), for one command. An application that never
 * uses JMX would pay that at every start. So the agent opens {@code jdk.management}'s {@code
 * com.sun.management.internal} to the runtime (as it opens {@code java.lang} to it), and the
 * runtime's {@code Hooks.diagnosticCommand} calls the command's implementation, {@code
 * DiagnosticCommandImpl.executeDiagnosticCommand}, the native method behind the MBean's
 * operations: about 10 ms of CPU. Not opened to the agent's own module: that is the unnamed
 * module of the application's class path, whose code would then reach those internals too. That
 * class is JDK 25's internals, so where it is missing or the call fails before reaching HotSpot,
 * the MBean route serves, as it does for bench/, which has no {@code Instrumentation}. The
 * exporter's MXBean waits for the MBean server in the same spirit ('Registered when the server
 * starts' in the agent's {@code Exporters}).
 *
 * <p>Rejected: {@code -XX:CompileCommand} and {@code -XX:CompilerDirectivesFile}, which are
 * command-line flags a user would have to add; excluding the injector from both compilers, which
 * leaves it interpreted for good.
 */
public final class JitDirective implements Runnable {
  /**
   * The directives, C2 only: the injector and the shaded ASM are not compiled; where the class
   * loading path calls them, they are not inlined either. The first in the file is matched first.
   */
  static final String JSON =
      "[{match: [\"io/gmp4j/agent/poll/*.*\", \"io/gmp4j/agent/shaded/*.*\"],"
          + " c2: {Exclude: true}},"
          + " {match: [\"sun/instrument/*.*\", \"java/lang/instrument/*.*\","
          + " \"io/gmp4j/agent/PreemptPollTransformer.*\", \"io/gmp4j/agent/PollInjectors*.*\","
          + " \"io/gmp4j/agent/DeferredPolls*.*\"],"
          + " c2: {inline: [\"-io/gmp4j/agent/poll/*.*\", \"-io/gmp4j/agent/shaded/*.*\"]}}]";

  /** What HotSpot answers when it has taken both. */
  private static final String ADDED = "2 compiler directives added";

  private static final String DIAGNOSTIC_COMMAND = "com.sun.management:type=DiagnosticCommand";

  /** Where JDK 25 keeps the diagnostic commands' implementation, in {@code jdk.management}. */
  private static final String DCMD_PACKAGE = "com.sun.management.internal";

  /** The agent's, to open {@code jdk.management} for the direct call; null in bench/. */
  private final Instrumentation inst;

  private JitDirective(Instrumentation inst) {
    this.inst = inst;
  }

  /**
   * Pushes the directives from a daemon thread of its own, so that premain waits neither for the
   * platform MXBeans' provider nor, on the fallback route, for the MBean server; with {@code
   * inittrace=1} the thread prints what came of it. A class, not a lambda, which would link on
   * premain's thread ('No lambdas' in JdkWeaver).
   */
  static void start(Instrumentation inst) {
    Thread t = new Thread(new JitDirective(inst), "gmp4j-jit-directive");
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void run() {
    long t0 = System.nanoTime();
    String why = push(inst);
    if (InitTrace.enabled()) {
      Stderr.line(
          why == null
              ? "gmp4j: inittrace: C2 kept off the poll injector ('JIT directive'), "
                  + (System.nanoTime() - t0) / 1_000_000
                  + " ms"
              : "gmp4j: inittrace: the poll injector keeps C2: " + why);
    }
  }

  /**
   * Pushes the directives. Returns null once they are on HotSpot's stack, else why not. Never
   * throws. With {@code inst}, through the diagnostic command's own object ('Without the MBean
   * server'); without it, or if that fails, through the platform MBean server, whose start takes
   * a few hundred milliseconds: call it off premain's thread. Public for bench/'s InjectorWarmup,
   * which measures what it saves.
   */
  public static String push(Instrumentation inst) {
    try {
      String why = whyNot(ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class));
      if (why != null) {
        return why;
      }
      // The command's object, and what the file's name needs, before the file exists: see
      // 'Nothing left behind'.
      Direct direct = inst == null ? null : direct(inst);
      Path dir = Path.of(System.getProperty("java.io.tmpdir")).toRealPath();
      Set<String> open = openFds(); // null without /proc
      if (open != null) {
        // The JDK unlinks a DELETE_ON_CLOSE file on Linux right after its open: no name is left
        // for an exit to leave behind. Then only the descriptor names the file, as "(deleted)".
        String name =
            "gmp4j-jit-"
                .concat(Long.toUnsignedString(ThreadLocalRandom.current().nextLong()))
                .concat(".json");
        try (FileChannel ch =
            FileChannel.open(
                dir.resolve(name),
                StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE,
                StandardOpenOption.DELETE_ON_CLOSE)) {
          String path = openedPath(dir.resolve(name.concat(" (deleted)")), open);
          if (path != null) {
            return add(ch, path, direct);
          }
        }
        // No descriptor on it (a /proc that does not say "(deleted)"): by name, as below.
      }
      Path file = Files.createTempFile(dir, "gmp4j-jit-", ".json");
      try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
        file.toFile().deleteOnExit();
        return add(ch, file.toString(), direct);
      } finally {
        Files.deleteIfExists(file);
      }
    } catch (Throwable t) {
      return Stderr.describe(t);
    }
  }

  /** Writes the directives to {@code ch} and has HotSpot read them from {@code path}. */
  private static String add(FileChannel ch, String path, Direct direct) throws Exception {
    ch.write(ByteBuffer.wrap(JSON.getBytes(StandardCharsets.US_ASCII)));
    String said = direct == null ? null : direct.directivesAdd(path);
    if (said == null) {
      said = viaMBeanServer(path);
    }
    String s = said.strip();
    return s.startsWith(ADDED) ? null : s;
  }

  /**
   * 'Nothing left behind': HotSpot reads the directives from a file, and a file in the temporary
   * folder outlives a {@code Runtime.halt} (or a kill) of the app, which skips {@code
   * deleteOnExit}; a daemon thread also keeps running through the shutdown hooks of a normal
   * exit and stops at the halt after them. So the file is opened with {@code DELETE_ON_CLOSE},
   * which on Linux the JDK carries out by unlinking it in the same call, right after the open, and
   * HotSpot is given {@code /proc/self/fd/<n>}, the name under which this process still opens it.
   * This method finds {@code n}: among the descriptors that were not open before ({@code before},
   * listed by {@link #openFds} ahead of the open, which also loads the classes the listing needs),
   * the one whose link reads {@code file} (for the unlinked file, its old name and {@code
   * " (deleted)"}). A hello world that halts at once left the file behind in 17 of 600 runs when it
   * was written and parsed under its name, in 1 of 300 when it was deleted after a cold listing,
   * and in 1 of 300 (halts) and 1 of 200 (normal exits of a program that ends at once) when it
   * was deleted right after a listing, which a halt or an exit could still fall into
   * (AgentIT.unmodifiedProgramRunsOnGmp4j and haltedProgramLeavesNoFileBehind each failed so
   * once); with the unlink inside the open, in none of 300 halts and none of 300 exits.
   * Returns that name, or null if no new descriptor is on {@code file} (then the push falls back
   * to a file by its name, deleted after the command, as where there is no {@code /proc}). Any
   * thread; never throws.
   */
  // Not one listing helper shared with openFds: this one stops at the first match and builds no
  // string. When the file still had its name during the listing, a merged version (a map of every
  // new link, and "/proc/self/fd/" + name, whose first string concatenation bootstraps an
  // invokedynamic) left the file behind in 2 of 200 halted runs, this one in none of 200.
  static String openedPath(Path file, Set<String> before) {
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
      for (Path fd : ds) {
        if (!before.contains(fd.getFileName().toString())) {
          try {
            if (file.equals(Files.readSymbolicLink(fd))) {
              return fd.toString();
            }
          } catch (IOException | UnsupportedOperationException e) {
            // the listing's own descriptor, or one closed meanwhile: the next one
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      return null;
    }
    return null;
  }

  /**
   * The descriptors open in this process, by their names in {@code /proc/self/fd}, but the
   * listing's own (freed when it ends, it is the next one an open takes); null where there is no
   * {@code /proc}. Any thread; never throws.
   */
  static Set<String> openFds() {
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
      Path self = Path.of("/proc/self/fd").toRealPath(); // the listing's descriptor links here
      Set<String> names = new HashSet<>();
      for (Path fd : ds) {
        try {
          if (!self.equals(Files.readSymbolicLink(fd))) {
            names.add(fd.getFileName().toString());
          }
        } catch (IOException | UnsupportedOperationException e) {
          // closed meanwhile
        }
      }
      return names;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /**
   * {@code Compiler.directives_add <file>} by the public route: the DiagnosticCommand MBean, in
   * the platform MBean server, which this starts. Returns what HotSpot said.
   */
  private static String viaMBeanServer(String file) throws Exception {
    Object said =
        ManagementFactory.getPlatformMBeanServer()
            .invoke(
                new ObjectName(DIAGNOSTIC_COMMAND),
                "compilerDirectivesAdd",
                new Object[] {new String[] {file}},
                new String[] {String[].class.getName()});
    return String.valueOf(said);
  }

  /** The direct route: see 'Without the MBean server'. */
  private record Direct(Method diagnosticCommand) {
    /**
     * What HotSpot said to {@code Compiler.directives_add <file>}, or null if the call did not
     * reach it (then the public route serves).
     */
    String directivesAdd(String file) {
      try {
        Object said = diagnosticCommand.invoke(null, "Compiler.directives_add " + file);
        return said == null ? null : said.toString();
      } catch (ReflectiveOperationException | LinkageError e) {
        return null;
      }
    }
  }

  /**
   * The runtime's {@code Hooks.diagnosticCommand}, with {@code jdk.management}'s internals opened
   * to the runtime alone (the boot class path's unnamed module, to which the agent opens {@code
   * java.lang} too; not the agent's, which is the application's class path); null where this JVM
   * has no {@code jdk.management} to open.
   */
  private static Direct direct(Instrumentation inst) {
    try {
      Module jdkManagement = ModuleLayer.boot().findModule("jdk.management").orElse(null);
      Class<?> hooks = Class.forName("io.gmp4j.runtime.Hooks", false, null);
      if (jdkManagement == null
          || !AgentInstaller.openToRuntime(inst, jdkManagement, DCMD_PACKAGE, hooks)) {
        return null;
      }
      return new Direct(hooks.getMethod("diagnosticCommand", String.class));
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return null;
    }
  }

  /** Null if C1 takes over what C2 is kept from, else why the directive would do harm or nothing. */
  static String whyNot(HotSpotDiagnosticMXBean vm) {
    if (!"true".equals(vm.getVMOption("TieredCompilation").getValue())) {
      return "-XX:-TieredCompilation: C2 is the only compiler";
    }
    String mode = vm.getVMOption("CompilationMode").getValue();
    if (!mode.equals("default") && !mode.equals("normal")) {
      return "-XX:CompilationMode=" + mode;
    }
    String stopAt = vm.getVMOption("TieredStopAtLevel").getValue();
    if (!stopAt.equals("4")) {
      return "-XX:TieredStopAtLevel=" + stopAt;
    }
    return null;
  }
}
