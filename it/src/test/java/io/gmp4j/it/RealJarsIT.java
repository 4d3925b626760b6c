package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import example.apps.LinkEveryClass;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's first promise on real code: every class of real jars from Maven Central that loads
 * and links without the agent loads and links with it, under {@code -Xverify:all}.
 *
 * <h2>Implementation overview</h2>
 *
 * <ol>
 *   <li>maven-dependency-plugin copies the jars into {@code target/realjars/NAME/} (it/pom.xml):
 *       the jar under test and the dependencies the verifier loads to check assignability.
 *   <li>Three child JVMs run {@link LinkEveryClass} over the same folders, in parallel: one
 *       with the agent as it is by default (its classes get early polls at load, 'Early polls'),
 *       one with the agent and {@code preempt.defer=0} (the placed polls at load), one without.
 *       All carry LinkEveryClass's probe agent last, retransformation-capable as gmp4j's
 *       transformer is by default (the JVM runs the incapable transformers first), which counts
 *       the classes whose bytes an earlier agent changed: that must be none without gmp4j, and
 *       some in every jar with it, old class-file versions included (so the poll filter did
 *       select these application loaders).
 *   <li>Per class, a failure in either run with the agent must be a failure without it, of the
 *       same Throwable type. Jars have optional dependencies that are not here, so {@code NoClassDefFoundError}
 *       without the agent is normal; the class it names may differ with the agent, since the
 *       rewritten frames make the verifier check other assignments first.
 * </ol>
 *
 * <p>Negative space: a class whose verification stops at a missing dependency is not verified to
 * the end in either run, so a defect behind that point goes unseen; the summary gives how many.
 * No static initialiser runs (LinkEveryClass checks this), so code that only {@code <clinit>}
 * would reach, such as classes generated at run time, is not covered here.
 *
 * <p>{@code -Drealjars=default} (the default) links the {@link #DEFAULT} set, {@code
 * -Drealjars=all} every folder of {@code target/realjars}, {@code -Drealjars=ecj,groovy} those.
 * {@code -Drealjars.agent=OPTIONS} gives the agent options ({@code preempt.report=1} by default);
 * every {@code gmp4j:} line the agent prints, such as a coverage summary at exit, is shown with the
 * result.
 */
@Timeout(900)
class RealJarsIT {
  /**
   * Every class-file version of the full set, 45 to 66, and each kind of code: compilers and
   * parsers (ECJ, Janino, ANTLR 2's generated parsers, Derby's JavaCC grammar), repackaged
   * generated code (Spring's ASM and CGLIB), type annotations inside code (Spring 7's JSpecify
   * {@code @Nullable}, which the early polls once left to the rewrite), a JVM language (Kotlin), Java 1.1 to 5 libraries
   * (JUnit 3, ORO, commons-collections 3, commons-math3), and JLine's FFM terminal, compiled for
   * Java 22. No jar here has 48 (Java 1.4) or 67 to 69; OldClassFilesTest rewrites and verifies
   * every version from 45 to 69, and it/'s own apps (69) run under -Xverify:all in every IT.
   * Groovy, Scala, Clojure, Saxon, Guava, Rhino and HSQLDB only with {@code -Drealjars=all}:
   * they triple the time.
   */
  private static final List<String> DEFAULT =
      List.of(
          "ecj",
          "janino",
          "antlr",
          "derby",
          "spring-core",
          "spring-core@7",
          "kotlin-stdlib",
          "netty-buffer",
          "netty-common",
          "jackson-databind",
          "h2",
          "lucene-core",
          "junit",
          "oro",
          "commons-collections",
          "commons-math3",
          "jline");

  private static final Path DIR = Path.of(System.getProperty("realjars.dir", "target/realjars"));

  /**
   * C1 only and the serial GC: a run that loads 10,000 classes once gains nothing from C2, which
   * doubled the CPU time of the full set (33.7 s against 15.4 s with the agent). The incubator
   * module lets Lucene's vector classes link instead of failing both ways.
   */
  private static final List<String> FLAGS =
      List.of(
          "-Xverify:all",
          "-XX:TieredStopAtLevel=1",
          "-XX:+UseSerialGC",
          "--add-modules=jdk.incubator.vector");

  private static final Duration LIMIT = Duration.ofSeconds(600);

  /**
   * Appended to the agent's options for the second run with it: the placed polls at load. The
   * first run has the default, early polls at load ('Early polls'; the deferral does not end
   * while the classes link).
   */
  private static final String PLACED = ",preempt.defer=0";

  @Test
  void agentAddsNoLinkFailure(@TempDir Path tmp) throws Exception {
    List<String> jars = selected();
    String probe = "-javaagent:" + probeJar(tmp);
    String options = System.getProperty("realjars.agent", "preempt.report=1");
    String early = ChildJvm.javaagent(options);
    String placed =
        ChildJvm.javaagent(options.contains("preempt.defer") ? options : options + PLACED);
    long t0 = System.nanoTime();
    CompletableFuture<Run> without = CompletableFuture.supplyAsync(() -> run(jars, probe));
    CompletableFuture<Run> atLoad = CompletableFuture.supplyAsync(() -> run(jars, placed, probe));
    Run with = run(jars, early, probe);
    Run base = without.join();
    Run withPlaced = atLoad.join();
    long wallMs = (System.nanoTime() - t0) / 1_000_000;

    check(with);
    check(withPlaced);
    check(base);
    List<String> problems = new ArrayList<>();
    problems.addAll(compare("", jars, with, base, wallMs));
    problems.addAll(compare(" (" + PLACED.substring(1) + ")", jars, withPlaced, base, wallMs));
    if (!problems.isEmpty()) {
      fail(String.join("\n", problems));
    }
  }

  /**
   * Step 3 for one run with the agent: prints a line per jar and the totals, and returns what is
   * wrong. {@code mode} follows "the agent" in what it prints.
   */
  private static List<String> compare(
      String mode, List<String> jars, Run with, Run base, long wallMs) {
    List<String> problems = new ArrayList<>();
    int classes = 0;
    int linkedWith = 0;
    int linkedWithout = 0;
    int changed = 0;
    Map<Integer, int[]> byVersion = new TreeMap<>(); // major version -> {classes, changed}
    for (String jar : jars) {
      Map<String, String> w = with.jars.get(jar);
      Map<String, String> b = base.jars.get(jar);
      assertTrue(w != null && b != null, "no line for " + jar + "\n" + with.result);
      assertEquals(b.get("classes"), w.get("classes"), jar);
      int n = Integer.parseInt(b.get("classes"));
      int added =
          (int)
              with.fails.keySet().stream()
                  .filter(k -> k.startsWith(jar + " ") && addedByAgent(k, with, base))
                  .count();
      System.out.printf(
          "RealJarsIT: %-22s %-36s classes=%5d versions=%s linked: %5s without,"
              + " %5s with the agent%s; changed by it=%4s; failures added by it=%d%n",
          jar,
          b.get("file"),
          n,
          b.get("versions"),
          b.get("linked"),
          w.get("linked"),
          mode,
          w.get("changed"),
          added);
      classes += n;
      linkedWithout += Integer.parseInt(b.get("linked"));
      linkedWith += Integer.parseInt(w.get("linked"));
      changed += Integer.parseInt(w.get("changed"));
      versionCounts(b.get("versions"), byVersion, 0);
      versionCounts(w.get("changedVersions"), byVersion, 1);
      if (!b.get("changed").equals("0")) {
        problems.add(
            jar
                + ": the probe saw "
                + b.get("changed")
                + " classes changed without any agent; it cannot tell what the agent does");
      }
      if (w.get("changed").equals("0")) { // every version from 45 gets polls (issue 9)
        problems.add(
            jar
                + ": the agent"
                + mode
                + " changed no class: its filter does not select this"
                + " loader, or the probe runs before it");
      }
      if (Integer.parseInt(b.get("linked")) * 2 < n) {
        problems.add(
            jar
                + ": only "
                + b.get("linked")
                + " of "
                + n
                + " classes link without"
                + " the agent: a dependency is missing from "
                + DIR.resolve(jar));
      }
    }

    List<String> added = new ArrayList<>();
    int otherMessage = 0;
    for (Map.Entry<String, String> f : with.fails.entrySet()) {
      String before = base.fails.get(f.getKey());
      if (addedByAgent(f.getKey(), with, base)) {
        added.add(f.getKey());
        System.out.printf(
            "RealJarsIT: the agent%s breaks %s%n  with the agent:    %s%n"
                + "  without the agent: %s%n",
            mode,
            f.getKey(),
            readable(f.getValue()),
            before == null ? "loads and links" : readable(before));
      } else if (!before.equals(f.getValue())) {
        otherMessage++;
      }
    }
    int onlyWithout =
        (int) base.fails.keySet().stream().filter(k -> !with.fails.containsKey(k)).count();
    List<String> agentLines =
        with.result.err().lines().filter(l -> l.startsWith("gmp4j:")).toList();
    agentLines.stream()
        .limit(10)
        .forEach(l -> System.out.println("RealJarsIT: stderr" + mode + " " + l));
    System.out.printf(
        "RealJarsIT: the agent%s: %d jars, %d classes; loaded and linked %d without the"
            + " agent, %d with it; changed by the agent %d (%.0f%%); failures without the agent %d,"
            + " with it %d, added by the agent %d (same type, other message %d; only without the"
            + " agent %d); %d gmp4j: lines; all runs in %.1f s (this one with the agent %.1f s,"
            + " without %.1f s)%n",
        mode,
        jars.size(),
        classes,
        linkedWithout,
        linkedWith,
        changed,
        100.0 * changed / classes,
        base.fails.size(),
        with.fails.size(),
        added.size(),
        otherMessage,
        onlyWithout,
        agentLines.size(),
        wallMs / 1000.0,
        with.ms / 1000.0,
        base.ms / 1000.0);
    StringBuilder versions = new StringBuilder();
    byVersion.forEach(
        (v, n) ->
            versions
                .append(versions.isEmpty() ? "" : ", ")
                .append(v)
                .append(": ")
                .append(n[1])
                .append(" of ")
                .append(n[0]));
    System.out.println(
        "RealJarsIT: classes changed by the agent" + mode + ", by class-file version: " + versions);
    if (!added.isEmpty()) {
      problems.add(
          "the agent" + mode + " adds " + added.size() + " load or link failures: " + added);
    }
    return problems;
  }

  /** Adds LinkEveryClass's {@code 49:1301,52:86} (or {@code -}) into column {@code col}. */
  private static void versionCounts(String field, Map<Integer, int[]> into, int col) {
    if (field == null || field.equals("-")) {
      return;
    }
    for (String item : field.split(",")) {
      String[] vn = item.split(":");
      into.computeIfAbsent(Integer.parseInt(vn[0]), k -> new int[2])[col] +=
          Integer.parseInt(vn[1]);
    }
  }

  /** True if {@code key} fails with the agent and not, or not with the same type, without. */
  private static boolean addedByAgent(String key, Run with, Run base) {
    String before = base.fails.get(key);
    return before == null || !type(before).equals(type(with.fails.get(key)));
  }

  private static String type(String error) {
    int colon = error.indexOf(':');
    return colon < 0 ? error : error.substring(0, colon);
  }

  /**
   * The error on its own lines, cut after the verifier's reason and frames: HotSpot appends the
   * method's whole bytecode, hundreds of lines for a scanner.
   */
  private static String readable(String error) {
    List<String> lines = List.of(error.split("\\\\n"));
    int keep = Math.min(lines.size(), 16);
    return String.join("\n      ", lines.subList(0, keep))
        + (keep < lines.size() ? "\n      ... " + (lines.size() - keep) + " more lines" : "");
  }

  private static void check(Run r) {
    assertEquals(0, r.result.exit(), r.result.toString());
    assertEquals("ok", r.result.value("selfcheck"), r.result.toString());
    assertEquals("true", r.result.value("done"), r.result.toString());
  }

  private static List<String> selected() throws IOException {
    String which = System.getProperty("realjars", "default");
    List<String> jars;
    if (which.equals("default")) {
      jars = DEFAULT;
    } else if (which.equals("all")) {
      try (Stream<Path> s = Files.list(DIR)) {
        jars = s.filter(Files::isDirectory).map(p -> p.getFileName().toString()).sorted().toList();
      }
    } else {
      jars = List.of(which.split(","));
    }
    for (String jar : jars) {
      assertTrue(
          Files.isDirectory(DIR.resolve(jar)),
          DIR.resolve(jar)
              + " is missing: run"
              + " through the reactor's verify, whose pre-integration-test phase copies the jars");
    }
    return jars;
  }

  /** A manifest-only jar naming LinkEveryClass as premain class; the class path supplies it. */
  private static Path probeJar(Path dir) throws IOException {
    Manifest m = new Manifest();
    m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    m.getMainAttributes().putValue("Premain-Class", LinkEveryClass.class.getName());
    m.getMainAttributes().putValue("Can-Retransform-Classes", "true");
    Path jar = dir.resolve("probe.jar");
    try (OutputStream out = Files.newOutputStream(jar);
        JarOutputStream j = new JarOutputStream(out, m)) {
      j.flush();
    }
    return jar;
  }

  /** One child's result; {@code fails} maps "JAR CLASS" to its error, one line. */
  private record Run(
      ChildJvm.Result result,
      Map<String, Map<String, String>> jars,
      Map<String, String> fails,
      long ms) {}

  private static Run run(List<String> jars, String... agents) {
    List<String> jvm = new ArrayList<>(FLAGS);
    jvm.addAll(List.of(agents));
    List<String> args = new ArrayList<>();
    args.add(DIR.toAbsolutePath().toString());
    args.addAll(jars);
    long t0 = System.nanoTime();
    ChildJvm.Result r;
    try {
      r = ChildJvm.run(jvm, Map.of(), LinkEveryClass.class, LIMIT, args.toArray(String[]::new));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    Map<String, Map<String, String>> lines = new LinkedHashMap<>();
    Map<String, String> fails = new TreeMap<>();
    for (String line : r.out().split("\n")) {
      if (line.startsWith("fail ")) {
        String[] f = line.split(" ", 4); // fail JAR CLASS ERROR
        fails.put(f[1] + " " + f[2], f[3]);
      } else if (line.startsWith("jar=")) {
        Map<String, String> kv = new LinkedHashMap<>();
        for (String item : line.split(" ")) {
          int eq = item.indexOf('=');
          kv.put(item.substring(0, eq), item.substring(eq + 1));
        }
        lines.put(kv.get("jar"), kv);
      }
    }
    return new Run(r, lines, fails, ms);
  }
}
