package io.gmp4j.agent;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

/**
 * Checks that a JDK class still declares the methods an instrumentation pins, before the agent
 * instruments it: a matcher that matches nothing transforms the class without any error, and the
 * advice would then be silently missing.
 */
final class Shapes {
  private Shapes() {}

  /**
   * Null if boot class {@code type} declares a non-native method for each of {@code methods},
   * else why not. Each entry is {@code name} (any arity) or {@code name/arity}. Any thread; never
   * throws.
   */
  static String check(String type, String... methods) {
    Method[] declared;
    try {
      declared = Class.forName(type, false, null).getDeclaredMethods();
    } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
      return type + " cannot be inspected on JDK " + Runtime.version() + ": " + Stderr.describe(e);
    }
    for (String m : methods) {
      int slash = m.indexOf('/');
      String name = slash < 0 ? m : m.substring(0, slash);
      int arity = slash < 0 ? -1 : Integer.parseInt(m.substring(slash + 1));
      boolean found = false;
      for (Method d : declared) {
        if (d.getName().equals(name)
            && !Modifier.isNative(d.getModifiers())
            && (arity < 0 || d.getParameterCount() == arity)) {
          found = true;
          break;
        }
      }
      if (!found) {
        return type
            + " has no "
            + name
            + (arity < 0 ? "" : " with " + arity + " parameters")
            + " on JDK "
            + Runtime.version()
            + " (gmp4j pins JDK 25's shape)";
      }
    }
    return null;
  }
}
