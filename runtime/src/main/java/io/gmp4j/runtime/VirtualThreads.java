package io.gmp4j.runtime;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Field;
import java.util.concurrent.Executor;

/**
 * The few private members of {@code java.lang.VirtualThread} that gmp4j needs, pinned to JDK 25.
 *
 * <h2>Implementation overview</h2>
 *
 * JDK 25 has no public custom-scheduler API (DESIGN.md section 2). What it does have, in
 * {@code java/lang/VirtualThread.java} and {@code java/lang/ThreadBuilders.java} of JDK 25:
 *
 * <ol>
 *   <li>{@code ThreadBuilders.VirtualThreadBuilder(Executor scheduler)}, package-private and
 *       commented "invoked by tests". Every thread it builds calls {@code scheduler.execute(
 *       runContinuation)} to be scheduled.
 *   <li>{@code VirtualThread(Executor scheduler, String name, int characteristics, Runnable task)}:
 *       a null scheduler means "the creating virtual thread's scheduler object", or else the JDK's
 *       ForkJoinPool.
 *   <li>{@code private final Executor scheduler}, read by the JDK on every submit.
 *   <li>{@code private final Runnable runContinuation = this::runContinuation}: the one task object
 *       a thread ever submits. It is a bound method reference, so its hidden class holds exactly
 *       one field, the thread.
 *   <li>{@code private volatile Thread carrierThread}: the carrier while the thread is mounted.
 *   <li>{@code private volatile int state}: NEW 0, STARTED 1, RUNNING 2, PARKING 3, PARKED 4,
 *       PINNED 5, TIMED_PARKING 6, TIMED_PARKED 7, TIMED_PINNED 8, UNPARKED 9, YIELDING 10,
 *       YIELDED 11, BLOCKING 12, BLOCKED 13, UNBLOCKED 14, WAITING 15, WAIT 16, TIMED_WAITING 17,
 *       TIMED_WAIT 18, TERMINATED 99, plus SUSPENDED (1 &lt;&lt; 8) while a stack is being walked.
 * </ol>
 *
 * A G is the scheduler object of its own thread (see 'Adoption' in {@link Sched}), so adoption
 * rewrites the final {@code scheduler} field once, before the thread has run. Rejected: a map from
 * task to G, which costs a lookup on every wake-up for the life of the thread.
 *
 * <p>All of this needs {@code java.lang} opened to gmp4j. When it is not, nothing here throws at
 * class initialisation; {@link #checkAvailable()} throws with a message that names the flag.
 */
final class VirtualThreads {
  static final int NEW = 0;
  static final int STARTED = 1;
  static final int RUNNING = 2;
  static final int PARKING = 3;
  static final int PINNED = 5;
  static final int TIMED_PARKING = 6;
  static final int TIMED_PINNED = 8;
  static final int UNPARKED = 9;
  static final int YIELDING = 10;
  static final int YIELDED = 11;
  static final int BLOCKING = 12;
  static final int UNBLOCKED = 14;
  static final int WAITING = 15;
  static final int TIMED_WAITING = 17;
  static final int TERMINATED = 99;
  private static final int SUSPENDED = 1 << 8;

  private static final MethodHandle NEW_BUILDER; // (Executor)Thread$Builder$OfVirtual
  private static final VarHandle SCHEDULER; // VirtualThread.scheduler, read-only
  private static final Field SCHEDULER_FIELD; // VirtualThread.scheduler, written once per thread
  private static final VarHandle STATE; // VirtualThread.state
  private static final VarHandle CARRIER; // VirtualThread.carrierThread, read-only
  private static final String UNAVAILABLE; // null when all of the above resolved

  static {
    MethodHandle newBuilder = null;
    VarHandle scheduler = null;
    Field schedulerField = null;
    VarHandle state = null;
    VarHandle carrier = null;
    String unavailable = null;
    try {
      if (Runtime.version().feature() < 25) {
        throw new UnsupportedOperationException(
            "gmp4j needs JDK 25 or newer; this is JDK " + Runtime.version());
      }
      Class<?> vt = Class.forName("java.lang.VirtualThread");
      Class<?> builder = Class.forName("java.lang.ThreadBuilders$VirtualThreadBuilder");
      MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(vt, MethodHandles.lookup());
      scheduler = lookup.findVarHandle(vt, "scheduler", Executor.class);
      state = lookup.findVarHandle(vt, "state", int.class);
      carrier = lookup.findVarHandle(vt, "carrierThread", Thread.class);
      schedulerField = vt.getDeclaredField("scheduler");
      schedulerField.setAccessible(true);
      newBuilder =
          MethodHandles.privateLookupIn(builder, MethodHandles.lookup())
              .findConstructor(builder, MethodType.methodType(void.class, Executor.class))
              .asType(MethodType.methodType(Thread.Builder.OfVirtual.class, Executor.class));
    } catch (IllegalAccessException | RuntimeException e) {
      if (e instanceof IllegalAccessException
          || e instanceof SecurityException
          || e.getClass().getName().endsWith("InaccessibleObjectException")) {
        String module =
            VirtualThreads.class.getModule().isNamed()
                ? VirtualThreads.class.getModule().getName()
                : "ALL-UNNAMED";
        unavailable =
            "gmp4j: java.lang is not open to gmp4j; run the JVM with --add-opens"
                + " java.base/java.lang="
                + module
                + ", or use -javaagent:gmp4j-agent.jar";
      } else {
        unavailable =
            e.getMessage() != null && e.getMessage().startsWith("gmp4j")
                ? e.getMessage()
                : "gmp4j: unsupported JDK " + Runtime.version() + ": " + e;
      }
    } catch (ReflectiveOperationException e) {
      unavailable =
          "gmp4j: unsupported JDK "
              + Runtime.version()
              + " (java.lang.VirtualThread does not have the JDK 25 shape): "
              + e;
    }
    NEW_BUILDER = newBuilder;
    SCHEDULER = scheduler;
    SCHEDULER_FIELD = schedulerField;
    STATE = state;
    CARRIER = carrier;
    UNAVAILABLE = unavailable;
  }

  // The hidden class of VirtualThread::runContinuation and its one field. Written once by the
  // first adoption (a benign race: every writer stores the same values); read by later ones.
  private static volatile Class<?> taskClass;
  private static volatile Field taskThread;

  private VirtualThreads() {}

  /** Throws, naming the missing flag or the unsupported JDK, unless gmp4j can schedule here. */
  static void checkAvailable() {
    if (UNAVAILABLE != null) {
      throw new IllegalStateException(UNAVAILABLE);
    }
  }

  /** A JDK virtual-thread builder whose threads call {@code scheduler.execute}. Any thread. */
  static Thread.Builder.OfVirtual newBuilder(Executor scheduler) {
    checkAvailable();
    try {
      return (Thread.Builder.OfVirtual) NEW_BUILDER.invokeExact(scheduler);
    } catch (Throwable t) {
      throw new InternalError("newBuilder: " + t, t);
    }
  }

  /** The virtual thread whose {@code runContinuation} this task is. Any thread. */
  static Thread threadOf(Runnable runContinuation) {
    Class<?> c = runContinuation.getClass();
    Field f = taskThread;
    if (taskClass != c) {
      f = null;
      for (Field candidate : c.getDeclaredFields()) {
        if (Thread.class.isAssignableFrom(candidate.getType())) {
          f = candidate;
        }
      }
      if (f == null) {
        throw new InternalError("threadOf: not a virtual thread's runContinuation: " + c);
      }
      f.setAccessible(true);
      taskThread = f;
      taskClass = c;
    }
    try {
      return (Thread) f.get(runContinuation);
    } catch (IllegalAccessException e) {
      throw new InternalError("threadOf: " + e, e);
    }
  }

  /** The scheduler object of a virtual thread. Any thread. */
  static Executor scheduler(Thread vthread) {
    return (Executor) SCHEDULER.get(vthread); // plain read of a final field
  }

  /**
   * Whether {@code scheduler} is the JDK's {@code VirtualThread.DEFAULT_SCHEDULER}. Read once,
   * lazily: only a virtual thread on a scheduler that is neither a G nor the adopter asks (a thread
   * created before an attach, or one on a custom scheduler), so the class's initialisation stays
   * off gmp4j's start-up. Any thread.
   */
  static boolean isDefaultScheduler(Executor scheduler) {
    return scheduler == DefaultScheduler.INSTANCE;
  }

  /** Holder of {@code VirtualThread.DEFAULT_SCHEDULER} (null if it cannot be read). */
  private static final class DefaultScheduler {
    static final Object INSTANCE = read();

    private static Object read() {
      try {
        Field f = Class.forName("java.lang.VirtualThread").getDeclaredField("DEFAULT_SCHEDULER");
        f.setAccessible(true);
        return f.get(null);
      } catch (ReflectiveOperationException | RuntimeException e) {
        return null; // then every custom scheduler is inherited, the default one included
      }
    }
  }

  /**
   * Makes {@code g} the scheduler of {@code vthread}. Called only while adopting, before the
   * thread first runs; publication to later submitters is through the run queues.
   */
  static void setScheduler(Thread vthread, Executor g) {
    try {
      SCHEDULER_FIELD.set(vthread, g);
    } catch (IllegalAccessException e) {
      throw new InternalError("setScheduler: " + e, e);
    }
  }

  /** The JDK's state of a virtual thread, without the SUSPENDED bit. Any thread. */
  static int state(Thread vthread) {
    return ((int) STATE.getVolatile(vthread)) & ~SUSPENDED; // pairs with the JDK's setState
  }

  /**
   * Whether JDK state {@code js} (from {@link #state}) is one that {@code runContinuation} runs:
   * started, unparked, yielded or unblocked, all unmounted. Every submit the JDK makes but the
   * stack walker's is of a thread it has just put in one of these.
   */
  static boolean runnable(int js) {
    return js == UNPARKED || js == YIELDED || js == UNBLOCKED || js == STARTED;
  }

  /**
   * The carrier of a mounted virtual thread, or null. Exact when called by the thread itself:
   * its own carrier cannot change under it while it runs Java code (an unmount is a call it
   * makes). Any thread.
   */
  static Thread carrier(Thread vthread) {
    return (Thread) CARRIER.getVolatile(vthread); // pairs with the JDK's mount
  }

  /**
   * Whether a virtual thread is one of the JDK's own: in JDK 25, the I/O poller threads that
   * {@code sun.nio.ch.Poller} starts as virtual threads named {@code SubPoller-<n>} when it
   * runs its pollers as virtual threads (Linux's default). Any thread.
   */
  static boolean isSystem(Thread vthread) {
    return vthread.getName().startsWith("SubPoller-");
  }
}
