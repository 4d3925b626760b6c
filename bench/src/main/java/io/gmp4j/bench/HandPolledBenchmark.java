package io.gmp4j.bench;

import java.util.concurrent.TimeUnit;
import kernels.HandPolledKernels;
import kernels.KernelInputs;
import kernels.LoopKernels;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * {@link HandPolledKernels}: placements the injector does not make today, for the kernels that
 * miss the cost goal in {@link LoopPollBenchmark}. Compare each score with the {@code plain} and
 * {@code polled} rows of the same kernel there. No agent runs, so every poll takes its fast path.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HandPolledBenchmark {
  private KernelInputs in;

  @Setup(Level.Trial)
  public void setUp() {
    in = new KernelInputs();
    LoopKernels k = new LoopKernels();
    int[] want = new int[in.c.length];
    k.addArraysDown(in.a, in.b, want);
    HandPolledKernels.addArraysDownStrips(in.a, in.b, in.c);
    if (!java.util.Arrays.equals(want, in.c)
        || k.stateMachine(in.text) != HandPolledKernels.stateMachineCountdown(in.text)
        || k.sumIntList(in.list) != HandPolledKernels.sumIntListStrips(in.list)) {
      throw new IllegalStateException("a hand-polled kernel differs from its LoopKernels original");
    }
  }

  @Benchmark
  public int stateMachineCountdown() {
    return HandPolledKernels.stateMachineCountdown(in.text);
  }

  @Benchmark
  public int[] addArraysDownStrips() {
    HandPolledKernels.addArraysDownStrips(in.a, in.b, in.c);
    return in.c;
  }

  @Benchmark
  public int sumIntListStrips() {
    return HandPolledKernels.sumIntListStrips(in.list);
  }
}
