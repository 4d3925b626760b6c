package io.gmp4j.bench;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;
import javax.management.ObjectName;

/**
 * Heap per parked goroutine, by object class, on whichever scheduler {@code Thread.ofVirtual()}
 * uses in this JVM (the JDK's, or gmp4j's under its agent). Run it three ways and compare:
 *
 * <pre>
 * J=$(./mvn25 --print-java-home)/bin/java; B=bench/target/gmp4j-bench.jar
 * $J -cp $B io.gmp4j.bench.ParkedMemory
 * $J -javaagent:agent/target/gmp4j-agent.jar -cp $B io.gmp4j.bench.ParkedMemory
 * </pre>
 *
 * <h2>Implementation overview</h2>
 *
 * It parks {@link #N} goroutines and counts, from the JVM's class histogram (a full GC first),
 * the classes with about one instance per goroutine. A heap-usage delta would also count
 * whatever else the JVM allocated meanwhile, and it moved by 100 bytes a goroutine from run to
 * run. Three rounds of start-park-unpark come first, so that the code on the path is compiled
 * when the measured goroutines park: an interpreted frame is bigger than a compiled one, and
 * the parked stack ({@code StackChunk}) holds those frames. The stack is the JDK's and depends
 * on the application's frames, so the scheduler's cost is the rest, printed apart.
 */
public final class ParkedMemory {
  static final int N = 100_000;

  private ParkedMemory() {}

  public static void main(String[] args) throws Exception {
    Thread[] ts = new Thread[N];
    for (int round = 0; round <= 3; round++) {
      CountDownLatch parked = new CountDownLatch(N);
      for (int i = 0; i < N; i++) {
        ts[i] =
            Thread.ofVirtual()
                .start(
                    () -> {
                      parked.countDown();
                      LockSupport.park();
                    });
      }
      parked.await();
      Thread.sleep(200); // the last countDown comes just before its park
      if (round == 3) {
        report(ts[0].toString());
      }
      for (Thread t : ts) {
        LockSupport.unpark(t);
      }
      for (Thread t : ts) {
        t.join();
      }
    }
  }

  private static void report(String sample) throws Exception {
    String histogram =
        (String)
            ManagementFactory.getPlatformMBeanServer()
                .invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"),
                    "gcClassHistogram",
                    new Object[] {null},
                    new String[] {String[].class.getName()});
    long total = 0;
    long stack = 0;
    List<String> parts = new ArrayList<>();
    for (String line : histogram.split("\n")) {
      String[] f = line.trim().split("\\s+");
      if (f.length < 4 || !f[0].endsWith(":")) {
        continue;
      }
      long count = Long.parseLong(f[1]);
      long bytes = Long.parseLong(f[2]);
      if (count >= N * 9L / 10 && count <= N * 3L) { // about one (to three) per goroutine
        String name = f[3].replaceAll("/0x[0-9a-f]+", "");
        total += bytes;
        if (name.equals("jdk.internal.vm.StackChunk")) {
          stack += bytes;
        }
        parts.add(String.format("  %5d B  %s (%d)", bytes / N, name, count));
      }
    }
    System.out.println("parked goroutine " + sample);
    System.out.printf(
        "%d B per parked goroutine, %d B without its stack chunk:%n",
        total / N, (total - stack) / N);
    parts.forEach(System.out::println);
  }
}
