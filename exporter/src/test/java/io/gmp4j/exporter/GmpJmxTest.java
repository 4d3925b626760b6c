package io.gmp4j.exporter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gmp4j.Gmp;
import io.gmp4j.MetricDescription;
import io.gmp4j.MetricDescription.Kind;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;

class GmpJmxTest {
  @Test
  void registersOnceAndShowsEveryMetric() throws Exception {
    GmpJmx.unregister();
    assertTrue(GmpJmx.register());
    assertFalse(GmpJmx.register(), "idempotent");
    try {
      MBeanServer server = ManagementFactory.getPlatformMBeanServer();
      ObjectName name = new ObjectName(GmpJmx.OBJECT_NAME);
      Set<String> attributes =
          Arrays.stream(server.getMBeanInfo(name).getAttributes())
              .map(MBeanAttributeInfo::getName)
              .collect(Collectors.toSet());
      for (MetricDescription d : Gmp.describeMetrics()) {
        String a = MetricNames.of(d).attributeName();
        if (d.kind() == Kind.HISTOGRAM) {
          assertTrue(attributes.containsAll(Set.of(a + "Count", a + "P50", a + "P99")), a);
        } else {
          assertTrue(attributes.contains(a), a + " for " + d.name() + " in " + attributes);
        }
      }
      assertEquals((long) Gmp.gomaxprocs(), server.getAttribute(name, "Gomaxprocs"));
      assertTrue(((String) server.getAttribute(name, "Schedtrace")).startsWith("SCHED "));
      assertTrue(((long[]) server.getAttribute(name, "RunqueueLocal")).length == Gmp.gomaxprocs());
    } finally {
      assertTrue(GmpJmx.unregister());
    }
  }
}
