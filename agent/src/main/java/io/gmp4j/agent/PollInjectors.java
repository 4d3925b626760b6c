package io.gmp4j.agent;

/**
 * Finds the loop-poll injector, so that the agent builds and runs whether or not the {@code
 * io.gmp4j.agent.poll} package is present.
 *
 * <h2>Poll injector contract</h2>
 *
 * {@code io.gmp4j.agent.poll.PollInjector} has
 *
 * <ul>
 *   <li>{@code public PollInjector(String includePatterns, String excludePatterns, boolean
 *       prologuePolls)}: the patterns are the normalised values of {@code preempt.include} and
 *       {@code preempt.exclude} (class-name globs separated by {@code ;} or {@code |}), or null
 *       when the option is not set;
 *   <li>{@code public byte[] transform(ClassLoader loader, String internalClassName, byte[]
 *       classfile)}: the new class file, or null to leave the class alone; it throws on failure.
 * </ul>
 *
 * It is called only through {@link PreemptPollTransformer}, which has already filtered out JDK,
 * agent and runtime classes.
 *
 * <p>Its presence is checked by name ({@code Class.forName} without initialisation); then it is
 * built and called directly ({@link Direct}). HotSpot resolves the direct references only when
 * they first run, so a jar without the package still loads this class and gets one line.
 *
 * <p>Rejected: calling it by reflection, as this class did until issue 11's fourth start-up
 * session. The first {@code Method.invoke} builds the JDK's method-handle accessor for that
 * signature, spinning lambda forms in the interpreter: about 18 ms of the first class an
 * application loads, on hello world here.
 */
final class PollInjectors {
  static final String INJECTOR = "io.gmp4j.agent.poll.PollInjector";

  private PollInjectors() {}

  /**
   * The injector, or null (after one line on stderr) when the agent jar has none. Throws what
   * its constructor throws when it exists but cannot be created. Called once, by the installer.
   */
  static PreemptPollTransformer.Injector create(
      String include, String exclude, boolean prologue, String cacheDir, DeferredPolls deferral) {
    try {
      Class.forName(INJECTOR, false, PollInjectors.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      Stderr.line(
          "gmp4j: this agent jar has no loop-poll injector ("
              + INJECTOR
              + "); running Gs are not preempted, as with asyncpreemptoff=1");
      return null;
    }
    io.gmp4j.agent.poll.RewriteCache cache =
        cacheDir == null ? null : openCache(cacheDir, prologue);
    return new Direct(
        new io.gmp4j.agent.poll.PollInjector(include, exclude, prologue, cache), deferral);
  }

  /**
   * The rewrite cache in {@code dir} for this agent jar ('Rewrite cache' in {@code
   * io.gmp4j.agent.poll.RewriteCache}), or null after one line: the injector then works without
   * it. The salt is the jar's own CRC32C, so a rebuilt agent never reads another build's entries.
   */
  private static io.gmp4j.agent.poll.RewriteCache openCache(String dir, boolean prologue) {
    byte[] jar;
    try {
      jar =
          java.nio.file.Files.readAllBytes(
              java.nio.file.Path.of(
                  PollInjectors.class.getProtectionDomain().getCodeSource().getLocation().toURI()));
    } catch (Exception | LinkageError e) {
      Stderr.line(
          "gmp4j: preempt.cache: cannot read the agent jar to tell its build apart ("
              + Stderr.describe(e)
              + "); classes are rewritten at every start, without a cache");
      return null;
    }
    return io.gmp4j.agent.poll.RewriteCache.open(
        java.nio.file.Path.of(dir),
        io.gmp4j.agent.poll.RewriteCache.salt(jar, prologue),
        new AgentInstaller.StderrLine());
  }

  /** The injector behind {@link PreemptPollTransformer.Injector}; a class, not a lambda. */
  private static final class Direct implements PreemptPollTransformer.Injector {
    private final io.gmp4j.agent.poll.PollInjector injector;

    /** With {@code preempt.defer}, the deferral that classes being loaded are offered to. */
    private final DeferredPolls deferral;

    Direct(io.gmp4j.agent.poll.PollInjector injector, DeferredPolls deferral) {
      this.injector = injector;
      this.deferral = deferral;
    }

    @Override
    public byte[] transform(ClassLoader loader, String name, byte[] classfile) {
      return injector.transform(loader, name, classfile);
    }

    @Override
    public byte[] transformAtLoad(ClassLoader loader, String name, byte[] classfile) {
      return injector.transform(loader, name, classfile, deferral);
    }

    @Override
    public boolean leavesAlone(ClassLoader loader, String name, byte[] classfile) {
      return injector.leavesAlone(loader, name, classfile);
    }

    @Override
    public java.util.Set<String> changedMethods(byte[] classfile) {
      return injector.changedMethods(classfile);
    }

    @Override
    public void prepare(String name, byte[] classfile) {
      injector.prepare(name, classfile);
    }

    @Override
    public void forgetPrepared() {
      injector.forgetPrepared();
    }
  }
}
