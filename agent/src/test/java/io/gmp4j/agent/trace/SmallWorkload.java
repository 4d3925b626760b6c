package io.gmp4j.agent.trace;

import io.gmp4j.Gmp;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.SynchronousQueue;

/**
 * A small program on gmp4j (no agent: the runtime from the class path, {@code java.lang}
 * opened) for the trace tests' own recording, made by {@link TraceFixture}: a CPU hog of about
 * 300 ms beside a ticker (so the hog, with no polls without the agent, loses its P to sysmon), a
 * ping-pong pair, sleepers, blocking calls marked as syscalls (40 ms each, so sysmon hands
 * their P off), spawns, and GOMAXPROCS 2 to 1 and back.
 */
public final class SmallWorkload {
  static volatile long sink;
  static volatile boolean stop;

  public static void main(String[] args) throws Exception {
    Thread.sleep(1_200); // gmp4j's enabled bits follow the recording within a sysmon second
    int procs = Gmp.gomaxprocs();
    Thread ticker =
        Gmp.ofVirtual()
            .name("ticker")
            .start(
                () -> {
                  while (!stop) {
                    sleep(1);
                  }
                });
    List<Thread> all = new ArrayList<>();
    SynchronousQueue<Integer> ping = new SynchronousQueue<>();
    SynchronousQueue<Integer> pong = new SynchronousQueue<>();
    all.add(
        Gmp.ofVirtual()
            .name("ping")
            .start(
                () -> {
                  for (int i = 0; i < 200; i++) {
                    put(ping, i);
                    take(pong);
                  }
                }));
    all.add(
        Gmp.ofVirtual()
            .name("pong")
            .start(
                () -> {
                  for (int i = 0; i < 200; i++) {
                    put(pong, take(ping));
                  }
                }));
    for (int i = 0; i < 3; i++) {
      all.add(
          Gmp.ofVirtual()
              .name("syscall" + i)
              .start(
                  () -> {
                    try {
                      // a call that keeps its carrier for 40 ms, as a long JNI call does: sysmon
                      // hands
                      // its P off after 20 ms (Thread.sleep would park, and leave the syscall at
                      // once)
                      Gmp.syscall(() -> spinFor(40));
                    } catch (Exception e) {
                      throw new IllegalStateException(e);
                    }
                  }));
    }
    for (int i = 0; i < 50; i++) {
      all.add(Gmp.ofVirtual().start(() -> sink += spinFor(0)));
    }
    join(all);
    Thread hog = Gmp.ofVirtual().name("hog").start(() -> sink += spinFor(300));
    hog.join();
    Gmp.ofVirtual().start(() -> Gmp.gomaxprocs(1)).join();
    Thread sleeper =
        Gmp.ofVirtual()
            .name("sleeper")
            .start(
                () -> {
                  for (int i = 0; i < 5; i++) {
                    sleep(2);
                  }
                });
    sleeper.join();
    Gmp.ofVirtual().start(() -> Gmp.gomaxprocs(procs)).join();
    stop = true;
    ticker.join();
    Thread.sleep(1_100); // one more SchedStats
    System.out.println("OK");
  }

  private static long spinFor(long millis) {
    long end = System.nanoTime() + millis * 1_000_000;
    long x = 0;
    while (System.nanoTime() - end < 0) {
      x++;
    }
    return x;
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void put(SynchronousQueue<Integer> q, int v) {
    try {
      q.put(v);
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  private static int take(SynchronousQueue<Integer> q) {
    try {
      return q.take();
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void join(List<Thread> ts) throws InterruptedException {
    for (Thread t : ts) {
      t.join();
    }
  }
}
