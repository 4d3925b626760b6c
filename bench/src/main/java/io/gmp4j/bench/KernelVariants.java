package io.gmp4j.bench;

import io.gmp4j.agent.poll.PollInjector;
import java.io.IOException;
import java.io.InputStream;
import kernels.Kernels;

/**
 * Loads {@code kernels.LoopKernels} as one of four variants, each in its own child-first class
 * loader, so that all four can live in one JVM:
 *
 * <ul>
 *   <li>{@code plain}: the class bytes as javac compiled them;
 *   <li>{@code polled}: the bytes transformed by {@code new PollInjector(null, null, false)}, which
 *       is what the agent does by default (back-edge polls and strip mining, no prologue polls);
 *   <li>{@code prologue}: the same with prologue polls ({@code preempt.prologue=1});
 *   <li>{@code early}: the early polls (a check at each loop head, no strip mining: 'Early
 *       polls' in the injector), in every loop. The agent's default gives them to a class loaded
 *       at start-up until the deferral ends and it is rewritten, except a class with an array
 *       loop without calls, which it rewrites at load ('Array loops'): most of these kernels.
 * </ul>
 *
 * Only {@code kernels.LoopKernels} is defined by the child loader; {@code kernels.Kernels}, the
 * input types and {@code io.gmp4j.runtime.Preempt} (the target of the polls) come from the parent,
 * so both variants share them.
 */
public final class KernelVariants {
  static final String KERNELS = "kernels.LoopKernels";

  private KernelVariants() {}

  /** A loaded variant and what the injector did to it ({@code Stats(0, 0, 0)} for plain). */
  public record Variant(Kernels kernels, PollInjector.Stats stats) {}

  /** Loads {@code variant} (plain, polled, prologue or early). */
  public static Variant load(String variant) {
    byte[] original = originalBytes();
    byte[] bytes;
    PollInjector.Stats stats;
    switch (variant) {
      case "plain" -> {
        bytes = original;
        stats = new PollInjector(null, null, false).lastStats(); // Stats(0, 0, 0)
      }
      case "polled", "prologue" -> {
        PollInjector injector = new PollInjector(null, null, variant.equals("prologue"));
        bytes = injector.transform(null, KERNELS.replace('.', '/'), original);
        stats = injector.lastStats();
        if (bytes == null || stats.isEmpty()) {
          throw new IllegalStateException("the injector left " + KERNELS + " unchanged");
        }
      }
      case "early" -> { // 'Early polls', in every loop: the agent rewrites array loops at load
        bytes = PollInjector.earlyPolls(original);
        stats = new PollInjector(null, null, false).lastStats(); // Stats(0, 0, 0): no rewrite
        if (bytes == null || bytes == original) {
          throw new IllegalStateException("no early polls in " + KERNELS);
        }
      }
      default -> throw new IllegalArgumentException("unknown variant " + variant);
    }
    try {
      Class<?> type = new ChildFirst(Kernels.class.getClassLoader(), bytes).loadClass(KERNELS);
      return new Variant((Kernels) type.getConstructor().newInstance(), stats);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot load the " + variant + " " + KERNELS, e);
    }
  }

  static byte[] originalBytes() {
    String resource = KERNELS.replace('.', '/') + ".class";
    try (InputStream in = Kernels.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("no " + resource + " on the class path");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + resource, e);
    }
  }

  /** Defines {@code kernels.LoopKernels} from the given bytes; asks the parent for the rest. */
  private static final class ChildFirst extends ClassLoader {
    private final byte[] bytes;

    ChildFirst(ClassLoader parent, byte[] bytes) {
      super("loop-kernels", parent);
      this.bytes = bytes;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (!name.equals(KERNELS)) {
        return super.loadClass(name, resolve);
      }
      synchronized (getClassLoadingLock(name)) {
        Class<?> c = findLoadedClass(name);
        if (c == null) {
          c = defineClass(name, bytes, 0, bytes.length);
        }
        if (resolve) {
          resolveClass(c);
        }
        return c;
      }
    }
  }
}
