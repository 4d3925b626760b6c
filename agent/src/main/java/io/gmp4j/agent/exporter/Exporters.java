package io.gmp4j.agent.exporter;

import io.gmp4j.exporter.GmpJmx;

/**
 * AgentInstaller's step 10: the MXBean and, if {@code exporter.port} is set, the endpoint.
 * Parameters and results are Strings only, so that linking AgentInstaller loads none of the
 * exporter's classes before the call.
 */
public final class Exporters {
  private Exporters() {}

  /** The MXBean's registration; a class, not a lambda, which would link on premain's thread. */
  private static final class Register implements Runnable {
    private final java.util.function.Consumer<String> log;

    Register(java.util.function.Consumer<String> log) {
      this.log = log;
    }

    @Override
    public void run() {
      try {
        GmpJmx.register();
      } catch (Throwable t) {
        log.accept(
            "gmp4j: exporter: cannot register the MXBean "
                + GmpJmx.OBJECT_NAME
                + ": "
                + t
                + "; the app keeps running without it");
      }
    }
  }

  /**
   * Registers the {@code io.gmp4j:type=Scheduler} MXBean on a daemon thread (initialising the
   * platform MBean server takes tens of milliseconds that premain should not wait for), and
   * starts the endpoint when {@code port} is a number above 0. Returns null, or one line for the
   * caller to print. Never throws. Called once, after the scheduler started.
   */
  public static String start(String host, String port, java.util.function.Consumer<String> log) {
    Thread jmx = new Thread(new Register(log), "gmp4j-jmx-register");
    jmx.setDaemon(true);
    jmx.start();

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
