package io.gmp4j.agent.exporter;

import io.gmp4j.exporter.GmpJmx;

/**
 * AgentInstaller's step 10: the MXBean and, if {@code exporter.port} is set, the endpoint.
 * Parameters and results are Strings only, so that linking AgentInstaller loads none of the
 * exporter's classes before the call.
 *
 * <h2>Implementation overview: 'Registered when the server starts'</h2>
 *
 * The MXBean lives in the platform MBean server, and starting that server costs 250-450 ms and
 * about 0.35 s of CPU on this kind of machine (every platform MXBean is introspected and
 * registered): more than the rest of the agent's start on hello world, and on two cores a tenth
 * of a second of a Spring Boot start, for an application that may never use JMX (Spring Boot's
 * JMX is off by default). Every JMX client, local or remote, JConsole, JMC or {@code jcmd
 * ManagementAgent.start}, reaches the server through {@code
 * ManagementFactory.getPlatformMBeanServer()}. So the agent weaves that
 * method ('JDK weaving', MBEAN_SERVER: ManagementFactoryInstrumentation) and leaves a {@link
 * Registration} with the runtime's {@code Hooks}: the first call that returns the server
 * registers the MXBean in it before its caller sees it. An application that never starts the
 * server never pays for it.
 *
 * <p>The registration runs under ManagementFactory's class lock, so it takes no lock that a
 * caller of that method may hold: not {@link GmpJmx#register()}'s (synchronized, and it calls
 * the method), but {@link GmpJmx#register(javax.management.MBeanServer)} with the server given.
 *
 * <p>An attach may find the server running: the runtime then looks ({@code
 * Hooks.platformMBeanServerIfStarted}, which reads ManagementFactory's field under its lock) and
 * registers the MXBean at once if it is; else the MXBean waits as at start. A start or an attach
 * whose weave of ManagementFactory failed, or that could not look, registers on a thread of its
 * own, starting the server, as before.
 */
public final class Exporters {
  private Exporters() {}

  /**
   * The MXBean's registration, two ways: {@link #accept} in the server that the woven {@code
   * getPlatformMBeanServer} returns, run once by the runtime's {@code Hooks.platformMBeanServer};
   * {@link #run} on a thread of its own, starting the server. A class, not a lambda ('No
   * lambdas' in JdkWeaver).
   */
  public static final class Registration implements java.util.function.Consumer<Object>, Runnable {
    private final java.util.function.Consumer<String> log;

    public Registration(java.util.function.Consumer<String> log) {
      this.log = log;
    }

    @Override
    public void accept(Object server) {
      try {
        GmpJmx.register((javax.management.MBeanServer) server);
      } catch (Throwable t) {
        log.accept(cannotRegister(t));
      }
    }

    @Override
    public void run() {
      try {
        GmpJmx.register();
      } catch (Throwable t) {
        log.accept(cannotRegister(t));
      }
    }
  }

  private static String cannotRegister(Throwable t) {
    return "gmp4j: exporter: cannot register the MXBean "
        + GmpJmx.OBJECT_NAME
        + ": "
        + t
        + "; the app keeps running without it";
  }

  /**
   * Unless {@code registered} (a {@link Registration} waits for the MBean server: 'Registered
   * when the server starts'), registers the {@code io.gmp4j:type=Scheduler} MXBean on a daemon
   * thread (starting the platform MBean server takes hundreds of milliseconds that premain should
   * not wait for); starts the endpoint when {@code port} is a number above 0. Returns null, or
   * one line for the caller to print. Never throws. Called once, after the scheduler started.
   */
  public static String start(
      String host, String port, boolean registered, java.util.function.Consumer<String> log) {
    if (!registered) {
      Thread jmx = new Thread(new Registration(log), "gmp4j-jmx-register");
      jmx.setDaemon(true);
      jmx.start();
    }

    int p;
    try {
      p = port == null || port.isBlank() ? 0 : Integer.parseInt(port.strip());
    } catch (NumberFormatException e) {
      return "gmp4j: exporter: bad exporter.port \""
          + port
          + "\"; the app keeps running"
          + " without the endpoint";
    }
    return p > 0 ? Endpoint.start(host, p) : null;
  }
}
