package io.gmp4j.agent.poll;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URL;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import javax.tools.DiagnosticCollector;
import javax.tools.FileObject;
import javax.tools.ForwardingJavaFileManager;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileManager;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * Test helpers: compiles Java sources in memory, reads the classes of a jar, and defines class
 * files in a fresh loader.
 */
final class TestClasses {
  private TestClasses() {}

  /** Compiles {@code sources} (binary class name -> source) and returns internal name -> bytes. */
  static Map<String, byte[]> compile(Map<String, String> sources) {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    Map<String, ByteArrayOutputStream> out = new TreeMap<>();
    StandardJavaFileManager std = javac.getStandardFileManager(diagnostics, null, null);
    JavaFileManager fm =
        new ForwardingJavaFileManager<>(std) {
          @Override
          public JavaFileObject getJavaFileForOutput(
              Location location, String className, JavaFileObject.Kind kind, FileObject sibling) {
            return new SimpleJavaFileObject(
                URI.create("mem:///" + className.replace('.', '/') + kind.extension), kind) {
              @Override
              public OutputStream openOutputStream() {
                return out.computeIfAbsent(
                    className.replace('.', '/'), k -> new ByteArrayOutputStream());
              }
            };
          }
        };
    List<JavaFileObject> units = new ArrayList<>();
    sources.forEach(
        (name, src) ->
            units.add(
                new SimpleJavaFileObject(
                    URI.create("string:///" + name.replace('.', '/') + ".java"),
                    JavaFileObject.Kind.SOURCE) {
                  @Override
                  public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                    return src;
                  }
                }));
    boolean ok = javac.getTask(null, fm, diagnostics, List.of("-g"), null, units).call();
    if (!ok) {
      throw new AssertionError("javac failed: " + diagnostics.getDiagnostics());
    }
    Map<String, byte[]> classes = new TreeMap<>();
    out.forEach((k, v) -> classes.put(k, v.toByteArray()));
    return classes;
  }

  /**
   * Every class file (internal name -> bytes) of the jar from which {@code loader} loads {@code
   * internalName}; module-info and multi-release versions left out.
   */
  static Map<String, byte[]> jarOf(ClassLoader loader, String internalName) {
    URL url = loader.getResource(internalName + ".class");
    if (url == null || !url.getProtocol().equals("jar")) {
      throw new AssertionError("not in a jar: " + internalName + " at " + url);
    }
    String path = url.getPath(); // file:/...jar!/org/...
    return jar(Path.of(URI.create(path.substring(0, path.indexOf("!/")))));
  }

  /** Every class file (internal name -> bytes) of {@code jar}, as {@link #jarOf}. */
  static Map<String, byte[]> jar(Path jar) {
    Map<String, byte[]> out = new TreeMap<>();
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      for (ZipEntry e : Collections.list(zip.entries())) {
        String n = e.getName();
        if (n.endsWith(".class")
            && !n.startsWith("META-INF/")
            && !n.endsWith("module-info.class")) {
          try (InputStream in = zip.getInputStream(e)) {
            out.put(n.substring(0, n.length() - ".class".length()), in.readAllBytes());
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /**
   * A child-first loader for the given classes (internal name -> bytes); everything else,
   * io.gmp4j.runtime.Preempt included, comes from the test class path. Classes it defines are
   * verified when linked, since they are not boot classes (BytecodeVerificationRemote).
   */
  static final class Loader extends ClassLoader {
    private final Map<String, byte[]> classes;

    Loader(Map<String, byte[]> classes) {
      super("poll-test", TestClasses.class.getClassLoader());
      this.classes = classes;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      synchronized (getClassLoadingLock(name)) {
        byte[] b = classes.get(name.replace('.', '/'));
        if (b == null) {
          return super.loadClass(name, resolve);
        }
        Class<?> c = findLoadedClass(name);
        if (c == null) {
          c = defineClass(name, b, 0, b.length);
        }
        if (resolve) {
          resolveClass(c);
        }
        return c;
      }
    }
  }
}
