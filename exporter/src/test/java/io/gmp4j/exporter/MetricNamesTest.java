package io.gmp4j.exporter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gmp4j.Gmp;
import io.gmp4j.MetricDescription;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** README.md's name table says what MetricNames does, for every metric the runtime reports. */
class MetricNamesTest {
  @Test
  void readmeTableMatchesTheCode() throws Exception {
    Map<String, String[]> rows = new HashMap<>();
    for (String line : Files.readAllLines(Path.of("README.md"))) {
      if (line.startsWith("| `/sched/")) {
        String[] cells = line.split("\\|");
        String go = cells[1].trim();
        go = go.substring(1, go.indexOf('`', 1));
        rows.put(go, cells);
      }
    }
    for (MetricDescription d : Gmp.describeMetrics()) {
      String[] row = rows.get(d.name());
      assertTrue(row != null, d.name() + " is missing from README.md");
      MetricNames n = MetricNames.of(d);
      String meter =
          n.meterName()
              + (n.tagKey() == null
                  ? ""
                  : "{" + n.tagKey() + "=" + (n.tagValue() == null ? "<id>" : n.tagValue()) + "}");
      assertEquals("`" + meter + "`", row[2].trim(), d.name());
      assertTrue(row[5].trim().startsWith("`" + n.attributeName()), d.name() + ": " + row[5]);
    }
    assertEquals(Gmp.describeMetrics().size(), rows.size(), "README rows " + rows.keySet());
  }
}
