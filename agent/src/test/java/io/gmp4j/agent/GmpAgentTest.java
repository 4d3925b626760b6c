package io.gmp4j.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The JDK check that GmpAgent makes before it touches anything compiled for JDK 25. */
class GmpAgentTest {
  @Test
  void featureOfEverySpecificationVersionSpelling() {
    assertEquals(8, GmpAgent.feature("1.8"));
    assertEquals(11, GmpAgent.feature("11"));
    assertEquals(17, GmpAgent.feature("17"));
    assertEquals(25, GmpAgent.feature("25"));
    assertEquals(26, GmpAgent.feature("26-ea"));
    assertEquals(0, GmpAgent.feature(""));
    assertEquals(0, GmpAgent.feature("?"));
  }

  @Test
  void thisJdkPasses() {
    assertEquals(
        Runtime.version().feature(),
        GmpAgent.feature(System.getProperty("java.specification.version")));
  }
}
