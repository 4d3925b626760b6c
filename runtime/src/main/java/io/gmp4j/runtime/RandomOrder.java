package io.gmp4j.runtime;

/**
 * Go's randomOrder (proc.go): visits every P exactly once, in a random order, for stealWork.
 *
 * <p>Every increment coprime to the P count generates the whole cycle {@code (pos + k*inc) %
 * count}, so picking a random start and a random coprime increment gives a cheap random
 * permutation with no allocation and no shuffling. Immutable: procresize builds a new one, so a
 * thief that read the old one keeps a consistent (count, coprimes) pair.
 */
final class RandomOrder {
  final int count;
  private final int[] coprimes;

  RandomOrder(int count) {
    this.count = count;
    int n = 0;
    int[] cs = new int[count];
    for (int i = 1; i <= count; i++) {
      if (gcd(i, count) == 1) {
        cs[n++] = i;
      }
    }
    this.coprimes = java.util.Arrays.copyOf(cs, n);
  }

  int coprimeCount() {
    return coprimes.length;
  }

  /** Go's randomOrder.start: the enumeration for random value {@code i}. */
  Enum start(int i) {
    i &= Integer.MAX_VALUE;
    return new Enum(count, i % count, coprimes[(i / count) % coprimes.length]);
  }

  private static int gcd(int a, int b) {
    while (b != 0) {
      int t = a % b;
      a = b;
      b = t;
    }
    return a;
  }

  /** Go's randomEnum. Confined to one thread. */
  static final class Enum {
    private int i;
    private final int count;
    private int pos;
    final int inc;

    Enum(int count, int pos, int inc) {
      this.count = count;
      this.pos = pos;
      this.inc = inc;
    }

    boolean done() {
      return i == count;
    }

    void next() {
      i++;
      pos = (pos + inc) % count;
    }

    int position() {
      return pos;
    }
  }
}
