package io.gmp4j.exporter;

import java.lang.management.ManagementFactory;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

/**
 * Registers the {@link SchedulerMXBean} as {@value #OBJECT_NAME} in the platform MBean server.
 *
 * <p>Idempotent across copies of this class: the agent's (relocated, in its own jar) and an
 * application's may both call {@link #register()}; the first wins and the second finds the name
 * taken and returns false. Both copies read the same scheduler, so either serves the same values.
 */
public final class GmpJmx {
  /** The MXBean's name: JConsole's MBeans tab shows it as io.gmp4j / Scheduler. */
  public static final String OBJECT_NAME = "io.gmp4j:type=Scheduler";

  private GmpJmx() {}

  /**
   * Registers the MXBean unless {@value #OBJECT_NAME} is registered already. Returns true if
   * this call registered it. Starts the scheduler if it is not running yet. Any thread.
   *
   * @throws IllegalStateException if the MBean server refuses it (a security manager, a
   *     misconfigured MBean server builder)
   */
  public static synchronized boolean register() {
    return register(ManagementFactory.getPlatformMBeanServer());
  }

  /**
   * Registers the MXBean in {@code server} unless {@value #OBJECT_NAME} is registered there
   * already; returns true if this call registered it. Takes no lock of its own: the agent calls
   * it while {@code ManagementFactory.getPlatformMBeanServer()} returns the server, under that
   * method's lock, which {@link #register()} takes after its own. Two calls at once are told
   * apart by the server: the second finds the name taken. Any thread.
   *
   * @throws IllegalStateException if the MBean server refuses it
   */
  public static boolean register(MBeanServer server) {
    ObjectName name = objectName();
    if (server.isRegistered(name)) {
      return false;
    }
    try {
      server.registerMBean(new Scheduler(MetricsReader.shared()), name);
      return true;
    } catch (InstanceAlreadyExistsException raced) {
      return false; // another copy of this class registered it first
    } catch (JMException e) {
      throw new IllegalStateException("GmpJmx: cannot register " + OBJECT_NAME + ": " + e, e);
    }
  }

  /** Unregisters {@value #OBJECT_NAME} if registered; returns true if it was. Any thread. */
  public static synchronized boolean unregister() {
    try {
      ManagementFactory.getPlatformMBeanServer().unregisterMBean(objectName());
      return true;
    } catch (InstanceNotFoundException absent) {
      return false;
    } catch (JMException e) {
      throw new IllegalStateException("GmpJmx: cannot unregister " + OBJECT_NAME + ": " + e, e);
    }
  }

  private static ObjectName objectName() {
    try {
      return new ObjectName(OBJECT_NAME);
    } catch (MalformedObjectNameException e) {
      throw new InternalError("GmpJmx: " + OBJECT_NAME, e);
    }
  }
}
