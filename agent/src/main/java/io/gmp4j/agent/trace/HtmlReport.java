package io.gmp4j.agent.trace;

import java.io.IOException;
import java.io.Writer;

/** The HTML report (not written yet). */
final class HtmlReport {
  HtmlReport(Analysis a, String title) {}

  void write(Writer w) throws IOException {
    throw new IOException("not implemented");
  }
}
