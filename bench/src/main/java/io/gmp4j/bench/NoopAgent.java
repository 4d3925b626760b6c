package io.gmp4j.bench;

import java.lang.instrument.Instrumentation;

/**
 * A Java agent that does nothing, for {@code Primitives.JdkAgent*}: loading any agent makes
 * HotSpot post every virtual-thread mount and unmount to JVMTI, so the JDK's scheduler with this
 * agent is the fair baseline for gmp4j under its own.
 */
public final class NoopAgent {
  private NoopAgent() {}

  public static void premain(String args, Instrumentation inst) {}
}
