package io.gmp4j.agent;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.utility.JavaModule;

/**
 * Byte Buddy's listener for gmp4j's JDK instrumentations: every failure becomes one warning line,
 * never an exception, and the installer can ask afterwards which types were transformed.
 *
 * <p>Byte Buddy reports a failed transformation through {@link AgentBuilder.Listener#onError}
 * and a failed {@code retransformClasses} call (the JVM refusing the new class file) through
 * {@link AgentBuilder.RedefinitionStrategy.Listener#onError}; this class is both, so neither is
 * silent (agent-notes section 7.2: Aikido's agent once swallowed exactly these errors).
 */
final class InstrumentationListener extends AgentBuilder.Listener.Adapter
    implements AgentBuilder.RedefinitionStrategy.Listener {

  /**
   * Names of the types transformed so far. Written by whichever thread loads or retransforms a
   * matched type (a ConcurrentHashMap, so any thread); read by the installer after installOn.
   */
  private final Set<String> transformed = ConcurrentHashMap.newKeySet();

  /** Names of the types whose transformation failed. Same access rules as {@link #transformed}. */
  private final Set<String> failed = ConcurrentHashMap.newKeySet();

  /** Types without which gmp4j is not installed; their warning line ends in {@link #fatalSuffix}. */
  private final Set<String> essential;

  private final String fatalSuffix;

  InstrumentationListener(Set<String> essential, String fatalSuffix) {
    this.essential = Set.copyOf(essential);
    this.fatalSuffix = fatalSuffix;
  }

  /** True once {@code typeName} was transformed without error. Any thread. */
  boolean wasTransformed(String typeName) {
    return transformed.contains(typeName) && !failed.contains(typeName);
  }

  /** True once a warning line was printed for {@code typeName}. Any thread. */
  boolean hasFailed(String typeName) {
    return failed.contains(typeName);
  }

  @Override
  public void onTransformation(TypeDescription typeDescription, ClassLoader classLoader,
      JavaModule module, boolean loaded, DynamicType dynamicType) {
    transformed.add(typeDescription.getName());
  }

  @Override
  public void onError(String typeName, ClassLoader classLoader, JavaModule module, boolean loaded,
      Throwable throwable) {
    warn(typeName, throwable);
  }

  @Override
  public void onBatch(int index, List<Class<?>> batch, List<Class<?>> types) {}

  @Override
  public Iterable<? extends List<Class<?>>> onError(
      int index, List<Class<?>> batch, Throwable throwable, List<Class<?>> types) {
    for (Class<?> c : batch) {
      warn(c.getName(), throwable);
    }
    return Collections.emptyList(); // no retry: the same class file would fail the same way
  }

  @Override
  public void onComplete(
      int amount, List<Class<?>> types, Map<List<Class<?>>, Throwable> failures) {}

  /** One line per failed type, the first time only. Never throws. */
  private void warn(String typeName, Throwable throwable) {
    if (failed.add(typeName)) {
      Stderr.line("gmp4j: could not instrument " + typeName + ": " + Stderr.describe(throwable)
          + (essential.contains(typeName) ? fatalSuffix : ""));
    }
  }
}
