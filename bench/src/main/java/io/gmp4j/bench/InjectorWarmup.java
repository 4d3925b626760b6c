package io.gmp4j.bench;

import io.gmp4j.agent.JitDirective;
import io.gmp4j.agent.poll.PollInjector;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * What the agent's 'JIT directive' saves (issue 17): the poll injector rewrites the same corpus of
 * class files round after round in a fresh JVM, as a loading thread does at start-up, once with
 * C2 (the JVM's default) and once with the directive that keeps C2 off the injector and its ASM.
 * Prints each round's time, then the process's CPU time: a whole-process measure, so not JMH.
 *
 * <pre>
 *   java -cp bench/target/gmp4j-bench.jar io.gmp4j.bench.InjectorWarmup c2|c1 [rounds] [module|jar...]
 * </pre>
 *
 * The corpus is the JDK's own class files (default: java.base and java.desktop), read from
 * jrt:/ and renamed under {@code bench/}, since the injector refuses {@code java/} and the like
 * by name; their bytes are rewritten as any application class's would be. An argument that ends
 * in {@code .jar} adds that jar's class files instead, as they are named there: for example an
 * application's libraries, to rewrite what its start-up rewrites. Each round prints its wall time
 * and the CPU time of the thread that rewrites, which the JIT compilers do not share.
 */
public final class InjectorWarmup {
  private InjectorWarmup() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 1 || !(args[0].equals("c1") || args[0].equals("c2"))) {
      System.err.println("usage: InjectorWarmup c2|c1 [rounds] [module|jar...]");
      System.exit(2);
    }
    if (args[0].equals("c1")) {
      String why = JitDirective.push(null);
      if (why != null) {
        System.err.println("InjectorWarmup: the directive was not pushed: " + why);
        System.exit(1);
      }
    }
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 40;
    List<String> modules =
        args.length > 2
            ? List.of(args).subList(2, args.length)
            : List.of("java.base", "java.desktop");
    List<String> names = new ArrayList<>();
    List<byte[]> classes = new ArrayList<>();
    FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
    for (String module : modules) {
      if (module.endsWith(".jar")) {
        addJar(module, names, classes);
        continue;
      }
      Path root = jrt.getPath("modules", module);
      try (Stream<Path> files = Files.walk(root)) {
        for (Path p : (Iterable<Path>) files::iterator) {
          String rel = root.relativize(p).toString();
          if (rel.endsWith(".class") && !rel.equals("module-info.class")) {
            names.add("bench/" + rel.substring(0, rel.length() - ".class".length()));
            classes.add(Files.readAllBytes(p));
          }
        }
      }
    }
    PollInjector injector = new PollInjector(null, null, false);
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    long cpu0 = os.getProcessCpuTime();
    long start = System.nanoTime();
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    for (int r = 1; r <= rounds; r++) {
      long t0 = System.nanoTime();
      long c0 = threads.getCurrentThreadCpuTime();
      int rewritten = 0;
      for (int i = 0; i < classes.size(); i++) {
        if (injector.transform(null, names.get(i), classes.get(i)) != null) {
          rewritten++;
        }
      }
      System.out.printf(
          "round %d: %d classes, %d rewritten, %.0f ms, thread CPU %.0f ms%n",
          r,
          classes.size(),
          rewritten,
          (System.nanoTime() - t0) / 1e6,
          (threads.getCurrentThreadCpuTime() - c0) / 1e6);
    }
    System.out.printf(
        "%s: %d rounds in %.2f s, process CPU %.2f s%n",
        args[0], rounds, (System.nanoTime() - start) / 1e9, (os.getProcessCpuTime() - cpu0) / 1e9);
  }

  /** Adds the class files of {@code jar} (not module-info, nothing under META-INF). */
  private static void addJar(String jar, List<String> names, List<byte[]> classes)
      throws IOException {
    try (JarFile f = new JarFile(jar)) {
      for (JarEntry e : Collections.list(f.entries())) {
        String n = e.getName();
        if (n.endsWith(".class")
            && !n.startsWith("META-INF/")
            && !n.endsWith("module-info.class")) {
          names.add(n.substring(0, n.length() - ".class".length()));
          classes.add(f.getInputStream(e).readAllBytes());
        }
      }
    }
  }
}
