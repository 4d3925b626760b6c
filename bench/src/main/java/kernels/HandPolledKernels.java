package kernels;

import io.gmp4j.runtime.Preempt;

/**
 * Hand-placed polls for the three kernel shapes that the injector polls on every iteration and
 * that miss the cost goal (BENCHMARKS.md, 'LoopPoll'): sketches of placements the injector could
 * use instead, measured by {@code HandPolledBenchmark} without any agent or transformation. Each
 * computes exactly what the same-named kernel of {@link LoopKernels} computes.
 */
public final class HandPolledKernels {
  static final int STRIP = 1024;

  private HandPolledKernels() {}

  /**
   * {@link LoopKernels#stateMachine} with a poll every 1024 iterations through a local countdown:
   * the loop keeps a register decrement and a rarely taken branch instead of a memory barrier on
   * every iteration.
   */
  public static int stateMachineCountdown(byte[] input) {
    final int between = 0, ident = 1, number = 2, string = 3;
    int state = between;
    int tokens = 0;
    int i = 0;
    int n = input.length;
    int budget = STRIP;
    while (i < n) {
      if (--budget == 0) {
        budget = STRIP;
        Preempt.poll();
      }
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
            tokens++;
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

  /**
   * {@link LoopKernels#addArraysDown} strip-mined as the injector strip-mines counting-up loops:
   * a clean inner loop of at most 1024 iterations and one poll per strip.
   */
  public static void addArraysDownStrips(int[] a, int[] b, int[] c) {
    int i = a.length - 1;
    while (i >= 0) {
      int strip = Math.max(-1, i - STRIP); // exclusive lower bound of this strip
      for (; i > strip; i--) {
        c[i] = a[i] + b[i];
      }
      Preempt.poll();
    }
  }

  /**
   * {@link LoopKernels#sumIntList} strip-mined with the field bound read once per strip: legal
   * for a plain (non-volatile) field that the loop itself never writes, as C2 itself hoists it.
   */
  public static int sumIntListStrips(IntList list) {
    int s = 0;
    int i = 0;
    while (i < list.size) {
      int[] data = list.data;
      int strip = (int) Math.min(list.size, (long) i + STRIP);
      for (; i < strip; i++) {
        s += data[i];
      }
      Preempt.poll();
    }
    return s;
  }
}
