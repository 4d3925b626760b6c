package io.gmp4j.runtime;

/**
 * Start-up settings of the runtime, read once when the scheduler is created.
 *
 * <p>GOMAXPROCS: {@code -Dgmp.gomaxprocs} wins over the {@code GOMAXPROCS} environment variable,
 * which wins over {@link Runtime#availableProcessors()} (which already follows the container's
 * CPU limit). Go silently ignores a bad {@code GOMAXPROCS}; a JVM service would rather be told,
 * so a value that is not a positive integer fails the first call with a message naming it.
 */
final class Config {
  private Config() {}

  static int gomaxprocs() {
    String prop = System.getProperty("gmp.gomaxprocs");
    if (prop != null) {
      return parsePositive("-Dgmp.gomaxprocs", prop);
    }
    String env = System.getenv("GOMAXPROCS");
    if (env != null && !env.isEmpty()) {
      return parsePositive("GOMAXPROCS", env);
    }
    return Runtime.getRuntime().availableProcessors();
  }

  static int parsePositive(String name, String value) {
    int n;
    try {
      n = Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      n = 0;
    }
    if (n < 1) {
      throw new IllegalArgumentException(
          "gmp4j: bad " + name + " value \"" + value + "\": want a positive integer, e.g. "
              + name + "=" + Runtime.getRuntime().availableProcessors());
    }
    return n;
  }
}
