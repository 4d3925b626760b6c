package io.gmp4j.agent.poll;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * The classes the poll injector rewrote, kept on disk ({@code preempt.cache=<dir>}) so that the
 * next start of the same application reads each rewrite back instead of computing it again. Go
 * needs no such thing (its compiler emits the checks once, at build time); this is the JVM's way
 * of doing the work once: HotSpot's CDS archive and OpenJ9's shared classes cache keep work done
 * on class files across runs the same way.
 *
 * <h2>Implementation overview: 'Rewrite cache'</h2>
 *
 * Rewriting the classes with loops is most of what the agent adds to an application's start-up: on
 * Spring Boot, 789 of 3,500 classes, +1.3 s of start-up and +2.9 s of CPU on two cores
 * (BENCHMARKS.md, 'Rewrite cache'), with ASM and the injector running in the interpreter and then
 * keeping C2 busy. The rewrite is a function of the class file's bytes alone: the injector loads no
 * class and resolves no type ('Poll placement' in PollInjector), and the include, exclude and
 * report options act before it or after it. So a rewrite keyed by the bytes it was made from is
 * valid in any later run of the same injector.
 *
 * <ol>
 *   <li><b>Key.</b> The injector's identity ({@code salt}: the agent jar's CRC32C and length,
 *       and whether prologue polls are on) names a folder, and the class file's CRC32C and
 *       length name the entry in it: {@code <dir>/<salt>/<2 hex>/<8 hex>-<length>.rw}. CRC32C is
 *       an intrinsic in the interpreter and in compiled code, so keying a class costs about a
 *       microsecond; the key is only an address, since step 3 compares the whole class file.
 *   <li><b>Miss.</b> The injector rewrites the class as before (frame check included), then
 *       queues its outcome for the writer ('Write-behind'): the rewritten bytes or "left alone"
 *       with the reason, the methods left alone, the poll counts, and the original bytes. The
 *       file is written to a temporary name in the same directory and renamed over the entry
 *       ({@code ATOMIC_MOVE}), so a reader in this or another JVM sees a whole entry or none. A
 *       class whose rewrite throws is not cached: it is computed again, and reported again, at
 *       every start.
 *   <li><b>Hit.</b> The entry is read whole and checked: the magic, the salt, a CRC32C over
 *       everything before it, and the stored original equal byte for byte to the class file
 *       being loaded. Any mismatch (a torn or foreign file, another class with the same key) is
 *       a miss, and step 2 writes the entry again. A hit replays the outcome into {@link
 *       Coverage}, so {@code preempt.report}, {@code /debug/instrumentation} and the metrics
 *       count the class as before.
 * </ol>
 *
 * <h3>Write-behind</h3>
 *
 * The class-loading thread only queues a miss's entry; one daemon platform thread, {@code
 * gmp4j-rewrite-cache}, started by the first miss, encodes and writes it, so that a slow disk
 * delays no class load. It does not make a first start cheaper on two cores: the 789 entries
 * of a Spring Boot start-up cost it about 0.5 s over the agent without a cache, written on the
 * loading thread or behind (BENCHMARKS.md, 'Rewrite cache'), since the writer then competes
 * with C2 and the application for the second core. The queue holds at most
 * {@link #QUEUE_LIMIT} entries and drops the rest; a shutdown hook gives the writer up to
 * {@link #DRAIN_MILLIS} to finish at exit, and what a halt or that bound leaves unwritten is
 * lost. Either way the next start misses those entries and writes them. Not a virtual thread: the
 * agent's own work stays off the scheduler it installs.
 *
 * <h3>Trust</h3>
 *
 * The entries are bytecode that the application will run, so whoever can write the directory can
 * put code into the application. {@link #open} therefore refuses a directory that is not owned
 * by the JVM's user or that its group or others may write (the rule ssh applies to {@code
 * ~/.ssh}), and creates a missing one as {@code rwx------}. A file system without POSIX
 * attributes gets no such check.
 *
 * <h3>Failures</h3>
 *
 * The cache never fails a class load: a read that fails is a miss; a write that fails (a full
 * disk, a permission changed under us) prints one line, the first time, and the cache goes on
 * reading but writes no more. Entries of other agent builds or options are never read (the salt
 * differs); they stay until the user deletes the directory, which is always safe.
 *
 * <p>Rejected: one archive file with an index, as CDS has. It is faster to open, but two JVMs
 * that start at once would need a lock or a merge to add to it; a file per class needs neither.
 * Also rejected: a cryptographic hash as the key, trusted without the original bytes. That
 * halves the disk (the original is most of an entry), but SHA-256 runs in the interpreter for
 * the first classes of a start-up, which is when it would be paid.
 *
 * <p>Thread-safety: any thread; many class-loading threads (and other JVMs) use one directory at
 * once. The counters are LongAdders; {@link #writing} is set once, from true to false; only
 * the writer thread writes files.
 */
public final class RewriteCache {
  /** Entry format version 1; a change of layout changes the magic. */
  private static final long MAGIC = 0x676d70346a727701L; // "gmp4jrw" 1

  /** Entries larger than this are not read: no class file comes near it. */
  private static final int MAX_ENTRY = 64 << 20;

  /** The entry's header: magic, salt, and the original's length; the original follows. */
  private static final int HEADER = Long.BYTES + Long.BYTES + Integer.BYTES;

  /** What an entry says the rewrite did: the class was rewritten, or left alone. */
  private static final byte REWRITTEN = 0;

  private static final byte LEFT_ALONE = 1;

  private final Path dir;
  private final long salt;

  /** {@code <dir>/<salt>}: each agent build and prologue setting has a folder of its own. */
  private final Path saltDir;

  private final Consumer<String> lines;

  /** False after the first failed write; then only reads. Set once, by any thread. */
  private final AtomicBoolean writing = new AtomicBoolean(true);

  private final LongAdder hits = new LongAdder();
  private final LongAdder writes = new LongAdder();

  /** Entries not written because the writer's queue was full; the next start writes them. */
  private final LongAdder dropped = new LongAdder();

  /**
   * Entries handed to the writer and not yet written or given up. Incremented by {@link #put}
   * before its offer, decremented by the writer after each write; read by {@link
   * #awaitWritten}.
   */
  private final AtomicInteger pending = new AtomicInteger();

  /** The writer's queue: at most {@link #QUEUE_LIMIT} entries ('Write-behind'). */
  private final LinkedBlockingQueue<Pending> queue = new LinkedBlockingQueue<>(QUEUE_LIMIT);

  /** The entry folders the writer has made or found; the writer thread's alone. */
  private final Set<Path> made = new HashSet<>();

  /** Set once, by the first {@link #put}, which starts the writer thread. */
  private final AtomicBoolean writerStarted = new AtomicBoolean();

  /**
   * Entries the writer may fall behind by. An entry holds the class file and its rewrite, about
   * 25 KB on Spring Boot's classes, so a full queue is about 25 MB for the moment it takes to
   * write; Spring Boot's start-up puts about 800.
   */
  static final int QUEUE_LIMIT = 1024;

  private RewriteCache(Path dir, long salt, Consumer<String> lines) {
    this.dir = dir;
    this.salt = salt;
    this.saltDir = dir.resolve(hex(salt, 16));
    this.lines = lines;
  }

  /**
   * Opens (creating it if missing) the cache in {@code dir} for the injector identified by {@code
   * salt}. Returns null after one line on {@code lines} when the directory cannot be used; the
   * agent then rewrites without a cache. Called once, by the installer.
   */
  public static RewriteCache open(Path dir, long salt, Consumer<String> lines) {
    String refused = checkDirectory(dir);
    if (refused != null) {
      lines.accept(
          "gmp4j: preempt.cache: cannot use "
              + dir
              + ": "
              + refused
              + "; classes are rewritten at every start, without a cache");
      return null;
    }
    return new RewriteCache(dir, salt, lines);
  }

  /** The salt of an injector: the agent jar's CRC32C and length, and the prologue option. */
  public static long salt(byte[] agentJar, boolean prologuePolls) {
    CRC32C crc = new CRC32C();
    crc.update(agentJar);
    return (crc.getValue() << 32) ^ ((long) agentJar.length << 1) ^ (prologuePolls ? 1 : 0);
  }

  /** Null if {@code dir} may hold the cache ('Trust'), else why not. */
  private static String checkDirectory(Path dir) {
    try {
      if (!Files.exists(dir)) {
        createPrivate(dir);
      }
      if (!Files.isDirectory(dir)) {
        return "not a directory";
      }
      PosixFileAttributeView view = Files.getFileAttributeView(dir, PosixFileAttributeView.class);
      if (view != null) {
        PosixFileAttributes a = view.readAttributes();
        if (!ownedByThisProcess(dir, a)) {
          return "owned by " + a.owner().getName() + ", not by this JVM's user";
        }
        Set<PosixFilePermission> p = a.permissions();
        if (p.contains(PosixFilePermission.GROUP_WRITE)
            || p.contains(PosixFilePermission.OTHERS_WRITE)) {
          return "writable by its group or others ("
              + PosixFilePermissions.toString(p)
              + "): whoever can write it can put code into this application";
        }
      }
      if (!Files.isWritable(dir)) {
        return "not writable";
      }
      return null;
    } catch (IOException | RuntimeException e) {
      return e.getClass().getSimpleName() + ": " + e.getMessage();
    }
  }

  /**
   * Whether this process's user owns {@code dir}: by uid where the file system tells it ({@code
   * /proc/self} belongs to the process's uid on Linux), else by the user name, which a container
   * user without a passwd entry may not have.
   */
  private static boolean ownedByThisProcess(Path dir, PosixFileAttributes a) {
    try {
      Object me = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
      return me.equals(Files.getAttribute(dir, "unix:uid"));
    } catch (IOException | RuntimeException noUnixView) {
      return a.owner().getName().equals(System.getProperty("user.name"));
    }
  }

  /** Creates {@code dir} and its missing parents, the last as {@code rwx------} where POSIX. */
  private static void createPrivate(Path dir) throws IOException {
    Path parent = dir.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    if (dir.getFileSystem().supportedFileAttributeViews().contains("posix")) {
      Files.createDirectory(
          dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } else {
      Files.createDirectory(dir);
    }
  }

  /**
   * What the injector made of one class: the rewritten bytes (null when left alone), the reason
   * it was left alone, the methods left alone, and the poll counts.
   */
  static final class Outcome {
    final byte[] out;
    final Coverage.Reason leftAlone;
    final List<MethodNote> methods;
    final PollInjector.Stats stats;

    Outcome(
        byte[] out, Coverage.Reason leftAlone, List<MethodNote> methods, PollInjector.Stats stats) {
      assert (out == null) == (leftAlone != null) : "Outcome: bytes and a reason";
      this.out = out;
      this.leftAlone = leftAlone;
      this.methods = methods;
      this.stats = stats;
    }
  }

  /** A method left alone inside a class, and why ('Coverage'). */
  static final class MethodNote {
    final String name;
    final String descriptor;
    final Coverage.Reason why;

    MethodNote(String name, String descriptor, Coverage.Reason why) {
      this.name = name;
      this.descriptor = descriptor;
      this.why = why;
    }
  }

  /** The outcome cached for {@code classfile}, or null: step 3 of 'Rewrite cache'. Any thread. */
  Outcome get(byte[] classfile) {
    Path file = entry(classfile);
    byte[] e;
    try {
      // One stat, and no exception for the usual miss (File.length answers 0 for a file that
      // is not there); a huge file in the folder is not read into memory.
      long size = file.toFile().length();
      if (size == 0 || size > MAX_ENTRY) {
        return null;
      }
      e = Files.readAllBytes(file);
    } catch (IOException | RuntimeException unreadable) {
      return null; // step 3: a miss, written again
    }
    Outcome o = decode(e, classfile);
    if (o != null) {
      hits.increment();
    }
    return o;
  }

  /**
   * Hands {@code o} for {@code classfile} to the writer: step 2 of 'Rewrite cache', written
   * behind ('Write-behind'). Returns at once. Any thread.
   */
  void put(byte[] classfile, Outcome o) {
    if (!writing.get()) {
      return;
    }
    pending.incrementAndGet();
    if (!queue.offer(new Pending(classfile, o))) {
      pending.decrementAndGet();
      dropped.increment(); // the next start writes it
      return;
    }
    if (!writerStarted.get() && writerStarted.compareAndSet(false, true)) {
      Thread t = new Thread(new Writer(), "gmp4j-rewrite-cache");
      t.setDaemon(true);
      t.start();
      try {
        Runtime.getRuntime().addShutdownHook(new Thread(new Drain(), "gmp4j-rewrite-cache-exit"));
      } catch (IllegalStateException exiting) {
        // the JVM is already exiting: what is queued is written by the next start
      }
    }
  }

  /** At exit: waits for the writer up to {@link #DRAIN_MILLIS} ('Write-behind'). */
  private final class Drain implements Runnable {
    @Override
    public void run() {
      try {
        awaitWritten(DRAIN_MILLIS);
      } catch (InterruptedException e) {
        // exit goes on; the next start writes what is left
      }
    }
  }

  /**
   * How long the exit waits for queued entries: a short-lived program (a command-line tool)
   * would otherwise leave its last classes for every next start to rewrite. 2 s is several
   * hundred entries even while the writer is still interpreted, and an exit with none queued
   * does not wait at all.
   */
  static final long DRAIN_MILLIS = 2_000;

  /** One entry waiting for the writer. */
  private static final class Pending {
    final byte[] classfile;
    final Outcome outcome;

    Pending(byte[] classfile, Outcome outcome) {
      this.classfile = classfile;
      this.outcome = outcome;
    }
  }

  /** The writer thread's loop: takes each pending entry and writes it. */
  private final class Writer implements Runnable {
    @Override
    public void run() {
      for (; ; ) {
        Pending p;
        try {
          p = queue.take();
        } catch (InterruptedException e) {
          continue; // a daemon that serves until the JVM ends
        }
        try {
          write(p.classfile, p.outcome);
        } catch (Throwable t) {
          // An Error (out of memory, a linkage error) must not end the thread with entries
          // still counted as pending: the exit would wait for them in vain. No more writes.
          if (writing.compareAndSet(true, false)) {
            lines.accept("gmp4j: preempt.cache: the writer failed: " + describe(t));
          }
        } finally {
          pending.decrementAndGet();
        }
      }
    }
  }

  /** Writes one entry; one line and no more writes after the first failure. Writer thread. */
  private void write(byte[] classfile, Outcome o) {
    if (!writing.get()) {
      return;
    }
    Path file = entry(classfile);
    Path tmp = null;
    try {
      byte[] e = encode(classfile, o);
      if (made.add(file.getParent())) {
        // Once per folder: on an existing folder createDirectories throws and catches inside.
        Files.createDirectories(file.getParent());
      }
      tmp = file.resolveSibling(file.getFileName() + "." + NONCE + ".tmp");
      Files.write(tmp, e);
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      tmp = null;
      writes.increment();
    } catch (IOException | RuntimeException failed) {
      if (writing.compareAndSet(true, false)) {
        lines.accept(
            "gmp4j: preempt.cache: cannot write "
                + file
                + ": "
                + describe(failed)
                + "; the classes loaded from now on are rewritten without being cached");
      }
    } finally {
      if (tmp != null) {
        try {
          Files.deleteIfExists(tmp);
        } catch (IOException | RuntimeException ignored) {
          // a stray .tmp file is never read as an entry
        }
      }
    }
  }

  /**
   * Waits up to {@code millis} until every entry handed to {@link #put} so far is written (or
   * given up); true if it was. For tests, and for a caller that must see the directory complete.
   */
  boolean awaitWritten(long millis) throws InterruptedException {
    long deadline = System.nanoTime() + millis * 1_000_000L;
    while (pending.get() != 0) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      Thread.sleep(1);
    }
    return true;
  }

  /**
   * This JVM's part of a temporary name (its one writer thread needs no more). Two JVMs that
   * drew the same nonce and wrote the same entry at the same moment could interleave their
   * writes; the entry would then fail step 3's CRC and be written again. Not the pid:
   * ProcessHandle's class set-up is start-up time that only this name would need.
   */
  private static final String NONCE =
      Long.toHexString(System.nanoTime() ^ ((long) System.identityHashCode(new Object()) << 32));

  private static String describe(Throwable t) {
    if (t instanceof FileSystemException f && f.getReason() != null) {
      return (t instanceof AccessDeniedException ? "access denied: " : "") + f.getReason();
    }
    return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
  }

  /** The entry's path: step 1 of 'Rewrite cache'. */
  private Path entry(byte[] classfile) {
    CRC32C crc = new CRC32C();
    crc.update(classfile);
    String c = hex(crc.getValue(), 8);
    return saltDir.resolve(c.substring(0, 2)).resolve(c + "-" + hex(classfile.length, 1) + ".rw");
  }

  /** {@code v} in lower-case hex, zero-padded to {@code width} digits. */
  private static String hex(long v, int width) {
    String h = Long.toHexString(v);
    return h.length() >= width ? h : "0".repeat(width - h.length()) + h;
  }

  private byte[] encode(byte[] classfile, Outcome o) throws IOException {
    ByteArrayOutputStream bytes =
        new ByteArrayOutputStream(classfile.length * 2 + (o.out == null ? 64 : o.out.length));
    DataOutputStream d = new DataOutputStream(bytes);
    d.writeLong(MAGIC);
    d.writeLong(salt);
    d.writeInt(classfile.length);
    d.write(classfile);
    d.writeByte(o.out != null ? REWRITTEN : LEFT_ALONE);
    d.writeByte(o.leftAlone == null ? -1 : o.leftAlone.ordinal());
    d.writeInt(o.stats.backEdgePolls());
    d.writeInt(o.stats.stripMined());
    d.writeInt(o.stats.prologuePolls());
    d.writeInt(o.stats.countdownPolls());
    d.writeInt(o.methods.size());
    for (MethodNote m : o.methods) {
      d.writeUTF(m.name);
      d.writeUTF(m.descriptor);
      d.writeByte(m.why.ordinal());
    }
    if (o.out != null) {
      d.writeInt(o.out.length);
      d.write(o.out);
    }
    d.flush();
    CRC32C crc = new CRC32C();
    crc.update(bytes.toByteArray());
    d.writeInt((int) crc.getValue());
    d.flush();
    return bytes.toByteArray();
  }

  /** The outcome in entry {@code e}, or null unless every check of step 3 passes. */
  private Outcome decode(byte[] e, byte[] classfile) {
    if (e.length < 8 + 8 + 4 + 4) {
      return null;
    }
    CRC32C crc = new CRC32C();
    crc.update(e, 0, e.length - 4);
    if ((int) crc.getValue() != ByteBuffer.wrap(e, e.length - 4, 4).getInt()) {
      return null;
    }
    try {
      DataInputStream d = new DataInputStream(new java.io.ByteArrayInputStream(e, 0, e.length - 4));
      if (d.readLong() != MAGIC || d.readLong() != salt) {
        return null;
      }
      int n = d.readInt();
      if (n != classfile.length) {
        return null;
      }
      if (e.length < HEADER + n || !Arrays.equals(e, HEADER, HEADER + n, classfile, 0, n)) {
        return null; // another class with the same key
      }
      d.skipNBytes(n);
      byte kind = d.readByte();
      int why = d.readByte();
      Coverage.Reason[] reasons = Coverage.Reason.values();
      PollInjector.Stats stats =
          new PollInjector.Stats(d.readInt(), d.readInt(), d.readInt(), d.readInt());
      int count = d.readInt();
      List<MethodNote> methods = new ArrayList<>(Math.min(count, 64));
      for (int i = 0; i < count; i++) {
        methods.add(new MethodNote(d.readUTF(), d.readUTF(), reasons[d.readByte()]));
      }
      if (kind == LEFT_ALONE) {
        return new Outcome(null, reasons[why], methods, stats);
      }
      if (kind != REWRITTEN) {
        return null;
      }
      byte[] out = new byte[d.readInt()];
      d.readFully(out);
      return new Outcome(out, null, methods, stats);
    } catch (IOException | RuntimeException malformed) {
      return null; // a foreign file that happened to pass the CRC: a miss
    }
  }

  /**
   * {@code ; preempt.cache /dir: 786 rewrites read, 0 written} for the summary line. Any thread.
   */
  String summary() {
    return "; preempt.cache "
        + dir
        + ": "
        + hits.sum()
        + (hits.sum() == 1 ? " rewrite" : " rewrites")
        + " read, "
        + writes.sum()
        + " written"
        + (dropped.sum() == 0 ? "" : ", " + dropped.sum() + " left for the next start")
        + (writing.get() ? "" : " (writes stopped after a failure)");
  }

  /** Rewrites read from the cache so far. */
  long hits() {
    return hits.sum();
  }

  /** Entries written so far. */
  long writes() {
    return writes.sum();
  }

  @Override
  public String toString() {
    return "RewriteCache[" + summary().substring(2) + "]";
  }
}
