package example.apps;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A program that knows nothing of gmp4j: virtual threads from the executor, from {@code
 * Thread.ofVirtual()} on a platform thread, from {@code Thread.startVirtualThread}, and from a
 * virtual thread. Prints each one's carrier. With {@code args[0] = "halt"} it ends by {@code
 * Runtime.halt}, which runs no shutdown hook and no {@code deleteOnExit}.
 */
public final class Unmodified {
  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(20_000, "Unmodified");
    try (ExecutorService exec = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<String>> fs = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        fs.add(exec.submit(AppSupport::carrier));
      }
      for (Future<String> f : fs) {
        System.out.println("executor=" + f.get());
      }
    }
    String[] box = new String[3];
    Thread.ofVirtual().start(() -> box[0] = AppSupport.carrier()).join();
    Thread.startVirtualThread(() -> box[1] = AppSupport.carrier()).join();
    Thread.ofVirtual()
        .start(
            () -> {
              try {
                Thread.ofVirtual().start(() -> box[2] = AppSupport.carrier()).join();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            })
        .join();
    System.out.println("ofVirtual=" + box[0]);
    System.out.println("startVirtualThread=" + box[1]);
    System.out.println("nested=" + box[2]);
    System.out.println("done=true");
    System.out.flush();
    if (args.length > 0 && args[0].equals("halt")) {
      Runtime.getRuntime().halt(0);
    }
  }
}
