package kernels;

import java.util.Random;

/**
 * The inputs of every kernel, built from a fixed seed, and a way to run each kernel by name. Shared
 * by {@code LoopPollBenchmark} (JMH) and {@link PreemptionDelay}. Sizes are chosen so that one call
 * takes roughly 1-50 us on the benchmark machine.
 */
public final class KernelInputs {
  /** Elements of the int/float arrays (3 x 64 KiB for addArrays: in L2). */
  public static final int N = 16384;

  /** Elements of the long arrays. */
  public static final int N_LONG = 8192;

  /** Matrix side for matMul (32^3 multiply-adds). */
  public static final int MAT = 32;

  /** Linked-list length for listWalk. */
  public static final int LIST = 4096;

  /** Bytes of lexer input for stateMachine. */
  public static final int TEXT = 8192;

  /** What indexOfByte looks for: no byte of the lexer text, so it reads all TEXT bytes. */
  public static final byte ABSENT = 0x7F;

  /** Argument of fib (21891 calls). */
  public static final int FIB = 20;

  /** Collatz: numbers from COLLATZ_FROM, COLLATZ_COUNT of them (~170 steps each). */
  public static final long COLLATZ_FROM = 1_000_001L;

  public static final int COLLATZ_COUNT = 64;

  /** The kernels, in report order. The first ten are the goal set. */
  public static final String[] NAMES = {
    "addArrays",
    "scaleFloats",
    "sumInts",
    "dotLongs",
    "hashBytes",
    "matMul",
    "listWalk",
    "stateMachine",
    "fib",
    "collatz",
    "addArraysDown",
    "sumIntList",
    "indexOfByte",
    "countNulls",
    "indexOfRef",
  };

  public final int[] a = new int[N];
  public final int[] b = new int[N];
  public final int[] c = new int[N];
  public final float[] fsrc = new float[N];
  public final float[] fdst = new float[N];
  public final long[] la = new long[N_LONG];
  public final long[] lb = new long[N_LONG];
  public final byte[] bytes = new byte[N];
  public final double[][] ma = new double[MAT][MAT];
  public final double[][] mb = new double[MAT][MAT];
  public final double[][] mc = new double[MAT][MAT];
  public final Node head;
  public final byte[] text;
  public final IntList list;

  /**
   * Every third element null, the others {@link #list}: for countNulls, and for indexOfRef, which
   * looks for this KernelInputs and so reads them all.
   */
  public final Object[] refs = new Object[N];

  public KernelInputs() {
    Random r = new Random(42);
    for (int i = 0; i < N; i++) {
      a[i] = r.nextInt();
      b[i] = r.nextInt();
      fsrc[i] = r.nextFloat();
      bytes[i] = (byte) r.nextInt();
    }
    for (int i = 0; i < N_LONG; i++) {
      la[i] = r.nextLong();
      lb[i] = r.nextLong();
    }
    for (int i = 0; i < MAT; i++) {
      for (int j = 0; j < MAT; j++) {
        ma[i][j] = r.nextDouble();
        mb[i][j] = r.nextDouble();
      }
    }
    Node h = null;
    for (int i = LIST; i > 0; i--) { // allocated in order: a prefetch-friendly walk
      Node n = new Node(r.nextInt(1000));
      n.next = h;
      h = n;
    }
    head = h;
    text = lexerText(r, TEXT);
    list = new IntList(a.clone());
    for (int i = 0; i < N; i++) {
      refs[i] = i % 3 == 0 ? null : list;
    }
  }

  /** Source-code-like text: identifiers, numbers, strings, punctuation, spaces, newlines. */
  static byte[] lexerText(Random r, int size) {
    StringBuilder sb = new StringBuilder(size + 32);
    String punct = "(){};,.=+-*/<>";
    while (sb.length() < size) {
      switch (r.nextInt(6)) {
        case 0, 1 -> {
          int len = 1 + r.nextInt(10);
          sb.append((char) ('a' + r.nextInt(26)));
          for (int i = 1; i < len; i++) {
            int k = r.nextInt(38);
            sb.append(k < 26 ? (char) ('a' + k) : k < 36 ? (char) ('0' + k - 26) : '_');
          }
        }
        case 2 -> sb.append(r.nextInt(100000));
        case 3 -> {
          sb.append('"');
          for (int i = r.nextInt(12); i > 0; i--) {
            sb.append((char) ('a' + r.nextInt(26)));
          }
          sb.append('"');
        }
        case 4 -> sb.append(punct.charAt(r.nextInt(punct.length())));
        default -> sb.append(r.nextInt(8) == 0 ? '\n' : ' ');
      }
    }
    sb.setLength(size);
    byte[] out = new byte[size];
    for (int i = 0; i < size; i++) {
      out[i] = (byte) sb.charAt(i);
    }
    return out;
  }

  /**
   * Runs one kernel on these inputs and returns a checksum of its result (for kernels that write
   * an array: a hash of the array), so two variants can be compared.
   */
  public long run(Kernels k, String name) {
    switch (name) {
      case "addArrays" -> {
        k.addArrays(a, b, c);
        return java.util.Arrays.hashCode(c);
      }
      case "scaleFloats" -> {
        k.scaleFloats(fsrc, fdst, 1.5f);
        return java.util.Arrays.hashCode(fdst);
      }
      case "sumInts" -> {
        return k.sumInts(a);
      }
      case "dotLongs" -> {
        return k.dotLongs(la, lb);
      }
      case "hashBytes" -> {
        return k.hashBytes(bytes);
      }
      case "matMul" -> {
        k.matMul(ma, mb, mc);
        return java.util.Arrays.deepHashCode(mc);
      }
      case "listWalk" -> {
        return k.listWalk(head);
      }
      case "stateMachine" -> {
        return k.stateMachine(text);
      }
      case "fib" -> {
        return k.fib(FIB);
      }
      case "collatz" -> {
        return k.collatz(COLLATZ_FROM, COLLATZ_COUNT);
      }
      case "addArraysDown" -> {
        k.addArraysDown(a, b, c);
        return java.util.Arrays.hashCode(c);
      }
      case "sumIntList" -> {
        return k.sumIntList(list);
      }
      case "indexOfByte" -> {
        return k.indexOfByte(text, ABSENT);
      }
      case "countNulls" -> {
        return k.countNulls(refs);
      }
      case "indexOfRef" -> {
        return k.indexOfRef(refs, this);
      }
      default -> throw new IllegalArgumentException("no kernel " + name);
    }
  }
}
