package kernels;

/**
 * A minimal growable int list (the shape of {@code ArrayList} internals): the bound of a loop over
 * it is a field, {@code size}, not a local, so the poll injector cannot strip-mine that loop.
 */
public final class IntList {
  public int[] data;
  public int size;

  public IntList(int[] data) {
    this.data = data;
    this.size = data.length;
  }
}
