package io.gmp4j.agent.trace;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;

/**
 * A small streaming JSON writer for the trace verbs' output ({@code summary --json}, the
 * Perfetto file, the data of the HTML page): objects, arrays, strings, numbers, booleans, with
 * the commas placed for the caller. No pretty-printing beyond an optional newline between array
 * elements, which keeps a 100 MB trace file greppable line by line.
 *
 * <p>Not thread-safe; one writer per output. {@link #written} counts the characters so far
 * (ASCII-escaped output, so characters are bytes), which is how Perfetto knows when to split.
 */
final class JsonWriter {
  private final Writer out;

  /** Per nesting level: whether the next value needs a comma before it. */
  private boolean[] comma = new boolean[16];

  private int depth;
  private boolean afterKey;
  private long written;
  private final boolean linePerElement;

  JsonWriter(Writer out, boolean linePerElement) {
    this.out = out;
    this.linePerElement = linePerElement;
  }

  long written() {
    return written;
  }

  JsonWriter beginObject() {
    value();
    raw("{");
    push();
    return this;
  }

  JsonWriter endObject() {
    depth--;
    raw("}");
    return this;
  }

  JsonWriter beginArray() {
    value();
    raw("[");
    push();
    return this;
  }

  JsonWriter endArray() {
    depth--;
    raw(linePerElement ? "\n]" : "]");
    return this;
  }

  JsonWriter key(String k) {
    value();
    string(k);
    raw(":");
    afterKey = true;
    return this;
  }

  JsonWriter value(String s) {
    value();
    if (s == null) {
      raw("null");
    } else {
      string(s);
    }
    return this;
  }

  JsonWriter value(long n) {
    value();
    raw(Long.toString(n));
    return this;
  }

  /** A number with at most 3 decimals (microseconds with nanosecond precision, percents). */
  JsonWriter value(double d) {
    value();
    if (Double.isNaN(d) || Double.isInfinite(d)) {
      raw("null");
    } else if (d == Math.rint(d) && Math.abs(d) < 1e15) {
      raw(Long.toString((long) d));
    } else {
      raw(String.format(java.util.Locale.ROOT, "%.3f", d));
    }
    return this;
  }

  JsonWriter value(boolean b) {
    value();
    raw(b ? "true" : "false");
    return this;
  }

  JsonWriter field(String k, String v) {
    return key(k).value(v);
  }

  JsonWriter field(String k, long v) {
    return key(k).value(v);
  }

  JsonWriter field(String k, double v) {
    return key(k).value(v);
  }

  JsonWriter field(String k, boolean v) {
    return key(k).value(v);
  }

  void flush() {
    try {
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void push() {
    depth++;
    if (depth == comma.length) {
      comma = java.util.Arrays.copyOf(comma, depth * 2);
    }
    comma[depth] = false;
  }

  /** Before any value or key: the comma, unless it is the value of a key. */
  private void value() {
    if (afterKey) {
      afterKey = false;
      return;
    }
    if (depth > 0) {
      if (comma[depth]) {
        raw(",");
      }
      comma[depth] = true;
      if (linePerElement && depth == 2) {
        raw("\n");
      }
    }
  }

  private void string(String s) {
    StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20 || c > 0x7e) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    raw(sb.append('"').toString());
  }

  private void raw(String s) {
    try {
      out.write(s);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    written += s.length();
  }
}
