package io.gmp4j.runtime;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.LongAdder;

/**
 * Go 1.25's default GOMAXPROCS (proc.go {@code defaultGOMAXPROCS}, cgroup.go {@code
 * adjustCgroupGOMAXPROCS}), computed from what the JDK reports.
 *
 * <h2>Implementation overview</h2>
 *
 * Go 1.25 takes the smallest of three numbers: the logical CPU count, the CPU affinity mask of
 * the process, and the cgroup CPU bandwidth limit rounded up; but the limit is raised to 2 when it
 * is lower, so that a container limited to half a CPU still gets two Ps when it may run on two
 * CPUs (a P waiting for a lock holder that was throttled is worse than one more thread). CPU
 * requests (cgroup shares) are ignored. Go re-reads all three once a second in sysmon, unless
 * {@code GODEBUG=updatemaxprocs=0} or an explicit GOMAXPROCS turned the updates off.
 *
 * <p>The JDK's container support is the source of the limit here: {@link
 * Runtime#availableProcessors()} is {@code min(affinity of the calling thread, ceil(quota /
 * period))} on JDK 25 (shares are ignored since JDK 19), and it re-reads the cgroup files (cached
 * for a few milliseconds). So:
 *
 * <ol>
 *   <li>{@code jdk} = availableProcessors() on the calling thread (sysmon, or the thread that
 *       starts the scheduler);
 *   <li>{@code threadAffinity} = the calling thread's own affinity ({@code
 *       /proc/thread-self/status}, Cpus_allowed_list). When {@code jdk} is below it, the JDK saw
 *       a CPU limit of exactly {@code jdk} CPUs: the JDK rounds a quota up, as Go does;
 *   <li>{@code ncpu} = the process's affinity: the main thread's ({@code /proc/self/status}).
 *       {@code taskset -p -c 0 <pid>} changes only the thread whose id is the pid, the main
 *       thread, which new threads inherit from, so it stands for the process, as in Go, whose
 *       getproccount reads it at start-up;
 *   <li>GOMAXPROCS = {@code ncpu}, and with a limit {@code min(ncpu, max(2, limit))}.
 * </ol>
 *
 * Where there is no /proc (not Linux), both affinities are {@code jdk} and the result is the
 * JDK's number, as before.
 *
 * <p>Differences from Go: Go reads cgroup v1 {@code cpu.cfs_quota_us} / v2 {@code cpu.max} of
 * the leaf cgroup only; the JDK walks up the hierarchy and takes the lowest limit, so in a
 * nested cgroup the two may differ and gmp4j follows the JDK. The JDK also rounds a quota below
 * one CPU up to 1 before gmp4j sees it, which the rule above raises to 2 anyway.
 *
 * <p>Rejected: reading the cgroup files here (a second, divergent copy of the JDK's container
 * code), and {@code jdk.internal.platform.Container} (not exported; one more module to open).
 */
final class MaxProcsLimit {
  private MaxProcsLimit() {}

  /** Changes made by sysmon following the limit: /sched/gomaxprocs/updates:changes. */
  static final LongAdder UPDATES = new LongAdder();

  /** The reason for the value last computed, for the update line. Any thread; racy. */
  static volatile String lastReason = "";

  /** Go 1.25's default GOMAXPROCS now, see the overview. Any thread; never throws. */
  static int defaultGomaxprocs() {
    int jdk = Runtime.getRuntime().availableProcessors();
    int threadAffinity = affinity(Path.of("/proc/thread-self/status"), jdk);
    int ncpu = affinity(Path.of("/proc/self/status"), jdk);
    return compute(jdk, threadAffinity, ncpu);
  }

  /** Steps 2 to 4 of the overview; records the reason. Pure but for lastReason. */
  static int compute(int jdk, int threadAffinity, int ncpu) {
    boolean limited = jdk < threadAffinity;
    int procs = limited ? Math.min(ncpu, Math.max(2, jdk)) : ncpu;
    procs = Math.max(1, procs);
    lastReason =
        "affinity "
            + ncpu
            + (ncpu == 1 ? " CPU" : " CPUs")
            + (limited
                ? ", CPU limit "
                    + jdk
                    + " (the JDK's availableProcessors)"
                    + (jdk < 2 && procs == 2 ? ", raised to 2 as Go 1.25 does" : "")
                : ", no CPU limit");
    return procs;
  }

  /**
   * The number of CPUs in the Cpus_allowed_list of a /proc status file, or {@code fallback} when
   * it cannot be read (not Linux).
   */
  static int affinity(Path status, int fallback) {
    try {
      for (String line : Files.readAllLines(status)) {
        if (line.startsWith("Cpus_allowed_list:")) {
          int n = countList(line.substring("Cpus_allowed_list:".length()).trim());
          return n > 0 ? n : fallback;
        }
      }
    } catch (Exception e) {
      // no /proc here: the JDK's count stands
    }
    return fallback;
  }

  /** "0-3,8,10-11" → 7. */
  static int countList(String list) {
    int n = 0;
    for (String part : list.split(",")) {
      String p = part.trim();
      if (p.isEmpty()) {
        continue;
      }
      int dash = p.indexOf('-');
      n +=
          dash < 0
              ? 1
              : Integer.parseInt(p.substring(dash + 1))
                  - Integer.parseInt(p.substring(0, dash))
                  + 1;
    }
    return n;
  }
}
