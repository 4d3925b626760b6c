package io.gmp4j.agent;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The attach id the CLI adds to the agent arguments, and live values as users write them. */
class AgentStateTest {
  @Test
  void attachIdIsSplitOffTheOptions() {
    assertArrayEquals(
        new String[] {"7f", "schedtrace=100,timeslice=5ms"},
        AgentState.splitAttachId("attach.id=7f,schedtrace=100,timeslice=5ms"));
    assertArrayEquals(new String[] {"7f", ""}, AgentState.splitAttachId("attach.id=7f"));
    assertArrayEquals(
        new String[] {null, "gomaxprocs=1"}, AgentState.splitAttachId("gomaxprocs=1"));
    assertArrayEquals(new String[] {null, null}, AgentState.splitAttachId(null));
  }

  @Test
  void normalisedDurationsAreShownAsWritten() {
    assertEquals("5ms", LiveAttach.display("5000000ns"));
    assertEquals("500us", LiveAttach.display("500000ns"));
    assertEquals("2s", LiveAttach.display("2000000000ns"));
    assertEquals("off", LiveAttach.display("off"));
    assertEquals("100", LiveAttach.display("100"));
  }
}
