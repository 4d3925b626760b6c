package example.apps;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A program with its own virtual-thread scheduler, built the way the JDK's tests build one
 * (CustomScheduler.java): the package-private {@code ThreadBuilders$VirtualThreadBuilder(Executor)}
 * by reflection, which needs {@code --add-opens java.base/java.lang=ALL-UNNAMED}. A virtual thread
 * on that scheduler starts a child with {@code Thread.ofVirtual()}; JDK 25 gives the child its
 * creator's scheduler. Prints, for the child, whether its scheduler is the custom one; and the
 * carriers of threads created by a platform thread and by a thread on the default scheduler.
 */
public final class CustomSchedulerChild {
  public static void main(String[] args) throws Exception {
    AppSupport.watchdog(20_000, "CustomSchedulerChild");
    ExecutorService pool = Executors.newFixedThreadPool(1, r -> new Thread(r, "custom-carrier"));
    Executor custom = pool::execute;
    Constructor<?> ctor =
        Class.forName("java.lang.ThreadBuilders$VirtualThreadBuilder")
            .getDeclaredConstructor(Executor.class);
    ctor.setAccessible(true);
    Thread.Builder.OfVirtual onCustom = (Thread.Builder.OfVirtual) ctor.newInstance(custom);

    Object[] box = new Object[4];
    onCustom
        .start(
            () -> {
              box[0] = AppSupport.carrier();
              try {
                Thread child = Thread.ofVirtual().unstarted(() -> box[2] = AppSupport.carrier());
                box[1] = scheduler(child);
                child.start();
                child.join();
              } catch (Exception e) {
                box[1] = e;
              }
            })
        .join();
    System.out.println("parent=" + box[0]);
    System.out.println("childInherits=" + (box[1] == custom));
    System.out.println("child=" + box[2]);

    Thread.ofVirtual().start(() -> box[3] = AppSupport.carrier()).join();
    System.out.println("fromPlatform=" + box[3]);
    Thread.ofVirtual()
        .start(
            () -> {
              try {
                Thread.ofVirtual().start(() -> box[3] = AppSupport.carrier()).join();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            })
        .join();
    System.out.println("fromDefault=" + box[3]);
    pool.shutdown();
    System.out.println("done=true");
  }

  private static Object scheduler(Thread vthread) throws ReflectiveOperationException {
    Field f = Class.forName("java.lang.VirtualThread").getDeclaredField("scheduler");
    f.setAccessible(true);
    return f.get(vthread);
  }
}
