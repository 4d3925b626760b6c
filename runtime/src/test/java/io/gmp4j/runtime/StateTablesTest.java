package io.gmp4j.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The three state machines' tables ('Status' in Goroutine, 'P status' in Processor, 'The phold
 * word' in PHold): a write that is not an edge of its table fails at the write, with the
 * function, the object and the edge in the message; and the table held in code is the table
 * printed in the class comment. White-box, on detached Ps, Gs and words that no M runs. Needs
 * {@code -ea}, as every test run here has (the checks are asserts).
 */
class StateTablesTest {
  private final Sched sched = new Sched(1); // starts no M

  @Test
  void assertionsAreOn() {
    boolean on = false;
    assert on = true;
    assertTrue(on, "the state checks are asserts: run the tests with -ea");
  }

  /** The example: pidleput (an IDLE write) over a RUNNING P fails at the write. */
  @Test
  void idleOverRunningPFailsAtTheWrite() {
    Processor pp = new Processor(sched, 7);
    pp.setStatus(Processor.IDLE, "procresize");
    pp.setStatus(Processor.RUNNING, "acquireP");
    sched.lock.lock();
    try {
      InternalError e = assertThrows(InternalError.class, () -> sched.pidleput(pp));
      assertTrue(e.getMessage().startsWith("pidleput: P7{status=1"), e.getMessage());
      assertTrue(
          e.getMessage().endsWith("running → idle is not an edge of the P status table"),
          e.getMessage());
    } finally {
      sched.lock.unlock();
    }
    assertEquals(Processor.RUNNING, pp.status(), "the bad write did not happen");
    assertEquals(1, sched.npidle, "nor did the listing");
  }

  @Test
  void pStatusEdgesBelongToTheirFunctions() {
    Processor pp = new Processor(sched, 3);
    // GCSTOP → RUNNING skips the idle list: no function may do it.
    assertThrows(InternalError.class, () -> pp.setStatus(Processor.RUNNING, "acquireP"));
    pp.setStatus(Processor.IDLE, "procresize");
    pp.setStatus(Processor.RUNNING, "acquireP");
    // RUNNING → IDLE is releaseP's and sysmon's retake's, not handoffP's.
    assertThrows(InternalError.class, () -> pp.setStatus(Processor.IDLE, "handoffP"));
    pp.setStatus(Processor.SYSCALL, "enterSyscall");
    // The syscall arbitration is a CAS: a plain write out of SYSCALL would race it.
    InternalError e =
        assertThrows(InternalError.class, () -> pp.setStatus(Processor.IDLE, "Sysmon.retake"));
    assertTrue(e.getMessage().endsWith("syscall → idle must be a CAS"), e.getMessage());
    assertThrows(
        InternalError.class,
        () -> pp.casStatus(Processor.SYSCALL, Processor.RUNNING, "exitSyscallFast"));
    assertTrue(pp.casStatus(Processor.SYSCALL, Processor.IDLE, "Sysmon.retake"));
    assertFalse(pp.casStatus(Processor.SYSCALL, Processor.IDLE, "exitSyscallFast"), "lost");
  }

  @Test
  void gStatusWrongEdgeFailsAtTheWrite() {
    Goroutine gp = new Goroutine(sched, 42, null, null);
    long idle = 0; // a new G's word: sequence 0, idle
    // The M's post-run CAS expects running; from idle it is no edge, and must not even try.
    InternalError e = assertThrows(InternalError.class, () -> gp.afterRun(idle, null));
    assertTrue(e.getMessage().startsWith("park: G42"), e.getMessage());
    assertTrue(
        e.getMessage().endsWith("idle → waiting is not an edge of the G status table"),
        e.getMessage());
    assertEquals(Goroutine.IDLE, gp.status());
    assertEquals(Goroutine.IDLE, gp.casToRunnable(false));
    long ran = gp.casRunnableToRunning();
    assertTrue(gp.casRunningToSyscall());
    assertTrue(gp.casSyscallToRunning());
    assertFalse(gp.casSyscallToRunning(), "not in syscall any more");
    assertEquals(Goroutine.WAITING, gp.afterRun(ran, null));
    assertEquals(Goroutine.WAITING, gp.status());
    // Readied while it runs: left to its M, running to everyone else ('Readied while running').
    assertEquals(Goroutine.WAITING, gp.casToRunnable(false));
    ran = gp.casRunnableToRunning();
    assertEquals(Goroutine.RUNNING, gp.casToRunnable(false));
    assertEquals(Goroutine.READIED, gp.status());
    assertTrue(gp.running());
    assertEquals(Goroutine.READIED, gp.casToRunnable(false), "a second readier bumps it again");
    assertTrue(gp.casRunningToSyscall(), "a late walker's readying of a G that runs");
    assertTrue(gp.casSyscallToRunning());
    assertEquals(Goroutine.RUNNING, gp.casToRunnable(true), "its own yield is queued at once");
    assertEquals(Goroutine.RUNNABLE, gp.status());
    assertEquals(-1, gp.casToRunnable(false), "queued already");
    assertEquals(Goroutine.RUNNABLE, gp.setDead(), "the status it had");
    assertEquals(-1, gp.setDead(), "dead already");
  }

  @Test
  void pholdWrongEdgeOrRunNumberFails() {
    int h = PHold.nextRun(0, PHold.G); // a run's word, as openPHold leaves it
    assertEquals(PHold.G, PHold.state(h));
    assertEquals(PHold.RUN_ONE, PHold.run(h));
    assertEquals("G/1", PHold.toString(h));
    assertTrue(PHold.check("tryClaimP", null, h, PHold.with(h, PHold.G_BUSY)));
    // sysmon's CAS must start from G: a claimed word is no edge for it.
    int busy = PHold.with(h, PHold.G_BUSY);
    InternalError e =
        assertThrows(
            InternalError.class,
            () -> PHold.check("tryRetakeP", null, busy, PHold.with(busy, PHold.RETAKEN)));
    assertTrue(
        e.getMessage().endsWith("G_BUSY → RETAKEN is not an edge of the phold table"),
        e.getMessage());
    // closePHold keeps the run number: sysmon tells runs apart by it.
    e =
        assertThrows(
            InternalError.class,
            () -> PHold.check("closePHold", null, h, PHold.nextRun(h, PHold.SCHED)));
    assertTrue(e.getMessage().endsWith("must keep the run number"), e.getMessage());
    // a reacquire takes a new one, so that a retake prepared before it cannot succeed.
    int retaken = PHold.with(h, PHold.RETAKEN);
    e =
        assertThrows(
            InternalError.class,
            () -> PHold.check("tryReacquireP", null, retaken, PHold.with(retaken, PHold.G)));
    assertTrue(e.getMessage().endsWith("must take a new run number"), e.getMessage());
    assertTrue(PHold.check("tryReacquireP", null, retaken, PHold.nextRun(retaken, PHold.G)));
  }

  /** The run number wraps without touching the state bits. */
  @Test
  void pholdRunNumberWraps() {
    int last = PHold.with(-1, PHold.SCHED); // the largest run number
    int next = PHold.nextRun(last, PHold.G);
    assertEquals(PHold.G, PHold.state(next));
    assertEquals(0, PHold.run(next));
    assertTrue(PHold.check("openPHold", null, last, next));
  }

  @Test
  void tablesInCodeAreTheTablesInTheComments() throws IOException {
    assertEquals(rows(Processor.TABLE), commentRows("Processor.java", Processor.TABLE, 3));
    assertEquals(rows(Goroutine.TABLE), commentRows("Goroutine.java", Goroutine.TABLE, 3));
    assertEquals(rows(PHold.TABLE), commentRows("PHold.java", PHold.TABLE, 3));
  }

  private static Set<String> rows(StateTable t) {
    Set<String> s = new TreeSet<>();
    for (StateTable.Edge e : t.edges()) {
      s.add(t.name(e.from()) + " → " + t.name(e.to()) + " " + e.fn());
    }
    return s;
  }

  /**
   * The rows of the first transition table ("from ... to ... where") in a class comment: the
   * states left of the arrow (a row may begin on lines that end with a comma; "any" is every
   * state of the table but the target), the target, and the functions in column {@code
   * whereColumn} counting from 0 at the from column (columns right of the arrow are split at two
   * spaces or more; "(CAS)" is dropped).
   */
  private static Set<String> commentRows(String file, StateTable t, int whereColumn)
      throws IOException {
    List<String> lines = Files.readAllLines(Path.of("src/main/java/io/gmp4j/runtime", file));
    Set<String> names = new HashSet<>();
    for (int i = 0; i < 16; i++) {
      if (!t.name(i).equals(String.valueOf(i))) {
        names.add(t.name(i).toLowerCase());
      }
    }
    Set<String> out = new TreeSet<>();
    boolean in = false;
    String prefix = "";
    for (String raw : lines) {
      String line = raw.replaceFirst("^\\s*\\*", "").trim();
      if (!in) {
        in = line.matches("from\\s+to\\s+.*where.*");
        continue;
      }
      if (line.startsWith("</pre>")) {
        break;
      }
      if (line.isEmpty()) {
        continue;
      }
      if (!line.contains("→")) {
        prefix += line + " ";
        continue;
      }
      String row = prefix + line;
      prefix = "";
      int arrow = row.indexOf('→');
      // right of the arrow: the target, then the columns, two spaces or more apart
      String[] cols = row.substring(arrow + 1).trim().split("\\s{2,}");
      List<String> froms = new ArrayList<>();
      for (String f : row.substring(0, arrow).split("[,\\s]+")) {
        if (!f.isBlank()) {
          froms.add(f);
        }
      }
      String to = cols[0];
      if (froms.equals(List.of("any"))) {
        froms.clear();
        for (String n : names) {
          if (!n.equalsIgnoreCase(to)) {
            froms.add(n);
          }
        }
      }
      int where = whereColumn - 1;
      for (String fn : cols[where].replace("(CAS)", "").split(",")) {
        for (String f : froms) {
          out.add(canonical(t, f) + " → " + canonical(t, to) + " " + fn.trim());
        }
      }
    }
    assertTrue(in && !out.isEmpty(), file + ": no transition table found");
    return out;
  }

  private static String canonical(StateTable t, String name) {
    for (int i = 0; i < 16; i++) {
      if (t.name(i).equalsIgnoreCase(name)) {
        return t.name(i);
      }
    }
    throw new AssertionError("no state " + name);
  }
}
