package kernels;

/**
 * The loop kernels of {@link LoopKernels}, as an interface that the benchmark's class loader and
 * the variant loaders share. {@code LoopPollBenchmark} defines {@code kernels.LoopKernels} once per
 * variant (as compiled, or with polls injected) in its own class loader and calls it through this
 * interface: each JMH fork runs one variant, so every call site is monomorphic and C2 inlines the
 * kernel into the benchmark method, as it would inline a direct call.
 */
public interface Kernels {
  void addArrays(int[] a, int[] b, int[] c);

  void scaleFloats(float[] src, float[] dst, float k);

  int sumInts(int[] a);

  long dotLongs(long[] a, long[] b);

  int hashBytes(byte[] a);

  void matMul(double[][] a, double[][] b, double[][] c);

  long listWalk(Node head);

  int stateMachine(byte[] input);

  int fib(int n);

  long collatz(long from, int count);

  void addArraysDown(int[] a, int[] b, int[] c);

  int sumIntList(IntList list);

  int indexOfByte(byte[] a, byte b);

  int countNulls(Object[] a);

  int indexOfRef(Object[] a, Object x);
}
