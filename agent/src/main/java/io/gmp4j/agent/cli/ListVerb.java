package io.gmp4j.agent.cli;

import com.sun.tools.attach.VirtualMachine;
import com.sun.tools.attach.VirtualMachineDescriptor;
import io.gmp4j.agent.cli.Targets.Target;
import io.gmp4j.agent.cli.Targets.TargetException;
import java.io.PrintStream;
import java.util.Comparator;
import java.util.List;

/**
 * {@code gmp4j list}: the JVMs on this machine that the Attach API sees (their hsperfdata), with
 * their JDK version and whether gmp4j is in them. Each JVM of this user is attached to read its
 * system properties (as {@code jcmd <pid> VM.system_properties} does); a JVM of another user, or
 * one that refuses attach, is listed with the reason instead.
 */
final class ListVerb implements Verb {
  @Override
  public String name() {
    return "list";
  }

  @Override
  public String summary() {
    return "list the JVMs gmp4j can attach to, their JDK and whether gmp4j is in them";
  }

  @Override
  public int run(List<String> args, PrintStream out, PrintStream err) {
    if (args.contains("--help")) {
      out.println("usage: gmp4j list");
      return OK;
    }
    if (!args.isEmpty()) {
      err.println("gmp4j: list takes no arguments, got " + args);
      return USAGE;
    }
    // A JVM that does not answer would hold the list for the default 10 s.
    System.setProperty("sun.tools.attach.attachTimeout", "3000");
    long self = ProcessHandle.current().pid();
    out.printf("%-8s %-12s %-26s %s%n", "PID", "JDK", "GMP4J", "MAIN");
    List<VirtualMachineDescriptor> vms =
        VirtualMachine.list().stream()
            .sorted(Comparator.comparingLong(d -> parse(d.id())))
            .toList();
    for (VirtualMachineDescriptor d : vms) {
      long pid = parse(d.id());
      if (pid == self || pid < 0) {
        continue;
      }
      String main =
          d.displayName().isBlank() ? Targets.command(pid) : d.displayName().split(" ")[0];
      String jdk = "?";
      String gmp;
      try {
        Target t = Targets.attach(pid, false);
        try {
          jdk = t.jdk();
          String g = t.gmp4j();
          gmp =
              g != null
                  ? g.replace(" ", " by ")
                  : Targets.feature(t.props().getProperty("java.specification.version", "0")) < 25
                      ? "- (needs JDK 25)"
                      : "-";
        } finally {
          t.detach();
        }
      } catch (TargetException e) {
        String m = e.getMessage();
        gmp =
            m.contains("belongs to user")
                ? "? (user " + Targets.owner(pid) + ")"
                : m.contains("refuses attach")
                    ? "? (refuses attach)"
                    : m.contains("no process") ? "? (exited)" : "? (" + m + ")";
      }
      out.printf("%-8d %-12s %-26s %s%n", pid, jdk, gmp, main);
    }
    // JVMs the Attach API leaves out of its list: -XX:+DisableAttachMechanism, or no
    // hsperfdata (-XX:-UsePerfData). Found by their mapped libjvm.so; the JDK from its release.
    java.util.Set<Long> listed = new java.util.HashSet<>();
    vms.forEach(d -> listed.add(parse(d.id())));
    try (java.util.stream.Stream<java.nio.file.Path> procs =
        java.nio.file.Files.list(java.nio.file.Path.of("/proc"))) {
      for (java.nio.file.Path p : procs.sorted().toList()) {
        long pid = parse(p.getFileName().toString());
        if (pid < 0 || pid == self || listed.contains(pid) || !Targets.mapsLibjvm(pid)) {
          continue;
        }
        out.printf(
            "%-8d %-12s %-26s %s%n",
            pid, releaseVersion(pid), "? (refuses attach)", Targets.command(pid));
      }
    } catch (java.io.IOException | RuntimeException e) {
      // no /proc: the Attach API's list is all there is
    }
    return OK;
  }

  /** JAVA_VERSION from the release file of the JDK the process runs, or "?". */
  private static String releaseVersion(long pid) {
    try {
      java.nio.file.Path exe =
          java.nio.file.Files.readSymbolicLink(java.nio.file.Path.of("/proc/" + pid + "/exe"));
      for (String l :
          java.nio.file.Files.readAllLines(exe.getParent().getParent().resolve("release"))) {
        if (l.startsWith("JAVA_VERSION=")) {
          return l.substring(13).replace("\"", "");
        }
      }
    } catch (Exception ignored) {
      // another user's process, or no release file
    }
    return "?";
  }

  private static long parse(String id) {
    try {
      return Long.parseLong(id);
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
