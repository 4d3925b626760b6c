/**
 * gmp4j's scheduler: Go's GMP model (proc.go, runtime2.go) for JDK 25 virtual threads.
 * <strong>Internal and unstable.</strong> Nothing here is API: the supported entry points are
 * {@code io.gmp4j.Gmp} and the agent's options. The few public types and members exist only
 * because other modules must call them across a package or class-loader boundary, and may change
 * in any release:
 *
 * <ul>
 *   <li>{@link io.gmp4j.runtime.Hooks} and {@link io.gmp4j.runtime.Preempt#poll}: called by the
 *       agent's advice, by code it weaves into the JDK, and by the polls it injects.
 *   <li>{@link io.gmp4j.runtime.Config} (the option table), {@link
 *       io.gmp4j.runtime.LiveOptions#KEYS}: read by the agent to check options before it starts
 *       anything.
 *   <li>{@link io.gmp4j.runtime.Sched}'s public methods: called by {@code io.gmp4j.Gmp}.
 * </ul>
 *
 * <h2>Why one package</h2>
 *
 * The agent appends this jar to the boot class path ({@code
 * Instrumentation.appendToBootstrapClassLoaderSearch}), because the JDK's own {@code
 * VirtualThread} must reach it. There the package is the unit of privacy: a sub-package would
 * force {@code public} on whatever the protocols share, and so expose it to every class the host
 * application loads. The classes are split by protocol instead, one protocol per file, in this
 * one package (see docs/DESIGN.md).
 *
 * <h2>Conventions</h2>
 *
 * <ul>
 *   <li>Names are Go's, in lowerCamel at Go's word boundaries ({@code runqPut}, {@code
 *       findRunnable}, {@code handoffP}); the first doc line of a type names its Go counterpart.
 *       JVM-only ideas use the JDK's words (mount, pinned, carrier, park, yield).
 *   <li>Each class that holds a protocol opens with an implementation overview; sections carry
 *       quoted names ('Hog hand-off', 'The phold word', 'Delicate dance') that other comments
 *       cite.
 *   <li>Every shared field says who writes it, who reads it, in which memory order and under
 *       which guard. Atomics use VarHandles named after their field ({@code RUNQ_HEAD}), moded
 *       calls only, each with an end-of-line note naming its pair.
 *   <li>Each method that touches shared state ends its doc with its caller line ("Called only by
 *       this M.", "Requires sched.lock.", "Any thread."), backed by an {@code assert} where that
 *       is cheap.
 *   <li>Each state machine (G status, P status, the phold word) has one transition table,
 *       printed in its class comment and held in code ({@code StateTable});
 *       every write goes through one method that asserts the edge.
 *   <li>Impossible states throw {@code InternalError} prefixed with the function's name; expected
 *       shutdown races return quietly. Nothing here throws into the application's code.
 *   <li>Asserts are for the tests, which run with {@code -ea}; production pays nothing for them.
 * </ul>
 */
package io.gmp4j.runtime;
