package io.gmp4j.agent.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How {@code gmp4j trace perfetto} fits the syscall slices of one P ('Proc lanes' step 2 in
 * Perfetto), on hand-made data: the shapes a real recording shows only now and then.
 */
class PerfettoSyscallFitTest {
  private static final long T = 1_000_000_000L;

  /**
   * Two syscalls of one P with no run between them in the recording: a hand-off that the
   * first call's slice would be cut at came after the second call began (gmp4j's sysmon once
   * stamped hand-offs after the new M's first run). The first is cut at the second's start,
   * never drawn across it, and the lane keeps PerfettoTest's nesting rule.
   */
  @Test
  void aSyscallEndsWhereTheNextOneOnItsPBegins(@TempDir Path dir) throws Exception {
    TraceData d = new TraceData();
    d.first = T;
    d.last = T + 200_000;
    d.runs.add(new TraceData.Run(1, 0, 0, T, T + 10_000, "syscall", "", false, 0));
    d.syscalls.add(new TraceData.Syscall(1, 0, 0, T + 10_000, T + 100_000, true));
    d.handoffs.add(new TraceData.Handoff(T + 60_000, 0, 0, 1, "syscall", 0, ""));
    d.syscalls.add(new TraceData.Syscall(2, 0, 1, T + 50_000, T + 70_000, false));
    d.runs.add(new TraceData.Run(1, 0, 0, T + 120_000, T + 130_000, "exit", "", false, 0));
    d.seal();
    Path out = dir.resolve("two-syscalls.json");
    new Perfetto(d, Perfetto.SPLIT_BYTES).write(out);
    JsonNode trace = new ObjectMapper().readTree(Files.readString(out));
    assertEquals(2L, PerfettoTest.check(trace).get("syscall"), trace.toString());
    List<double[]> syscalls = new ArrayList<>();
    for (JsonNode e : trace.get("traceEvents")) {
      if (e.get("ph").asText().equals("X") && e.get("cat").asText().equals("syscall")) {
        syscalls.add(new double[] {e.get("ts").asDouble(), e.get("dur").asDouble()});
      }
    }
    syscalls.sort(Comparator.comparingDouble((double[] a) -> a[0]));
    // in us from the window's start
    assertEquals(10.0, syscalls.get(0)[0], 1e-9, "G1's call begins where its run ended");
    assertEquals(40.0, syscalls.get(0)[1], 1e-9, "and ends where G2's call begins");
    assertEquals(50.0, syscalls.get(1)[0], 1e-9);
    assertEquals(20.0, syscalls.get(1)[1], 1e-9, "G2's call keeps its own end");
  }
}
