package io.gmp4j.runtime;

import java.util.concurrent.Executor;

/**
 * What the agent's advice in JDK classes calls: one line of advice, one method here. Every
 * method here is called from inside {@code java.base}, so none may throw.
 */
public final class Hooks {
  private Hooks() {}

  /**
   * Advice on {@code java.lang.VirtualThread(Executor, String, int, Runnable)}: gmp4j's adopter
   * where the JDK would pick its DEFAULT_SCHEDULER, else the JDK's choice. For a null {@code
   * requested} JDK 25 takes the creating virtual thread's scheduler, or DEFAULT_SCHEDULER when
   * the creator is a platform thread. So gmp4j takes the thread when the creator is a platform
   * thread, a G (whose scheduler object is itself, 'Adoption' in Sched), a thread still waiting
   * for adoption, or a thread on the JDK's pool (created before an attach); a creator on any other
   * custom scheduler passes it on, as the JDK does. The common case, a G or a platform thread
   * creating, costs one final-field read. Any thread; on any failure the JDK's choice stands.
   */
  public static Executor scheduler(Executor requested) {
    if (requested != null) {
      return requested;
    }
    try {
      Sched s = Sched.get();
      Thread creator = Thread.currentThread();
      if (creator.isVirtual()) {
        Executor inherited = VirtualThreads.scheduler(creator);
        if (!(inherited instanceof Goroutine)
            && inherited != s.adopter
            && !VirtualThreads.isDefaultScheduler(inherited)) {
          return inherited;
        }
      }
      return s.adopter;
    } catch (Throwable t) {
      return null;
    }
  }

  /**
   * Advice on JDK 25's {@code private Future<?> VirtualThread.schedule(Runnable, long,
   * TimeUnit)}, which schedules the timeout of a timed park or timed wait: for a thread whose
   * scheduler is a G, called on the carrier (our M) after the unmount, the timer goes on the
   * heap of that M's P and is returned; null leaves the JDK's own timer threads to it (not a G,
   * option timers=jdk, an M whose P sysmon retook, any failure). See 'Timers on the P' in
   * {@link Timers}. Never throws.
   */
  public static java.util.concurrent.Future<?> schedule(
      Executor scheduler, Runnable task, long delay, java.util.concurrent.TimeUnit unit) {
    try {
      if (scheduler instanceof Goroutine gp
          && gp.sched.timersOnP
          && Thread.currentThread() instanceof Machine mp
          && mp.sched == gp.sched) {
        // The M's P only under a claim: sysmon may retake it from a run ('Hog hand-off').
        Processor pp = mp.tryClaimP(false);
        if (pp != null) {
          Timers.Timer t;
          try {
            t = pp.timers.addtimer(task, delay, unit);
          } finally {
            mp.unclaimP();
          }
          gp.sched.timerSleeper.wakeNetPoller(t.when);
          return t;
        }
      }
    } catch (Throwable t) {
      // the JDK's timer threads take it
    }
    return null;
  }

  /**
   * What the agent runs once the platform MBean server exists: the registration of its MXBean
   * ('Registered when the server starts' in the agent's Exporters). Set by the agent before it
   * weaves ManagementFactory; taken, once, by the first {@link #platformMBeanServer} (from the
   * woven method or {@link #platformMBeanServerIfStarted}) with {@code getAndSet(null)} (a
   * volatile read-modify-write), so that one caller runs it.
   */
  private static final java.util.concurrent.atomic.AtomicReference<
          java.util.function.Consumer<Object>>
      ON_PLATFORM_MBEAN_SERVER = new java.util.concurrent.atomic.AtomicReference<>();

  /** Sets what {@link #platformMBeanServer} runs, once. The agent, before the weave. */
  public static void onPlatformMBeanServer(java.util.function.Consumer<Object> action) {
    ON_PLATFORM_MBEAN_SERVER.set(action);
  }

  /**
   * Advice at every return of {@code java.lang.management.ManagementFactory
   * .getPlatformMBeanServer()}, the one way to the platform MBean server: the first call that
   * finds an action set takes it and runs it with the server, before the server reaches its
   * caller, so that any JMX client that can see the server sees the agent's MXBean in it. Runs
   * under ManagementFactory's class lock (the method is {@code static synchronized}); the action
   * must not take a lock that a thread may hold while it calls that method. Any thread; never
   * throws.
   */
  public static void platformMBeanServer(Object server) {
    if (server == null || ON_PLATFORM_MBEAN_SERVER.get() == null) {
      return; // every call after the first: one volatile read
    }
    java.util.function.Consumer<Object> action = ON_PLATFORM_MBEAN_SERVER.getAndSet(null);
    if (action == null) {
      return;
    }
    try {
      action.accept(server);
    } catch (Throwable ignored) {
      // the action reports its own failure; the server goes to its caller as it is
    }
  }

  /**
   * For an attach, which may come after the platform MBean server started: if it is up, runs the
   * action left by {@link #onPlatformMBeanServer} with it now, else leaves the action to the
   * server's start. Returns false where it cannot tell (ManagementFactory's private field not
   * there, or not opened to this module: the agent opens {@code java.lang.management} to it
   * first); the caller then starts the server itself. Reads the field under ManagementFactory's
   * class lock, which guards its write, so a server being started meanwhile is seen once it is
   * up. The agent only; never throws.
   */
  public static boolean platformMBeanServerIfStarted() {
    try {
      java.lang.reflect.Field f =
          java.lang.management.ManagementFactory.class.getDeclaredField("platformMBeanServer");
      f.setAccessible(true);
      Object server;
      synchronized (java.lang.management.ManagementFactory.class) {
        server = f.get(null);
      }
      platformMBeanServer(server);
      return true;
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return false;
    }
  }

  /**
   * Runs one diagnostic command, as {@code jcmd <pid> <command>} would, without the platform MBean
   * server that the public route (the DiagnosticCommand MBean) starts: 'Without the MBean
   * server' in the agent's JitDirective, which opens {@code jdk.management}'s {@code
   * com.sun.management.internal} to this module first. Returns what HotSpot answered, or null
   * where JDK 25's {@code DiagnosticCommandImpl} is not there to call (another JDK, the package
   * not opened). For the agent; it gives nothing that the public DiagnosticCommand MBean does not
   * give any code in the JVM. Any thread; never throws.
   */
  public static String diagnosticCommand(String command) {
    try {
      Module jdkManagement = ModuleLayer.boot().findModule("jdk.management").orElse(null);
      Class<?> type =
          jdkManagement == null
              ? null
              : Class.forName(jdkManagement, "com.sun.management.internal.DiagnosticCommandImpl");
      if (type == null) {
        return null;
      }
      java.lang.reflect.Method get = type.getDeclaredMethod("getDiagnosticCommandMBean");
      java.lang.reflect.Method execute =
          type.getDeclaredMethod("executeDiagnosticCommand", String.class);
      get.setAccessible(true);
      execute.setAccessible(true);
      Object impl = get.invoke(null);
      return impl == null ? null : (String) execute.invoke(impl, command);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return null;
    }
  }

  /**
   * Advice on {@code ForkJoinWorkerThread.hasKnownQueuedWork()}, which j.u.c's
   * LinkedTransferQueue and SynchronousQueue ask before they spin: answers "do not spin" by Go's
   * sync_runtime_canSpin rule when the caller is a G. Spinning is useless when no other P is
   * running, or when this P has Gs waiting to run, since they cannot run while we spin. Called
   * by the G itself; never throws.
   */
  public static boolean hasKnownQueuedWork(boolean jdkAnswer) {
    if (jdkAnswer) {
      return true;
    }
    try {
      Thread t = Thread.currentThread();
      if (t.isVirtual() && VirtualThreads.scheduler(t) instanceof Goroutine gp) {
        Sched s = gp.sched;
        Machine mp = gp.runningM();
        // Read-only, so no claim: a P that sysmon just retook ('Hog hand-off' in HogHandoff)
        // gives at worst a wrong guess, and a spin that is or is not skipped.
        Processor pp = mp == null ? null : mp.p;
        return s.gomaxprocs <= s.npidle + s.nmspinning.get() + 1 || (pp != null && !pp.runqEmpty());
      }
    } catch (Throwable ignored) {
      // fall through: the JDK's answer stands
    }
    return false;
  }

  /**
   * Advice before a JDK call that blocks its carrier (Blocker.begin, FileInputStream.read...):
   * Go's entersyscall. Returns the token for {@link #exitSyscall}. Never throws.
   */
  public static boolean enterSyscall() {
    try {
      return Syscall.enter();
    } catch (Throwable t) {
      return false;
    }
  }

  /**
   * Advice after such a call when the token cannot travel from the enter advice (a JDK pair of
   * methods such as Blocker.begin/end): exits the current G's innermost syscall bracket, if it
   * is in one. Never throws.
   */
  public static void exitSyscall() {
    exitSyscall(true);
  }

  /** Advice after such a call: Go's exitsyscall. Never throws. */
  public static void exitSyscall(boolean entered) {
    try {
      Syscall.exit(entered);
    } catch (Throwable t) {
      // the call's own result or exception stands
    }
  }

  /**
   * Advice before the JDK's network poller wait ({@code sun.nio.ch.Poller.poll}, where a
   * virtual thread parks until its socket or pipe is ready): a park inside is Go's {@code IO
   * wait} (the G is in the netpoller). Returns the token for {@link #exitNetpoll}. Never throws.
   */
  public static boolean enterNetpoll() {
    try {
      Thread t = Thread.currentThread();
      if (t.isVirtual() && VirtualThreads.scheduler(t) instanceof Goroutine gp && !gp.inNetpoll) {
        gp.inNetpoll = true;
        return true;
      }
    } catch (Throwable ignored) {
      // the wait goes on unmarked
    }
    return false;
  }

  /** Advice after the JDK's network poller wait, on return or throw. Never throws. */
  public static void exitNetpoll(boolean entered) {
    if (entered && VirtualThreads.scheduler(Thread.currentThread()) instanceof Goroutine gp) {
      gp.inNetpoll = false;
    }
  }

  /** Go's runtime.LockOSThread, for io.gmp4j.Gmp. */
  public static void lockOSThread() {
    LockOSThread.lock();
  }

  /** Go's runtime.UnlockOSThread, for io.gmp4j.Gmp. */
  public static void unlockOSThread() {
    LockOSThread.unlock();
  }

  /** The lock nesting count of the current G's M (Go's LockOSCounts), for io.gmp4j.Gmp. */
  public static int lockOSThreadCount() {
    return LockOSThread.lockCount();
  }

  /**
   * Hands the agent's class counters to the metrics: {@code
   * /sched/instrumentation/classes/instrumented:classes} and {@code .../skipped:classes} read
   * them from now on. Called once by the agent's premain when it installs the poll injector.
   */
  public static void instrumentationCounts(
      java.util.function.LongSupplier instrumented, java.util.function.LongSupplier skipped) {
    SchedMetrics.instrumentation = new java.util.function.LongSupplier[] {instrumented, skipped};
  }

  /**
   * A live option change from a second attach: see {@link LiveOptions#set}. Returns the previous
   * value; throws IllegalArgumentException with the line to print. Called by the agent's attach
   * thread.
   */
  public static String setOption(String key, String value) {
    return LiveOptions.set(key, value);
  }

  /** The running scheduler's live values, for the agent's /debug/vars. Any thread. */
  public static java.util.Map<String, String> liveOptions() {
    return LiveOptions.current();
  }

  /**
   * Set by {@link #start}, which only the agent calls, before the scheduler exists. Read by every
   * M at its start ('No spin in j.u.c without the agent' in Machine). Volatile.
   */
  private static volatile boolean agentInstalled;

  /** Whether the agent installed gmp4j (else it runs as a library). Any thread. */
  static boolean agentInstalled() {
    return agentInstalled;
  }

  /** Starts the scheduler and sysmon. Throws with gmp4j's message if it cannot run here. */
  public static void start() {
    agentInstalled = true;
    Sched.get();
    // Links the poll's VarHandle now, on the installing thread: its first use otherwise runs
    // inside a G's first poll, and took over 20 ms on a loaded machine, long enough for sysmon
    // to hand the G's P off as if it ignored preemption.
    Preempt.poll();
  }
}
