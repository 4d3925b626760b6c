package io.gmp4j.agent;

import io.gmp4j.agent.poll.Coverage;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.jar.JarFile;

/**
 * Installs gmp4j into a running JVM: the runtime on the boot class path, the scheduler started,
 * the JDK advised, loop polls injected into application classes.
 *
 * <h2>Implementation overview</h2>
 *
 * <h3>Class loaders</h3>
 *
 * Two jars, two loaders (DESIGN.md section 1, agent-notes section 0.1):
 *
 * <ul>
 *   <li>gmp4j-agent.jar is on the system class path, as every {@code -javaagent} jar is. It holds
 *       the agent's classes and Byte Buddy relocated to {@code io.gmp4j.agent.shaded.bytebuddy}
 *       (only its repackaged ASM is used, by the loop-poll injector), so an application with its
 *       own Byte Buddy never meets ours.
 *   <li>gmp4j-runtime.jar, embedded in the agent jar as a resource, is appended to the boot class
 *       path, because advice woven into {@code java.lang.VirtualThread} must link to it. Its
 *       classes live in the boot loader's unnamed module, and since the system loader delegates
 *       to the boot loader first, they are the only copy the agent and the app see.
 * </ul>
 *
 * Agent classes reach runtime classes only by reflection on a {@code Class} found through the boot
 * loader, or from calls woven into JDK classes ({@link JdkWeaver}), which name {@code
 * io.gmp4j.runtime.Hooks} only as a constant. No agent class that links to {@code io.gmp4j.runtime}
 * can be loaded before step 4.
 *
 * <h3>Installation</h3>
 *
 * Each step either succeeds or prints one line starting with {@code gmp4j: } that ends in
 * "gmp4j is not installed, the app runs on the JDK's default scheduler", and stops. Nothing is
 * thrown into the application.
 *
 * <ol>
 *   <li>Extract gmp4j-runtime.jar to a temporary file ({@link RuntimeJar}), deleted again after
 *       step 4 (the JVM holds it open) or when the install stops before it.
 *   <li>Validate every setting ({@link AgentOptions}) against {@code io.gmp4j.runtime.Config},
 *       loaded from that file in a throw-away class loader, so that a bad setting leaves the
 *       JVM exactly as it was: not even the boot class path changes.
 *   <li>Write the agent arguments into {@code gmp.<key>} system properties (precedence rule 1).
 *   <li>Append the runtime jar to the boot class path (once per JVM).
 *   <li>Open {@code java.base/java.lang} to the boot loader's unnamed module with {@code
 *       redefineModule}: the runtime reads VirtualThread's private fields and builds threads with
 *       the package-private {@code ThreadBuilders.VirtualThreadBuilder(Executor)}.
 *   <li>Check the JDK's shapes that the advice pins (VirtualThread's constructor).
 *   <li>Preload the classes whose first load inside a transformation throws
 *       ClassCircularityError (agent-notes section 7.1), then start the scheduler ({@code
 *       Hooks.start()}).
 *   <li>Weave {@code VirtualThread.<init>}, {@code ForkJoinWorkerThread.hasKnownQueuedWork} and
 *       the syscall sites ({@link JdkWeaver}) by retransformation: they are already loaded. A
 *       VirtualThread that cannot be woven means no thread ever reaches gmp4j, so that is
 *       reported as "not installed".
 *   <li>Unless {@code asyncpreemptoff=1}, register the {@link PreemptPollTransformer} for classes
 *       loaded from now on, hand its class counts ('Coverage' in {@code
 *       io.gmp4j.agent.poll.Coverage}) to the runtime's metrics, and with {@code
 *       preempt.report=1} add a shutdown hook that prints them as one line. Start the deferral
 *       ({@link DeferredPolls}): on by default at premain ('Deferred polls by default' there),
 *       off with {@code preempt.defer=0}. Unless {@code
 *       preempt.jit=c2}, keep C2 off the injector, on a thread of its own ({@link
 *       JitDirective}). Failing here is not fatal: gmp4j then runs without preemption, as with
 *       asyncpreemptoff=1, and says so.
 *   <li>Register the {@code io.gmp4j:type=Scheduler} MXBean, and start the HTTP endpoint if
 *       {@code exporter.port} is set ({@link io.gmp4j.agent.exporter.Endpoint}). Never fatal:
 *       a failure is one line, and gmp4j and the app run on without the endpoint.
 *   <li>Start the JFR recordings that {@code jfr} and {@code flightrecorder} ask for ({@link
 *       io.gmp4j.agent.jfr.Recordings}). Never fatal either: one line, and no recording.
 * </ol>
 *
 * A second {@code agentmain} (or an attach after {@code -javaagent}) finds the agent installed and
 * installs nothing (a second set of transformers would advise each method twice): it applies the
 * options that can change live and refuses the others by name ({@link LiveAttach}). Each attach
 * publishes its result for {@code gmp4j attach} ({@link AgentState}).
 *
 * <p>After an attach, the application classes already loaded are retransformed in the
 * background to get their polls ({@link Retransformer}). So are those that premain finds already
 * loaded, which only a JDK AOT cache does ('Classes loaded before premain' at {@code
 * loadedBeforePremain}).
 *
 * <p>Limits of attach, inherent to retransformation: virtual threads created before the attach
 * keep the JDK's scheduler (their scheduler field is final), and a loop already on some stack
 * keeps running its old, poll-free code until its method is entered again.
 */
final class AgentInstaller {
  private static final String CONFIG = "io.gmp4j.runtime.Config";
  private static final String HOOKS = "io.gmp4j.runtime.Hooks";

  /** True once install completed. Guarded by the class lock (install is synchronized). */
  private static boolean installed;

  /**
   * True once a runtime jar is on the boot class path (step 4): a later install must not append a
   * second copy. Guarded by the class lock.
   */
  private static boolean bootJarAppended;

  /** The phases of the install under way ('inittrace' in InitTrace). Guarded by the class lock. */
  private static InitTrace trace;

  /**
   * True once step 8 wove ManagementFactory and left the MXBean's registration to the MBean
   * server's start, or, on an attach, registered it in the server already up ('Registered when
   * the server starts' in Exporters); step 10 then registers nothing itself. Guarded by the class
   * lock.
   */
  private static boolean jmxOnServerStart;

  private AgentInstaller() {}

  /**
   * Runs the steps of 'Installation'. Called by {@link GmpAgent} by reflection, on the thread
   * that runs premain or agentmain. Never throws.
   */
  static synchronized void install(String agentArgs, Instrumentation inst, boolean premain) {
    String[] split = AgentState.splitAttachId(agentArgs);
    String attachId = split[0];
    java.util.List<String> lines =
        java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    Stderr.captureThread = Thread.currentThread();
    Stderr.capture = lines;
    String status = "failed";
    trace = new InitTrace(split[1]);
    try {
      if (installed) {
        status = premain ? "failed" : LiveAttach.apply(split[1]);
        if (premain) {
          Stderr.line("gmp4j: already installed in this JVM; this -javaagent does nothing");
        }
      } else {
        installFirst(split[1], inst, premain);
        status = installed ? "installed" : "failed";
      }
    } catch (Throwable t) {
      Stderr.line("gmp4j: attach failed: " + Stderr.describe(t));
    } finally {
      if (InitTrace.enabled()) {
        Stderr.line(trace.line());
      }
      Stderr.capture = null;
      Stderr.captureThread = null;
      AgentState.result(attachId, status, new java.util.ArrayList<>(lines));
    }
  }

  /** The steps of 'Installation', for the first -javaagent or attach. Never throws. */
  private static void installFirst(String agentArgs, Instrumentation inst, boolean premain) {
    String step = "extract the runtime jar";
    Path runtimeJar = null;
    try {
      // A fresh copy even after an earlier install appended one: that copy is deleted, and
      // step 2 reads this one by name.
      runtimeJar = RuntimeJar.extract(); // step 1
      trace.phase("extract");

      step = "read the options";
      AgentOptions options;
      try {
        options = readOptions(agentArgs, runtimeJar); // step 2
      } catch (IllegalArgumentException e) {
        Stderr.line(Stderr.message(e) + Stderr.NOT_INSTALLED);
        return;
      }
      options.applyTo(System.getProperties()); // step 3
      trace.phase("options");

      step = "append the runtime jar to the boot class path";
      if (!bootJarAppended) {
        try (JarFile jar = new JarFile(runtimeJar.toFile(), false)) { // only its name is used
          inst.appendToBootstrapClassLoaderSearch(jar); // step 4
        }
        bootJarAppended = true;
      }
      RuntimeJar.delete(runtimeJar); // the JVM holds it open (see RuntimeJar)
      Class<?> hooks = Class.forName(HOOKS, true, null);
      trace.phase("bootjar");

      step = "open java.base/java.lang to gmp4j";
      if (!openToRuntime(inst, Object.class.getModule(), "java.lang", hooks)) {
        throw new IllegalStateException("java.base is not modifiable");
      }

      String shape = VirtualThreadInstrumentation.checkShape(); // step 6
      if (shape != null) {
        Stderr.line("gmp4j: " + shape + Stderr.NOT_INSTALLED);
        return;
      }

      step = "start the scheduler";
      preloadClasses(); // step 7
      try {
        hooks.getMethod("start").invoke(null);
      } catch (InvocationTargetException e) {
        Stderr.line(Stderr.message(e.getCause()) + Stderr.NOT_INSTALLED);
        return;
      }
      trace.phase("scheduler");

      step = "instrument the JDK";
      if (!instrumentJdk(inst, hooks, premain)) { // step 8
        return;
      }

      installed = true;
      recordOptions(options, premain);
      AgentState.publish(AgentState.AGENT, version() + (premain ? " -javaagent" : " attach"));
      if (options.jdkSettingsLine() != null) {
        Stderr.line(options.jdkSettingsLine());
      }
      step = "start the loop-poll injector";
      PreemptPollTransformer retransform = null;
      if (!options.flag("asyncpreemptoff")) { // step 9
        retransform = installPolls(inst, options, hooks, premain);
      }
      trace.phase("polls");
      startExporter(); // step 10
      trace.phase("exporter");
      if (!premain) {
        Stderr.line(LiveAttach.installedLine(options.agentArguments()));
      }
      if (retransform != null) {
        // after the attach's own lines
        Retransformer.start(inst, retransform, null, "loaded before the attach");
      }
      startRecordings(options); // step 11
      trace.phase("jfr");
    } catch (Throwable thrown) {
      Throwable t =
          thrown instanceof InvocationTargetException && thrown.getCause() != null
              ? thrown.getCause()
              : thrown;
      if (installed) {
        Stderr.line(
            "gmp4j: could not "
                + step
                + ": "
                + Stderr.describe(t)
                + "; running Gs are not preempted, as with asyncpreemptoff=1");
      } else {
        Stderr.line("gmp4j: could not " + step + ": " + Stderr.describe(t) + Stderr.NOT_INSTALLED);
      }
    } finally {
      if (runtimeJar != null) {
        RuntimeJar.delete(runtimeJar); // a failed install leaves no file either
      }
    }
  }

  /** Step 2: Config from a throw-away loader, so that failing here changes nothing. */
  private static AgentOptions readOptions(String agentArgs, Path runtimeJar) throws Exception {
    // Parent null: Config needs java.base only, and must not be found on the app class path.
    try (URLClassLoader probe = new URLClassLoader(new URL[] {runtimeJar.toUri().toURL()}, null)) {
      Class<?> config = Class.forName(CONFIG, true, probe);
      return AgentOptions.parse(
          agentArgs, System.getProperties(), System.getenv(), AgentOptions.reflective(config));
    }
  }

  /**
   * Step 7, first half: loads the classes that a transformation may need while one of them is
   * itself being defined. ThreadLocalRandom: ConcurrentHashMap inside the transformer reaches it
   * (byte-buddy#1666, JDK-8164165; OpenTelemetry, Datadog, New Relic and SkyWalking preload it
   * too). MethodHandle$1: a ClassCircularityError there breaks all later invokedynamic linking
   * (OpenTelemetry's AgentInstaller; the class may not exist on every JDK).
   */
  private static void preloadClasses() {
    ThreadLocalRandom.current();
    try {
      Class.forName("java.lang.invoke.MethodHandle$1", false, null);
    } catch (ClassNotFoundException ignored) {
      // not on this JDK: nothing to preload
    }
  }

  /**
   * Step 8. Returns false, after one line, when VirtualThread could not be woven: gmp4j would
   * then run no thread. ForkJoinWorkerThread failing only costs spinning, and only warns.
   */
  private static boolean instrumentJdk(Instrumentation inst, Class<?> hooks, boolean premain)
      throws ReflectiveOperationException {
    trace.phase("shapes");
    List<JdkWeaver.Site> sites = new ArrayList<>(VirtualThreadInstrumentation.sites());
    // Timers on the P: without this shape timeouts stay on the JDK's timer threads.
    String scheduleShape = VirtualThreadInstrumentation.checkScheduleShape();
    if (scheduleShape != null) {
      Stderr.line("gmp4j: " + scheduleShape + "; timeouts stay on the JDK's timer threads");
    } else {
      sites.addAll(VirtualThreadInstrumentation.scheduleSites());
    }
    String fjwtShape = ForkJoinWorkerThreadInstrumentation.checkShape();
    if (fjwtShape != null) {
      Stderr.line("gmp4j: " + fjwtShape + "; Gs may spin where Go would not");
    } else {
      sites.addAll(ForkJoinWorkerThreadInstrumentation.sites());
    }
    sites.addAll(SyscallInstrumentations.sites()); // DESIGN.md section 5
    // 'Registered when the server starts' in Exporters: the registration waits in Hooks
    // before the weave, so that no server can start between the two unseen.
    java.lang.reflect.Method onServer = hooks.getMethod("onPlatformMBeanServer", Consumer.class);
    onServer.invoke(null, new io.gmp4j.agent.exporter.Exporters.Registration(new StderrLine()));
    sites.addAll(ManagementFactoryInstrumentation.sites());
    JdkWeaver weaver =
        new JdkWeaver(sites, Set.of(VirtualThreadInstrumentation.TYPE), Stderr.NOT_INSTALLED);
    weaver.install(inst);
    trace.phase("weave");
    boolean installs = weaver.wasTransformed(VirtualThreadInstrumentation.TYPE);
    jmxOnServerStart =
        installs
            && weaver.wasTransformed(ManagementFactoryInstrumentation.TYPE)
            && (premain || registerIfServerStarted(inst, hooks));
    if (!jmxOnServerStart) {
      onServer.invoke(null, (Object) null); // nothing is to fire it, or gmp4j is not installed
    }

    if (!installs) {
      if (!weaver.hasFailed(VirtualThreadInstrumentation.TYPE)) {
        Stderr.line(
            "gmp4j: "
                + VirtualThreadInstrumentation.TYPE
                + " was not retransformed (is it modifiable on this JVM?)"
                + Stderr.NOT_INSTALLED);
      }
      return false;
    }
    return true;
  }

  /**
   * An attach may come after the platform MBean server started, which a start never does: with
   * {@code java.lang.management} opened to the runtime, the runtime looks, and registers the
   * MXBean now if the server is up. False if it could not tell; step 10 then registers at once,
   * starting the server, as before.
   */
  private static boolean registerIfServerStarted(Instrumentation inst, Class<?> hooks) {
    try {
      Module javaManagement = java.lang.management.ManagementFactory.class.getModule();
      return openToRuntime(inst, javaManagement, "java.lang.management", hooks)
          && (Boolean) hooks.getMethod("platformMBeanServerIfStarted").invoke(null);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return false;
    }
  }

  /**
   * Opens {@code pkg} of {@code module} to the runtime's module (the boot class path's unnamed
   * module, {@code hooks}'s), and to no other: not to the agent's own module, which is the
   * application's class path. False, changing nothing, if the module cannot be changed. The
   * runtime's reflection on the JDK goes through this: {@code java.lang} (step 4), {@code
   * java.lang.management} (an attach's MXBean) and {@code jdk.management}'s internals (the JIT
   * directive).
   */
  static boolean openToRuntime(Instrumentation inst, Module module, String pkg, Class<?> hooks) {
    if (!inst.isModifiableModule(module)) {
      return false;
    }
    inst.redefineModule(
        module, Set.of(), Map.of(), Map.of(pkg, Set.of(hooks.getModule())), Set.of(), Map.of());
    return true;
  }

  /**
   * Step 10. The options are read back from the {@code gmp.<key>} system properties of step 3,
   * which also hold a {@code -Dgmp.exporter.port}. Never throws.
   */
  private static void startExporter() {
    try {
      String line =
          io.gmp4j.agent.exporter.Exporters.start(
              System.getProperty("gmp.exporter.host"),
              System.getProperty("gmp.exporter.port"),
              jmxOnServerStart,
              new StderrLine());
      if (line != null) {
        Stderr.line(line);
      }
      LiveAttach.publishExporter();
    } catch (Throwable t) {
      Stderr.line(
          "gmp4j: exporter: could not start: "
              + Stderr.describe(t)
              + "; the app keeps running without the endpoint");
    }
  }

  /** Step 11. Never throws: without jdk.jfr, or with a bad file, one line and no recording. */
  private static void startRecordings(AgentOptions options) {
    try {
      Map<String, String> jfr = new java.util.HashMap<>();
      for (String key :
          new String[] {
            "jfr",
            "jfr.settings",
            "flightrecorder",
            "flightrecorder.maxsize",
            "flightrecorder.dir",
            "flightrecorder.latency",
            "flightrecorder.settings"
          }) {
        if (options.get(key) != null) {
          jfr.put(key, options.get(key));
        }
      }
      if (jfr.containsKey("jfr") || jfr.containsKey("flightrecorder")) {
        io.gmp4j.agent.jfr.Recordings.start(jfr, new StderrLine());
      }
    } catch (Throwable t) {
      Stderr.line(
          "gmp4j: jfr: cannot start the recordings: "
              + Stderr.describe(t)
              + "; no recording, gmp4j and the app run on");
    }
  }

  /** Step 9. Throws when the injector exists but cannot start; the caller reports it. */
  private static PreemptPollTransformer installPolls(
      Instrumentation inst, AgentOptions options, Class<?> hooks, boolean premain)
      throws Exception {
    boolean byDefault = options.get("preempt.defer") == null;
    long defer = byDefault ? defaultDeferNanos(options, premain) : options.nanos("preempt.defer");
    if (defer > 0 && !premain) {
      Stderr.line(
          "gmp4j: preempt.defer: ignored by an attach, which has no start-up to shorten (the"
              + " classes loaded before it are retransformed in the background:"
              + " preempt.retransform)");
      defer = 0;
    }
    long deadline =
        options.get("preempt.deadline") == null
            ? DeferredPolls.DEFAULT_DEADLINE_NANOS
            : options.nanos("preempt.deadline");
    DeferredPolls deferral = defer > 0 ? new DeferredPolls(defer, deadline) : null;
    PreemptPollTransformer.Injector injector =
        PollInjectors.create(
            options.get("preempt.include"),
            options.get("preempt.exclude"),
            options.flag("preempt.prologue"),
            options.get("preempt.cache"),
            deferral);
    if (injector == null) {
      return null;
    }
    if (!"c2".equals(options.get("preempt.jit"))) {
      JitDirective.start(inst); // 'JIT directive'
    }
    Coverage coverage = Coverage.global();
    hooks
        .getMethod("instrumentationCounts", LongSupplier.class, LongSupplier.class)
        .invoke(null, new CoverageCount(coverage, true), new CoverageCount(coverage, false));
    if (options.flag("preempt.report")) {
      // A platform thread: at exit the scheduler may already be stopping.
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    try {
                      Stderr.line(coverage.summaryLine());
                    } catch (Throwable ignored) {
                      // stderr closed at exit: nothing left to tell
                    }
                  },
                  "gmp4j-preempt-report"));
    }
    if (premain) {
      // 'Classes loaded before premain': none, unless an AOT cache loaded them.
      PreemptPollTransformer atLoad = new PreemptPollTransformer(injector);
      Set<String> early = loadedBeforePremain(inst, atLoad);
      if (deferral != null && byDefault && !early.isEmpty()) {
        // 'Deferred polls by default': an AOT cache's classes get no early polls, so they are
        // retransformed now, as without the deferral, which no class has been offered yet
        deferral.end();
        deferral = null;
      }
      if (deferral == null && early.isEmpty()) {
        inst.addTransformer(atLoad, false);
        return null;
      }
      PreemptPollTransformer t = new PreemptPollTransformer(injector, true);
      inst.addTransformer(t, true);
      if (deferral != null) { // 'Deferred polls' in DeferredPolls: retransformed later
        deferral.deferAll(early);
        deferral.start(inst, t, options.flag("preempt.report"));
        return null;
      }
      Stderr.line(
          "gmp4j: "
              + early.size()
              + (early.size() == 1 ? " application class was" : " application classes were")
              + " loaded before the agent (by an AOT cache, -XX:AOTCache); they get their polls"
              + " by retransformation in the background");
      Retransformer.start(inst, t, early, "loaded before the agent");
      return null;
    }
    // An attach: the classes already loaded get their polls too (Retransformer, started by the
    // caller), unless preempt.retransform=0.
    PreemptPollTransformer t = new PreemptPollTransformer(injector, true);
    inst.addTransformer(t, true);
    if ("0".equals(options.get("preempt.retransform"))) {
      Stderr.line(
          "gmp4j: preempt.retransform=0: the classes loaded before the attach keep"
              + " running without polls");
      return null;
    }
    return t;
  }

  /**
   * 'Classes loaded before premain': the internal names of the application classes already
   * loaded when premain runs that {@code t} would take at load time ({@link
   * PreemptPollTransformer#wantedName}) and the JVM can retransform. Without an AOT cache there are
   * none: premain runs before the application's main class loads. With one (JDK 24+, {@code
   * -XX:AOTCache} and its AOT class linking), the JVM loads and links every class the cache holds
   * at start-up, before any agent runs, and the ClassFileLoadHook never sees them: on the Spring
   * Boot app of issue 17, 2,856 Spring classes were loaded before premain, and the injector was
   * handed 11 classes in all. Those classes get their polls as after an attach ({@link
   * Retransformer}), and only those: a class loaded after the transformer is registered got them
   * at load. Called only by premain, just before it registers the transformer (a class loaded in
   * between, on another thread, would get no poll; premain's other threads load only the JDK's).
   * No lambda (see below).
   */
  /**
   * 'Deferred polls by default' (in DeferredPolls): {@code preempt.defer}'s value when it is not
   * set: {@link DeferredPolls#DEFAULT_QUIET_NANOS} at premain, 0 (off) after an attach, with
   * {@code preempt.cache} (a training start would exit before the deferral ends, and write no
   * rewrite) and with {@code preempt.prologue} (early polls are loop polls only).
   */
  static long defaultDeferNanos(AgentOptions options, boolean premain) {
    return premain && options.get("preempt.cache") == null && !options.flag("preempt.prologue")
        ? DeferredPolls.DEFAULT_QUIET_NANOS
        : 0;
  }

  private static Set<String> loadedBeforePremain(Instrumentation inst, PreemptPollTransformer t) {
    Set<String> early = new HashSet<>();
    for (Class<?> c : inst.getAllLoadedClasses()) {
      String internal = t.wantedName(c);
      if (internal != null && inst.isModifiableClass(c)) {
        early.add(internal);
      }
    }
    return early;
  }

  /*
   * The two classes below stand where method references were. A lambda or method reference
   * links at its first run: on premain's path each spun a hidden class in the interpreter, which
   * the JDK's CDS archive does not hold (issue 11's start-up item).
   */

  /** {@code Stderr::line} for the exporter, the recordings and the rewrite cache. */
  static final class StderrLine implements java.util.function.Consumer<String> {
    @Override
    public void accept(String line) {
      Stderr.line(line);
    }
  }

  /** {@code coverage::instrumented} or {@code coverage::skipped}, for the runtime's metrics. */
  private static final class CoverageCount implements LongSupplier {
    private final Coverage coverage;
    private final boolean instrumented;

    CoverageCount(Coverage coverage, boolean instrumented) {
      this.coverage = coverage;
      this.instrumented = instrumented;
    }

    @Override
    public long getAsLong() {
      return instrumented ? coverage.instrumented() : coverage.skipped();
    }
  }

  /**
   * Fills AgentState's option table from the options read at install. Sources: the agent
   * argument is "start" for -javaagent and "attach" for an attach; -D and the environment were
   * there at start; the rest is "default".
   */
  private static void recordOptions(AgentOptions options, boolean premain) {
    try {
      @SuppressWarnings("unchecked")
      java.util.List<String> keys =
          (java.util.List<String>) Class.forName(CONFIG, true, null).getMethod("keys").invoke(null);
      for (String key : keys) {
        String detail = options.source(key);
        if (detail == null) {
          AgentState.option(key, null, "default", "");
        } else {
          boolean arg = detail.equals("the -javaagent argument");
          AgentState.option(
              key,
              options.get(key),
              arg && !premain ? "attach" : "start",
              arg && !premain ? "gmp4j attach" : detail);
        }
      }
    } catch (Throwable t) {
      Stderr.line("gmp4j: cannot record the options for /debug/vars: " + Stderr.describe(t));
    }
  }

  /** The agent jar's version, or "dev" for an unpackaged build. */
  static String version() {
    String v = AgentInstaller.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }
}
