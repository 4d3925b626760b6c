package io.gmp4j.agent.trace;

import java.io.EOFException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.EventType;
import jdk.jfr.ValueDescriptor;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Reads a JFR recording into {@link TraceData} with the JDK's own parser, {@code
 * jdk.jfr.consumer.RecordingFile} (no third-party parser: the file format is the JDK's to
 * change). One pass, event by event, so a large file is never held twice.
 *
 * <p>A file that this cannot use is a {@link BadFile}, whose message is the one line the verbs
 * print (exit status 2): missing, empty, not a recording (checked by the chunk magic {@code
 * FLR\0}, so that a text file is named as such rather than as a short chunk header), truncated
 * (the JDK's parser reads past the end of the file), or a recording without gmp4j events.
 *
 * <p>Progress: from {@link #PROGRESS_BYTES} on, a line on stderr about every second, with the
 * events read so far and the share of the recording's time (from its chunk headers) that they
 * reached. RecordingFile does not say where in the file it is, and chunks hold events in commit
 * order, so the time reached is a fair measure of the share done for a recording that ran at a
 * steady rate, not an exact one.
 */
final class TraceReader {
  /** Files of this size and more show progress (the 100 MB). */
  static final long PROGRESS_BYTES = 100L * 1000 * 1000;

  /** A file that the trace verbs cannot read; the message names the file and what is wrong. */
  static final class BadFile extends Exception {
    BadFile(Path file, String what) {
      super("gmp4j: " + file + ": " + what);
    }
  }

  private final PrintStream progress;
  private final long progressBytes;

  /** A reader that reports progress on {@code progress} for files of {@code progressBytes}+. */
  TraceReader(PrintStream progress, long progressBytes) {
    this.progress = progress;
    this.progressBytes = progressBytes;
  }

  /** Reads {@code file}; throws BadFile for a file it cannot use. Any thread. */
  TraceData read(Path file) throws BadFile {
    Shape shape = checkFile(file);
    long size = shape.size();
    TraceData d = new TraceData();
    boolean report = size >= progressBytes;
    long startNanos = System.nanoTime();
    long nextReport = startNanos + 1_000_000_000L;
    long n = 0;
    long latest = Long.MIN_VALUE;
    Map<Long, String> typeNames = new HashMap<>();
    try (RecordingFile rf = new RecordingFile(file)) {
      for (EventType t : rf.readEventTypes()) {
        typeNames.put(t.getId(), t.getName());
      }
    } catch (EOFException e) {
      throw new BadFile(file, "truncated JFR recording (" + e.getMessage() + ")");
    } catch (IOException | RuntimeException e) {
      throw new BadFile(file, "not a readable JFR recording (" + e.getMessage() + ")");
    }
    try (RecordingFile rf = new RecordingFile(file)) {
      while (rf.hasMoreEvents()) {
        RecordedEvent e = rf.readEvent();
        add(d, e, typeNames);
        n++;
        latest = Math.max(latest, ns(e.getEndTime()));
        if (report && (n & 4095) == 0 && System.nanoTime() - nextReport > 0) {
          nextReport = System.nanoTime() + 1_000_000_000L;
          // the latest event time read, as a share of the time the chunks cover
          double share =
              shape.endNanos() > shape.startNanos()
                  ? 100.0 * (latest - shape.startNanos()) / (shape.endNanos() - shape.startNanos())
                  : 0;
          progress.printf(
              "gmp4j: reading %s (%d MB): %,d events, about %.0f%% of the" + " recording's time%n",
              file, size / 1_000_000, n, Math.min(100, share));
        }
      }
    } catch (EOFException e) {
      throw new BadFile(file, "truncated JFR recording (" + e.getMessage() + ")");
    } catch (IOException e) {
      throw new BadFile(file, "not a readable JFR recording (" + e.getMessage() + ")");
    } catch (RuntimeException e) {
      // the JDK's parser on a corrupt chunk (IndexOutOfBounds, IllegalState, ...)
      throw new BadFile(file, "corrupt JFR recording (" + e + ")");
    }
    if (report) {
      progress.printf(
          "gmp4j: read %s: %,d events in %.1f s%n",
          file, n, (System.nanoTime() - startNanos) / 1e9);
    }
    if (d.gmp4jEvents() == 0) {
      throw new BadFile(
          file,
          "a JFR recording with no gmp4j events ("
              + n
              + " other events);"
              + " record with -javaagent:gmp4j-agent.jar=jfr=<file>,jfr.settings=detail");
    }
    if (d.first == Long.MAX_VALUE) {
      d.first = d.firstStats; // only SchedStats: their window
      d.last = d.lastStats;
    }
    d.seal();
    return d;
  }

  /** The file's size and the time its chunks cover, from their headers. */
  private record Shape(long size, long startNanos, long endNanos) {}

  private static Shape checkFile(Path file) throws BadFile {
    long size;
    try {
      size = Files.size(file);
    } catch (NoSuchFileException e) {
      throw new BadFile(file, "no such file");
    } catch (IOException e) {
      throw new BadFile(file, "cannot read it (" + e.getMessage() + ")");
    }
    if (Files.isDirectory(file)) {
      throw new BadFile(file, "a directory, not a JFR recording");
    }
    if (size == 0) {
      throw new BadFile(file, "empty file, not a JFR recording");
    }
    // Walk the chunk headers (magic "FLR\0", then the chunk's size at offset 8, big-endian;
    // the layout of jdk.jfr.internal.consumer.ChunkHeader since JDK 9): a text file is named as
    // such, and a file cut short as truncated, which the JDK's parser reports only as whatever
    // read it could not finish ("String size 26 exceeds available data").
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file)) {
      java.nio.ByteBuffer h = java.nio.ByteBuffer.allocate(48);
      long pos = 0;
      int chunks = 0;
      long from = Long.MAX_VALUE;
      long to = Long.MIN_VALUE;
      while (pos < size) {
        h.clear();
        int got = ch.read(h, pos);
        byte[] b = h.array();
        boolean magic = got >= 4 && b[0] == 'F' && b[1] == 'L' && b[2] == 'R' && b[3] == 0;
        if (!magic) {
          throw new BadFile(
              file,
              chunks == 0
                  ? "not a JFR recording (it does not start with JFR's magic FLR\\0; "
                      + size
                      + " bytes)"
                  : "corrupt JFR recording (no chunk header at byte "
                      + pos
                      + " after "
                      + chunks
                      + " chunks)");
        }
        if (got < 16) {
          throw new BadFile(
              file, "truncated JFR recording (chunk " + (chunks + 1) + " has no complete header)");
        }
        long chunkSize = h.getLong(8);
        if (chunkSize <= 0) {
          throw new BadFile(
              file,
              "incomplete JFR recording (chunk "
                  + (chunks + 1)
                  + " is still being written; dump or stop the recording first)");
        }
        if (pos + chunkSize > size) {
          throw new BadFile(
              file,
              "truncated JFR recording (chunk "
                  + (chunks + 1)
                  + " needs "
                  + (pos + chunkSize)
                  + " bytes, the file has "
                  + size
                  + ")");
        }
        if (got >= 48) {
          // chunk start (ns since the epoch) at 32 and its duration at 40
          from = Math.min(from, h.getLong(32));
          to = Math.max(to, h.getLong(32) + h.getLong(40));
        }
        pos += chunkSize;
        chunks++;
      }
      return new Shape(size, from, to);
    } catch (IOException e) {
      throw new BadFile(file, "cannot read it (" + e.getMessage() + ")");
    }
  }

  private static long ns(Instant t) {
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }

  private static void add(TraceData d, RecordedEvent e, Map<Long, String> typeNames) {
    String type = e.getEventType().getName();
    d.counts.merge(type, 1L, Long::sum);
    long start = ns(e.getStartTime());
    long end = ns(e.getEndTime());
    if (type.startsWith("gmp4j.") && !type.equals("gmp4j.SchedStats")) {
      // the window is that of gmp4j's transitions: the JDK's events, and the periodic
      // SchedStats, start with the recording, gmp4j's others within a sysmon second or two of
      // it (see 'Tracing' in the runtime's Trace), and a P that went idle before then has no
      // ProcIdle to show it
      d.first = Math.min(d.first, start);
      d.last = Math.max(d.last, end);
    } else if (type.equals("gmp4j.SchedStats")) {
      d.firstStats = Math.min(d.firstStats, start);
      d.lastStats = Math.max(d.lastStats, end);
    }
    switch (type) {
      case "jdk.ActiveSetting" -> activeSetting(d, e, typeNames);
      case "gmp4j.GoRun" ->
          d.runs.add(
              new TraceData.Run(
                  e.getLong("goid"),
                  e.getInt("p"),
                  e.getInt("m"),
                  start,
                  end,
                  str(e, "end"),
                  str(e, "waitReason"),
                  e.getBoolean("runnext"),
                  e.getLong("schedLatency")));
      case "gmp4j.GoSyscall" ->
          d.syscalls.add(
              new TraceData.Syscall(
                  e.getLong("goid"),
                  e.getInt("p"),
                  e.getInt("m"),
                  start,
                  end,
                  e.getBoolean("lostP")));
      case "gmp4j.GoUnblock" ->
          d.unblocks.add(
              new TraceData.Unblock(start, e.getLong("goid"), e.getLong("byGoid"), str(e, "to")));
      case "gmp4j.GoCreate" -> {
        RecordedThread t = e.getThread("thread");
        String name = t == null || t.getJavaName() == null ? "" : t.getJavaName();
        d.creates.add(
            new TraceData.Create(
                start, e.getLong("goid"), e.getLong("parentGoid"), name, site(e.getStackTrace())));
      }
      case "gmp4j.GoDestroy" -> d.destroys.add(new TraceData.Destroy(start, e.getLong("goid")));
      case "gmp4j.RunqSteal" ->
          d.steals.add(
              new TraceData.Steal(
                  start,
                  e.getInt("thiefP"),
                  e.getInt("victimP"),
                  e.getInt("count"),
                  e.getBoolean("runnext")));
      case "gmp4j.PreemptRequest" ->
          d.preempts.add(
              new TraceData.Preempt(
                  start,
                  e.getInt("p"),
                  e.getLong("goid"),
                  e.getLong("sliceRan"),
                  str(e, "reason")));
      case "gmp4j.ProcHandoff" ->
          d.handoffs.add(
              new TraceData.Handoff(
                  start,
                  e.getInt("p"),
                  e.getInt("fromM"),
                  e.getInt("toM"),
                  str(e, "reason"),
                  e.getLong("goid"),
                  str(e, "frames")));
      case "gmp4j.ProcsChange" ->
          d.procsChanges.add(
              new TraceData.ProcsChange(
                  start, e.getInt("old"), e.getInt("new_"), str(e, "reason")));
      case "gmp4j.ProcIdle" -> d.idles.add(new TraceData.Idle(e.getInt("p"), start, end));
      case "gmp4j.SchedStats" -> {
        Map<String, Long> values = new HashMap<>();
        for (ValueDescriptor v : e.getFields()) {
          if (v.getTypeName().equals("long")
              && !v.getName().equals("startTime")
              && !v.getName().equals("duration")) {
            values.put(v.getName(), e.getLong(v.getName()));
          }
        }
        d.stats.add(new TraceData.Stats(start, values));
      }
      default -> {
        // the JDK's own events: counted only
      }
    }
  }

  /**
   * A {@code jdk.ActiveSetting}: {@code id} is the event type's id, {@code name} the setting's
   * name (enabled, threshold, ...), {@code value} its value.
   */
  private static void activeSetting(TraceData d, RecordedEvent e, Map<Long, String> typeNames) {
    if (!e.hasField("id") || !e.hasField("name") || !e.hasField("value")) {
      return;
    }
    String type = typeNames.get(e.getLong("id"));
    if (type != null && type.startsWith("gmp4j.")) {
      d.settings.computeIfAbsent(type, k -> new HashMap<>()).put(str(e, "name"), str(e, "value"));
    }
  }

  private static String str(RecordedEvent e, String field) {
    String s = e.getString(field);
    return s == null ? "" : s;
  }

  /**
   * The first frame of a GoCreate's stack outside the JDK and gmp4j (where the program started
   * the goroutine), or "" without a stack.
   */
  private static String site(RecordedStackTrace st) {
    if (st == null) {
      return "";
    }
    List<RecordedFrame> frames = st.getFrames();
    for (RecordedFrame f : frames) {
      String c = f.getMethod().getType().getName();
      if (!c.startsWith("java.")
          && !c.startsWith("jdk.")
          && !c.startsWith("io.gmp4j.runtime")
          && !c.startsWith("sun.")) {
        return c + "." + f.getMethod().getName();
      }
    }
    return "";
  }
}
