package io.gmp4j.agent.trace;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** Chrome trace-event JSON of a recording (not written yet). */
final class Perfetto {
  static final long SPLIT_BYTES = 100L * 1000 * 1000;

  Perfetto(TraceData d, long split) {}

  List<Path> write(Path o) throws IOException {
    throw new IOException("not implemented");
  }
}
