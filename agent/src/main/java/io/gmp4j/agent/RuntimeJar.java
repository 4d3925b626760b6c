package io.gmp4j.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

/**
 * The runtime jar embedded in gmp4j-agent.jar as the resource {@value #RESOURCE}.
 *
 * <p>The boot class path accepts only files, so the resource is copied to a temporary file. The
 * installer deletes it once it is on the boot class path ({@link #delete}): appending it in the
 * live phase makes the JVM open the jar then (JVMTI AddToBootstrapClassLoaderSearch), and later
 * boot class loads read that open file, so on Linux and macOS the name is no longer needed.
 * {@code deleteOnExit} alone left one file per JVM that ended by {@code halt}, a fatal error or a
 * kill (a container stop, {@code kill -9}): the it/ suite left dozens in /tmp on every run. It
 * stays as the fallback where an open file cannot be deleted (Windows). Rejected: a {@code
 * Boot-Class-Path} manifest entry, which needs the runtime jar as a second file next to the agent
 * jar; appending the agent jar itself, which would make our copy of Byte Buddy boot-visible to
 * every application class (agent-notes section 0.1).
 */
final class RuntimeJar {
  static final String RESOURCE = "/gmp4j-runtime.jar";

  private RuntimeJar() {}

  /**
   * Copies the embedded runtime jar to a fresh temporary file, readable and writable by its owner
   * only. Called once, by the installer.
   *
   * <p>Not {@code Files.createTempFile}: its random name comes from a SecureRandom, whose first
   * use loads and seeds the security providers, about 40 ms of premain on hello world (issue
   * 11's start-up item). The name here is the clock (not the pid either: ProcessHandle's
   * first use starts its reaper's thread pool); {@code CREATE_NEW} (O_EXCL)
   * fails on any existing file or link, so a name taken by anyone else only costs a retry.
   */
  static Path extract() throws IOException {
    try (InputStream in = RuntimeJar.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IOException(
            "gmp4j: the agent jar has no "
                + RESOURCE
                + " (a broken build: agent/pom.xml embeds it in prepare-package)");
      }
      Path file = createFile(Path.of(System.getProperty("java.io.tmpdir")));
      file.toFile().deleteOnExit();
      try (OutputStream out = Files.newOutputStream(file)) {
        in.transferTo(out);
      }
      return file;
    }
  }

  /** A new, empty {@code gmp4j-runtime-<hex>.jar} in {@code dir}. */
  private static Path createFile(Path dir) throws IOException {
    boolean posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
    for (int attempt = 0; ; attempt++) {
      Path file = dir.resolve("gmp4j-runtime-" + Long.toHexString(System.nanoTime()) + ".jar");
      try {
        return posix
            ? Files.createFile(file, PosixFilePermissions.asFileAttribute(OWNER_ONLY))
            : Files.createFile(file);
      } catch (FileAlreadyExistsException taken) {
        if (attempt == 100) {
          throw taken;
        }
      }
    }
  }

  private static final Set<PosixFilePermission> OWNER_ONLY =
      EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);

  /**
   * Deletes a file from {@link #extract}, quietly: if the system refuses (Windows, while the JVM
   * holds it open), {@code deleteOnExit} takes it at a normal exit. Called by the installer once
   * the file is on the boot class path or is no longer needed.
   */
  static void delete(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException | SecurityException refused) {
      // deleteOnExit, registered by extract, is the fallback
    }
  }
}
