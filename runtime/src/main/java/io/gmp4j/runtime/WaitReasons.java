package io.gmp4j.runtime;

import java.util.concurrent.locks.AbstractQueuedSynchronizer;
import java.util.concurrent.locks.LockSupport;

/**
 * Go's waitReason strings (runtime2.go) for a G that parked, read off the JDK's state of its
 * virtual thread after the park.
 *
 * <p>The JVM does not say why a thread parked, only how (park, timed park, monitor enter,
 * Object.wait) and sometimes on what ({@link LockSupport#getBlocker}). The mapping keeps Go's
 * words where the meaning matches: a monitor enter is Go's {@code sync.Mutex.Lock}, an
 * {@code Object.wait} or a j.u.c condition is {@code sync.Cond.Wait}, a timed park with no
 * blocker is {@code Thread.sleep}, i.e. {@code sleep}, and any other park is a binary semaphore
 * acquire, {@code semacquire}. A park inside the JDK's network poller wait, which the agent
 * marks ({@link Hooks#enterNetpoll}), is Go's {@code IO wait}.
 */
final class WaitReasons {
  // JDK 25 VirtualThread state values; see VirtualThreads.
  private static final int PARKED = 4;
  private static final int TIMED_PARKED = 7;
  private static final int BLOCKED = 13;
  private static final int WAIT = 16;
  private static final int TIMED_WAIT = 18;

  private WaitReasons() {}

  /**
   * The reason for a park with a blocker of a given class, worked out once per class: this runs
   * at every park, where three string searches of the class name cost a tenth of a
   * SynchronousQueue hand-off.
   */
  private static final ClassValue<String> BLOCKER_REASON =
      new ClassValue<>() {
        @Override
        protected String computeValue(Class<?> c) {
          if (AbstractQueuedSynchronizer.ConditionObject.class.isAssignableFrom(c)) {
            return "sync.Cond.Wait";
          }
          String name = c.getName();
          if (name.endsWith("ReentrantLock$NonfairSync")
              || name.endsWith("ReentrantLock$FairSync")
              || name.contains("ReentrantReadWriteLock")) {
            return "sync.Mutex.Lock";
          }
          return "semacquire";
        }
      };

  static String of(Goroutine gp, int jdkState) {
    Thread vthread = gp.thread;
    switch (jdkState) {
      case BLOCKED:
        return "sync.Mutex.Lock";
      case WAIT, TIMED_WAIT:
        return "sync.Cond.Wait";
      case PARKED, TIMED_PARKED:
        {
          if (gp.inNetpoll) {
            return "IO wait";
          }
          Object blocker = LockSupport.getBlocker(vthread);
          if (blocker == null) {
            return jdkState == TIMED_PARKED ? "sleep" : "semacquire";
          }
          return BLOCKER_REASON.get(blocker.getClass());
        }
      default:
        return ""; // waitReasonZero: mid-transition, or runnable again
    }
  }
}
