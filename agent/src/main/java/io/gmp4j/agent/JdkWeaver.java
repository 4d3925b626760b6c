package io.gmp4j.agent;

import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.CodeElement;
import java.lang.classfile.CodeTransform;
import java.lang.classfile.Label;
import java.lang.classfile.MethodModel;
import java.lang.classfile.MethodTransform;
import java.lang.classfile.TypeKind;
import java.lang.classfile.instruction.ReturnInstruction;
import java.lang.constant.ClassDesc;
import java.lang.constant.ConstantDescs;
import java.lang.constant.MethodTypeDesc;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Weaves gmp4j's calls into the JDK classes that the {@code *Instrumentation} classes pin, with
 * the JDK's own class-file API ({@code java.lang.classfile}, JDK 24+), by retransformation of
 * the classes already loaded and by a transformer for those loaded later.
 *
 * <h2>Implementation overview: 'JDK weaving'</h2>
 *
 * Each {@link Site} names one method of one boot class (by name and parameters, as the
 * instrumentation's class comment pins it) and one {@link Hook}: what is woven into it. Every
 * woven call sits in its own {@code try { ... } catch (Throwable) {}}, so that a runtime hook
 * that throws leaves the JDK method running as the JDK wrote it (Byte Buddy's {@code suppress =
 * Throwable.class}, which the advice classes had):
 *
 * <pre>
 * SCHEDULER          VirtualThread.&lt;init&gt;: try { scheduler = Hooks.scheduler(scheduler); } ...
 *                    first thing, before the super call (touches only argument 1)
 * SCHEDULE           VirtualThread.schedule(Runnable, long, TimeUnit): at entry
 *                    f = null; try { f = Hooks.schedule(scheduler, command, delay, unit); } ...
 *                    if (f != null) return f; (a gmp4j timer skips the JDK's body)
 * ENTER_SYSCALL      try { Hooks.enterSyscall(); } ... at entry
 * ENTER_UNLESS_TRUE  if (!arg0) try { Hooks.enterSyscall(); } ... at entry (Blocker.begin(Z))
 * EXIT_SYSCALL       try { Hooks.exitSyscall(); } ... at entry (Blocker.end)
 * SYSCALL_BRACKET    boolean e = false; try { e = Hooks.enterSyscall(); } ...
 *                    body, with try { Hooks.exitSyscall(e); } ... before every return, and a
 *                    catch-all around the body that does the same and rethrows
 * NETPOLL_BRACKET    the same with enterNetpoll / exitNetpoll
 * KNOWN_QUEUED_WORK  before every ireturn: v = Hooks.hasKnownQueuedWork(v), v kept on a throw
 * </pre>
 *
 * The class-file API recomputes the stack-map frames of the methods it rewrites; the others are
 * copied as they were. The catch-all of a bracket is added after the method's own handlers, so
 * those still see their exceptions first.
 *
 * <p>Rejected: Byte Buddy's AgentBuilder and Advice, which did this until issue 11's start-up
 * item. Building them loaded about 1,100 Byte Buddy classes from the agent jar (each verified,
 * none in the JDK's CDS archive) and ran them in the interpreter: 700 ms of premain's 870 ms on
 * hello world here. The class-file API is part of java.base, already used by the JDK itself at
 * start-up, and these eight classes take it a few tens of milliseconds. Also rejected: Byte
 * Buddy's repackaged ASM, which would leave the frames to us, as PollEmitter does, for code we
 * do not own.
 *
 * <p>Thread-safety: the tables are immutable once built; {@link #transformed} and {@link
 * #failed} are concurrent sets, written by any class-loading thread, read by the installer.
 */
final class JdkWeaver implements ClassFileTransformer {
  /** What is woven into a {@link Site}; see the table in 'JDK weaving'. */
  enum Hook {
    SCHEDULER,
    SCHEDULE,
    ENTER_SYSCALL,
    ENTER_UNLESS_TRUE,
    EXIT_SYSCALL,
    SYSCALL_BRACKET,
    NETPOLL_BRACKET,
    KNOWN_QUEUED_WORK
  }

  /**
   * One woven method. {@code params} is either the parameter part of the descriptor, {@code
   * "(Ljava/lang/String;)"}, or {@code "/n"} for any n parameters (Blocker.end takes a boolean on
   * JDK 23+ and a long on 21). Native and abstract methods never match: they have no code.
   */
  record Site(String type, String name, String params, boolean isStatic, Hook hook) {
    boolean matches(MethodModel m) {
      if (!m.methodName().equalsString(name)
          || m.code().isEmpty()
          || ((m.flags().flagsMask() & ClassFile.ACC_STATIC) != 0) != isStatic) {
        return false;
      }
      String desc = m.methodType().stringValue();
      if (params.startsWith("/")) {
        return MethodTypeDesc.ofDescriptor(desc).parameterCount()
            == Integer.parseInt(params.substring(1));
      }
      return desc.startsWith(params) && desc.charAt(params.length() - 1) == ')';
    }
  }

  private static final ClassDesc HOOKS = ClassDesc.of("io.gmp4j.runtime.Hooks");
  private static final ClassDesc EXECUTOR = ClassDesc.of("java.util.concurrent.Executor");
  private static final ClassDesc VIRTUAL_THREAD = ClassDesc.of("java.lang.VirtualThread");
  private static final ClassDesc FUTURE = ClassDesc.of("java.util.concurrent.Future");
  private static final MethodTypeDesc FUTURE_OF_SCHEDULE =
      MethodTypeDesc.of(
          FUTURE,
          EXECUTOR,
          ClassDesc.of("java.lang.Runnable"),
          ConstantDescs.CD_long,
          ClassDesc.of("java.util.concurrent.TimeUnit"));
  private static final MethodTypeDesc BOOLEAN = MethodTypeDesc.of(ConstantDescs.CD_boolean);
  private static final MethodTypeDesc VOID = MethodTypeDesc.of(ConstantDescs.CD_void);
  private static final MethodTypeDesc VOID_OF_BOOLEAN =
      MethodTypeDesc.of(ConstantDescs.CD_void, ConstantDescs.CD_boolean);
  private static final MethodTypeDesc BOOLEAN_OF_BOOLEAN =
      MethodTypeDesc.of(ConstantDescs.CD_boolean, ConstantDescs.CD_boolean);
  private static final MethodTypeDesc EXECUTOR_OF_EXECUTOR = MethodTypeDesc.of(EXECUTOR, EXECUTOR);

  /** Internal class name → its sites. */
  private final Map<String, List<Site>> sites;

  /** Types whose failure means "not installed"; their line ends in {@link #fatalSuffix}. */
  private final Set<String> essential;

  private final String fatalSuffix;

  /** Dotted names of the types woven so far. Any thread. */
  private final Set<String> transformed = ConcurrentHashMap.newKeySet();

  /** Dotted names of the types that failed, each reported once. Any thread. */
  private final Set<String> failed = ConcurrentHashMap.newKeySet();

  JdkWeaver(List<Site> sites, Set<String> essential, String fatalSuffix) {
    Map<String, List<Site>> byType = new java.util.HashMap<>();
    for (Site s : sites) {
      byType.computeIfAbsent(s.type().replace('.', '/'), k -> new ArrayList<>()).add(s);
    }
    this.sites = Map.copyOf(byType);
    this.essential = Set.copyOf(essential);
    this.fatalSuffix = fatalSuffix;
  }

  /**
   * Registers this transformer and retransforms the site classes already loaded, one class at a
   * time, so that one the JVM refuses does not keep the others from being woven. Never throws;
   * a failure is one line per type. Called once, by the installer.
   */
  void install(Instrumentation inst) {
    inst.addTransformer(this, true);
    for (String internal : sites.keySet()) {
      String dotted = internal.replace('/', '.');
      Class<?> c;
      try {
        c = Class.forName(dotted, false, null);
      } catch (ClassNotFoundException | LinkageError e) {
        continue; // not on this JDK, or not yet loadable: woven when it loads, if ever
      }
      try {
        inst.retransformClasses(c);
      } catch (Throwable t) {
        warn(dotted, t);
      }
    }
  }

  /** True once {@code typeName} (dotted) was woven without error. Any thread. */
  boolean wasTransformed(String typeName) {
    return transformed.contains(typeName) && !failed.contains(typeName);
  }

  /** True once a warning line was printed for {@code typeName}. Any thread. */
  boolean hasFailed(String typeName) {
    return failed.contains(typeName);
  }

  /** Boot classes named in the sites only; any thread. Never throws. */
  @Override
  public byte[] transform(
      ClassLoader loader,
      String className,
      Class<?> classBeingRedefined,
      ProtectionDomain protectionDomain,
      byte[] classfileBuffer) {
    if (loader != null || className == null) {
      return null;
    }
    List<Site> here = sites.get(className);
    if (here == null) {
      return null;
    }
    String dotted = className.replace('/', '.');
    try {
      byte[] out = weave(classfileBuffer, here);
      transformed.add(dotted);
      return out;
    } catch (Throwable t) {
      warn(dotted, t);
      return null;
    }
  }

  /**
   * The class file with every matching method woven. Throws if a site matched nothing: the shape
   * checks ran first, so that is a bug to report, not a class to leave half woven.
   */
  static byte[] weave(byte[] classfile, List<Site> here) {
    ClassFile cf = ClassFile.of();
    ClassModel model = cf.parse(classfile);
    boolean[] used = new boolean[here.size()];
    byte[] out =
        cf.transformClass(
            model,
            (cb, element) -> {
              if (element instanceof MethodModel m) {
                for (int i = 0; i < here.size(); i++) {
                  if (here.get(i).matches(m)) {
                    used[i] = true;
                    Hook hook = here.get(i).hook();
                    cb.transformMethod(m, MethodTransform.transformingCode(code(hook)));
                    return;
                  }
                }
              }
              cb.with(element);
            });
    for (int i = 0; i < used.length; i++) {
      if (!used[i]) {
        throw new IllegalStateException(
            "no method " + here.get(i).name() + here.get(i).params() + " to weave");
      }
    }
    return out;
  }

  /** The code transform for {@code hook}; a new one per method, since brackets keep state. */
  private static CodeTransform code(Hook hook) {
    return switch (hook) {
      case SCHEDULER ->
          atEntry(b -> b.aload(1).invokestatic(HOOKS, "scheduler", EXECUTOR_OF_EXECUTOR).astore(1));
      case SCHEDULE ->
          new CodeTransform() {
            @Override
            public void atStart(CodeBuilder b) {
              // locals: 0 this, 1 command, 2-3 delay, 4 unit
              int f = b.allocateLocal(TypeKind.REFERENCE);
              b.aconst_null().astore(f);
              suppressed(
                  b,
                  t ->
                      t.aload(0)
                          .getfield(VIRTUAL_THREAD, "scheduler", EXECUTOR)
                          .aload(1)
                          .lload(2)
                          .aload(4)
                          .invokestatic(HOOKS, "schedule", FUTURE_OF_SCHEDULE)
                          .astore(f));
              Label body = b.newLabel();
              b.aload(f).ifnull(body).aload(f).areturn();
              b.labelBinding(body);
            }

            @Override
            public void accept(CodeBuilder b, CodeElement e) {
              b.with(e);
            }
          };
      case ENTER_SYSCALL -> atEntry(b -> b.invokestatic(HOOKS, "enterSyscall", BOOLEAN).pop());
      case EXIT_SYSCALL -> atEntry(b -> b.invokestatic(HOOKS, "exitSyscall", VOID));
      case ENTER_UNLESS_TRUE ->
          new CodeTransform() {
            @Override
            public void atStart(CodeBuilder b) {
              Label skip = b.newLabel();
              b.iload(0).ifne(skip);
              suppressed(b, t -> t.invokestatic(HOOKS, "enterSyscall", BOOLEAN).pop());
              b.labelBinding(skip);
            }

            @Override
            public void accept(CodeBuilder b, CodeElement e) {
              b.with(e);
            }
          };
      case SYSCALL_BRACKET -> new Bracket("enterSyscall", "exitSyscall");
      case NETPOLL_BRACKET -> new Bracket("enterNetpoll", "exitNetpoll");
      case KNOWN_QUEUED_WORK ->
          new CodeTransform() {
            private int v = -1;

            @Override
            public void accept(CodeBuilder b, CodeElement e) {
              if (e instanceof ReturnInstruction r && r.typeKind() == TypeKind.INT) {
                if (v < 0) {
                  v = b.allocateLocal(TypeKind.INT);
                }
                int slot = v;
                b.istore(slot);
                suppressed(
                    b,
                    t ->
                        t.iload(slot)
                            .invokestatic(HOOKS, "hasKnownQueuedWork", BOOLEAN_OF_BOOLEAN)
                            .istore(slot));
                b.iload(slot);
              }
              b.with(e);
            }
          };
    };
  }

  /** A transform that puts {@code call}, suppressed, before the method's first instruction. */
  private static CodeTransform atEntry(java.util.function.Consumer<CodeBuilder> call) {
    return new CodeTransform() {
      @Override
      public void atStart(CodeBuilder b) {
        suppressed(b, call);
      }

      @Override
      public void accept(CodeBuilder b, CodeElement e) {
        b.with(e);
      }
    };
  }

  /** {@code try { call } catch (Throwable ignored) {}}; the stack must be empty around it. */
  private static void suppressed(CodeBuilder b, java.util.function.Consumer<CodeBuilder> call) {
    b.trying(call::accept, c -> c.catchingAll(CodeBuilder::pop));
  }

  /** SYSCALL_BRACKET and NETPOLL_BRACKET: see 'JDK weaving'. One instance per method. */
  private static final class Bracket implements CodeTransform {
    private final String enter;
    private final String exit;
    private int entered;
    private int value = -1;
    private TypeKind valueKind;
    private Label start;

    Bracket(String enter, String exit) {
      this.enter = enter;
      this.exit = exit;
    }

    @Override
    public void atStart(CodeBuilder b) {
      int e = b.allocateLocal(TypeKind.BOOLEAN);
      entered = e;
      b.iconst_0().istore(e);
      suppressed(b, t -> t.invokestatic(HOOKS, enter, BOOLEAN).istore(e));
      start = b.newBoundLabel();
    }

    @Override
    public void accept(CodeBuilder b, CodeElement e) {
      if (e instanceof ReturnInstruction r) {
        // The exit's handler empties the stack, so a return value waits in a local.
        TypeKind kind = r.typeKind();
        if (kind != TypeKind.VOID) {
          if (value < 0 || valueKind != kind) {
            value = b.allocateLocal(kind);
            valueKind = kind;
          }
          b.storeLocal(kind, value);
        }
        callExit(b);
        if (kind != TypeKind.VOID) {
          b.loadLocal(kind, value);
        }
      }
      b.with(e);
    }

    @Override
    public void atEnd(CodeBuilder b) {
      Label end = b.newBoundLabel();
      Label handler = b.newBoundLabel();
      int thrown = b.allocateLocal(TypeKind.REFERENCE);
      b.astore(thrown);
      callExit(b);
      b.aload(thrown).athrow();
      b.exceptionCatchAll(start, end, handler);
    }

    private void callExit(CodeBuilder b) {
      int e = entered;
      suppressed(b, t -> t.iload(e).invokestatic(HOOKS, exit, VOID_OF_BOOLEAN));
    }
  }

  /** One line per failed type, the first time only. Never throws. */
  private void warn(String typeName, Throwable t) {
    if (failed.add(typeName)) {
      Stderr.line(
          "gmp4j: could not instrument "
              + typeName
              + ": "
              + Stderr.describe(t)
              + (essential.contains(typeName) ? fatalSuffix : ""));
    }
  }
}
