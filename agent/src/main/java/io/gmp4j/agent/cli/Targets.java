package io.gmp4j.agent.cli;

import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import com.sun.tools.attach.VirtualMachineDescriptor;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Properties;

/**
 * The JVMs {@code gmp4j attach}, {@code list} and {@code top} talk to, through the JDK's Attach
 * API ({@code jdk.attach}, {@code com.sun.tools.attach.VirtualMachine}).
 *
 * <h2>Implementation overview</h2>
 *
 * Before attaching, every check that can fail is made here, each with its one line (exit status
 * 2, 'bad input' in {@link Verb}):
 *
 * <ol>
 *   <li>No such process: {@code ProcessHandle.of(pid)} is empty.
 *   <li>Another user's process: the owner of {@code /proc/<pid>} is not this user. The JDK's
 *       attach listener accepts only its own user (and root), and an agent loaded as root into
 *       another user's JVM would run with files that user may not read, so gmp4j refuses even as
 *       root and says which user to run as.
 *   <li>Not a JVM: neither listed by {@link VirtualMachine#list} (the JVM's hsperfdata) nor
 *       mapping {@code libjvm.so}. This check matters: attaching sends SIGQUIT, which kills a
 *       process that is not a JVM.
 *   <li>Attach refused: {@code -XX:+DisableAttachMechanism} (or a JVM that does not answer):
 *       {@link AttachNotSupportedException} or an IOException from attach itself.
 *   <li>JDK older than 25: {@code java.specification.version} of the target's system properties.
 * </ol>
 */
final class Targets {
  private Targets() {}

  /** A failed check: the line to print (already starting {@code gmp4j: }). */
  static final class TargetException extends Exception {
    TargetException(String line) {
      super(line);
    }
  }

  /** An attached JVM and what it said about itself. */
  record Target(long pid, VirtualMachine vm, Properties props) {
    String jdk() {
      return props.getProperty("java.version", "?");
    }

    /** The gmp4j.agent property ("0.1.0 attach"), or null when gmp4j is not in it. */
    String gmp4j() {
      return props.getProperty("gmp4j.agent");
    }

    void detach() {
      try {
        vm.detach();
      } catch (IOException ignored) {
        // the target went away: nothing to close
      }
    }
  }

  /** Parses a pid argument. */
  static long pid(String s) throws TargetException {
    try {
      long pid = Long.parseLong(s.trim());
      if (pid > 0) {
        return pid;
      }
    } catch (NumberFormatException ignored) {
      // fall through
    }
    throw new TargetException(
        "gmp4j: bad pid \"" + s + "\": want a process id (gmp4j list" + " shows the JVMs)");
  }

  /** Steps 1 to 3: a line, or null when {@code pid} is worth attaching to. */
  static String precheck(long pid) {
    Optional<ProcessHandle> ph = ProcessHandle.of(pid);
    if (ph.isEmpty() || !ph.get().isAlive()) {
      return "gmp4j: no process with pid " + pid;
    }
    String me = System.getProperty("user.name");
    String owner = owner(pid);
    if (owner != null && !owner.equals(me)) {
      return "gmp4j: pid "
          + pid
          + " belongs to user "
          + owner
          + ", and gmp4j runs as "
          + me
          + ": it attaches only to JVMs of its own user; run it as "
          + owner
          + " (sudo -u "
          + owner
          + " gmp4j ...)";
    }
    if (!listed(pid) && !mapsLibjvm(pid)) {
      return "gmp4j: pid " + pid + " (" + command(pid) + ") is not a Java VM";
    }
    return null;
  }

  /** Attaches after {@link #precheck}, and reads the system properties (steps 4 and 5). */
  static Target attach(long pid, boolean requireJdk25) throws TargetException {
    String line = precheck(pid);
    if (line != null) {
      throw new TargetException(line);
    }
    VirtualMachine vm;
    try {
      vm = VirtualMachine.attach(Long.toString(pid));
    } catch (AttachNotSupportedException | IOException e) {
      throw new TargetException(
          "gmp4j: pid "
              + pid
              + " ("
              + command(pid)
              + ") refuses attach: "
              + oneLine(e)
              + "; was it started with -XX:+DisableAttachMechanism? Start it with"
              + " -javaagent:gmp4j-agent.jar instead");
    }
    Properties props;
    try {
      props = vm.getSystemProperties();
    } catch (IOException e) {
      try {
        vm.detach();
      } catch (IOException ignored) {
        // already gone
      }
      throw new TargetException(
          "gmp4j: pid " + pid + ": cannot read its system properties: " + oneLine(e));
    }
    Target t = new Target(pid, vm, props);
    String spec = props.getProperty("java.specification.version", "0");
    if (requireJdk25 && feature(spec) < 25) {
      t.detach();
      throw new TargetException(
          "gmp4j: pid "
              + pid
              + " runs JDK "
              + t.jdk()
              + " ("
              + props.getProperty("java.home", "?")
              + "): gmp4j needs JDK 25 or newer");
    }
    return t;
  }

  /** Re-reads the target's system properties. */
  static Properties props(Target t) throws TargetException {
    try {
      return t.vm().getSystemProperties();
    } catch (IOException e) {
      throw new TargetException("gmp4j: pid " + t.pid() + ": lost the connection: " + oneLine(e));
    }
  }

  /** The agent jar this command runs from: it is also the agent to load. */
  static Path agentJar() throws TargetException {
    try {
      Path p = Path.of(Targets.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (Files.isRegularFile(p)) {
        return p.toAbsolutePath();
      }
    } catch (Exception ignored) {
      // fall through
    }
    throw new TargetException(
        "gmp4j: cannot find gmp4j-agent.jar: run gmp4j from the jar"
            + " (java -jar gmp4j-agent.jar ...)");
  }

  static boolean listed(long pid) {
    for (VirtualMachineDescriptor d : VirtualMachine.list()) {
      if (d.id().equals(Long.toString(pid))) {
        return true;
      }
    }
    return false;
  }

  static boolean mapsLibjvm(long pid) {
    try {
      return Files.readString(Path.of("/proc/" + pid + "/maps")).contains("/libjvm.so");
    } catch (Exception e) {
      return false;
    }
  }

  /** The user owning the process, or null where /proc cannot tell. */
  static String owner(long pid) {
    try {
      return Files.getOwner(Path.of("/proc/" + pid)).getName();
    } catch (Exception e) {
      return null;
    }
  }

  /** The process's command line, short: "java -cp ... example.App" → "example.App". */
  static String command(long pid) {
    for (VirtualMachineDescriptor d : VirtualMachine.list()) {
      if (d.id().equals(Long.toString(pid)) && !d.displayName().isBlank()) {
        String name = d.displayName().split(" ")[0];
        return name.endsWith(".jar") ? new File(name).getName() : name;
      }
    }
    try {
      String cmd =
          new String(
                  Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline")), StandardCharsets.UTF_8)
              .replace('\0', ' ')
              .trim();
      return cmd.length() > 60 ? cmd.substring(0, 57) + "..." : cmd;
    } catch (Exception e) {
      return "?";
    }
  }

  /** The JVM's command line (or "" when unreadable), for the JEP 451 flag. */
  static String cmdline(long pid) {
    try {
      return new String(
              Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline")), StandardCharsets.UTF_8)
          .replace('\0', ' ');
    } catch (Exception e) {
      return "";
    }
  }

  static int feature(String spec) {
    String s = spec.startsWith("1.") ? spec.substring(2) : spec;
    int end = 0;
    while (end < s.length() && Character.isDigit(s.charAt(end))) {
      end++;
    }
    return end == 0 ? 0 : Integer.parseInt(s.substring(0, end));
  }

  static String oneLine(Throwable e) {
    String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    return m.replace('\n', ' ').replace('\r', ' ');
  }
}
