package kernels;

/** A singly linked list node for {@link LoopKernels#listWalk}. */
public final class Node {
  public final int value;
  public Node next;

  public Node(int value) {
    this.value = value;
  }
}
