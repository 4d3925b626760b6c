package io.gmp4j.agent.poll;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassHierarchyResolver;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 'Early polls' over every class of the JDK's runtime image: each class is patched with every
 * loop polled (array loops too), and the patched class is checked by the class-file API's
 * verifier ({@code ClassFile.verify}, the split verifier's rules without loading the class),
 * against the errors of the original (a class whose hierarchy the verifier cannot resolve fails
 * both ways). EarlyPollsTest links real jars in HotSpot; this reaches some 6,000 more classes
 * with loops in a few seconds. The bug of an {@code Uninitialized} type that named a loop head's
 * check (EarlyPolls, issue 17) is the kind of thing it is for: that shape is in none of these
 * classes, nor in the 270,000 classes of a local Maven repository, so EarlyPollsTest has it.
 *
 * <p>With {@code -Dearlypolls.sweep=<folder>} it also sweeps every jar under the folder, each
 * with its own jar's classes for the hierarchy, and checks each class's placed polls
 * (PollInjector, the rewrite) the same way: {@code ./mvn25 -pl agent test
 * -Dtest=EarlyPollsSweepTest -Dearlypolls.sweep=$HOME/.m2/repository}.
 */
@Timeout(600)
class EarlyPollsSweepTest {
  /** Classes swept. */
  private int classes;

  /** Classes the patch changed. */
  private int patched;

  /** Classes the rewrite gave placed polls: the application's, not the JDK's, which it skips. */
  private int rewritten;

  /** The rewrite, as the agent makes it with {@code preempt.defer=0}. */
  private final PollInjector injector = new PollInjector(null, null, false);

  /** The patched classes with more verify errors than their originals, each with its first. */
  private final List<String> bad = new ArrayList<>();

  @Test
  void everyPatchedClassOfTheRuntimeImageVerifies() throws IOException {
    FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
    ClassFile cf = ClassFile.of();
    try (Stream<Path> s = Files.walk(jrt.getPath("/modules"))) {
      for (Path p : (Iterable<Path>) s::iterator) {
        String n = p.toString();
        if (n.endsWith(".class") && !n.endsWith("module-info.class")) {
          String internal = n.replaceFirst("^/modules/[^/]+/", "").replaceFirst("\\.class$", "");
          one(cf, n, internal, Files.readAllBytes(p));
        }
      }
    }
    String sweep = System.getProperty("earlypolls.sweep");
    if (sweep != null) {
      try (Stream<Path> s = Files.walk(Path.of(sweep))) {
        for (Path jar : s.filter(j -> j.toString().endsWith(".jar")).toList()) {
          jar(jar);
        }
      }
    }
    System.out.printf(
        "early polls sweep: %d classes, %d patched, %d rewritten, %d with new verify errors%n",
        classes, patched, rewritten, bad.size());
    assertTrue(bad.isEmpty(), bad.size() + " classes: " + bad.subList(0, Math.min(20, bad.size())));
    assertTrue(patched > 3000, "patched " + patched);
  }

  private void jar(Path jar) throws IOException {
    try (URLClassLoader l =
        new URLClassLoader(new URL[] {jar.toUri().toURL()}, ClassLoader.getPlatformClassLoader())) {
      ClassFile cf =
          ClassFile.of(
              ClassFile.ClassHierarchyResolverOption.of(
                  ClassHierarchyResolver.defaultResolver()
                      .orElse(ClassHierarchyResolver.ofResourceParsing(l))));
      for (Map.Entry<String, byte[]> e : TestClasses.jar(jar).entrySet()) {
        one(cf, jar.getFileName() + "!" + e.getKey(), e.getKey(), e.getValue());
      }
    } catch (RuntimeException unreadable) {
      System.out.println("early polls sweep: skipped " + jar + ": " + unreadable);
    }
  }

  /**
   * Checks the early patch of one class and its placed polls. The rewrite skips the JDK's own
   * packages by name, so in the runtime image it reaches only a few classes; in a swept jar,
   * every class with a loop.
   */
  private void one(ClassFile cf, String name, String internalName, byte[] original) {
    classes++;
    byte[] p = EarlyPolls.patch(original, true);
    if (p != null && p != original) {
      patched++;
      check(cf, name, original, p);
    }
    byte[] placed;
    try {
      placed = injector.transform(null, internalName, original);
    } catch (Throwable cannot) {
      return; // the agent leaves such a class as it was, with one line
    }
    if (placed != null) {
      rewritten++;
      check(cf, name + " (placed polls)", original, placed);
    }
  }

  private void check(ClassFile cf, String name, byte[] original, byte[] changed) {
    int before = errors(cf, original);
    int after = errors(cf, changed);
    if (after > before) {
      bad.add(
          name + " " + (after - before) + " more: " + cf.verify(changed).getFirst().getMessage());
    }
  }

  /** The class-file API's verify errors of {@code b}; a verifier that throws counts as one. */
  private static int errors(ClassFile cf, byte[] b) {
    try {
      return cf.verify(b).size();
    } catch (RuntimeException e) {
      return 1;
    }
  }
}
