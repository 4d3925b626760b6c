package io.gmp4j.runtime;

import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

import java.nio.file.Path;
import java.util.List;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pins 'Tracing' step 2 in {@link Trace}: a recording's events are on when its {@code start}
 * returns and off when its {@code stop} returns, even while every P is idle and sysmon is in its
 * deep sleep, where no sysmon refresh can help. That holds because JDK 25 tells the listener
 * after it applied the settings, and the listener refreshes the bits itself. If a JDK told it
 * first (as Trace's comment once said JDK 25 does), a recording started on an idle scheduler
 * would keep the old bits until sysmon's next refresh, up to a second later, and this fails. In
 * a child JVM, whose process-wide scheduler has the JFR hooks.
 */
class TraceRefreshTest {
  /** Rounds of start and stop, each from a deep sleep. */
  static final int ROUNDS = 3;

  @Test
  @Timeout(value = 120, threadMode = SEPARATE_THREAD)
  void aRecordingsEventsFollowItsStartAndStopAtOnceEvenWhileSysmonSleepsDeeply(@TempDir Path dir)
      throws Exception {
    SchedTesting.runChildJvm(dir, List.of("-ea"), Child.class);
  }

  /** The child: exits 0 if the bits followed every start and stop at once, else prints why. */
  static final class Child {
    public static void main(String[] args) throws Exception {
      Sched s = Sched.get();
      FlightRecorder.getFlightRecorder(); // JFR up, event types registered: a window of its own
      boolean ok = true;
      for (int i = 0; i < ROUNDS; i++) {
        try (Recording r = new Recording()) {
          r.enable("gmp4j.GoCreate").withoutStackTrace();
          awaitDeepSleep(s, i);
          r.start();
          ok &= follows(s, true, "round " + i + ": after start");
          awaitDeepSleep(s, i);
          r.stop();
          ok &= follows(s, false, "round " + i + ": after stop");
        }
      }
      System.exit(ok ? 0 : 1);
    }

    /** Waits until sysmon is in its deep sleep (the last window over, every P idle). */
    private static void awaitDeepSleep(Sched s, int round) throws InterruptedException {
      long deadline = System.nanoTime() + 20_000_000_000L;
      while (!s.sysmonwait()) {
        if (System.nanoTime() - deadline > 0) {
          System.out.println(
              "round " + round + ": sysmon never slept deeply\n" + s.schedtrace(true));
          System.exit(3);
        }
        Thread.sleep(5);
      }
    }

    /** Whether GoCreate's bit is {@code on} now; prints what it found. */
    private static boolean follows(Sched s, boolean on, String what) {
      boolean bit = Trace.on(Trace.GO_CREATE);
      boolean in = bit == on;
      System.out.println(what + ": GoCreate " + (bit ? "on" : "off"));
      if (!in) {
        System.out.println(what + ": expected " + (on ? "on" : "off") + "\n" + s.schedtrace(true));
      }
      return in;
    }
  }
}
