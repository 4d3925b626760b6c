import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.LongAdder;
/**
 * A scratch driver for quick A/B timings outside JMH: a park/unpark ping-pong ("park"), a
 * Thread.yield loop ("yield"), spawn-and-finish ("spawn"), or a platform thread that unparks a
 * virtual thread parking untimed and timed by turns, as the JDK's stress/ParkALot does
 * ("extpark": every wake-up an external submission) on Thread.ofVirtual(), measured for
 * {@code secs} after 1.5 s of warm-up, in wall and process-CPU ns per operation. Run it as a
 * single-file program, with or without the agent and a recording, alternating A and B:
 *
 * <pre>
 * J=$(./mvn25 --print-java-home)/bin/java
 * chrt -f 10 $J -javaagent:agent/target/gmp4j-agent.jar=gomaxprocs=1 \
 *     -XX:StartFlightRecording:settings=/path/gmp4j.jfc,filename=/tmp/r.jfr \
 *     bench/scripts/PingPongCpu.java park 4
 * </pre>
 *
 * {@code chrt -f 10} (root) keeps other processes off its CPUs on a shared machine.
 */
public class PingPongCpu {
  static long cpu() { return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime(); }
  static volatile int turn;
  static final LongAdder ops = new LongAdder();
  static volatile boolean stop;
  public static void main(String[] a) throws Exception {
    String what = a.length > 0 ? a[0] : "park";
    int secs = a.length > 1 ? Integer.parseInt(a[1]) : 4;
    Runnable body = switch (what) {
      case "park" -> PingPongCpu::park;
      case "yield" -> () -> { Thread x = Thread.ofVirtual().start(PingPongCpu::yieldLoop); yieldLoop(); join(x); };
      case "spawn" -> PingPongCpu::spawn;
      case "extpark" -> PingPongCpu::externalPark;
      default -> throw new IllegalArgumentException(what);
    };
    Thread d = what.equals("extpark") ? Thread.ofPlatform().start(body) : Thread.ofVirtual().start(body);
    Thread.sleep(1500);
    long n0 = ops.sum(), t0 = System.nanoTime(), c0 = cpu();
    Thread.sleep(secs * 1000L);
    long n = ops.sum() - n0, t = System.nanoTime() - t0, c = cpu() - c0;
    stop = true; d.join();
    System.out.printf("%s: %.1f ns/op wall, %.1f ns/op cpu%n", what, t / (double) n, c / (double) n);
  }
  static void join(Thread t) { try { t.join(); } catch (InterruptedException e) { throw new RuntimeException(e); } }
  static void park() {
    Thread me = Thread.currentThread();
    Thread echo = Thread.ofVirtual().start(() -> {
      while (true) { int t; while ((t = turn) == 0) LockSupport.park(); if (t == 2) return; turn = 0; LockSupport.unpark(me); }
    });
    while (!stop) {
      for (int i = 0; i < 10000; i++) { turn = 1; LockSupport.unpark(echo); while (turn != 0) LockSupport.park(); }
      ops.add(10000);
    }
    turn = 2; LockSupport.unpark(echo); join(echo);
  }
  static void yieldLoop() { while (!stop) { for (int i = 0; i < 1000; i++) Thread.yield(); ops.add(1000); } }
  static void spawn() {
    while (!stop) {
      java.util.concurrent.CountDownLatch l = new java.util.concurrent.CountDownLatch(10000);
      for (int i = 0; i < 10000; i++) Thread.ofVirtual().start(l::countDown);
      try { l.await(); } catch (Exception e) {}
      ops.add(10000);
    }
  }
  static void externalPark() {
    Thread v = Thread.ofVirtual().start(() -> {
      boolean timed = false;
      while (!stop) {
        for (int i = 0; i < 1000; i++) {
          if (timed) LockSupport.parkNanos(Long.MAX_VALUE); else LockSupport.park();
          timed = !timed;
        }
        ops.add(1000);
      }
    });
    Thread.State s;
    while ((s = v.getState()) != Thread.State.TERMINATED) {
      if (s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING) LockSupport.unpark(v); else Thread.yield();
    }
  }
}
