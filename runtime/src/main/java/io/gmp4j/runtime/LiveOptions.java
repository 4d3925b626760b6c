package io.gmp4j.runtime;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The options a running scheduler can take without a restart, as a second {@code gmp4j attach}
 * sends them: Go's {@code runtime.GOMAXPROCS(n)}, and the GODEBUG settings that Go's sysmon
 * re-reads ({@code schedtrace}, {@code scheddetail}), plus gmp4j's {@code timeslice} and {@code
 * preempt.handoff}.
 *
 * <p>Every other option shapes something built once at start-up (the poll injector's filters,
 * the thread limit, the recordings) and is refused by the agent by name. Values arrive already
 * normalised by {@link Config#check}. Setting gomaxprocs here is the program's
 * GOMAXPROCS(n): it also stops sysmon from following the CPU limit, as in Go.
 */
public final class LiveOptions {
  private LiveOptions() {}

  /** The keys {@link #set} takes. */
  public static final List<String> KEYS =
      List.of("gomaxprocs", "schedtrace", "scheddetail", "timeslice", "preempt.handoff");

  /**
   * Applies one normalised value to the running scheduler; returns the previous effective value
   * as the user would write it. Throws IllegalArgumentException for a key not in {@link #KEYS}.
   * Any thread but a G's: a GOMAXPROCS change stops the world.
   */
  static String set(String key, String value) {
    Sched s = Sched.get();
    Sysmon sm = s.sysmon();
    Map<String, String> before = current();
    switch (key) {
      case "gomaxprocs" -> s.gomaxprocs(Integer.parseInt(value));
      case "schedtrace" -> sm.setSchedtrace(Integer.parseInt(value), sm.scheddetailNow());
      case "scheddetail" -> sm.setSchedtrace(sm.schedtraceNow(), value.equals("1"));
      case "timeslice" -> sm.setTimeslice(nanos(value));
      case "preempt.handoff" -> sm.setHandoff(value.equals("off") ? 0 : nanos(value));
      default ->
          throw new IllegalArgumentException(
              "gmp4j: option "
                  + key
                  + " cannot change in a running JVM; live options: "
                  + String.join(", ", KEYS));
    }
    return before.get(key);
  }

  /**
   * The effective values of the live keys and of {@code gomaxprocs.source}: "fixed" when the user
   * or program set GOMAXPROCS, else the reason of Go 1.25's default. Any thread; racy.
   */
  static Map<String, String> current() {
    Sched s = Sched.get();
    Sysmon sm = s.sysmon();
    Map<String, String> m = new LinkedHashMap<>();
    m.put("gomaxprocs", String.valueOf(s.gomaxprocs));
    m.put("schedtrace", String.valueOf(sm.schedtraceNow()));
    m.put("scheddetail", sm.scheddetailNow() ? "1" : "0");
    m.put("timeslice", millis(sm.timesliceNow()));
    long h = sm.handoffNow();
    m.put("preempt.handoff", h == 0 ? "off" : millis(h));
    m.put(
        "gomaxprocs.source",
        s.customGomaxprocs
            ? "fixed"
            : sm.followsCpuLimit()
                ? "CPU limit: " + MaxProcsLimit.lastReason
                : "CPU limit at start, updatemaxprocs=0: " + MaxProcsLimit.lastReason);
    m.put("gomaxprocs.updates", String.valueOf(MaxProcsLimit.UPDATES.sum()));
    return m;
  }

  private static long nanos(String normalised) {
    return Long.parseLong(normalised.substring(0, normalised.length() - 2)); // "10000000ns"
  }

  private static String millis(long ns) {
    return ns % 1_000_000 == 0 ? ns / 1_000_000 + "ms" : ns / 1_000 + "us";
  }
}
