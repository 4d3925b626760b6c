package io.gmp4j;

import io.gmp4j.runtime.Sched;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * gmp4j's public API: Go's runtime functions for JDK 25 virtual threads scheduled by gmp4j.
 *
 * <p>A goroutine is a {@link Thread} ({@code isVirtual()} is true) whose scheduler is gmp4j: its
 * carriers are the platform threads {@code gmp-m<id>}, it is queued per P with Go's run-queue
 * rules, and every virtual thread it creates runs on gmp4j too. Everything else (interrupts,
 * {@code join}, thread locals, {@code Thread.currentThread()}, thread dumps) is the JDK's.
 *
 * <p>Without the gmp4j agent, {@code java.lang} must be opened to gmp4j: {@code --add-opens
 * java.base/java.lang=ALL-UNNAMED}. Otherwise the first call throws an {@link
 * IllegalStateException} that says so.
 */
public final class Gmp {
  private Gmp() {}

  /** Go's {@code go f()}: starts {@code task} in a new goroutine and returns its thread. */
  public static Thread go(Runnable task) {
    return ofVirtual().start(task);
  }

  /** A builder of goroutines: the JDK's virtual-thread builder with gmp4j as the scheduler. */
  public static Thread.Builder.OfVirtual ofVirtual() {
    return Sched.get().newBuilder();
  }

  /** As {@link Executors#newVirtualThreadPerTaskExecutor()}, with goroutines. */
  public static ExecutorService newVirtualThreadPerTaskExecutor() {
    return Executors.newThreadPerTaskExecutor(ofVirtual().factory());
  }

  /**
   * Go's {@code runtime.LockOSThread}: wires this goroutine to its carrier thread. It always runs
   * there, and no other goroutine runs there, until {@link #unlockOSThread} was called as often
   * as this. A goroutine that ends while locked takes its carrier thread with it. Calls nest.
   * From a platform thread it does nothing.
   */
  public static void lockOSThread() {
    Sched.get();
    io.gmp4j.runtime.Hooks.lockOSThread();
  }

  /** Go's {@code runtime.UnlockOSThread}: undoes one {@link #lockOSThread}; a no-op at zero. */
  public static void unlockOSThread() {
    io.gmp4j.runtime.Hooks.unlockOSThread();
  }

  /**
   * Go's {@code debug.SetMaxThreads}: the limit on gmp4j's carrier threads (default 10000, or the
   * {@code maxthreads} option); returns the previous one. Past the limit the program dies as
   * Go's does ({@code fatal error: thread exhaustion}, exit status 2), unless
   * {@code maxthreads.exceeded=queue} was chosen.
   */
  public static int setMaxThreads(int n) {
    return Sched.get().setMaxThreads(n);
  }

  /**
   * Runs {@code call} as a blocking system call (Go's entersyscall / exitsyscall): while it
   * blocks this goroutine's carrier, sysmon may hand the goroutine's P to another carrier so
   * that the other goroutines keep running. For JNI and FFM calls, and anything else that blocks
   * a carrier without the JDK knowing (the agent already marks the JDK's own blocking calls).
   * From a thread that is not a goroutine it just calls {@code call}.
   */
  public static <T> T syscall(java.util.concurrent.Callable<T> call) throws Exception {
    boolean entered = io.gmp4j.runtime.Hooks.enterSyscall();
    try {
      return call.call();
    } finally {
      io.gmp4j.runtime.Hooks.exitSyscall(entered);
    }
  }

  /**
   * Go's {@code runtime.Gosched}: yields the processor; the goroutine goes to the tail of the
   * global run queue. From a platform thread, this is {@link Thread#yield()}.
   */
  public static void gosched() {
    Thread.yield();
  }

  /** Go's {@code runtime.GOMAXPROCS(0)}: the number of Ps. */
  public static int gomaxprocs() {
    return Sched.get().gomaxprocs();
  }

  /**
   * Go's {@code runtime.GOMAXPROCS(n)}: sets the number of Ps and returns the previous value;
   * {@code n < 1} leaves it unchanged. A change stops the world: it waits until every running
   * goroutine blocks or yields.
   */
  public static int gomaxprocs(int n) {
    return Sched.get().gomaxprocs(n);
  }

  /** Go's {@code runtime.NumGoroutine}: live goroutines. */
  public static int numGoroutine() {
    return Sched.get().numGoroutine();
  }

  /**
   * Go's {@code GODEBUG=schedtrace} line, in Go 1.26's format; with {@code detail}, also its
   * {@code scheddetail} P, M and G lines.
   */
  public static String schedtrace(boolean detail) {
    return Sched.get().schedtrace(detail);
  }

  /**
   * Go's {@code runtime/metrics.All()}: the description of every metric {@link #readMetrics}
   * returns.
   */
  public static List<MetricDescription> describeMetrics() {
    return Sched.describeMetrics();
  }

  /**
   * Every live goroutine with its status, wait reason and time waiting, in goid order: the
   * content of Go's goroutine dump. The stacks come from each {@link GoroutineInfo#thread()}.
   */
  public static List<GoroutineInfo> goroutines() {
    return Sched.get().goroutines();
  }

  /**
   * Go's {@code runtime/metrics} {@code /sched/*} samples by name: gauges and counters as {@link
   * Long}, time distributions as {@link Float64Histogram} in seconds.
   */
  public static Map<String, Object> readMetrics() {
    return Sched.get().readMetrics();
  }
}
