package io.gmp4j.runtime;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * What the OS says of a carrier thread: its CPU time and whether it wants a CPU, from Linux's
 * {@code /proc/self/task/<tid>/schedstat} and {@code stat}. sysmon counts a G's ignored request
 * only while its carrier ran, or did not want to run, so that a carrier the OS descheduled on a
 * loaded host is not taken for a hog ('Carrier time' in {@link HogHandoff}).
 *
 * <h2>Implementation overview</h2>
 *
 * <ol>
 *   <li>Each M learns its own Linux thread id once, when it starts ({@link #currentTid}), from
 *       the {@code /proc/thread-self} link ({@code <pid>/task/<tid>}). Java names a thread's
 *       kernel id no other way without java.management.
 *   <li>sysmon reads the M's CPU time ({@link #cpuNanos}: schedstat's first field, exact for a
 *       thread that is not on a CPU, up to a scheduler tick behind for one that is) and its state
 *       ({@link #runnable}: stat's state letter, {@code R} for running or waiting on a run queue)
 *       only when it begins to count a G's ignored request and once that count is up: a few
 *       small reads per P that overran its slice.
 *   <li>Where a read fails (not Linux, no {@code /proc}, the thread gone), {@link #UNKNOWN} or
 *       {@code true} say so, and sysmon counts wall time, as before.
 * </ol>
 *
 * <p>Rejected:
 *
 * <ul>
 *   <li>schedstat's second field, the run delay (time runnable on a run queue): exact in the
 *       end, but Linux adds a wait to it only when the thread gets a CPU again, so while the
 *       carrier still waits (the case that matters) it has not grown. Seen: 0us of growth over
 *       10ms cycles of a carrier that got a CPU 1 time in 7.
 *   <li>Thread CPU time through {@code ThreadMXBean}: it needs java.management loaded into the
 *       host at the moment a hog holds a P (see 'Pauses' in HogHandoff), and it cannot tell a
 *       carrier that sleeps (a pinned park: it holds its P and must lose it) from one that waits
 *       for a CPU (it must not); the state letter does.
 *   <li>stat's utime and stime: clock ticks of 10ms, as coarse as the hand-off itself.
 * </ul>
 */
final class CarrierCpu {
  /** The CPU time is not known. */
  static final long UNKNOWN = -1;

  /**
   * How far behind the CPU time of a running thread may be: Linux brings it up to date at
   * scheduler ticks and context switches, and a tick is 4ms at HZ=250 (the common x86 server
   * setting; 10ms at HZ=100, where a hog is handed off up to 6ms later than asked).
   */
  static final long TICK_NS = 4_000_000L;

  private static final Path THREAD_SELF = Path.of("/proc/thread-self");

  private CarrierCpu() {}

  /**
   * The calling thread's Linux thread id, or 0 if unknown. Never throws. Any thread; called by
   * each M once, at its start.
   */
  static int currentTid() {
    try {
      String link = Files.readSymbolicLink(THREAD_SELF).toString(); // "<pid>/task/<tid>"
      int slash = link.lastIndexOf('/');
      return Integer.parseInt(link, slash + 1, link.length(), 10);
    } catch (Throwable t) {
      return 0; // not Linux, no /proc: wall time it is
    }
  }

  /**
   * Nanoseconds of CPU that thread {@code tid} of this process has had, or {@link #UNKNOWN}.
   * Never throws. Called by sysmon.
   */
  static long cpuNanos(int tid) {
    byte[] b = new byte[96]; // "<cpu ns> <run delay ns> <timeslices>\n"
    int n = read(tid, "/schedstat", b);
    if (n <= 0) {
      return UNKNOWN;
    }
    long v = 0;
    int i = 0;
    for (; i < n && b[i] >= '0' && b[i] <= '9'; i++) {
      v = v * 10 + (b[i] - '0');
    }
    return i == 0 ? UNKNOWN : v;
  }

  /**
   * Whether thread {@code tid} is running or waiting for a CPU (state {@code R}), rather than
   * sleeping or blocked; {@code true} if unknown, so that an unknown state counts as the CPU
   * time says. Never throws. Called by sysmon.
   */
  static boolean runnable(int tid) {
    byte[] b = new byte[512]; // "<tid> (<comm>) <state> ...": comm is at most 16 bytes
    int n = read(tid, "/stat", b);
    int paren = -1;
    for (int i = 0; i < n; i++) {
      if (b[i] == ')') {
        paren = i; // the last one: comm may hold a ')'
      }
    }
    return paren < 0 || paren + 2 >= n || b[paren + 2] == 'R';
  }

  /** Reads up to b.length bytes of the thread's proc file {@code name}; -1 on failure. */
  private static int read(int tid, String name, byte[] b) {
    if (tid <= 0) {
      return -1;
    }
    try (FileChannel ch =
        FileChannel.open(Path.of("/proc/self/task/" + tid + name), StandardOpenOption.READ)) {
      return Math.max(0, ch.read(ByteBuffer.wrap(b)));
    } catch (IOException | RuntimeException e) {
      return -1; // the M ended, or no such file in this kernel
    }
  }
}
