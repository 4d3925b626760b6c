package io.gmp4j.agent;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

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

  /** Copies the embedded runtime jar to a fresh temporary file. Called once, by the installer. */
  static Path extract() throws IOException {
    try (InputStream in = RuntimeJar.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IOException("gmp4j: the agent jar has no " + RESOURCE
            + " (a broken build: agent/pom.xml embeds it in prepare-package)");
      }
      Path file = Files.createTempFile("gmp4j-runtime-", ".jar");
      file.toFile().deleteOnExit();
      Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
      return file;
    }
  }

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
