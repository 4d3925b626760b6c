package io.gmp4j.bench;

import org.openjdk.jmh.annotations.Fork;

/**
 * {@link PingPongBenchmark} with one P for gmp4j and one carrier for the JDK, so that neither
 * scheduler can run the two ends of the ping-pong in parallel and both must switch goroutines on
 * one thread.
 *
 * <p>Both settings are start-up only: the JDK reads {@code jdk.virtualThreadScheduler.parallelism}
 * once when its scheduler is created, so it cannot be a {@code @Param} applied in {@code @Setup};
 * {@code -Dgmp.gomaxprocs} is the gmp4j equivalent, used here rather than {@code
 * Gmp.gomaxprocs(1)} so that the two sides are configured the same way.
 */
@Fork(
    value = 2,
    jvmArgsAppend = {
      PingPongBenchmark.ADD_OPENS,
      "-Djdk.virtualThreadScheduler.parallelism=1",
      "-Dgmp.gomaxprocs=1"
    })
public class PingPongOneP extends PingPongBenchmark {}
