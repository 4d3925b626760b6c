package io.gmp4j.agent;

import static io.gmp4j.agent.JdkWeaver.Hook.*;

import io.gmp4j.agent.JdkWeaver.Site;
import java.util.List;

/**
 * Marks the JDK's network poller wait, so that a G parked there reads as Go's {@code IO wait}
 * in schedtrace and goroutine dumps, rather than as a bare park ({@code semacquire}, or {@code
 * sleep} with a timeout). A virtual thread whose socket, socket channel or pipe is not ready
 * registers with {@code sun.nio.ch.Poller} and parks in it: Go's netpoller, where a goroutine
 * waits without a thread.
 *
 * <p>Shape pinned to JDK 25 ({@code javap -p sun.nio.ch.Poller}, 25.0.3):
 *
 * <pre>
 * static void poll(int fdVal, int event, long nanos, BooleanSupplier isOpen)   // sockets, pipes
 * static void pollSelector(int fdVal, long nanos)                              // Selector.select
 * </pre>
 *
 * Woven: {@code NETPOLL_BRACKET} ('JDK weaving' in {@link JdkWeaver}).
 */
final class NetpollInstrumentation {
  static final String TYPE = "sun.nio.ch.Poller";

  private NetpollInstrumentation() {}

  /** The marked methods (see the class comment). */
  static List<Site> sites() {
    return List.of(
        new Site(TYPE, "poll", "/4", true, NETPOLL_BRACKET),
        new Site(TYPE, "pollSelector", "/2", true, NETPOLL_BRACKET));
  }

  /** Null if this JDK has the pinned methods, else why not. Any thread. */
  static String checkShape() {
    return Shapes.check(TYPE, "poll/4", "pollSelector/2");
  }
}
