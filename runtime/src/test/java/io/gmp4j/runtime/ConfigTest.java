package io.gmp4j.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Config for {@code preempt.handoff}: values, normal forms, the error line and the default. */
class ConfigTest {
  @Test
  void handoffTakesADurationOrOff() {
    assertEquals("20000000ns", Config.check("preempt.handoff", "20ms"));
    assertEquals("500000ns", Config.check("preempt.handoff", " 500us "));
    assertEquals("1000000000ns", Config.check("preempt.handoff", "1s"));
    assertEquals("off", Config.check("preempt.handoff", "off"));
    assertEquals("off", Config.check("preempt.handoff", "OFF"));
    assertEquals("off", Config.check("preempt.handoff", "0"));
  }

  /**
   * The agent's deferral deadline for array loops (its DeferredPolls, 'The deadline'): a
   * duration, or 0 or off for none deferred; the normal form is a fixed point.
   */
  @Test
  void deadlineTakesADurationOrOff() {
    assertEquals("60000000000ns", Config.check("preempt.deadline", "60s"));
    assertEquals("off", Config.check("preempt.deadline", "0"));
    assertEquals("off", Config.check("preempt.deadline", "off"));
    for (String v : new String[] {"60s", "0", "500ms"}) {
      String once = Config.check("preempt.deadline", v);
      assertEquals(once, Config.check("preempt.deadline", once), v);
    }
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Config.check("preempt.deadline", "1m"));
    assertTrue(
        e.getMessage().startsWith("gmp4j: bad value \"1m\" for option preempt.deadline: want"),
        e.getMessage());
  }

  /** The agent validates, normalises and writes back; the runtime checks the value again. */
  @Test
  void handoffNormalFormIsAFixedPoint() {
    for (String v : new String[] {"20ms", "off", "0", "100us", "2s"}) {
      String once = Config.check("preempt.handoff", v);
      assertEquals(once, Config.check("preempt.handoff", once), v);
    }
  }

  @Test
  void badHandoffNamesTheOptionAndWhatIsValid() {
    for (String v : new String[] {"fast", "", "10", "50us", "-1ms", "2h"}) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> Config.check("preempt.handoff", v), v);
      assertTrue(
          e.getMessage()
              .startsWith(
                  "gmp4j: bad value \""
                      + v
                      + "\" for option preempt.handoff: want a duration such as 20ms"),
          e.getMessage());
    }
  }

  /**
   * asyncpreemptoff=1 asks for Go's behaviour without preemption, so the hand-off defaults to
   * off with it; an explicit preempt.handoff still wins. Reads the properties only while set
   * here (the scheduler of this JVM read its own at start-up).
   */
  @Test
  void asyncPreemptOffTurnsTheHandoffOffByDefault() {
    assertEquals(null, System.getProperty("gmp.asyncpreemptoff"), "set outside the test");
    assertEquals(null, System.getProperty("gmp.preempt.handoff"), "set outside the test");
    try {
      assertEquals(20_000_000L, Config.handoffNanos());
      System.setProperty("gmp.asyncpreemptoff", "1");
      assertEquals(0L, Config.handoffNanos());
      System.setProperty("gmp.preempt.handoff", "30ms");
      assertEquals(30_000_000L, Config.handoffNanos());
      System.setProperty("gmp.asyncpreemptoff", "0");
      System.clearProperty("gmp.preempt.handoff");
      assertEquals(20_000_000L, Config.handoffNanos());
    } finally {
      System.clearProperty("gmp.asyncpreemptoff");
      System.clearProperty("gmp.preempt.handoff");
    }
  }

  @Test
  void handoffIsAnOptionKeyButNotAGmpdebugOne() {
    assertTrue(Config.keys().contains("preempt.handoff"));
    assertTrue(!Config.gmpdebugKeys().contains("preempt.handoff"));
  }
}
