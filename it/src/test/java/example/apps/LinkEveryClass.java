package example.apps;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.net.URL;
import java.net.URLClassLoader;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.zip.CRC32;
import java.util.zip.ZipFile;

/**
 * Loads and links, without initialising, every class of real jars, and says which ones failed
 * and which ones some agent before it on the command line changed. RealJarsIT runs it twice,
 * with and without gmp4j, and compares class by class.
 *
 * <h2>Implementation overview</h2>
 *
 * <ol>
 *   <li>Self-check of the trigger, before any jar: a hand-written class file (major version 49)
 *       whose static method returns an int as an Object, and an interface whose {@code
 *       <clinit>} does the same, must each throw {@code VerifyError} from step 3's trigger; and
 *       a class whose {@code <clinit>} sets a system property must link without setting it.
 *       Without this, a JVM that linked lazily would turn the whole test into a class-loading
 *       test that passes on any bytes.
 *   <li>Each argument names a folder of realjars.dir: the jar named after the folder (its name
 *       before an {@code @tag}, which keeps a second version of an artifact apart) is the one
 *       under test, the other jars there are the dependencies the verifier loads to check
 *       assignability. One {@link JarLoader} per folder, parent the platform loader, so nothing
 *       of the test's class path leaks in and the agent sees an ordinary application loader.
 *   <li>Every class of the jar (multi-release jars at this JDK's version) is loaded with {@code
 *       Class.forName(name, false, loader)}, which neither links nor initialises (step 1 fails
 *       without the next call), and linked by reflection: HotSpot's {@code
 *       JVM_GetClassDeclaredConstructors} and {@code JVM_GetClassDeclaredFields} link the class,
 *       and so verify every method under {@code -Xverify:all}, before they build the array, and
 *       reflection never initialises. Constructors for classes, fields for interfaces ({@code
 *       Class.getDeclaredConstructors} answers an interface without asking the JVM). The three
 *       JVM entries that link (fields, methods, constructors) cost the same within noise here,
 *       2.0 to 2.8 s of CPU for Guava, Scala and Clojure (8,527 classes): the verifier's work
 *       dominates. Each reflection object loads its parameter or field types, so a missing
 *       optional dependency can also show as {@code NoClassDefFoundError} after a good link, the
 *       same with and without an agent; a verify error comes first, from the link.
 *   <li>The probe agent ({@link #premain}, given last on the command line) sees each class file
 *       after every earlier agent's transformer, and keeps its CRC-32 per loader. A class whose
 *       CRC differs from its jar entry's was changed by the agent under test.
 * </ol>
 *
 * <p>Output, one record a line, newlines inside messages as {@code \n}:
 *
 * <pre>
 * selfcheck=ok
 * jar=NAME file=FILE classes=N linked=N failed=N changed=N ms=N versions=MAJOR:N,...
 *     changedVersions=MAJOR:N,...
 * fail NAME CLASS THROWABLE: MESSAGE
 * </pre>
 */
public final class LinkEveryClass {
  private LinkEveryClass() {}

  /**
   * Arguments: the realjars folder, then one folder name per jar under test.
   */
  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(600_000, "LinkEveryClass");
    selfCheck();
    File root = new File(args[0]);
    for (String name : Arrays.asList(args).subList(1, args.length)) {
      linkJar(name, new File(root, name));
    }
    System.out.println("done=true");
  }

  /** The probe agent of step 4: observes, never changes a class. */
  public static void premain(String args, Instrumentation inst) {
    inst.addTransformer(
        new ClassFileTransformer() {
          @Override
          public byte[] transform(
              ClassLoader loader,
              String className,
              Class<?> redefined,
              ProtectionDomain pd,
              byte[] classfile) {
            if (loader instanceof JarLoader jl && className != null) {
              CRC32 crc = new CRC32();
              crc.update(classfile);
              jl.seen.put(className, crc.getValue());
            }
            return null;
          }
        },
        true); // after gmp4j's transformer, which is retransformation-capable by default
  }

  /** One jar under test and its dependencies; see step 2. */
  static final class JarLoader extends URLClassLoader {
    /** CRC-32 of each class file as the JVM defined it, by internal name; probe threads write. */
    final Map<String, Long> seen = new ConcurrentHashMap<>();

    JarLoader(URL[] urls) {
      super(urls, ClassLoader.getPlatformClassLoader());
    }
  }

  /** Steps 2 to 4 for one folder. */
  private static void linkJar(String name, File dir) throws IOException {
    File[] files = dir.listFiles((d, f) -> f.endsWith(".jar"));
    if (files == null || files.length == 0) {
      throw new IOException("no jars in " + dir);
    }
    Arrays.sort(files);
    File main = null;
    List<URL> urls = new ArrayList<>();
    // A folder "artifact@tag" holds a second version of artifact beside folder "artifact".
    String artifact = name.indexOf('@') < 0 ? name : name.substring(0, name.indexOf('@'));
    for (File f : files) {
      String n = f.getName();
      if (n.startsWith(artifact + "-") && Character.isDigit(n.charAt(artifact.length() + 1))) {
        main = f;
        urls.add(0, f.toURI().toURL());
      } else {
        urls.add(f.toURI().toURL());
      }
    }
    if (main == null) {
      throw new IOException("no " + artifact + "-VERSION.jar in " + dir);
    }
    long t0 = System.nanoTime();
    int classes = 0;
    int linked = 0;
    int changed = 0;
    List<String> fails = new ArrayList<>();
    Map<Integer, Integer> versions = new TreeMap<>();
    Map<Integer, Integer> changedVersions = new TreeMap<>(); // 'changed' by class-file version
    try (JarFile jar = new JarFile(main, false, ZipFile.OPEN_READ, Runtime.version());
        JarLoader loader = new JarLoader(urls.toArray(URL[]::new))) {
      List<JarEntry> entries =
          jar.versionedStream()
              .filter(
                  e ->
                      e.getName().endsWith(".class")
                          && !e.getName().startsWith("META-INF/")
                          && !e.getName().endsWith("module-info.class"))
              .toList();
      for (JarEntry e : entries) {
        String internal = e.getName().substring(0, e.getName().length() - ".class".length());
        classes++;
        int version = majorVersion(jar, e);
        versions.merge(version, 1, Integer::sum);
        try {
          link(Class.forName(internal.replace('/', '.'), false, loader));
          linked++;
        } catch (Throwable t) {
          fails.add("fail " + name + " " + internal.replace('/', '.') + " " + describe(t));
        }
        Long crc = loader.seen.get(internal);
        if (crc != null && crc != e.getCrc()) {
          changed++;
          changedVersions.merge(version, 1, Integer::sum);
        }
      }
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    fails.forEach(System.out::println);
    System.out.println(
        "jar="
            + name
            + " file="
            + main.getName()
            + " classes="
            + classes
            + " linked="
            + linked
            + " failed="
            + fails.size()
            + " changed="
            + changed
            + " ms="
            + ms
            + " versions="
            + byVersion(versions)
            + " changedVersions="
            + byVersion(changedVersions));
  }

  /** {@code 49:1301,52:86}; {@code -} for none. */
  private static String byVersion(Map<Integer, Integer> counts) {
    StringBuilder b = new StringBuilder();
    counts.forEach((v, n) -> b.append(b.isEmpty() ? "" : ",").append(v).append(':').append(n));
    return b.isEmpty() ? "-" : b.toString();
  }

  /** The class file's major version (byte 6 and 7, after magic and minor). */
  private static int majorVersion(JarFile jar, JarEntry e) throws IOException {
    try (DataInputStream in = new DataInputStream(jar.getInputStream(e))) {
      in.readInt();
      in.readUnsignedShort();
      return in.readUnsignedShort();
    }
  }

  /** Step 3's trigger. */
  static void link(Class<?> c) {
    if (c.isInterface()) {
      c.getDeclaredFields(); // Class.getDeclaredConstructors returns early for interfaces
    } else {
      c.getDeclaredConstructors();
    }
  }

  /** The throwable, its message on one line, and the root cause's if it differs. */
  private static String describe(Throwable t) {
    StringBuilder sb =
        new StringBuilder(t.getClass().getName()).append(": ").append(t.getMessage());
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    if (root != t) {
      sb.append(" (cause ")
          .append(root.getClass().getName())
          .append(": ")
          .append(root.getMessage())
          .append(')');
    }
    return sb.toString().replace("\r", "").replace("\n", "\\n");
  }

  // ---- step 1 ----

  /** Step 1; throws AssertionError (exit 1) if the trigger does not verify or if it initialises. */
  private static void selfCheck() throws Exception {
    Definer definer = new Definer();
    expectVerifyError(
        definer.define(
            "selfcheck.BadMethod",
            classFile("selfcheck/BadMethod", 0x0021, "bad", "()Ljava/lang/Object;", 0x0009)));
    expectVerifyError(
        definer.define(
            "selfcheck.BadInterfaceInit",
            classFile("selfcheck/BadInterfaceInit", 0x0601, "<clinit>", "()V", 0x0008)));
    Class<?> canary =
        Class.forName(ClinitCanary.class.getName(), false, LinkEveryClass.class.getClassLoader());
    link(canary);
    if (System.getProperty(ClinitCanary.RAN) != null) {
      throw new AssertionError("selfcheck: getDeclaredConstructors ran <clinit>");
    }
    System.out.println("selfcheck=ok");
  }

  private static void expectVerifyError(Class<?> c) {
    try {
      link(c);
    } catch (VerifyError expected) {
      return;
    }
    throw new AssertionError(
        "selfcheck: "
            + c.getName()
            + " linked without VerifyError: getDeclaredConstructors does not verify, or"
            + " -Xverify:all is missing");
  }

  /** Its initialiser must never run in this program. */
  static final class ClinitCanary {
    static final String RAN = "linkeveryclass.clinit.ran";

    static {
      System.setProperty(RAN, "true");
    }
  }

  /** Defines hand-written class files; loaded like a jar's classes, by an application loader. */
  private static final class Definer extends ClassLoader {
    Definer() {
      super(ClassLoader.getPlatformClassLoader());
    }

    Class<?> define(String name, byte[] b) {
      return defineClass(name, b, 0, b.length);
    }
  }

  /**
   * A class file of major version 49 (verified by type inference, no stack maps) extending
   * Object, with one method whose code is {@code iconst_0; areturn}: a verify error for any
   * descriptor, since an int is no reference and a void method returns none.
   */
  private static byte[] classFile(
      String internalName, int classAccess, String method, String descriptor, int methodAccess)
      throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    out.writeInt(0xCAFEBABE);
    out.writeShort(0); // minor
    out.writeShort(49); // major: Java 5
    out.writeShort(8); // constant pool count: entries 1 to 7
    out.writeByte(1); // #1 Utf8 this
    out.writeUTF(internalName);
    out.writeByte(7); // #2 Class #1
    out.writeShort(1);
    out.writeByte(1); // #3 Utf8 super
    out.writeUTF("java/lang/Object");
    out.writeByte(7); // #4 Class #3
    out.writeShort(3);
    out.writeByte(1); // #5 method name
    out.writeUTF(method);
    out.writeByte(1); // #6 descriptor
    out.writeUTF(descriptor);
    out.writeByte(1); // #7
    out.writeUTF("Code");
    out.writeShort(classAccess);
    out.writeShort(2); // this
    out.writeShort(4); // super
    out.writeShort(0); // interfaces
    out.writeShort(0); // fields
    out.writeShort(1); // methods
    out.writeShort(methodAccess);
    out.writeShort(5);
    out.writeShort(6);
    out.writeShort(1); // attributes: Code
    out.writeShort(7);
    out.writeInt(2 + 2 + 4 + 2 + 2 + 2); // max_stack, max_locals, code_length, code, 2 counts
    out.writeShort(1); // max_stack
    out.writeShort(0); // max_locals: static, no arguments
    out.writeInt(2);
    out.writeByte(0x03); // iconst_0
    out.writeByte(0xb0); // areturn
    out.writeShort(0); // exception table
    out.writeShort(0); // attributes
    out.writeShort(0); // class attributes
    out.flush();
    return bytes.toByteArray();
  }
}
