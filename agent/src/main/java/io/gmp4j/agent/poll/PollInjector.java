package io.gmp4j.agent.poll;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.MethodTooLargeException;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;

/**
 * Injects preemption polls into application classes: the bytecode counterpart of Go's loop
 * preemption check ({@code cmd/compile} loopreschedchecks.go, {@code goschedguarded}) and of its
 * function prologue check (newstack).
 *
 * <h2>Implementation overview: 'Poll placement'</h2>
 *
 * A virtual thread that computes without blocking can only be time-sliced if it calls {@code
 * Preempt.poll()} within a bounded time (DESIGN.md §4). Every loop must therefore contain a poll,
 * but a poll inside a loop that C2 would vectorize costs about 4x: any control flow or memory
 * barrier in the body turns SuperWord off (agent-notes §3.2). Placement is decided per method:
 *
 * <ol>
 *   <li><b>Back-edge poll.</b> {@code INVOKESTATIC io/gmp4j/runtime/Preempt.poll()V} goes at
 *       every backward branch: a jump whose target was visited before the jump (so its offset is
 *       not greater), and a {@code tableswitch}/{@code lookupswitch} with any backward case or
 *       default. Normally it polls under a per-method countdown ('Countdown polls' in {@link
 *       LoopScanner}): {@code if (--budget <= 0) { budget = 1024; Preempt.poll(); }}, with budget
 *       1 on entry, so the loop carries a register decrement instead of the poll's compiler
 *       barrier on every pass. A {@code GOTO} back-edge is replaced in place by the countdown,
 *       which ends in the {@code GOTO}; a conditional back-edge or backward switch target is
 *       redirected to a countdown block after the method's code that reuses the target's frame.
 *       The budget is a new int local at the old max_locals, set before the first label and
 *       declared in every frame of the method. Two refinements: a loop whose body branches only
 *       out of the loop (a list walk, a {@code while} over a field bound) gives the poll path its
 *       own back-edge, which lets C2 keep the poll out of the hot loop; and a loop around a
 *       strip-mined loop counts 64 back-edges a pass, so that it polls at least once every 16
 *       strips. Where the countdown buys nothing (a loop that neither touches memory nor calls:
 *       the barrier has nothing to pin) or has no frame at its target, the poll goes right before
 *       the branch and runs on every pass: the call pushes and pops nothing and adds no branch
 *       target, so existing frames stay valid.
 *   <li><b>Strip mining</b> ('Strip mining' in {@link LoopScanner}, HotSpot's loop strip mining,
 *       JDK-8186027, done in bytecode). A tight innermost counted loop in javac's {@code for}
 *       shape, counting up or down, gets no per-iteration poll; its test is rewritten against a
 *       loop-invariant local {@code strip = min(limit, i + 4096 * step)} (or {@code max(limit, i -
 *       4096 * -step)} counting down; computed without overflow), and an outer block polls,
 *       recomputes {@code strip} and re-enters once every 4096 iterations. The inner loop stays a
 *       clean counted loop that C2 can unroll and vectorize.
 *   <li><b>Prologue poll</b> (option {@code preempt.prologue}): a poll at the entry of every method
 *       but constructors, class initialisers and bridges, for recursion without loops.
 *   <li>Never in {@code <clinit>}: a class initialiser pins its virtual thread, and a G preempted
 *       in it keeps every other thread that touches the class waiting. Bridges are skipped (no
 *       loops; the method they call polls). Synthetic {@code lambda$} methods are instrumented:
 *       they hold user loops.
 * </ol>
 *
 * <p>A class with no backward branch in any method is left alone before either pass, and in
 * the others only the methods with one are scanned ('Fast reject' in {@link BackEdges}), unless
 * prologue polls are on.
 *
 * <h2>One pass</h2>
 *
 * {@link LoopScanner} reads each method and decides, by instruction index, where polls go and
 * which loops are strip-mined; {@link PollEmitter} writes the method and applies that plan. ASM's
 * tree API is not part of Byte Buddy's repackaged ASM, so the scanner cannot look ahead in the
 * emitter's stream. Until issue 17 the class was therefore read twice: once to scan and once to
 * emit, each time with ASM decoding the code and expanding every frame. Now it is read once: a
 * method with loops is kept as the calls the reader makes ({@link MethodRecorder}) and replayed
 * into the scanner and then into the emitter. Methods without loops are copied byte for byte, as
 * before. A rewritten method's frames reach the writer compressed, as it would compress them
 * itself but at a fraction of the cost ('Compressed frames' in {@link FrameCompressor}). The two
 * passes remain for what the one does not cover: an old class file with JSR/RET (inlined first,
 * 'Old class files'), a type annotation inside code, and the re-emission of 'Too large'.
 *
 * <p>Rejected: a writer that splices, that is, only the rewritten methods go through a {@code
 * ClassWriter} with an empty pool, and the class is its original bytes with those methods'
 * {@code Code} replaced and the side pool appended, references shifted. It saves the writer's
 * copy of the constant pool (a fifth of the injector's start-up samples), but the side writer
 * then adds, one by one, the constants of the rewritten methods, which in a class's methods with
 * loops are much of its pool, and the rewrite got no faster: no better in a cold JVM over the
 * Spring Boot app's jars, and 6% more time in the transformer on its start-up (BENCHMARKS.md,
 * 'Where the injector's start-up time goes').
 *
 * <p>Rejected: {@code COMPUTE_FRAMES} with a {@code getCommonSuperClass} that answers {@code
 * java/lang/Object} (the usual agent shortcut, because asking the real hierarchy loads classes from
 * inside a transformer). It is not safe: a value merged from two subclasses of {@code Foo} becomes
 * {@code Object} in the frame, and a later call of a {@code Foo} method on it fails verification.
 * Instead the reader expands the original frames; the strip-mining rewrite adds the frames of its
 * own labels (all derived from the frame at the loop head) and a countdown block copies the frame
 * of its target, so no type is ever merged.
 *
 * <h2>Old class files</h2>
 *
 * Class files below major version 50 (Java 5 and older: all of commons-math3 and
 * commons-collections 3, a tenth of the classes of 13 popular jars measured) get polls like any
 * other. They carry no StackMapTable: the JVM verifies them by type inference, whose merge of two
 * types is the real common superclass. So the rewrite declares no frame there (the countdown's
 * blocks, the strip-mined loop's inner and outer headers), the scanner needs none ({@link
 * MethodPlan#frameless}), and the new int locals type themselves. Because no frame gives the
 * stack depth at a strip-mined loop's head, its max_stack grows by the bound's whole peak (4)
 * over the old max_stack rather than to 4. Version 50 keeps its frames and takes the framed path.
 * A method with JSR/RET subroutines (javac 1.4 and older compiled {@code finally} that way) and
 * loops has its subroutines inlined first ('Subroutines' in {@link SubroutineInliner}), and then
 * polls like any other; where inlining fails, it is left as it was and counted as {@code old
 * version} ('Coverage'), and the rest of its class gets polls.
 *
 * <h2>Too large</h2>
 *
 * A method whose code would pass the JVM's 65535-byte limit with its polls and strips is left as
 * it was: the writer throws MethodTooLargeException for the class, so the method's plan is marked
 * and the class emitted again without it, and the method is counted ({@code too large} in
 * 'Coverage'). Each retry drops one method, so a class is emitted at most once per method.
 *
 * <p>Every class handed to {@link #transform} is recorded in {@link Coverage} once: instrumented,
 * or left alone with its reason. A class whose rewrite throws is recorded as failed alone: the
 * methods it would have left alone are not listed.
 *
 * <p>With {@code preempt.cache}, a class with loops is first looked up in the {@link
 * RewriteCache} ('Rewrite cache'): a hit returns the bytes and replays the coverage of the rewrite
 * it was made from, and a miss is rewritten here ({@code rewrite}) and handed to the cache.
 *
 * <p>With {@code preempt.defer} (on by default), a class that would be rewritten (it has loops,
 * and the cache has no rewrite of it) is first offered to the agent's {@link Deferral}, which
 * during start-up takes it with its early polls ('Early polls' in {@link EarlyPolls}: a check at
 * each loop head, patched into its bytes) and gives it its placed polls later by
 * retransformation ('Deferred polls' in the agent's {@code DeferredPolls}). A method with an
 * array loop without calls ('Array loops' in EarlyPolls) gets the early polls too while the
 * deferral takes such classes, until its deadline ('The deadline' in DeferredPolls); after it,
 * the patch leaves that method as it is and it gets its placed polls here, from the rewrite of
 * that method alone. A class whose bytes the patch does not handle is rewritten here whole.
 *
 * <p>Before a rewritten class is returned, {@link FrameCheck} checks the frames of the methods
 * the emitter changed against what the rewritten code computes ('Frame check'); on a mismatch
 * {@link #transform} throws {@link FrameCheckException} and the class loads unchanged.
 *
 * <h2>Frame check only where frames are derived</h2>
 *
 * Only a method whose new frames are derived is checked ({@link MethodPlan#derivesFrames}): one
 * with a strip-mined loop (frames between head and back-edge gain {@code strip}, the head's locals
 * are re-declared at the inner and outer headers) or with a {@code skip} frame narrowed by the
 * frame of a handler whose range covers the back-edge (issue 16's bug was there). Every other
 * rewrite adds no frame that is not a copy of a declared one: a per-pass poll pushes nothing and
 * adds no branch target; a countdown with its own back-edge branches only to the loop head, whose
 * frame is declared; a {@code skip} frame outside every try range is its target's; a trampoline
 * after the code re-declares its target's frame as the emitter wrote it, and is entered only by the
 * branch that jumped to that target before. A class file whose own frames are wrong is then
 * rewritten rather than refused, and the JVM rejects it as it would have without the agent. What
 * they change in every frame, {@code budget:int} after TOP padding to the old max_locals, holds by
 * construction: budget is stored before the first label, and max_stack and max_locals grow by one
 * for it. The check was a quarter of the injector's start-up samples on Spring Boot (issue 17);
 * what this saves is in BENCHMARKS.md, 'Spring Boot 4.0.7 start-up'.
 *
 * <p>Thread-safety: an instance is immutable apart from per-thread {@link #lastStats()}; {@link
 * #transform} may run on many class-loading threads at once.
 */
public final class PollInjector {
  /** Owner of the injected poll; on the boot class path at run time. */
  static final String PREEMPT_OWNER = "io/gmp4j/runtime/Preempt";

  static final String POLL_NAME = "poll";
  static final String POLL_DESC = "()V";

  /** The field the poll reads, read inline by the loop-head check of 'Early polls'. */
  static final String PENDING_NAME = "pending";

  /**
   * {@code classfile} with early polls in every loop, array loops without calls included ('Early
   * polls' and 'Array loops' in {@link EarlyPolls}); null if it cannot. For measuring the early
   * form (bench/'s LoopPollBenchmark); the agent goes through {@link #transform}.
   */
  public static byte[] earlyPolls(byte[] classfile) {
    return EarlyPolls.patch(classfile, true);
  }

  /**
   * Internal-name prefixes never instrumented, whatever the patterns say. Preempting a G inside the
   * JDK, the scheduler, the agent or Byte Buddy can leave a carrier-side lock or queue half-updated
   * (DESIGN.md §4), and polls in the runtime would recurse into it.
   */
  private static final String[] REFUSED_PREFIXES = {
    "java/", "javax/", "jdk/", "sun/", "com/sun/", "io/gmp4j/", "net/bytebuddy/",
  };

  private static final ThreadLocal<Stats> LAST_STATS = new ThreadLocal<>();

  /**
   * 'Prepared rewrites': per thread, the rewrites {@link #prepare} made ahead, by the class
   * file's bytes. Set and read only by the thread that owns it (the JVM calls a retransformation's
   * transformer on the thread that asked for it).
   */
  private static final ThreadLocal<java.util.Map<Bytes, RewriteCache.Outcome>> PREPARED =
      new ThreadLocal<>();

  private final Pattern[] includes;
  private final Pattern[] excludes;
  private final boolean prologuePolls;
  private final Coverage coverage;

  /** The rewrites kept across runs ({@code preempt.cache}), or null. */
  private final RewriteCache cache;

  /** Which rewritten methods {@link FrameCheck} checks: {@link #CHECK_NONE} and so on. */
  private final int frameCheck;

  /** No check: only to measure what the check costs ('Cost' in FrameCheck). */
  static final int CHECK_NONE = 0;

  /** The methods with derived frames ('Frame check only where frames are derived'): the agent's. */
  static final int CHECK_DERIVED = 1;

  /** Every rewritten method: for tests of the check itself on inputs of any shape. */
  static final int CHECK_ALL = 2;

  /**
   * What one {@link #transform} call did to one class.
   *
   * @param backEdgePolls polls placed before backward jumps and switches (rule 1)
   * @param stripMined counted loops rewritten into strips, each with one poll per strip (rule 2)
   * @param prologuePolls polls placed at method entry (rule 3)
   * @param countdownPolls how many of the {@code backEdgePolls} poll under a countdown, once every
   *     {@code BUDGET} back-edges, rather than on every pass
   */
  public record Stats(int backEdgePolls, int stripMined, int prologuePolls, int countdownPolls) {
    static final Stats NONE = new Stats(0, 0, 0, 0);

    /** True if the class was left as it was. */
    public boolean isEmpty() {
      return backEdgePolls == 0 && stripMined == 0 && prologuePolls == 0;
    }
  }

  /**
   * @param includePatterns class-name globs in dotted form, separated by {@code ;} or {@code |}
   *     ({@code *} matches any run of characters, dots included: {@code com.acme.*}); null or empty
   *     selects every class that is not excluded
   * @param excludePatterns globs of classes never instrumented; null or empty excludes nothing
   *     beyond the built-in refusals
   * @param prologuePolls whether to poll at method entry as well (option {@code preempt.prologue})
   */
  public PollInjector(String includePatterns, String excludePatterns, boolean prologuePolls) {
    this(includePatterns, excludePatterns, prologuePolls, (RewriteCache) null);
  }

  /**
   * As above, reading and writing the rewrites in {@code cache} ('Rewrite cache' in {@link
   * RewriteCache}); null for none. The agent's injector, with {@code preempt.cache}.
   */
  public PollInjector(
      String includePatterns, String excludePatterns, boolean prologuePolls, RewriteCache cache) {
    this(includePatterns, excludePatterns, prologuePolls, Coverage.global(), CHECK_DERIVED, cache);
  }

  /** As above, recording into {@code coverage} rather than the agent's. */
  PollInjector(
      String includePatterns, String excludePatterns, boolean prologuePolls, Coverage coverage) {
    this(includePatterns, excludePatterns, prologuePolls, coverage, CHECK_DERIVED, null);
  }

  /** As above, with {@code cache} (null for none). */
  PollInjector(
      String includePatterns,
      String excludePatterns,
      boolean prologuePolls,
      Coverage coverage,
      RewriteCache cache) {
    this(includePatterns, excludePatterns, prologuePolls, coverage, CHECK_DERIVED, cache);
  }

  /**
   * As above, with the frame check off (false): only to measure what the check costs ('Cost' in
   * FrameCheck).
   */
  PollInjector(
      String includePatterns, String excludePatterns, boolean prologuePolls, boolean frameCheck) {
    this(
        includePatterns,
        excludePatterns,
        prologuePolls,
        Coverage.global(),
        frameCheck ? CHECK_DERIVED : CHECK_NONE,
        null);
  }

  /** As above, checking the methods {@code frameCheck} says ({@link #CHECK_ALL} and so on). */
  PollInjector(
      String includePatterns, String excludePatterns, boolean prologuePolls, int frameCheck) {
    this(includePatterns, excludePatterns, prologuePolls, Coverage.global(), frameCheck, null);
  }

  private PollInjector(
      String includePatterns,
      String excludePatterns,
      boolean prologuePolls,
      Coverage coverage,
      int frameCheck,
      RewriteCache cache) {
    this.includes = globs(includePatterns);
    this.excludes = globs(excludePatterns);
    this.prologuePolls = prologuePolls;
    this.coverage = coverage;
    this.frameCheck = frameCheck;
    this.cache = cache;
    if (cache != null) {
      coverage.useCache(cache);
    }
  }

  /**
   * Returns the instrumented class file, or null when the class is not selected or nothing changed.
   * Throws {@link FrameCheckException} when a rewritten method's frames do not match its code
   * ('Frame check'), and anything on malformed input or an ASM failure; the caller catches and
   * leaves the class alone. Any thread.
   *
   * @param loader the defining loader (null for the boot loader); not used to resolve anything, so
   *     a transform never loads a class
   */
  public byte[] transform(ClassLoader loader, String internalClassName, byte[] classfile) {
    return transform(loader, internalClassName, classfile, null);
  }

  /**
   * 'Deferred polls': where a class loads, the agent may leave its rewrite for later. Asked only
   * for a selected class with loops whose rewrite is not in the cache, that is, one that would
   * be rewritten now.
   */
  public interface Deferral {
    /**
     * True to load the class with its early polls only ('Early polls' in {@link EarlyPolls}),
     * for a retransformation to give it its placed polls; it is not recorded in Coverage until
     * then. {@code arrayLoops}: the early polls are in an array loop without calls that C2 may
     * vectorize too ('Array loops' there), which the deferral takes only while {@link
     * #deferringArrays}. Any class-loading thread.
     */
    boolean defer(ClassLoader loader, String internalClassName, boolean arrayLoops);

    /**
     * False once {@link #defer} would answer false for every class; lets the transformer skip
     * the early patch then. Any thread.
     */
    default boolean deferring() {
      return true;
    }

    /**
     * Whether {@link #defer} would take a class with early polls in an array loop without
     * calls; if not, such methods get their placed polls at load. Any thread.
     */
    default boolean deferringArrays() {
      return false;
    }
  }

  /**
   * As {@link #transform(ClassLoader, String, byte[])}, and a class that would be rewritten is
   * first offered to {@code deferral} (null: none); if it takes the class, this returns the
   * class with its early polls (null if it needs none: its only loops are where no poll goes).
   */
  public byte[] transform(
      ClassLoader loader, String internalClassName, byte[] classfile, Deferral deferral) {
    LAST_STATS.set(Stats.NONE);
    if (internalClassName == null || classfile == null || refused(internalClassName)) {
      return null;
    }
    if (!selects(internalClassName)) {
      coverage.skipped(loader, internalClassName, Coverage.Reason.EXCLUDED);
      return null;
    }
    try {
      return instrument(loader, internalClassName, classfile, deferral);
    } catch (Throwable t) {
      coverage.failed(loader, internalClassName, t); // 'Coverage': failed or frame check failed
      throw t;
    }
  }

  /**
   * 'Class files read back' (in the agent's Retransformer): true if {@link #transform} would
   * leave the class alone without reading it through ASM, that is, excluded by name, or, without
   * prologue polls, no backward branch in any method of {@code classfile} ('Fast reject' in
   * {@link BackEdges}). It then records that outcome in Coverage, as transform would have, so
   * the class need not be retransformed to be counted. For a class already loaded (an attach, an
   * AOT cache), whose bytes the caller read from its loader rather than had from the JVM: false
   * unless {@code classfile} is readable and declares {@code internalClassName}, so a doubt means
   * a retransformation, as before. A refused name is not counted, as in transform. Any thread;
   * never throws.
   */
  public boolean leavesAlone(ClassLoader loader, String internalClassName, byte[] classfile) {
    try {
      if (refused(internalClassName)) {
        return true;
      }
      if (!selects(internalClassName)) {
        coverage.skipped(loader, internalClassName, Coverage.Reason.EXCLUDED);
        return true;
      }
      if (prologuePolls || !internalClassName.equals(new ClassReader(classfile).getClassName())) {
        return false;
      }
      BitSet loops = BackEdges.methods(classfile);
      if (loops == null || !loops.isEmpty()) {
        return false;
      }
      coverage.skipped(loader, internalClassName, Coverage.Reason.NO_LOOPS);
      return true;
    } catch (RuntimeException unreadable) {
      return false; // the retransformation reads what the JVM hands it, and says what is wrong
    }
  }

  /**
   * The names of the methods of {@code classfile} that {@link #transform} may change: those with
   * a backward branch ('Fast reject' in {@link BackEdges}); null when any may change (prologue
   * polls) or the bytes cannot be read that way. A method not named keeps its bytecode, so a
   * retransformation leaves it running where it runs ('Running classes' in the agent's
   * Retransformer). Any thread; never throws.
   */
  public Set<String> changedMethods(byte[] classfile) {
    return prologuePolls ? null : BackEdges.methodNames(classfile);
  }

  /**
   * 'Prepared rewrites' (in the agent's Retransformer): rewrites {@code classfile} now, on this
   * thread, for the next {@link #transform} of the same bytes on this thread to take without
   * the work, which then records its outcome as if it had made it. Nothing is recorded here; a
   * class that needs no rewrite (excluded, no loop) or whose rewrite throws is not kept, and its
   * transform does what it would have done. Kept until taken or {@link #forgetPrepared}.
   */
  public void prepare(String internalClassName, byte[] classfile) {
    try {
      if (refused(internalClassName) || !selects(internalClassName)) {
        return;
      }
      BitSet loops = prologuePolls ? null : BackEdges.methods(classfile);
      if (loops != null && loops.isEmpty()) {
        return;
      }
      java.util.Map<Bytes, RewriteCache.Outcome> m = PREPARED.get();
      if (m == null) {
        PREPARED.set(m = new java.util.HashMap<>());
      }
      m.put(new Bytes(classfile), rewrite(classfile, loops));
    } catch (RuntimeException | LinkageError e) {
      // the transform rewrites it again and records what goes wrong
    }
  }

  /** Drops what {@link #prepare} kept on this thread and no transform took. */
  public void forgetPrepared() {
    PREPARED.remove();
  }

  /** How many rewrites {@link #prepare} keeps on this thread; for tests. */
  static int preparedHere() {
    java.util.Map<Bytes, RewriteCache.Outcome> m = PREPARED.get();
    return m == null ? 0 : m.size();
  }

  /** The outcome {@link #prepare} made of these bytes on this thread, taken; or null. */
  private static RewriteCache.Outcome prepared(byte[] classfile) {
    java.util.Map<Bytes, RewriteCache.Outcome> m = PREPARED.get();
    return m == null || m.isEmpty() ? null : m.remove(new Bytes(classfile));
  }

  /** A class file as a map key, by content. */
  private record Bytes(byte[] b) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Bytes other && java.util.Arrays.equals(b, other.b);
    }

    @Override
    public int hashCode() {
      return java.util.Arrays.hashCode(b);
    }

    @Override
    public String toString() {
      return "Bytes[" + b.length + "]";
    }
  }

  /** {@link #transform} of a selected class; records its outcome unless it throws. */
  private byte[] instrument(
      ClassLoader loader, String internalClassName, byte[] classfile, Deferral deferral) {
    BitSet loops = prologuePolls ? null : BackEdges.methods(classfile); // null: scan all
    if (loops != null && loops.isEmpty()) { // 'Fast reject' in BackEdges
      coverage.skipped(loader, internalClassName, Coverage.Reason.NO_LOOPS);
      return null;
    }
    RewriteCache.Outcome o = cache == null ? null : cache.get(classfile);
    if (o == null) {
      if (deferral != null && deferral.deferring()) {
        boolean arrays = deferral.deferringArrays();
        BitSet arrayMethods = new BitSet();
        // null: it cannot, so the rewrite is now
        byte[] early = deferredPolls(classfile, arrayMethods, arrays);
        if (early != null
            && deferral.defer(loader, internalClassName, arrays && !arrayMethods.isEmpty())) {
          // 'Deferred polls' in the agent's DeferredPolls: recorded when retransformed
          coverage.earlyPolls();
          return early == classfile ? null : early;
        }
      }
      o = prepared(classfile); // 'Prepared rewrites'
      if (o == null) {
        o = rewrite(classfile, loops); // throws: not cached, the class stays as it was
      }
      if (cache != null) {
        cache.put(classfile, o); // see 'Rewrite cache' in RewriteCache
      }
    }
    for (RewriteCache.MethodNote m : o.methods) {
      coverage.method(internalClassName, m.name, m.descriptor, m.why);
    }
    if (o.out == null) {
      coverage.skipped(loader, internalClassName, o.leftAlone);
      return null;
    }
    coverage.instrumented(loader, internalClassName);
    LAST_STATS.set(o.stats);
    return o.out;
  }

  /**
   * A deferred class's polls at load: the early patch ('Early polls' in {@link EarlyPolls}). The
   * methods with an array loop without calls ('Array loops' there): with {@code arrays} (the
   * deferral takes them: 'The deadline' in the agent's DeferredPolls) patched like the others,
   * those that C2 may vectorize named in {@code arrayMethods}; else named there and given the
   * rewrite's placed polls here, the rest of the class copied. Null if either step cannot.
   */
  private byte[] deferredPolls(byte[] classfile, BitSet arrayMethods, boolean arrays) {
    byte[] early = EarlyPolls.patch(classfile, arrayMethods, arrays);
    if (early == null || arrays || arrayMethods.isEmpty()) {
      return early;
    }
    try {
      byte[] placed = rewrite(early, arrayMethods).out;
      return placed == null ? early : placed; // null: the rewrite found no poll to place
    } catch (RuntimeException e) { // ASM's or the frame check's: the whole rewrite then
      return null;
    }
  }

  /**
   * The rewrite of a class with loops ({@code loops}: the methods that have one, or null for
   * all), frame-checked; what {@link RewriteCache} keeps. Throws what the check and ASM throw.
   */
  private RewriteCache.Outcome rewrite(byte[] classfile, BitSet loops) {
    ClassReader reader = new ClassReader(classfile);
    // major_version follows magic and minor_version; see 'Old class files'
    boolean frameless = reader.readUnsignedShort(6) < Opcodes.V1_6;
    List<MethodPlan> plans = new ArrayList<>();
    byte[] out = onePass(reader, frameless, loops, plans);
    if (plans.isEmpty()) { // the one pass gave up: two passes, as before 'One pass'
      plans = scan(reader, frameless, loops);
      if (frameless && hasSubroutines(plans)) { // see 'Subroutines' in SubroutineInliner
        try {
          ClassReader inlined = new ClassReader(SubroutineInliner.inline(classfile));
          List<MethodPlan> again = scan(inlined, true, null); // the copies: scan every method
          if (!hasSubroutines(again)) {
            reader = inlined;
            plans = again;
          }
        } catch (RuntimeException | LinkageError e) {
          // 'Subroutines' step 3: those methods stay as they were, counted as old version
        }
      }
      out = stats(plans).isEmpty() ? null : emit(reader, plans);
    }
    Stats stats = stats(plans); // without the methods emit left alone
    List<RewriteCache.MethodNote> methods = new ArrayList<>(0);
    Coverage.Reason why = null;
    for (MethodPlan p : plans) {
      if (p.leftAlone != null) {
        methods.add(new RewriteCache.MethodNote(p.name, p.descriptor, p.leftAlone));
        why = why == null || p.leftAlone == Coverage.Reason.TOO_LARGE ? p.leftAlone : why;
      }
    }
    if (stats.isEmpty()) {
      return new RewriteCache.Outcome(
          null, why == null ? Coverage.Reason.NO_LOOPS : why, methods, stats);
    }
    if (frameCheck != CHECK_NONE) {
      Set<String> rewritten = new HashSet<>();
      for (MethodPlan p : plans) {
        if (!p.isEmpty() && (frameCheck == CHECK_ALL || p.derivesFrames())) {
          rewritten.add(p.name + p.descriptor);
        }
      }
      if (!rewritten.isEmpty()) { // 'Frame check only where frames are derived'
        FrameCheck.check(out, rewritten); // throws: the class stays as it was
      }
    }
    return new RewriteCache.Outcome(out, null, methods, stats);
  }

  /**
   * 'One pass': reads the class once, and each method with loops is scanned and written from its
   * kept code ({@link MethodRecorder}). Fills {@code plans} (one per method, in class-file order)
   * and returns the class, or null if nothing changed. Leaves {@code plans} empty when it gives
   * up, and the caller takes the two passes: on JSR/RET in an old class file (the class is
   * inlined and scanned again), or on a type annotation inside code, which the recorder does not
   * keep. A method past 64 KB is handled as in 'Too large', by the two-pass emitter.
   */
  private byte[] onePass(
      ClassReader reader, boolean frameless, BitSet loops, List<MethodPlan> plans) {
    ClassWriter writer = new ClassWriter(reader, 0); // see emit
    String owner = reader.getClassName();
    try {
      reader.accept(
          new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public MethodVisitor visitMethod(
                int access, String name, String desc, String sig, String[] exceptions) {
              MethodVisitor mv = super.visitMethod(access, name, desc, sig, exceptions);
              MethodPlan plan = new MethodPlan(name, desc, prologue(access, name), frameless);
              boolean noLoop = loops != null && !loops.get(plans.size()); // 'Fast reject'
              plans.add(plan);
              if (mv == null || skipped(access, name) || noLoop) {
                return mv; // the writer copies the method's bytes
              }
              return new MethodRecorder(
                  mv,
                  code -> {
                    LoopScanner scanner = new LoopScanner(plan);
                    code.accept(scanner);
                    scanner.visitEnd(); // plans the method; the writer gets visitEnd after
                    MethodVisitor out = PollEmitter.writer(mv, plan, owner, access, desc);
                    code.accept(plan.isEmpty() ? out : PollEmitter.method(out, plan));
                  });
            }
          },
          ClassReader.EXPAND_FRAMES);
    } catch (UnsupportedOperationException typeAnnotationInCode) {
      plans.clear();
      return null;
    }
    if (frameless && hasSubroutines(plans)) {
      plans.clear();
      return null;
    }
    if (stats(plans).isEmpty()) {
      return null;
    }
    try {
      return writer.toByteArray();
    } catch (MethodTooLargeException e) {
      return tooLarge(plans, e) ? emit(reader, plans) : null;
    }
  }

  /** Pass 1 of two: one plan per method, in class-file order. */
  private List<MethodPlan> scan(ClassReader reader, boolean frameless, BitSet loops) {
    List<MethodPlan> plans = new ArrayList<>();
    reader.accept(
        new ClassVisitor(Opcodes.ASM9) {
          @Override
          public MethodVisitor visitMethod(
              int access, String name, String desc, String sig, String[] exceptions) {
            MethodPlan plan = new MethodPlan(name, desc, prologue(access, name), frameless);
            boolean noLoop = loops != null && !loops.get(plans.size()); // 'Fast reject'
            plans.add(plan);
            return skipped(access, name) || noLoop ? null : new LoopScanner(plan);
          }
        },
        ClassReader.SKIP_DEBUG | ClassReader.EXPAND_FRAMES);
    return plans;
  }

  /** True if a method with loops (or a prologue poll) holds JSR/RET: the scanner left it alone. */
  private static boolean hasSubroutines(List<MethodPlan> plans) {
    for (MethodPlan p : plans) {
      if (p.leftAlone == Coverage.Reason.OLD_VERSION) {
        return true;
      }
    }
    return false;
  }

  /** The polls the plans place, leaving out the methods left alone. */
  private static Stats stats(List<MethodPlan> plans) {
    int backEdge = 0, strips = 0, prologue = 0, countdown = 0;
    for (MethodPlan p : plans) {
      if (p.leftAlone == null) {
        backEdge += p.backEdgePolls();
        countdown += p.countdown.cardinality();
        strips += p.stripLoops.size();
        prologue += p.prologue ? 1 : 0;
      }
    }
    return new Stats(backEdge, strips, prologue, countdown);
  }

  /**
   * Pass 2. A method that the writer finds past 64 KB is left alone and the class emitted again
   * ('Too large'); at most once per method, so this ends.
   */
  private static byte[] emit(ClassReader reader, List<MethodPlan> plans) {
    while (true) {
      // Passing the reader lets the writer copy the constant pool and every method we leave
      // alone verbatim. No COMPUTE_* flag: see 'Rejected' above; max stack and locals come from
      // the plan.
      ClassWriter writer = new ClassWriter(reader, 0);
      reader.accept(
          new PollEmitter(writer, plans, reader.getClassName()), ClassReader.EXPAND_FRAMES);
      try {
        return writer.toByteArray();
      } catch (MethodTooLargeException e) {
        if (!tooLarge(plans, e)) {
          return null;
        }
      }
    }
  }

  /**
   * Marks the method that {@code e} names as left alone ('Too large'); true if something is left
   * to emit. Rethrows {@code e} for a method without a plan: the class was too large as read.
   */
  private static boolean tooLarge(List<MethodPlan> plans, MethodTooLargeException e) {
    MethodPlan big = null;
    for (MethodPlan p : plans) {
      if (!p.isEmpty()
          && p.name.equals(e.getMethodName())
          && p.descriptor.equals(e.getDescriptor())) {
        big = p;
      }
    }
    if (big == null) {
      throw e;
    }
    big.leftAlone = Coverage.Reason.TOO_LARGE;
    return !stats(plans).isEmpty();
  }

  /**
   * What the last {@link #transform} call on the calling thread did ({@code Stats(0, 0, 0, 0)} if
   * it returned null, or if the thread has not called it). For tests and the agent's debug output.
   */
  public Stats lastStats() {
    Stats s = LAST_STATS.get();
    return s == null ? Stats.NONE : s;
  }

  /** True for the built-in refusals: never instrumented, and not counted. */
  private static boolean refused(String internalClassName) {
    for (String prefix : REFUSED_PREFIXES) {
      if (internalClassName.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  /** True if the class is neither refused nor excluded, and included. */
  boolean selects(String internalClassName) {
    if (refused(internalClassName)) {
      return false;
    }
    String dotted = internalClassName.replace('/', '.');
    if (matchesAny(excludes, dotted)) {
      return false;
    }
    return includes.length == 0 || matchesAny(includes, dotted);
  }

  /** Methods that get no poll of any kind ('Poll placement' rule 4). */
  private static boolean skipped(int access, String name) {
    return name.equals("<clinit>") || (access & Opcodes.ACC_BRIDGE) != 0;
  }

  private boolean prologue(int access, String name) {
    return prologuePolls
        && !skipped(access, name)
        && !name.equals("<init>")
        && (access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE)) == 0;
  }

  private static boolean matchesAny(Pattern[] patterns, String dotted) {
    for (Pattern p : patterns) {
      if (p.matcher(dotted).matches()) {
        return true;
      }
    }
    return false;
  }

  /** Compiles {@code a.*;b.C|d.*} into one regex per glob; {@code *} is the only wildcard. */
  static Pattern[] globs(String patterns) {
    if (patterns == null || patterns.isBlank()) {
      return new Pattern[0];
    }
    List<Pattern> out = new ArrayList<>();
    for (String glob : patterns.split("[;|]")) {
      glob = glob.trim();
      if (glob.isEmpty()) {
        continue;
      }
      StringBuilder regex = new StringBuilder();
      int from = 0;
      for (int star = glob.indexOf('*'); star >= 0; star = glob.indexOf('*', from)) {
        regex.append(Pattern.quote(glob.substring(from, star))).append(".*");
        from = star + 1;
      }
      regex.append(Pattern.quote(glob.substring(from)));
      out.add(Pattern.compile(regex.toString()));
    }
    return out.toArray(new Pattern[0]);
  }

  @Override
  public String toString() {
    return "PollInjector[includes="
        + includes.length
        + " excludes="
        + excludes.length
        + " prologuePolls="
        + prologuePolls
        + "]";
  }
}
