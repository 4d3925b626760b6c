package io.gmp4j.bench;

import java.util.concurrent.TimeUnit;
import kernels.KernelInputs;
import kernels.Kernels;
import kernels.Node;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The fast-path cost of the agent's loop polls: each kernel of {@code kernels.LoopKernels}, as
 * compiled ({@code plain}), as the poll injector rewrites it ({@code polled}: back-edge polls
 * and strip mining; {@code prologue}: the same plus a poll at method entry), and with the early
 * polls a class loaded at start-up runs with until its rewrite ({@code early}: a check at each
 * loop head), in one JMH run.
 *
 * <h2>Implementation overview</h2>
 *
 * <ul>
 *   <li>{@link KernelVariants} defines the chosen variant of {@code kernels.LoopKernels} in its own
 *       class loader; the benchmark calls it through the {@link Kernels} interface. A JMH fork runs
 *       one {@code variant}, so each call site sees one receiver class and C2 inlines the kernel
 *       into the benchmark method, as it would a direct call.
 *   <li>No agent runs in the fork, so no scheduler and no sysmon: {@code Preempt}'s pending count
 *       stays 0 and every poll takes its fast path (one volatile load and an untaken branch). That
 *       is what an application pays while nothing is being preempted.
 *   <li>{@code @Setup} checks that the injector really changed the class (its {@code Stats}) and
 *       that every kernel of the chosen variant returns what the plain one does.
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class LoopPollBenchmark {
  @Param({"plain", "polled", "prologue", "early"})
  public String variant;

  private Kernels k;
  private KernelInputs in;

  private int[] a;
  private int[] b;
  private int[] c;
  private float[] fsrc;
  private float[] fdst;
  private long[] la;
  private long[] lb;
  private byte[] bytes;
  private double[][] ma;
  private double[][] mb;
  private double[][] mc;
  private Node head;
  private byte[] text;

  @Setup(Level.Trial)
  public void setUp() {
    KernelVariants.Variant v = KernelVariants.load(variant);
    k = v.kernels();
    in = new KernelInputs();
    Kernels plain = KernelVariants.load("plain").kernels();
    for (String name : KernelInputs.NAMES) {
      long want = in.run(plain, name);
      long got = in.run(k, name);
      if (got != want) {
        throw new IllegalStateException(
            variant + " " + name + " returned " + got + ", plain " + want);
      }
    }
    System.out.println(
        "# "
            + variant
            + " kernels.LoopKernels: "
            + v.stats()
            + " (loader "
            + k.getClass().getClassLoader().getName()
            + ")");
    a = in.a;
    b = in.b;
    c = in.c;
    fsrc = in.fsrc;
    fdst = in.fdst;
    la = in.la;
    lb = in.lb;
    bytes = in.bytes;
    ma = in.ma;
    mb = in.mb;
    mc = in.mc;
    head = in.head;
    text = in.text;
  }

  @Benchmark
  public int[] addArrays() {
    k.addArrays(a, b, c);
    return c;
  }

  @Benchmark
  public float[] scaleFloats() {
    k.scaleFloats(fsrc, fdst, 1.5f);
    return fdst;
  }

  @Benchmark
  public int sumInts() {
    return k.sumInts(a);
  }

  @Benchmark
  public long dotLongs() {
    return k.dotLongs(la, lb);
  }

  @Benchmark
  public int hashBytes() {
    return k.hashBytes(bytes);
  }

  @Benchmark
  public double[][] matMul() {
    k.matMul(ma, mb, mc);
    return mc;
  }

  @Benchmark
  public long listWalk() {
    return k.listWalk(head);
  }

  @Benchmark
  public int stateMachine() {
    return k.stateMachine(text);
  }

  @Benchmark
  public int fib() {
    return k.fib(KernelInputs.FIB);
  }

  @Benchmark
  public long collatz() {
    return k.collatz(KernelInputs.COLLATZ_FROM, KernelInputs.COLLATZ_COUNT);
  }

  @Benchmark
  public int[] addArraysDown() {
    k.addArraysDown(a, b, c);
    return c;
  }

  @Benchmark
  public int sumIntList() {
    return k.sumIntList(in.list);
  }

  @Benchmark
  public int indexOfByte() {
    return k.indexOfByte(text, KernelInputs.ABSENT);
  }

  @Benchmark
  public int countNulls() {
    return k.countNulls(in.refs);
  }

  @Benchmark
  public int indexOfRef() {
    return k.indexOfRef(in.refs, in);
  }
}
