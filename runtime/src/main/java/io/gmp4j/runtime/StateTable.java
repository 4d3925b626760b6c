package io.gmp4j.runtime;

import java.util.ArrayList;
import java.util.List;

/**
 * One state machine's transition table, held in code: the rows of the table printed in the
 * owning class's comment ({@link Goroutine}'s 'Status', {@link Processor}'s 'P status', {@link
 * PHold}'s 'The phold word'), each an edge {@code from → to} and the function that takes it.
 *
 * <p>Each state write checks its edge here inside an {@code assert}, so the check runs in the
 * tests (which run with {@code -ea}) and costs production nothing: {@code assert
 * TABLE.check(...)} is a static final boolean test that the JIT folds away. A write that the
 * table does not have throws {@code InternalError} naming the function, the object, and the
 * edge, at the write itself rather than wherever the broken state is noticed later.
 *
 * <p>Immutable once built (the builder is used only in static initializers, which publish it).
 * Any thread.
 */
final class StateTable {
  /** One row: {@code from → to} taken by function {@code fn}. */
  record Edge(int from, int to, String fn) {}

  private final String machine;
  private final String[] names;
  private final List<Edge> edges = new ArrayList<>();

  /**
   * The functions of each edge, at {@code from * names.length + to}: the lookup that {@link
   * #legal} makes on every checked write, so that a test run with {@code -ea} pays a few
   * nanoseconds per transition, not a scan of the table (which made the ping-pong pairs of
   * PreemptTest measurably slower). Built with the rows.
   */
  private final String[][] byEdge;

  /**
   * A table for state machine {@code machine} ("G status"), whose state {@code i} is called
   * {@code names[i]} (null for a number that is no state).
   */
  StateTable(String machine, String... names) {
    this.machine = machine;
    this.names = names;
    this.byEdge = new String[names.length * names.length][];
  }

  /** Adds the edge {@code from → to} for each function in {@code fns}. Static init only. */
  StateTable edge(int from, int to, String... fns) {
    for (String fn : fns) {
      edges.add(new Edge(from, to, fn));
      int i = from * names.length + to;
      String[] old = byEdge[i] == null ? new String[0] : byEdge[i];
      String[] grown = java.util.Arrays.copyOf(old, old.length + 1);
      grown[old.length] = fn;
      byEdge[i] = grown;
    }
    return this;
  }

  /** The rows, in the order added: for the tests that compare them with the class comment. */
  List<Edge> edges() {
    return List.copyOf(edges);
  }

  /** Whether {@code fn} may take {@code from → to}. Any thread. */
  boolean legal(String fn, int from, int to) {
    if (from < 0 || from >= names.length || to < 0 || to >= names.length) {
      return false;
    }
    String[] fns = byEdge[from * names.length + to];
    if (fns != null) {
      for (String f : fns) {
        if (f == fn || f.equals(fn)) { // callers pass literals: identity nearly always decides
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Returns true if {@code fn} may take {@code from → to} on {@code who}, else throws
   * InternalError ("pidleput: P0 status running → idle is not an edge of the P status table").
   * Meant for {@code assert}. Any thread.
   */
  boolean check(String fn, Object who, int from, int to) {
    if (!legal(fn, from, to)) {
      throw new InternalError(
          fn
              + ": "
              + who
              + " "
              + name(from)
              + " → "
              + name(to)
              + " is not an edge of the "
              + machine
              + " table");
    }
    return true;
  }

  /** The state's name as the table prints it, or its number. */
  String name(int state) {
    return state >= 0 && state < names.length && names[state] != null
        ? names[state]
        : String.valueOf(state);
  }
}
