package example.servers;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * An open-loop HTTP load client (JDK HttpClient, HTTP/1.1) with HdrHistogram, for ServersIT,
 * ServersBench and the demo, and a closed-loop one ({@link #closed}) for SpringBench. It runs in
 * the parent JVM, on the JDK's own threads: no agent.
 *
 * <h2>Why open loop</h2>
 *
 * A closed-loop client (wrk, ab: send the next request when the last reply came) stops sending
 * while the server stalls, so the stall shows as one slow request instead of all the requests
 * that should have been sent meanwhile ("coordinated omission", Gil Tene). Here the light
 * requests go out on a fixed schedule, {@code start + i/rate}, whatever the replies, each on a
 * connection of its own if need be, and a request's latency is measured from its intended send
 * time, so that a client that itself fell behind (a shared machine) does not hide it either.
 *
 * <p>The CPU requests are closed loop on purpose: {@code cpuConcurrency} workers each keep one
 * CPU request in flight, so that the server always has exactly that many CPU-bound handlers
 * running or runnable. Their time, send to reply, is the CPU requests' completion time.
 */
public final class LoadClient implements AutoCloseable {
  /** Latencies are recorded in microseconds up to a minute, at 3 significant digits. */
  private static final long MAX_MICROS = 60_000_000L;

  /** A request that takes longer fails; a bound on every run. */
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

  private final URI light;
  private final URI cpu;
  private final ExecutorService pool =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "load-client");
            t.setDaemon(true);
            return t;
          });
  private final HttpClient http;

  /** What a run measured. Latencies in microseconds. */
  public record Result(
      double seconds,
      long lightSent,
      long lightOk,
      long lightFailed,
      Histogram light,
      long cpuOk,
      long cpuFailed,
      Histogram cpu,
      String firstFailure) {
    /** Light replies per second of the run. */
    public double throughput() {
      return lightOk / seconds;
    }

    /** The light latency at {@code percentile} (0-100), in milliseconds. */
    public double lightMs(double percentile) {
      return light.getValueAtPercentile(percentile) / 1000.0;
    }

    /** The CPU completion time at {@code percentile}, in milliseconds. */
    public double cpuMs(double percentile) {
      return cpu.getTotalCount() == 0 ? 0 : cpu.getValueAtPercentile(percentile) / 1000.0;
    }

    @Override
    public String toString() {
      return String.format(
          "%.1fs light sent=%d ok=%d failed=%d %.0f/s p50=%.1fms p99=%.1fms"
              + " p999=%.1fms max=%.1fms; cpu ok=%d failed=%d p50=%.0fms max=%.0fms%s",
          seconds,
          lightSent,
          lightOk,
          lightFailed,
          throughput(),
          lightMs(50),
          lightMs(99),
          lightMs(99.9),
          light.getMaxValue() / 1000.0,
          cpuOk,
          cpuFailed,
          cpuMs(50),
          cpu.getTotalCount() == 0 ? 0 : cpu.getMaxValue() / 1000.0,
          firstFailure == null ? "" : " first failure: " + firstFailure);
    }
  }

  /** Once a second during a run: totals so far, and the light p99 of that second. */
  public record Tick(int second, long lightOk, long lightFailed, double lightP99Ms, long cpuOk) {}

  public LoadClient(String host, int port) {
    this.light = URI.create("http://" + host + ":" + port + "/light");
    this.cpu = URI.create("http://" + host + ":" + port + "/cpu");
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .executor(pool)
            .build();
  }

  /**
   * Sends light requests at {@code lightRate} per second for {@code duration} while {@code
   * cpuConcurrency} CPU requests (0: none) stay in flight, then waits for every reply (each
   * bounded by a 30 s timeout). {@code tick} (may be null) is called once a second.
   */
  public Result run(double lightRate, int cpuConcurrency, Duration duration, Consumer<Tick> tick)
      throws InterruptedException {
    Histogram lightH = new ConcurrentHistogram(MAX_MICROS, 3);
    Histogram cpuH = new ConcurrentHistogram(MAX_MICROS, 3);
    Recorder interval = new Recorder(MAX_MICROS, 3);
    AtomicLong lightOk = new AtomicLong();
    AtomicLong lightFailed = new AtomicLong();
    AtomicLong cpuOk = new AtomicLong();
    AtomicLong cpuFailed = new AtomicLong();
    AtomicLong outstanding = new AtomicLong();
    String[] firstFailure = new String[1];
    HttpRequest lightReq = HttpRequest.newBuilder(light).timeout(REQUEST_TIMEOUT).GET().build();
    HttpRequest cpuReq = HttpRequest.newBuilder(cpu).timeout(REQUEST_TIMEOUT).GET().build();

    long start = System.nanoTime() + 20_000_000L;
    long end = start + duration.toNanos();
    List<Thread> workers = new ArrayList<>();
    for (int w = 0; w < cpuConcurrency; w++) {
      workers.add(
          Thread.ofPlatform()
              .daemon()
              .name("load-cpu-" + w)
              .start(
                  () -> {
                    sleepUntil(start);
                    while (System.nanoTime() < end
                        && cpuRequest(http, cpuReq, cpuH, cpuOk, cpuFailed, firstFailure)) {
                      // one request per pass
                    }
                  }));
    }
    Thread ticker = null;
    if (tick != null) {
      ticker =
          Thread.ofPlatform()
              .daemon()
              .name("load-tick")
              .start(
                  () -> {
                    for (int s = 1; ; s++) {
                      if (!sleepUntil(start + s * 1_000_000_000L)
                          || System.nanoTime() > end + 500_000_000L) {
                        return;
                      }
                      Histogram h = interval.getIntervalHistogram();
                      tick.accept(
                          new Tick(
                              s,
                              lightOk.get(),
                              lightFailed.get(),
                              h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(99) / 1000.0,
                              cpuOk.get()));
                    }
                  });
    }
    long sent = 0;
    long period = (long) (1e9 / lightRate);
    for (long i = 0; ; i++) {
      long intended = start + i * period;
      if (intended >= end) {
        break;
      }
      sleepUntil(intended);
      sent++;
      outstanding.incrementAndGet();
      http.sendAsync(lightReq, HttpResponse.BodyHandlers.ofByteArray())
          .whenComplete(
              (r, e) -> {
                // from the intended send time: see 'Why open loop'
                long micros = Math.min(MAX_MICROS, (System.nanoTime() - intended) / 1000);
                if (e == null && r.statusCode() == 200) {
                  lightH.recordValue(micros);
                  interval.recordValue(micros);
                  lightOk.incrementAndGet();
                } else {
                  fail(firstFailure, "light: " + (e != null ? e : "status " + r.statusCode()));
                  lightFailed.incrementAndGet();
                }
                outstanding.decrementAndGet();
              });
    }
    for (Thread w : workers) {
      w.join(REQUEST_TIMEOUT.toMillis() + 5_000);
    }
    long deadline = System.nanoTime() + REQUEST_TIMEOUT.toNanos() + 5_000_000_000L;
    while (outstanding.get() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    if (ticker != null) {
      ticker.interrupt();
      ticker.join(2_000);
    }
    double seconds = duration.toNanos() / 1e9;
    return new Result(
        seconds,
        sent,
        lightOk.get(),
        lightFailed.get() + outstanding.get(),
        lightH,
        cpuOk.get(),
        cpuFailed.get(),
        cpuH,
        firstFailure[0]);
  }

  /**
   * Closed loop, as the issue-17 measurements were taken: {@code concurrency} platform threads
   * each send the next light request when the last reply came, until {@code count} requests
   * were sent or {@code max} passed, while {@code cpuConcurrency} CPU requests (0: none) stay in
   * flight. A request's latency is send to reply (no intended time in a closed loop: see 'Why
   * open loop' for what that hides). The result's seconds are the light requests' wall time.
   */
  public Result closed(int concurrency, long count, Duration max, int cpuConcurrency)
      throws InterruptedException {
    Histogram lightH = new ConcurrentHistogram(MAX_MICROS, 3);
    Histogram cpuH = new ConcurrentHistogram(MAX_MICROS, 3);
    AtomicLong tickets = new AtomicLong();
    AtomicLong lightOk = new AtomicLong();
    AtomicLong lightFailed = new AtomicLong();
    AtomicLong cpuOk = new AtomicLong();
    AtomicLong cpuFailed = new AtomicLong();
    String[] firstFailure = new String[1];
    HttpRequest lightReq = HttpRequest.newBuilder(light).timeout(REQUEST_TIMEOUT).GET().build();
    HttpRequest cpuReq = HttpRequest.newBuilder(cpu).timeout(REQUEST_TIMEOUT).GET().build();
    java.util.concurrent.atomic.AtomicBoolean lightDone =
        new java.util.concurrent.atomic.AtomicBoolean();
    long start = System.nanoTime();
    long end = start + max.toNanos();
    List<Thread> cpuWorkers = new ArrayList<>();
    for (int w = 0; w < cpuConcurrency; w++) {
      cpuWorkers.add(
          Thread.ofPlatform()
              .daemon()
              .name("load-cpu-" + w)
              .start(
                  () -> {
                    while (!lightDone.get()
                        && System.nanoTime() < end
                        && cpuRequest(http, cpuReq, cpuH, cpuOk, cpuFailed, firstFailure)) {
                      // one request per pass
                    }
                  }));
    }
    if (cpuConcurrency > 0) {
      Thread.sleep(300); // the CPU requests reach their handlers before the light ones count
    }
    long lightStart = System.nanoTime();
    List<Thread> workers = new ArrayList<>();
    for (int w = 0; w < concurrency; w++) {
      workers.add(
          Thread.ofPlatform()
              .daemon()
              .name("load-light-" + w)
              .start(
                  () -> {
                    while (tickets.incrementAndGet() <= count && System.nanoTime() < end) {
                      long t0 = System.nanoTime();
                      try {
                        HttpResponse<byte[]> r =
                            http.send(lightReq, HttpResponse.BodyHandlers.ofByteArray());
                        if (r.statusCode() == 200) {
                          lightH.recordValue(Math.min(MAX_MICROS, (System.nanoTime() - t0) / 1000));
                          lightOk.incrementAndGet();
                        } else {
                          fail(firstFailure, "light: status " + r.statusCode());
                          lightFailed.incrementAndGet();
                        }
                      } catch (IOException e) {
                        fail(firstFailure, "light: " + e);
                        lightFailed.incrementAndGet();
                      } catch (InterruptedException e) {
                        return;
                      }
                    }
                  }));
    }
    for (Thread w : workers) {
      w.join(max.toMillis() + REQUEST_TIMEOUT.toMillis() + 5_000);
    }
    double seconds = (System.nanoTime() - lightStart) / 1e9;
    lightDone.set(true);
    for (Thread w : cpuWorkers) {
      w.join(REQUEST_TIMEOUT.toMillis() + 5_000);
    }
    return new Result(
        seconds,
        lightOk.get() + lightFailed.get(),
        lightOk.get(),
        lightFailed.get(),
        lightH,
        cpuOk.get(),
        cpuFailed.get(),
        cpuH,
        firstFailure[0]);
  }

  private static void fail(String[] first, String what) {
    synchronized (first) {
      if (first[0] == null) {
        first[0] = what;
      }
    }
  }

  /** Parks until {@code deadline} (System.nanoTime); false if interrupted. */
  private static boolean sleepUntil(long deadline) {
    for (long left; (left = deadline - System.nanoTime()) > 0; ) {
      LockSupport.parkNanos(left);
      if (Thread.interrupted()) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void close() throws InterruptedException {
    http.shutdownNow();
    pool.shutdownNow();
    pool.awaitTermination(5, TimeUnit.SECONDS);
  }

  /**
   * One CPU request, timed from its send: counted in {@code ok} and {@code cpuH}, or in {@code
   * failed} with the first failure kept. False once the calling worker is interrupted.
   */
  private static boolean cpuRequest(
      HttpClient http,
      HttpRequest cpuReq,
      Histogram cpuH,
      AtomicLong ok,
      AtomicLong failed,
      String[] firstFailure) {
    long t0 = System.nanoTime();
    try {
      HttpResponse<byte[]> r = http.send(cpuReq, HttpResponse.BodyHandlers.ofByteArray());
      if (r.statusCode() == 200) {
        cpuH.recordValue(Math.min(MAX_MICROS, (System.nanoTime() - t0) / 1000));
        ok.incrementAndGet();
      } else {
        fail(firstFailure, "cpu: status " + r.statusCode());
        failed.incrementAndGet();
      }
    } catch (IOException e) {
      fail(firstFailure, "cpu: " + e);
      failed.incrementAndGet();
    } catch (InterruptedException e) {
      return false;
    }
    return true;
  }
}
