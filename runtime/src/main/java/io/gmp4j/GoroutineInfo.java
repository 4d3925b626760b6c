package io.gmp4j;

/**
 * One goroutine as a goroutine dump shows it (Go's {@code pprof/goroutine?debug=1} and
 * {@code debug=2}).
 *
 * @param goid the goroutine id
 * @param status Go's status: idle, runnable, running, syscall, waiting or dead
 * @param waitReason Go's wait reason for a waiting goroutine, else empty
 * @param waitNanos how long it has been waiting, or 0 when not waiting
 * @param thread the virtual thread (its name, its stack through {@link Thread#getStackTrace()})
 */
public record GoroutineInfo(
    long goid, String status, String waitReason, long waitNanos, Thread thread) {}
