package io.gmp4j.agent;

import io.gmp4j.agent.poll.Coverage;
import io.gmp4j.agent.poll.PollInjector;
import java.lang.instrument.Instrumentation;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Option {@code preempt.defer}, on by default: the classes that load during start-up get their
 * early polls at once and their placed polls later, by retransformation in the background, so
 * that start-up does not pay for the rewrite.
 *
 * <h2>Implementation overview: 'Deferred polls'</h2>
 *
 * On a framework application nearly all of what the agent adds to start-up is the rewrite of the
 * classes with loops as they load: on Spring Boot 4's web starter, 786 of 3,457 classes, +1.1 to
 * +1.2 s of "process running for" and +2 s of CPU on 2 cores, the same whether the rewritten
 * bytes are used or thrown away (BENCHMARKS.md, 'Deferred polls'). The rewrite runs on the thread
 * that loads the class, in ASM and the injector while both are still interpreted, and C2 then
 * compiles them beside the application's own start-up. With {@code preempt.defer=<quiet>}:
 *
 * <ol>
 *   <li>From premain on, a class that would be rewritten at load (selected, with loops, and not
 *       in the rewrite cache: {@link PollInjector.Deferral}) loads with its early polls instead
 *       (a check at each loop head, patched into its bytes: 'Early polls' in the injector's
 *       EarlyPolls, about a tenth of the rewrite's cost), and {@link #defer} keeps its name. The
 *       poll transformer is registered with retransform capability, as for an attach.
 *   <li>The daemon platform thread {@code gmp4j-defer} ends the deferral once, over one period
 *       of {@code quiet}, no class was deferred (start-up's class loading is over) and the process
 *       used at most a quarter of one CPU ({@value #IDLE_SHARE}: the application is not serving
 *       yet, or between bursts). From then on classes get their placed polls as they load. A
 *       process that is never quiet keeps its early polls: every loop stays preemptible, only
 *       slower where the placed polls would count down, but for the array loops without calls,
 *       whose classes get their placed polls by a deadline ('The deadline'). (Until the early
 *       polls, a deferred class had no poll, so the deferral also ended {@value #MAX_SECONDS} s
 *       after premain whatever the load; that deadline stays for classes an AOT cache loaded
 *       before premain with {@code preempt.defer} set, which have none.) Why wait for a quiet
 *       process: a
 *       retransformation deoptimizes the compiled code that depends on the class, so a class
 *       that the traffic has made hot is compiled twice. On the Spring Boot app with traffic from
 *       its first second, a deferral that waited for class loading alone ended while the traffic
 *       ran, and retransforming its 858 classes took 7.2 s, in which the app served 660
 *       requests/s in its first 5,000 against 1,430 without the agent (BENCHMARKS.md, 'Deferred
 *       polls'). And a method running when its class is retransformed goes on in its old version,
 *       which HotSpot never compiles again: a loop running at that moment ran 11 times slower, in
 *       the interpreter, until it returned (BENCHMARKS.md, 'Early polls'); so a class that a
 *       thread is in is left for later, and kept with its early polls if a thread stays in it
 *       ('Running classes' in Retransformer).
 *   <li>It waits until every deferred class is defined (a class is defined just after its
 *       transform returns; one whose definition failed is never found, and is dropped after
 *       {@value #DEFINE_WAIT_MS} ms), then hands them to the {@link Retransformer}: batches of 32,
 *       each after the process was idle for {@value #GATE_MS} ms (the same quarter of one CPU;
 *       {@link Ender#await}), so a burst that comes meanwhile holds the rest back. They go
 *       through the same transformer and injector as at load, which get the class's bytes as
 *       they were before any poll (the JVM keeps them for a retransformation), so each gets the
 *       placed polls it would have got at load. Progress and the summary go to the {@code
 *       gmp4j.retransform} property, and to stderr only with {@code preempt.report=1}.
 * </ol>
 *
 * Ordering: {@link #defer} and {@link #end} hold this object's monitor, so a class is either
 * deferred before the end (and its name is in the set {@code end} returns) or gets its polls at
 * load; none falls between.
 *
 * <h2>Deferred polls by default</h2>
 *
 * Without {@code preempt.defer}, premain defers with a quiet period of 1 s ({@link
 * #DEFAULT_QUIET_NANOS}), except where the deferral would cost more than it saves: with {@code
 * preempt.cache} (a training start exits before the deferral ends and would write no rewrite;
 * the cache's second start skips the rewrites anyway), with {@code preempt.prologue} (the early
 * form has no prologue poll, so a recursion without loops would wait), after an attach (no
 * start-up), and when an AOT cache loaded classes before premain (they get no early polls, so
 * they are retransformed at once, as before). {@code preempt.defer=0} turns it off.
 *
 * <p>The retransformation races with the application: a method that is running, or parked on
 * some virtual thread's stack, when its class is retransformed goes on in its old version, in
 * the interpreter, until it returns. The quiet period and the idle look before each batch made
 * that rare, not impossible: with only those, {@code ServersIT}'s CPU requests timed out in two
 * full runs of six, the deferral having ended in the light phase just before them and
 * retransformed the endpoint's class as their loops began (BENCHMARKS.md, 'Running classes'),
 * and the deferral was opt-in until the following. Now each batch is rewritten first and then
 * checked against every stack, and a class that a thread is in, in a method the rewrite
 * changes, waits ('Running classes' and 'Prepared rewrites' in Retransformer): what is left is a
 * thread entering such a method between that look and the safepoint that follows it, a hash of
 * each class file later.
 *
 * <p>What it costs (BENCHMARKS.md, 'Early polls'): the early form is a volatile load and a
 * branch on every pass until the class is retransformed, where the rewrite would count down or
 * strip-mine, so a loop is slower until the first quiet moment, or for good in a process that
 * is never quiet (but an array loop without calls: 'The deadline'); and the retransformation,
 * at a quiet moment, costs the recompilation of what the classes had compiled.
 *
 * <h2>The deadline</h2>
 *
 * A loop that reads or writes an array and calls nothing pays most for the early form: 2.5x to
 * 6.1x its placed polls where C2 would vectorize it, 1.5x to 3x in the searches and the switch
 * it does not ('Array loops' in the injector's EarlyPolls). Until issue 17's last start-up change
 * such a method got its placed polls at load, from the rewrite of that method alone: on the
 * Spring Boot app 48 to 61 of the 790 classes with loops, rewritten by ASM and the injector while
 * both were still interpreted, and compiled by C1 beside the application's own start. Now, until
 * {@code preempt.deadline} ({@link #DEFAULT_DEADLINE_NANOS}: 60 s after premain, by default),
 * such a class is deferred like the others, with the early check in its array loops too, so that
 * no class is rewritten at load and ASM does not run in start-up at all:
 *
 * <ul>
 *   <li>Those whose array loops C2 may vectorize (a straight body over primitive arrays:
 *       EarlyPolls' {@code mayVectorize}; 17 of the Spring Boot app's 61) are told apart ({@link
 *       #defer}'s {@code arrayLoops}). At the deadline, if the process has not been quiet,
 *       gmp4j-defer retransforms them alone ({@link #endArrays}), in batches as in step 3 with
 *       the 'Running classes' look, each batch waiting for an idle moment for {@value
 *       #DEADLINE_GATE_LOOKS} of step 3's looks at most (a class that a thread stays in goes
 *       back to the deferral, {@link #handBack}, for its end), and prints its own line with {@code
 *       preempt.report=1} ({@code gmp4j: preempt.defer: 17 classes with array loops, at the
 *       deadline (60000 ms), in 1806 ms: 17 given polls, 0 left alone}); {@code
 *       gmp4j.retransform} still says {@code deferring}.
 *   <li>The others (searches, reference walks, switches) are deferred as any loop is: placed
 *       polls at a quiet moment, early polls for good in a process that is never quiet. On the
 *       Spring Boot app with all 61 in the early form, the server's CPU per request once warm
 *       was 111 us against 116 with their placed polls (four rounds each): a framework's array
 *       loops are short (a header, a JSON string), and the 1.5x to 3x of a search kernel does not
 *       show.
 *   <li>A quiet moment before the deadline ends the deferral of every class, these included
 *       (step 2). After the deadline a class with an array loop without calls loads with its
 *       array methods' placed polls, as before.
 * </ul>
 *
 * What it buys and costs on the Spring Boot app (BENCHMARKS.md, 'Array loops deferred, with a
 * deadline'): start-up 0.27 s shorter and cold throughput 1.09x, paired with the agent before
 * over 28 rounds; and, in a process that is busy at the deadline, the retransformation's
 * deoptimization of the code that had inlined those classes (about 290 methods made not entrant
 * for 17 classes, against 650 for all 61): under a closed-loop load that saturates both CPUs,
 * 30-45% less throughput for some 10 s, once. {@code preempt.deadline=0} brings the
 * placed polls at load back. The deadline is a time after premain rather than after the last
 * class load, so that an application that loads classes without end still gets there.
 *
 * <p>How this differs from Go: a Go loop is preemptible from its first instruction (asynchronous
 * preemption by signal), and its checks are compiled in once. Here a loop is preemptible from
 * its first instruction too, by its early poll, and its placement is made twice: early at load,
 * placed when the deferral ends. Until issue 17's early polls, a deferred class had no poll at
 * all until then, and a G in its loops was covered only by the hog hand-off ('Hog hand-off' in
 * the runtime's HogHandoff). A class that a thread stays in keeps its early polls for good.
 *
 * <p>Rejected:
 *
 * <ul>
 *   <li>Rewriting the class in the background while it loads: the JVM needs the bytes before
 *       the transform returns.
 *   <li>Rewriting ahead of the load, on a thread of its own, the classes that a loading class
 *       names in its constant pool (read through the same loader; taken at load if the bytes are
 *       the same). Tried in issue 17 on the Spring Boot app: 522-565 of the 786 rewrites were
 *       ready in time, and the main thread's samples in the injector fell from about a fifth to
 *       a tenth, yet start-up was slower than without it in every round: by 0.43-0.69 s in
 *       eight rounds on a quiet machine, with 1.1-1.8 s more CPU (and in six more beside other
 *       jobs). The prefetch thread made 920-970 rewrites (about 400 of classes that never
 *       loaded, besides reading every class named to find the ones with loops), on the second
 *       core, which the JIT compilers keep busy during a start-up.
 *   <li>Rewriting only the classes seen hot: a hot loop is found by running it, and its frame
 *       keeps the old code until it returns, so the hog that needs the poll most would never get
 *       it.
 * </ul>
 */
final class DeferredPolls implements PollInjector.Deferral {
  /**
   * The quiet period when {@code preempt.defer} is not set ('Deferred polls by default'): 1 s,
   * the value measured in BENCHMARKS.md since the option exists.
   */
  static final long DEFAULT_QUIET_NANOS = 1_000_000_000L;

  /**
   * The latest end of the deferral, in seconds after premain (step 2), when it holds classes
   * without early polls (an AOT cache's, with {@code preempt.defer} set).
   */
  static final long MAX_SECONDS = 60;

  /** Step 3's look at the process before each batch, in milliseconds. */
  static final long GATE_MS = 100;

  /**
   * 'The deadline': how many of step 3's looks a batch waits for an idle process at most (1 s):
   * the process is busy, or the deadline would not have come first.
   */
  static final int DEADLINE_GATE_LOOKS = 10;

  /** Step 2's quiet process: it used at most 1/IDLE_SHARE of one CPU over the quiet period. */
  static final long IDLE_SHARE = 4;

  /** How long step 3 waits for a deferred class to be defined. */
  static final long DEFINE_WAIT_MS = 2000;

  /**
   * The deadline when {@code preempt.deadline} is not set ('The deadline'): 60 s after premain,
   * the same as {@link #MAX_SECONDS}.
   */
  static final long DEFAULT_DEADLINE_NANOS = MAX_SECONDS * 1_000_000_000L;

  /** The quiet period of step 2, in nanoseconds. Immutable. */
  private final long quietNanos;

  /**
   * 'The deadline', in nanoseconds after premain; 0: a class with an array loop without calls is
   * not deferred, its array methods get their placed polls at load. Immutable.
   */
  private final long deadlineNanos;

  /** When this was built (premain), by System.nanoTime. Immutable. */
  private final long startNanos;

  /**
   * True until {@link #end}. Written under the monitor; volatile so that {@link #defer} reads it
   * without the monitor once the deferral has ended.
   */
  private volatile boolean deferring = true;

  /**
   * True once {@link #deferAll} deferred a class that has no early polls: then the deferral
   * ends at {@value #MAX_SECONDS} s at the latest. Guarded by the monitor.
   */
  private boolean withoutPolls;

  /**
   * True until 'The deadline' passes or {@link #end}, while {@link #defer} takes classes with
   * early polls in an array loop without calls. Written under the monitor; volatile so that
   * {@link #deferringArrays} reads it without the monitor.
   */
  private volatile boolean deferringArrays;

  /** The internal names deferred so far. Guarded by the monitor. */
  private final Set<String> names = new HashSet<>();

  /**
   * Those of {@link #names} with early polls in an array loop without calls that C2 may
   * vectorize, until 'The deadline'. Guarded by the monitor.
   */
  private final Set<String> arrayNames = new HashSet<>();

  /**
   * How many times {@link #defer} took a class into {@link #arrayNames} (a name that two loaders
   * define counts twice, as in Coverage's count of early polls). Guarded by the monitor.
   */
  private int arraysTaken;

  /** When the last class was deferred (System.nanoTime). Written under the monitor; volatile. */
  private volatile long lastDeferNanos;

  DeferredPolls(long quietNanos, long deadlineNanos) {
    this.quietNanos = quietNanos;
    this.deadlineNanos = deadlineNanos;
    this.deferringArrays = deadlineNanos > 0;
    this.startNanos = System.nanoTime();
    this.lastDeferNanos = startNanos;
  }

  /** Step 1. Any class-loading thread. */
  @Override
  public boolean defer(ClassLoader loader, String internalClassName, boolean arrayLoops) {
    if (!deferring) {
      return false; // volatile: after the end, no monitor
    }
    synchronized (this) {
      if (!deferring || (arrayLoops && !deferringArrays)) {
        return false;
      }
      names.add(internalClassName);
      if (arrayLoops) {
        arrayNames.add(internalClassName);
        arraysTaken++;
      }
      lastDeferNanos = System.nanoTime();
      return true;
    }
  }

  /** Whether {@link #defer} takes a class with an array loop without calls. Any thread. */
  @Override
  public boolean deferringArrays() {
    return deferringArrays;
  }

  /**
   * 'The deadline': the classes deferred with early polls in an array loop that C2 may
   * vectorize, taken out of the deferral, and how many times they were taken; no such class is
   * deferred from then on. Only on gmp4j-defer.
   */
  synchronized Due endArrays() {
    deferringArrays = false;
    Due due = new Due(new HashSet<>(arrayNames), arraysTaken);
    names.removeAll(due.names);
    arrayNames.clear();
    arraysTaken = 0;
    return due;
  }

  /** What {@link #endArrays} hands over: the names, and how many early polls Coverage counted. */
  record Due(Set<String> names, int taken) {}

  /**
   * 'The deadline': classes of {@link #endArrays} that kept their early polls (a thread stayed in
   * them) or were not retransformed, back in the deferral, for its end to retransform. Only on
   * gmp4j-defer.
   */
  synchronized void handBack(Set<String> internalNames) {
    if (deferring) {
      names.addAll(internalNames);
    }
  }

  /**
   * Defers the classes an AOT cache loaded before premain ('Classes loaded before premain' in
   * AgentInstaller), by internal name. Called once, by premain, before {@link #start}.
   */
  synchronized void deferAll(Set<String> internalNames) {
    names.addAll(internalNames);
    withoutPolls |= !internalNames.isEmpty();
  }

  /** {@link #withoutPolls}. Any thread. */
  synchronized boolean withoutPolls() {
    return withoutPolls;
  }

  /** Step 2's end: the names deferred, after which no class is. Only on gmp4j-defer. */
  synchronized Set<String> end() {
    deferring = false;
    deferringArrays = false;
    arrayNames.clear();
    arraysTaken = 0;
    return new HashSet<>(names);
  }

  /** Whether classes are still being deferred. Any thread. */
  @Override
  public boolean deferring() {
    return deferring;
  }

  /**
   * Starts gmp4j-defer (steps 2 and 3), which retransforms through {@code transformer}. Called
   * once, by the installer, after it registered {@code transformer}. Never throws: if the thread
   * cannot start, the deferral ends here and the classes deferred so far stay without polls,
   * with one line.
   */
  void start(Instrumentation inst, PreemptPollTransformer transformer, boolean report) {
    try {
      AgentState.publish(AgentState.RETRANSFORM, "deferring");
      Thread t = new Thread(new Ender(this, inst, transformer, report), "gmp4j-defer");
      t.setDaemon(true);
      t.start();
    } catch (Throwable t) {
      Set<String> lost = end();
      Stderr.line(
          "gmp4j: preempt.defer: cannot start: "
              + Stderr.describe(t)
              + "; "
              + lost.size()
              + " classes deferred so far keep running without polls");
      AgentState.publish(AgentState.RETRANSFORM, "done gmp4j: preempt.defer did not run");
    }
  }

  /** Steps 2 and 3 on gmp4j-defer; a class, not a lambda (see 'No lambdas' in JdkWeaver). */
  private static final class Ender implements Runnable, Retransformer.Gate {
    private final DeferredPolls deferral;
    private final Instrumentation inst;
    private final PreemptPollTransformer transformer;
    private final boolean report;

    Ender(
        DeferredPolls deferral,
        Instrumentation inst,
        PreemptPollTransformer transformer,
        boolean report) {
      this.deferral = deferral;
      this.inst = inst;
      this.transformer = transformer;
      this.report = report;
    }

    @Override
    public void run() {
      Set<String> todo;
      try {
        long max = deferral.startNanos + MAX_SECONDS * 1_000_000_000L;
        long period = Math.max(10_000_000L, deferral.quietNanos);
        long t0 = System.nanoTime();
        long cpu0 = processCpuNanos();
        long deadline = deferral.startNanos + deferral.deadlineNanos;
        for (; ; ) {
          long sleep = period; // 'The deadline' is kept even when the quiet period is longer
          if (deferral.deferringArrays()) {
            sleep = Math.max(10_000_000L, Math.min(period, deadline - System.nanoTime()));
          }
          Thread.sleep(sleep / 1_000_000);
          long now = System.nanoTime();
          long cpu = processCpuNanos();
          boolean whole = sleep == period; // step 2's quiet is judged over a whole period
          boolean loadingQuiet = now - deferral.lastDeferNanos >= deferral.quietNanos;
          boolean cpuQuiet = whole && idle(cpu0, cpu, now - t0);
          if ((loadingQuiet && cpuQuiet) || (now >= max && deferral.withoutPolls())) {
            break;
          }
          if (now - deadline >= 0 && deferral.deferringArrays()) {
            arrayDeadline(deferral.endArrays()); // 'The deadline'
            now = System.nanoTime(); // its own CPU is not the application's
            cpu = processCpuNanos();
            whole = true;
          }
          if (whole) {
            t0 = now;
            cpu0 = cpu;
          }
        }
        todo = deferral.end();
        awaitDefined(todo);
      } catch (Throwable t) {
        todo = deferral.end(); // interrupted or worse: still give the classes their polls
      }
      new Retransformer(
              inst,
              transformer,
              todo,
              "gmp4j: preempt.defer: ",
              "deferred at start-up",
              !report,
              true,
              this)
          .run();
      Coverage.global().earlyRewritten(); // every class it took with early polls: retransformed
    }

    /**
     * 'The deadline': retransforms {@code due}, the classes deferred with early polls in an
     * array loop without calls, while the rest stay deferred; each batch waits for an idle
     * moment as at the end, but for {@value #DEADLINE_GATE_LOOKS} looks at most.
     */
    private void arrayDeadline(Due due) throws InterruptedException {
      if (due.names.isEmpty()) {
        return;
      }
      Set<String> kept = new HashSet<>();
      try {
        awaitDefined(due.names);
        new Retransformer(
                inst,
                transformer,
                due.names,
                "gmp4j: preempt.defer: ",
                "with array loops, at the deadline (" + deferral.deadlineNanos / 1_000_000 + " ms)",
                !report,
                false,
                new Retransformer.Gate() {
                  @Override
                  public void await() throws InterruptedException {
                    awaitIdle(DEADLINE_GATE_LOOKS);
                  }

                  @Override
                  public void kept(List<Class<?>> running) {
                    for (Class<?> c : running) {
                      kept.add(c.getName().replace('.', '/'));
                    }
                  }
                })
            .run();
      } catch (InterruptedException e) {
        deferral.handBack(due.names); // the end retransforms them, if it comes
        throw e;
      }
      deferral.handBack(kept); // still early, and still counted so: the end gives them polls
      Coverage.global().earlyRewritten(due.taken - kept.size());
    }

    /**
     * Whether the process used at most 1/{@value #IDLE_SHARE} of one CPU between two readings of
     * {@link #processCpuNanos} {@code wallNanos} apart; true where the OS does not say.
     */
    private static boolean idle(long cpu0, long cpu, long wallNanos) {
      return cpu < 0 || cpu0 < 0 || (cpu - cpu0) * IDLE_SHARE <= wallNanos;
    }

    /**
     * Step 3's gate before each batch: returns once the process was idle over {@value
     * #GATE_MS} ms, this thread asleep. A loop that is running when its class is retransformed
     * keeps running the old method, and HotSpot never compiles an old method again: measured,
     * a loop running at a retransformation ran in the interpreter, 11 times slower, until it
     * returned. A busy process is the one likely to be in such a loop.
     */
    @Override
    public void await() throws InterruptedException {
      awaitIdle(Integer.MAX_VALUE);
    }

    /**
     * Returns once the process was idle over {@value #GATE_MS} ms, this thread asleep, or after
     * {@code looks} such periods that were not.
     */
    private static void awaitIdle(int looks) throws InterruptedException {
      for (int i = 0; i < looks; i++) {
        long t0 = System.nanoTime();
        long cpu0 = processCpuNanos();
        Thread.sleep(GATE_MS);
        if (idle(cpu0, processCpuNanos(), System.nanoTime() - t0)) {
          return;
        }
      }
    }

    /** The CPU time this process has used, in nanoseconds, or -1 where the OS does not say. */
    private static long processCpuNanos() {
      try {
        java.util.Optional<java.time.Duration> d =
            ProcessHandle.current().info().totalCpuDuration();
        return d.isPresent() ? d.get().toNanos() : -1;
      } catch (RuntimeException e) {
        return -1;
      }
    }

    /** Step 3's wait: returns once every name in {@code todo} is a loaded class, or times out. */
    private void awaitDefined(Set<String> todo) throws InterruptedException {
      long deadline = System.nanoTime() + DEFINE_WAIT_MS * 1_000_000L;
      while (!todo.isEmpty()) {
        Set<String> missing = new HashSet<>(todo);
        for (Class<?> c : inst.getAllLoadedClasses()) {
          if (!c.isArray() && !c.isPrimitive()) {
            missing.remove(c.getName().replace('.', '/'));
          }
        }
        if (missing.isEmpty() || System.nanoTime() >= deadline) {
          return; // the missing ones failed to define: Retransformer finds nothing for them
        }
        Thread.sleep(20);
      }
    }
  }
}
