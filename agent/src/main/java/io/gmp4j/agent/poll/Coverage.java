package io.gmp4j.agent.poll;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Which classes got preemption polls and which were left alone, and why: per class loader and
 * package. Go has no counterpart, since its compiler puts the checks into every function; here a
 * class without polls is a G that sysmon cannot preempt, and the user must be able to see it.
 *
 * <h2>Implementation overview: 'Coverage'</h2>
 *
 * <ol>
 *   <li>{@link PollInjector#transform} records each class it is handed, once: instrumented, or
 *       left alone for one {@link Reason}. A class with some methods left alone (too large, a
 *       subroutine not inlined) and others instrumented counts as instrumented; the methods go to
 *       the method list.
 *   <li>The counters are LongAdders in a ConcurrentHashMap keyed by (loader, package): the
 *       record runs on every class-loading thread, inside class definition, so it takes no lock
 *       once the package's entry exists (a {@code get} and an increment). The key's loader part is
 *       the loader's name and identity hash, computed per record: cheap beside the parse of the
 *       class file that precedes it, and it holds no reference that would keep a loader alive.
 *   <li>Readers ({@link #summaryLine}, {@link #table}, {@link #instrumented}, {@link #skipped})
 *       sum the adders without stopping writers: a reading taken while classes load may miss
 *       the classes being recorded, never counts one twice.
 * </ol>
 *
 * <p>Shown three ways: one line at exit with {@code preempt.report=1} (AgentInstaller), the
 * endpoint's {@code /debug/instrumentation} ({@link #table}), and the metrics {@code
 * /sched/instrumentation/classes/instrumented:classes} and {@code .../skipped:classes} (the
 * runtime reads {@link #instrumented} and {@link #skipped} through suppliers the agent registers).
 *
 * <p>Rejected: counting in the transformer ({@code PreemptPollTransformer}). It sees only the
 * returned bytes; the reasons (no loops, old version, too large) are known only to the injector.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public final class Coverage {
  /** Why a class, or a method, got no polls. The order is the order of the summary line. */
  public enum Reason {
    /** Left out by {@code preempt.include} / {@code preempt.exclude}. */
    EXCLUDED("excluded"),
    /** No backward branch anywhere (and no prologue poll asked for): nothing to do. */
    NO_LOOPS("no loops"),
    /**
     * The methods with loops hold JSR/RET subroutines (javac 1.4 and older {@code finally}) that
     * could not be inlined ('Subroutines' in SubroutineInliner), or are of version 50, where
     * inlined code would need frames.
     */
    OLD_VERSION("old version"),
    /** The methods with loops would pass the JVM's 64 KB code limit with their polls. */
    TOO_LARGE("too large"),
    /** The injector threw. */
    FAILED("failed"),
    /** The injector's own check of its output's frames threw a FrameCheckException. */
    FRAME_CHECK_FAILED("frame check failed");

    final String label;

    Reason(String label) {
      this.label = label;
    }

    @Override
    public String toString() {
      return label;
    }
  }

  /**
   * The most methods (and failed classes) kept for the table; later ones are only counted. A
   * broken injector could otherwise keep one string per class of a large application.
   */
  static final int MAX_LISTED = 1000;

  private static final Coverage GLOBAL = new Coverage();

  /** (loader, package) -> counts. Entries are added, never removed. */
  private final ConcurrentHashMap<Key, Counts> packages = new ConcurrentHashMap<>();

  /** Methods and classes left alone for TOO_LARGE, OLD_VERSION, FAILED or FRAME_CHECK_FAILED. */
  private final ConcurrentLinkedQueue<String> listed = new ConcurrentLinkedQueue<>();

  private final AtomicInteger listedCount = new AtomicInteger();

  /** The injector's rewrite cache, for the summary line, or null. Written once, at set-up. */
  private volatile RewriteCache cache;

  private final LongAdder instrumented = new LongAdder();
  private final LongAdder skipped = new LongAdder();

  /**
   * Classes loaded with early polls whose rewrite is still to come ('Deferred polls' in the
   * agent's DeferredPolls): added to by the injector as it defers each, reset by the deferral
   * once it has retransformed them. Not in {@link #instrumented} until then.
   */
  private final LongAdder early = new LongAdder();

  /**
   * A map key. {@code equals} and {@code hashCode} are written out: a record's own are linked by
   * invokedynamic ({@code ObjectMethods}) at their first call, which is the first class an
   * application loads, and that link took about 30 ms of interpreted method-handle spinning on
   * hello world (issue 11's start-up item).
   */
  private record Key(String loader, String pkg) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && loader.equals(k.loader) && pkg.equals(k.pkg);
    }

    @Override
    public int hashCode() {
      return 31 * loader.hashCode() + pkg.hashCode();
    }
  }

  private static final class Counts {
    final LongAdder instrumented = new LongAdder();
    final LongAdder[] skipped = new LongAdder[Reason.values().length];

    Counts() {
      for (int i = 0; i < skipped.length; i++) {
        skipped[i] = new LongAdder();
      }
    }
  }

  /** The agent's coverage: what the injector built by the agent records into. */
  public static Coverage global() {
    return GLOBAL;
  }

  /**
   * The reason for a class whose transform threw {@code t}: the frame check's own exception, or
   * any other failure.
   */
  static Reason reasonOf(Throwable t) {
    return t instanceof FrameCheckException ? Reason.FRAME_CHECK_FAILED : Reason.FAILED;
  }

  /** Records one class that got polls. */
  void instrumented(ClassLoader loader, String internalClassName) {
    counts(loader, internalClassName).instrumented.increment();
    instrumented.increment();
  }

  /**
   * Records one class that keeps its early polls for good ('Running classes' in the agent's
   * Retransformer: a thread stayed in it), after {@link #earlyRewritten}: it has polls, so it
   * counts as instrumented. Any thread.
   */
  public void keptEarly(ClassLoader loader, String internalClassName) {
    instrumented(loader, internalClassName);
  }

  /** Records one class left alone for {@code why}. */
  void skipped(ClassLoader loader, String internalClassName, Reason why) {
    counts(loader, internalClassName).skipped[why.ordinal()].increment();
    skipped.increment();
  }

  /** Records one class whose transform threw {@code t}, and lists it. */
  void failed(ClassLoader loader, String internalClassName, Throwable t) {
    Reason why = reasonOf(t);
    skipped(loader, internalClassName, why);
    String msg = t.getMessage() == null ? "" : ": " + t.getMessage().replace('\n', ' ');
    list(why, internalClassName.replace('/', '.') + " (" + t.getClass().getName() + msg + ")");
  }

  /** Lists one method left alone for {@code why} (its class may still be instrumented). */
  void method(String internalClassName, String name, String descriptor, Reason why) {
    list(why, internalClassName.replace('/', '.') + "." + name + descriptor);
  }

  private void list(Reason why, String what) {
    if (listedCount.getAndIncrement() < MAX_LISTED) {
      listed.add(why + ": " + what);
    }
  }

  private Counts counts(ClassLoader loader, String internalClassName) {
    int slash = internalClassName.lastIndexOf('/');
    String pkg = slash < 0 ? "" : internalClassName.substring(0, slash).replace('/', '.');
    Key key = new Key(nameOf(loader), pkg);
    Counts c = packages.get(key);
    if (c != null) {
      return c;
    }
    // Not computeIfAbsent's lambda: its first link costs more than the rare lost Counts here.
    Counts fresh = new Counts();
    Counts raced = packages.putIfAbsent(key, fresh);
    return raced != null ? raced : fresh;
  }

  /**
   * The last loader named and its name: nearly every class an application loads comes from the
   * loader of the one before, and the name costs a concatenation and an identity hash. Weak, so
   * that an unloaded web application's loader is not kept. Any thread; a race only names a loader
   * twice.
   */
  private volatile LastLoader lastLoader;

  private static final class LastLoader {
    final java.lang.ref.WeakReference<ClassLoader> loader;
    final String name;

    LastLoader(ClassLoader loader, String name) {
      this.loader = new java.lang.ref.WeakReference<>(loader);
      this.name = name;
    }
  }

  private String nameOf(ClassLoader loader) {
    LastLoader last = lastLoader;
    if (last != null && loader != null && last.loader.get() == loader) {
      return last.name;
    }
    String name = loaderName(loader);
    if (loader != null) {
      lastLoader = new LastLoader(loader, name);
    }
    return name;
  }

  /** {@code app@1b6d3586}: the loader's name (or class) and identity; {@code boot} for null. */
  static String loaderName(ClassLoader loader) {
    if (loader == null) {
      return "boot";
    }
    String name = loader.getName() != null ? loader.getName() : loader.getClass().getName();
    return name + "@" + Integer.toHexString(System.identityHashCode(loader));
  }

  /** Names the rewrite cache whose counts the summary line ends with. Called by the injector. */
  void useCache(RewriteCache c) {
    cache = c;
  }

  /** A class loaded with early polls, deferred for its rewrite. Any class-loading thread. */
  void earlyPolls() {
    early.increment();
  }

  /**
   * The classes {@link #earlyPolls} counted were all retransformed, or kept ({@link #keptEarly}):
   * called by the deferral once its retransformation is over, when no class is deferred any
   * more, so nothing adds meanwhile.
   */
  public void earlyRewritten() {
    early.reset();
  }

  /**
   * {@code n} of the classes {@link #earlyPolls} counted were retransformed or kept, the others
   * still wait: the deferral's pass at its deadline (the agent's DeferredPolls, 'The deadline').
   */
  public void earlyRewritten(long n) {
    early.add(-n);
  }

  /** Classes with early polls awaiting their rewrite. */
  public long early() {
    return early.sum();
  }

  /** Classes instrumented so far. */
  public long instrumented() {
    return instrumented.sum();
  }

  /** Classes left alone so far, for any reason. */
  public long skipped() {
    return skipped.sum();
  }

  /** Classes left alone so far for {@code why}. */
  public long skipped(Reason why) {
    long n = 0;
    for (Counts c : packages.values()) {
      n += c.skipped[why.ordinal()].sum();
    }
    return n;
  }

  /**
   * {@code gmp4j: preemption polls: 1234 classes instrumented, 56 left alone (40 no loops, 10
   * excluded, 3 old version, 1 too large, 2 failed) in 7 loaders}; reasons with no class are left
   * out, and so are the parentheses when no class was left alone. While classes wait for their
   * rewrite with early polls, {@code ; 812 classes with early polls, placed polls to come
   * (preempt.defer)} follows. With {@code preempt.cache} it ends with the cache's counts ({@link
   * RewriteCache#summary}).
   */
  public String summaryLine() {
    Map<Reason, Long> by = new EnumMap<>(Reason.class);
    long in = 0;
    long out = 0;
    java.util.Set<String> loaders = new java.util.HashSet<>();
    for (Map.Entry<Key, Counts> e : packages.entrySet()) {
      loaders.add(e.getKey().loader());
      in += e.getValue().instrumented.sum();
      for (Reason r : Reason.values()) {
        long n = e.getValue().skipped[r.ordinal()].sum();
        by.merge(r, n, Long::sum);
        out += n;
      }
    }
    StringBuilder b = new StringBuilder("gmp4j: preemption polls: ");
    b.append(in).append(in == 1 ? " class" : " classes").append(" instrumented, ");
    b.append(out).append(" left alone");
    List<String> parts = new ArrayList<>();
    for (Reason r : Reason.values()) {
      if (by.getOrDefault(r, 0L) > 0) {
        parts.add(by.get(r) + " " + r);
      }
    }
    if (!parts.isEmpty()) {
      b.append(" (").append(String.join(", ", parts)).append(')');
    }
    b.append(" in ").append(loaders.size()).append(loaders.size() == 1 ? " loader" : " loaders");
    long e = early.sum();
    if (e > 0) {
      b.append("; ").append(e).append(e == 1 ? " class" : " classes");
      b.append(" with early polls, placed polls to come (preempt.defer)");
    }
    RewriteCache c = cache;
    if (c != null) {
      b.append(c.summary());
    }
    return b.toString();
  }

  /**
   * The endpoint's {@code /debug/instrumentation}: one row per (loader, package), sorted, with
   * the instrumented count and one column per reason; then the methods and classes listed.
   */
  public String table() {
    Map<String, Counts> rows = new TreeMap<>();
    packages.forEach((k, c) -> rows.put(k.loader() + "\t" + k.pkg(), c));
    int loaderWidth = "loader".length();
    int pkgWidth = "package".length();
    for (Key k : packages.keySet()) {
      loaderWidth = Math.max(loaderWidth, k.loader().length());
      pkgWidth = Math.max(pkgWidth, k.pkg().isEmpty() ? 9 : k.pkg().length());
    }
    StringBuilder b = new StringBuilder();
    b.append(summaryLine(), "gmp4j: ".length(), summaryLine().length()).append("\n\n");
    String fmt = "%-" + loaderWidth + "s  %-" + pkgWidth + "s";
    b.append(String.format(fmt, "loader", "package")).append("  instrumented");
    for (Reason r : Reason.values()) {
      b.append("  ").append(r);
    }
    b.append('\n');
    for (Map.Entry<String, Counts> e : rows.entrySet()) {
      String[] lp = e.getKey().split("\t", 2);
      b.append(String.format(fmt, lp[0], lp[1].isEmpty() ? "(default)" : lp[1]));
      b.append(String.format("  %12d", e.getValue().instrumented.sum()));
      for (Reason r : Reason.values()) {
        String w = "%" + r.label.length() + "d";
        b.append("  ").append(String.format(w, e.getValue().skipped[r.ordinal()].sum()));
      }
      b.append('\n');
    }
    b.append("\nmethods and classes left alone (too large, old version, failed):\n");
    if (listed.isEmpty()) {
      b.append("  none\n");
    }
    for (String s : listed) {
      b.append("  ").append(s).append('\n');
    }
    int more = listedCount.get() - MAX_LISTED;
    if (more > 0) {
      b.append("  ... and ").append(more).append(" more\n");
    }
    return b.toString();
  }

  @Override
  public String toString() {
    return "Coverage[" + summaryLine().substring("gmp4j: ".length()) + "]";
  }
}
