package io.gmp4j.agent;

import static io.gmp4j.agent.JdkWeaver.Hook.*;

import io.gmp4j.agent.JdkWeaver.Site;
import java.util.List;

/**
 * Go's entersyscall / exitsyscall for every JDK call site that already marks itself as blocking
 * the carrier: advice on {@code jdk.internal.misc.Blocker}'s begin and end.
 *
 * <p>Shape pinned to JDK 25 ({@code jdk/internal/misc/Blocker.java}, javap of 25.0.3):
 *
 * <pre>
 * public static boolean begin()                  // compensates only on a CarrierThread
 * public static boolean begin(boolean blocking)  // blocking ? begin() : false
 * public static void end(boolean attempted)      // called in finally by every caller
 * </pre>
 *
 * JDK 21 had {@code long begin()} / {@code end(long)}; the matchers go by name and arity, not
 * descriptor, so both shapes match (agent-notes section 2.4).
 *
 * <p>JDK 25 callers (27 sites): FileChannelImpl (read/write with {@code begin(direct)} or {@code
 * begin(sync || direct)}, transferTo, force...), Process's pipe streams, System.in, the
 * RandomAccessFile writes ({@code begin(sync)}), InetAddress's platform resolver (DNS),
 * FileDescriptor.sync, MappedMemoryUtils, PollSelectorImpl. Each is {@code boolean attempted =
 * Blocker.begin(..); try { .. } finally { Blocker.end(attempted); }}.
 *
 * <p>On a gmp4j carrier {@code begin} returns false (the carrier is not a CarrierThread) and the
 * JDK does nothing, so {@code attempted} cannot tell us anything. The rule that keeps the
 * brackets balanced: every begin the JDK pairs with an end enters exactly once. {@code begin()}
 * enters; {@code begin(true)} calls {@code begin()}, which enters; so {@code begin(boolean)}
 * enters itself only for {@code false}. Go brackets every read and write to a file, page cache
 * or not, so {@code begin(false)} (a FileChannel read of a regular file, say) is a syscall too.
 * {@code end} exits the current G's innermost bracket from its entry advice: the JDK calls it in
 * {@code finally}, so that covers throws.
 */
final class BlockerInstrumentation {
  static final String TYPE = "jdk.internal.misc.Blocker";

  private BlockerInstrumentation() {}

  /** begin(), begin(boolean), and end(boolean) on JDK 23+ or end(long) on JDK 21. */
  static List<Site> sites() {
    return List.of(
        new Site(TYPE, "begin", "()", true, ENTER_SYSCALL),
        new Site(TYPE, "begin", "(Z)", true, ENTER_UNLESS_TRUE),
        new Site(TYPE, "end", "/1", true, EXIT_SYSCALL));
  }

  /** Null if this JDK has begin() and end(x), else why not. Any thread. */
  static String checkShape() {
    return Shapes.check(TYPE, "begin/0", "end/1");
  }
}
