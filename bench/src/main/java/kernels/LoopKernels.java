package kernels;

/**
 * Loop kernels for measuring the cost and the preemption latency of the agent's injected polls.
 * Every kernel is a plain method with no state; they are instance methods only so that a benchmark
 * can call whichever copy of this class it loaded through {@link Kernels}. The class is final, so
 * {@code fib}'s recursive calls bind statically, as a static method's would.
 *
 * <p>The class must stay outside {@code io.gmp4j} (the poll injector refuses those classes) and
 * must have no nested or anonymous classes and no lambdas: {@code LoopPollBenchmark} defines this
 * class alone in a child-first loader, and everything else it uses (Node, IntList) comes from the
 * parent, shared by all variants.
 *
 * <p>Shapes, and where the injector puts the poll ('Poll placement' in PollInjector):
 *
 * <ul>
 *   <li>strip-mined (one poll per 4096 iterations; the inner loop stays a clean counted loop):
 *       addArrays, scaleFloats, sumInts, dotLongs, hashBytes, addArraysDown (counting down), the
 *       innermost loops of matMul, and three that C2 does not vectorize: indexOfByte (returns from
 *       the loop), countNulls and indexOfRef (reference arrays);
 *   <li>countdown with its own back-edge (one poll per 1024 passes; the body only branches out of
 *       the loop): listWalk (not counted), sumIntList (the bound is a field);
 *   <li>countdown with a single back-edge: stateMachine (switch in the body);
 *   <li>heavy countdown (64 per pass, so one poll per 16 passes): the outer loops of matMul, which
 *       contain strip-mined loops;
 *   <li>per-pass back-edge poll: collatz (both loops compute in registers only);
 *   <li>no loop: fib, polled only with prologue polls on.
 * </ul>
 */
public final class LoopKernels implements Kernels {

  /** c[i] = a[i] + b[i]: vectorizable. */
  @Override
  public void addArrays(int[] a, int[] b, int[] c) {
    for (int i = 0; i < a.length; i++) {
      c[i] = a[i] + b[i];
    }
  }

  /** dst[i] = src[i] * k: vectorizable. */
  @Override
  public void scaleFloats(float[] src, float[] dst, float k) {
    for (int i = 0; i < src.length; i++) {
      dst[i] = src[i] * k;
    }
  }

  /** Sum of an int array (enhanced for): a reduction that C2 can vectorize. */
  @Override
  public int sumInts(int[] a) {
    int s = 0;
    for (int v : a) {
      s += v;
    }
    return s;
  }

  /** Dot product of two long arrays: a reduction with a multiply. */
  @Override
  public long dotLongs(long[] a, long[] b) {
    long s = 0;
    for (int i = 0; i < a.length; i++) {
      s += a[i] * b[i];
    }
    return s;
  }

  /** h = 31 * h + b: scalar, a loop-carried dependency that no vectorizer breaks. */
  @Override
  public int hashBytes(byte[] a) {
    int h = 1;
    for (int i = 0; i < a.length; i++) {
      h = 31 * h + a[i];
    }
    return h;
  }

  /** c = a x b for square n x n matrices, i-k-j order: the innermost loop vectorizes. */
  @Override
  public void matMul(double[][] a, double[][] b, double[][] c) {
    int n = a.length;
    for (int i = 0; i < n; i++) {
      double[] ai = a[i];
      double[] ci = c[i];
      for (int j = 0; j < n; j++) {
        ci[j] = 0;
      }
      for (int k = 0; k < n; k++) {
        double aik = ai[k];
        double[] bk = b[k];
        for (int j = 0; j < n; j++) {
          ci[j] += aik * bk[j];
        }
      }
    }
  }

  /** Sum of the values of a linked list: a pointer chase, not a counted loop. */
  @Override
  public long listWalk(Node head) {
    long s = 0;
    for (Node n = head; n != null; n = n.next) {
      s += n.value;
    }
    return s;
  }

  /**
   * A lexer-like state machine ({@code while} + {@code switch} on the state) that counts tokens:
   * identifiers, numbers, string literals and single-character punctuation.
   */
  @Override
  public int stateMachine(byte[] input) {
    final int between = 0, ident = 1, number = 2, string = 3;
    int state = between;
    int tokens = 0;
    int i = 0;
    int n = input.length;
    while (i < n) {
      int c = input[i];
      switch (state) {
        case between:
          if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
            state = ident;
          } else if (c >= '0' && c <= '9') {
            state = number;
          } else if (c == '"') {
            state = string;
          } else if (c != ' ' && c != '\n') {
            tokens++; // punctuation
          }
          i++;
          break;
        case ident:
          if ((c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || c == '_'
              || (c >= '0' && c <= '9')) {
            i++;
          } else {
            tokens++;
            state = between;
          }
          break;
        case number:
          if (c >= '0' && c <= '9') {
            i++;
          } else {
            tokens++;
            state = between;
          }
          break;
        case string:
          if (c == '"') {
            tokens++;
            state = between;
          }
          i++;
          break;
        default:
          throw new IllegalStateException("state " + state);
      }
    }
    return state == between ? tokens : tokens + 1;
  }

  /** Naive recursive Fibonacci: recursion without any loop. */
  @Override
  public int fib(int n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
  }

  /** Total Collatz steps of {@code count} numbers from {@code from}: a non-counted while loop. */
  @Override
  public long collatz(long from, int count) {
    long steps = 0;
    for (int j = 0; j < count; j++) {
      long x = from + j;
      while (x != 1) {
        x = (x & 1) == 0 ? x >>> 1 : 3 * x + 1;
        steps++;
      }
    }
    return steps;
  }

  /** addArrays counting down: vectorizable, but not javac's counting-up for shape. */
  @Override
  public void addArraysDown(int[] a, int[] b, int[] c) {
    for (int i = a.length - 1; i >= 0; i--) {
      c[i] = a[i] + b[i];
    }
  }

  /** Sum over a list whose bound is a field (ArrayList's shape): not strip-mined. */
  @Override
  public int sumIntList(IntList list) {
    int s = 0;
    for (int i = 0; i < list.size; i++) {
      s += list.data[i];
    }
    return s;
  }

  /** A search that returns from inside the loop (String.indexOf's shape): not vectorized. */
  @Override
  public int indexOfByte(byte[] a, byte b) {
    for (int i = 0; i < a.length; i++) {
      if (a[i] == b) {
        return i;
      }
    }
    return -1;
  }

  /** A walk over a reference array (a collection's backing array): not vectorized. */
  @Override
  public int countNulls(Object[] a) {
    int n = 0;
    for (Object o : a) {
      if (o == null) {
        n++;
      }
    }
    return n;
  }

  /** A search by identity over a reference array (ArrayList.indexOf's shape): not vectorized. */
  @Override
  public int indexOfRef(Object[] a, Object x) {
    for (int i = 0; i < a.length; i++) {
      if (a[i] == x) {
        return i;
      }
    }
    return -1;
  }
}
