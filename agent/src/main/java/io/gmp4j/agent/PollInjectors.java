package io.gmp4j.agent;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * Finds the loop-poll injector by name, so that the agent builds and runs whether or not the
 * {@code io.gmp4j.agent.poll} package is present.
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
 * <p>Rejected: a compile-time reference. The two halves are written separately; reflection keeps
 * this module compiling and the agent working (without polls) while the injector is missing.
 */
final class PollInjectors {
  static final String INJECTOR = "io.gmp4j.agent.poll.PollInjector";

  private PollInjectors() {}

  /**
   * The injector, or null (after one line on stderr) when the agent jar has none. Throws when it
   * exists but cannot be created (InvocationTargetException wraps what its constructor threw).
   * Called once, by the installer.
   */
  static PreemptPollTransformer.Injector create(String include, String exclude, boolean prologue)
      throws ReflectiveOperationException {
    Class<?> type;
    try {
      type = Class.forName(INJECTOR, true, PollInjectors.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      Stderr.line(
          "gmp4j: this agent jar has no loop-poll injector ("
              + INJECTOR
              + "); running Gs are not preempted, as with asyncpreemptoff=1");
      return null;
    }
    Constructor<?> ctor = type.getConstructor(String.class, String.class, boolean.class);
    Object injector = ctor.newInstance(include, exclude, prologue);
    Method transform = type.getMethod("transform", ClassLoader.class, String.class, byte[].class);
    return (loader, name, classfile) -> {
      try {
        return (byte[]) transform.invoke(injector, loader, name, classfile);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    };
  }
}
