package io.gmp4j.agent;

import static io.gmp4j.agent.JdkWeaver.Hook.MBEAN_SERVER;

import io.gmp4j.agent.JdkWeaver.Site;
import java.util.List;

/**
 * Lets the agent register its MXBean when the platform MBean server starts, instead of starting
 * it: return advice on {@code java.lang.management.ManagementFactory.getPlatformMBeanServer()}
 * ('Registered when the server starts' in the agent's {@code Exporters}).
 *
 * <p>Shape (public API since Java 5, {@code java/lang/management/ManagementFactory.java}):
 *
 * <pre>
 * public static synchronized MBeanServer getPlatformMBeanServer()
 * </pre>
 *
 * Losing this advice costs start-up, not correctness: the MXBean is then registered at start,
 * as before, by a thread of its own.
 */
final class ManagementFactoryInstrumentation {
  static final String TYPE = "java.lang.management.ManagementFactory";

  private ManagementFactoryInstrumentation() {}

  /** The method of the class comment: its every areturn passes the server to the hook. */
  static List<Site> sites() {
    return List.of(new Site(TYPE, "getPlatformMBeanServer", "()", true, MBEAN_SERVER));
  }
}
