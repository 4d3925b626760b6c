package io.gmp4j.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import org.junit.jupiter.api.Test;

/**
 * Pins the JDK 25 VirtualThread state numbers that {@link VirtualThreads} copies: a JDK that
 * renumbers them fails here, not in a hand-off decision ('Carrier time' in HogHandoff).
 */
class VirtualThreadStatesTest {
  @Test
  void ourStateNumbersAreTheJdks() throws Exception {
    Class<?> vt = Class.forName("java.lang.VirtualThread");
    int checked = 0;
    for (Field ours : VirtualThreads.class.getDeclaredFields()) {
      if (ours.getType() != int.class
          || !Modifier.isStatic(ours.getModifiers())
          || !ours.getName().equals(ours.getName().toUpperCase())) {
        continue;
      }
      ours.setAccessible(true);
      Field jdk = vt.getDeclaredField(ours.getName());
      jdk.setAccessible(true);
      assertEquals(jdk.getInt(null), ours.getInt(null), ours.getName());
      checked++;
    }
    assertEquals(16, checked); // NEW .. TERMINATED and SUSPENDED
  }
}
