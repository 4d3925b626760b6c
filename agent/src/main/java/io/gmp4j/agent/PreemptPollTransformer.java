package io.gmp4j.agent;

import java.lang.instrument.ClassFileTransformer;
import java.security.ProtectionDomain;
import java.util.Set;

/**
 * Hands each application class to the loop-poll injector ({@code io.gmp4j.agent.poll}), and
 * keeps it away from every class a poll must never run in.
 *
 * <h2>Implementation overview</h2>
 *
 * A poll may call {@code Thread.yield()}. Preempting a virtual thread halfway through a scheduler
 * or queue operation can deadlock its carrier (DESIGN.md section 4), and a poll inside the code
 * that defines classes can recurse into itself. So, in this order and before any other work:
 *
 * <ol>
 *   <li>Skip classes defined by the boot or platform loader: the JDK, and gmp4j's runtime.
 *   <li>Skip retransformations and redefinitions ({@code classBeingRedefined != null}), unless this
 *       transformer was built for an attach or for {@code preempt.defer} ({@code retransforms}):
 *       then it is registered with retransform capability, and {@link Retransformer} hands it the
 *       classes loaded before the attach, or those whose polls were deferred ({@link
 *       DeferredPolls}). The JVM passes their original class file, so polls are injected once,
 *       however often a class is retransformed. A method already on a stack keeps its old code
 *       until it is next entered.
 *   <li>Skip classes without a name and lambda proxies: the JVM does not hand hidden classes to
 *       transformers, but a name check costs nothing.
 *   <li>Skip by name: {@code java/ javax/ jdk/ sun/ com/sun/} (JDK classes loaded by other
 *       loaders), {@code io/gmp4j/} (the agent, including relocated Byte Buddy under {@code
 *       io/gmp4j/agent/shaded/}, and any copy of the runtime on the class path), {@code
 *       net/bytebuddy/} (an unshaded Byte Buddy).
 *   <li>Everything else goes to the injector, which applies the user's include and exclude
 *       patterns. Any Throwable it throws leaves that one class uninstrumented, with one line.
 * </ol>
 *
 * The filter runs on every class load of the application, so it allocates nothing and loads no
 * class: only String prefix tests on the internal name.
 */
final class PreemptPollTransformer implements ClassFileTransformer {
  /** The poll injector's entry point; see 'Poll injector contract' in PollInjectors. */
  interface Injector {
    /** The instrumented class file, or null to leave the class alone. May throw. */
    byte[] transform(ClassLoader loader, String internalClassName, byte[] classfile)
        throws Throwable;

    /**
     * As {@link #transform}, for a class being loaded rather than retransformed: the injector may
     * leave its polls for later ('Deferred polls' in {@link DeferredPolls}).
     */
    default byte[] transformAtLoad(ClassLoader loader, String internalClassName, byte[] classfile)
        throws Throwable {
      return transform(loader, internalClassName, classfile);
    }

    /**
     * True if {@link #transform} would leave the class alone, read from {@code classfile}
     * without ASM, and its outcome is recorded ('Class files read back' in {@link
     * Retransformer}); false when in doubt. Never throws.
     */
    default boolean leavesAlone(ClassLoader loader, String internalClassName, byte[] classfile) {
      return false;
    }

    /**
     * The names of the methods of {@code classfile} that {@link #transform} may change, or null
     * when any may ('Running classes' in {@link Retransformer}). Never throws.
     */
    default Set<String> changedMethods(byte[] classfile) {
      return null;
    }

    /**
     * Does the work of this thread's next {@link #transform} of these bytes now ('Prepared
     * rewrites' in {@link Retransformer}); records nothing. May throw.
     */
    default void prepare(String internalClassName, byte[] classfile) {}

    /** Drops what {@link #prepare} kept on this thread. */
    default void forgetPrepared() {}
  }

  /** Internal-name prefixes never instrumented (step 4). */
  private static final String[] SKIPPED_PREFIXES = {
    "java/", "javax/", "jdk/", "sun/", "com/sun/", "io/gmp4j/", "net/bytebuddy/",
  };

  private final Injector injector;

  /** The platform loader, skipped like the boot loader (step 1). */
  private final ClassLoader platformLoader = ClassLoader.getPlatformClassLoader();

  /** Whether retransformations are handled too (step 2). */
  private final boolean retransforms;

  /**
   * Per thread, how many retransformations this transformer changed a class in: the JVM calls it
   * on the thread that asked to retransform, so {@link Retransformer} counts its own. Set and
   * read only by that thread.
   */
  private final ThreadLocal<long[]> retransformed = new ThreadLocal<>();

  PreemptPollTransformer(Injector injector) {
    this(injector, false);
  }

  PreemptPollTransformer(Injector injector, boolean retransforms) {
    this.injector = injector;
    this.retransforms = retransforms;
  }

  /** Called by the JVM on the thread that loads the class; any thread. Never throws. */
  @Override
  public byte[] transform(
      ClassLoader loader,
      String className,
      Class<?> classBeingRedefined,
      ProtectionDomain protectionDomain,
      byte[] classfileBuffer) {
    if (!wanted(loader, className, classBeingRedefined)) {
      return null;
    }
    try {
      if (classBeingRedefined == null) {
        return injector.transformAtLoad(loader, className, classfileBuffer);
      }
      byte[] out = injector.transform(loader, className, classfileBuffer);
      if (out != null) {
        long[] n = retransformed.get();
        if (n == null) {
          retransformed.set(n = new long[1]);
        }
        n[0]++;
      }
      return out;
    } catch (Throwable t) {
      try {
        Stderr.line(
            "gmp4j: left "
                + className.replace('/', '.')
                + " uninstrumented: "
                + Stderr.describe(t));
      } catch (Throwable ignored) {
        // stderr itself failed: nothing left to tell, and the class must still load
      }
      return null;
    }
  }

  /** See {@link Injector#leavesAlone}; never throws. */
  boolean leavesAlone(ClassLoader loader, String className, byte[] classfile) {
    try {
      return injector.leavesAlone(loader, className, classfile);
    } catch (Throwable t) {
      return false;
    }
  }

  /** See {@link Injector#prepare}; never throws. */
  void prepare(String className, byte[] classfile) {
    try {
      injector.prepare(className, classfile);
    } catch (Throwable t) {
      // the retransformation does the work itself, and says what goes wrong
    }
  }

  /** See {@link Injector#forgetPrepared}; never throws. */
  void forgetPrepared() {
    try {
      injector.forgetPrepared();
    } catch (Throwable t) {
      // nothing kept
    }
  }

  /** See {@link Injector#changedMethods}; never throws. */
  Set<String> changedMethods(byte[] classfile) {
    try {
      return injector.changedMethods(classfile);
    } catch (Throwable t) {
      return null;
    }
  }

  /** How many classes the calling thread's retransformations changed so far. */
  long retransformedOnThisThread() {
    long[] n = retransformed.get();
    return n == null ? 0 : n[0];
  }

  /**
   * The internal name under which this transformer takes {@code c}, a class already loaded,
   * or null where it would not have taken it at load (steps 1 to 4; arrays, primitives and
   * hidden classes never reach a transformer). For premain's and the Retransformer's look at the
   * loaded classes; the boot loader's, nearly all of them, build no name.
   */
  String wantedName(Class<?> c) {
    ClassLoader loader = c.getClassLoader();
    if (loader == null || c.isArray() || c.isHidden()) {
      return null; // a primitive's loader is null
    }
    String internal = c.getName().replace('.', '/');
    return wanted(loader, internal, null) ? internal : null;
  }

  /** Steps 1 to 4 of the overview. */
  boolean wanted(ClassLoader loader, String className, Class<?> classBeingRedefined) {
    if (loader == null || loader == platformLoader) {
      return false;
    }
    if ((classBeingRedefined != null && !retransforms)
        || className == null
        || className.contains("$$Lambda")) {
      return false;
    }
    for (String prefix : SKIPPED_PREFIXES) {
      if (className.startsWith(prefix)) {
        return false;
      }
    }
    return true;
  }
}
