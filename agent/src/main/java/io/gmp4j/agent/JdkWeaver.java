package io.gmp4j.agent;

import java.lang.classfile.ClassBuilder;
import java.lang.classfile.ClassElement;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.ClassTransform;
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
 * MBEAN_SERVER       before every areturn: try { Hooks.platformMBeanServer(v); } ..., v returned
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
 * <p>'No lambdas': the transforms are small classes, and the try blocks are emitted by {@link
 * #beginSuppressed} and {@link #endSuppressed} instead of {@code CodeBuilder.trying}'s two
 * consumers. Each lambda links at its first run, on premain's thread, where it spun a hidden
 * class in the interpreter (thirteen of them here before issue 11's fourth start-up session).
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
    KNOWN_QUEUED_WORK,
    MBEAN_SERVER
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
  private static final MethodTypeDesc VOID_OF_OBJECT =
      MethodTypeDesc.of(ConstantDescs.CD_void, ConstantDescs.CD_Object);
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
      String internal = s.type().replace('.', '/');
      List<Site> list = byType.get(internal);
      if (list == null) {
        list = new ArrayList<>();
        byType.put(internal, list);
      }
      list.add(s);
    }
    this.sites = Map.copyOf(byType);
    this.essential = Set.copyOf(essential);
    this.fatalSuffix = fatalSuffix;
  }

  /**
   * Registers this transformer and retransforms the site classes already loaded: all in one call
   * ('One retransformation'), and if the JVM refuses that, one class at a time, so that one the
   * JVM refuses does not keep the others from being woven. Never throws; a failure is one line
   * per type. Called once, by the installer.
   *
   * <p>'One retransformation': each {@code retransformClasses} call is one JVMTI
   * RedefineClasses operation, a safepoint that also walks every loaded class to adjust method
   * references; eight calls walked them eight times on premain's thread. The JVM redefines a
   * batch all or nothing, so after a refused batch nothing is woven and {@link #transformed} is
   * cleared before the one-by-one retry.
   */
  void install(Instrumentation inst) {
    inst.addTransformer(this, true);
    List<Class<?>> loaded = new ArrayList<>();
    for (String internal : sites.keySet()) {
      try {
        loaded.add(Class.forName(internal.replace('/', '.'), false, null));
      } catch (ClassNotFoundException | LinkageError e) {
        // not on this JDK, or not yet loadable: woven when it loads, if ever
      }
    }
    try {
      inst.retransformClasses(loaded.toArray(new Class<?>[0]));
      return;
    } catch (Throwable refused) {
      transformed.clear(); // nothing of the batch was applied
    }
    for (Class<?> c : loaded) {
      try {
        inst.retransformClasses(c);
      } catch (Throwable t) {
        transformed.remove(c.getName());
        warn(c.getName(), t);
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
   *
   * <p>The transforms are classes, not lambdas ('No lambdas' in the class comment).
   */
  static byte[] weave(byte[] classfile, List<Site> here) {
    ClassFile cf = ClassFile.of();
    ClassModel model = cf.parse(classfile);
    Weave weave = new Weave(here);
    byte[] out = cf.transformClass(model, weave);
    for (int i = 0; i < weave.used.length; i++) {
      if (!weave.used[i]) {
        throw new IllegalStateException(
            "no method " + here.get(i).name() + here.get(i).params() + " to weave");
      }
    }
    return out;
  }

  /** Rewrites the methods that match a site, copies every other element. */
  private static final class Weave implements ClassTransform {
    private final List<Site> here;
    final boolean[] used;

    Weave(List<Site> here) {
      this.here = here;
      this.used = new boolean[here.size()];
    }

    @Override
    public void accept(ClassBuilder cb, ClassElement element) {
      if (element instanceof MethodModel m) {
        for (int i = 0; i < here.size(); i++) {
          if (here.get(i).matches(m)) {
            used[i] = true;
            cb.transformMethod(m, MethodTransform.transformingCode(code(here.get(i).hook())));
            return;
          }
        }
      }
      cb.with(element);
    }
  }

  /** The code transform for {@code hook}; a new one per method, since they keep state. */
  private static CodeTransform code(Hook hook) {
    return switch (hook) {
      case SYSCALL_BRACKET -> new Bracket("enterSyscall", "exitSyscall");
      case NETPOLL_BRACKET -> new Bracket("enterNetpoll", "exitNetpoll");
      case KNOWN_QUEUED_WORK ->
          new AtReturn(TypeKind.INT, "hasKnownQueuedWork", BOOLEAN_OF_BOOLEAN);
      case MBEAN_SERVER -> new AtReturn(TypeKind.REFERENCE, "platformMBeanServer", VOID_OF_OBJECT);
      default -> new AtEntry(hook);
    };
  }

  /**
   * Opens {@code try { ... } catch (Throwable ignored) {}} around the code emitted until {@link
   * #endSuppressed}; the stack must be empty around it. What {@code CodeBuilder.trying} with
   * {@code catchingAll(pop)} emits, without its two lambdas per call.
   */
  private static Label beginSuppressed(CodeBuilder b) {
    return b.newBoundLabel();
  }

  /** Closes the block {@link #beginSuppressed} opened at {@code start}. */
  private static void endSuppressed(CodeBuilder b, Label start) {
    Label end = b.newBoundLabel();
    Label after = b.newLabel();
    b.goto_(after);
    Label handler = b.newBoundLabel();
    b.pop();
    b.labelBinding(after);
    b.exceptionCatchAll(start, end, handler);
  }

  /** SCHEDULER, SCHEDULE, ENTER_SYSCALL, EXIT_SYSCALL, ENTER_UNLESS_TRUE: all at entry. */
  private static final class AtEntry implements CodeTransform {
    private final Hook hook;

    AtEntry(Hook hook) {
      this.hook = hook;
    }

    @Override
    public void atStart(CodeBuilder b) {
      switch (hook) {
        case SCHEDULER -> {
          Label s = beginSuppressed(b);
          b.aload(1).invokestatic(HOOKS, "scheduler", EXECUTOR_OF_EXECUTOR).astore(1);
          endSuppressed(b, s);
        }
        case SCHEDULE -> {
          // locals: 0 this, 1 command, 2-3 delay, 4 unit
          int f = b.allocateLocal(TypeKind.REFERENCE);
          b.aconst_null().astore(f);
          Label s = beginSuppressed(b);
          b.aload(0)
              .getfield(VIRTUAL_THREAD, "scheduler", EXECUTOR)
              .aload(1)
              .lload(2)
              .aload(4)
              .invokestatic(HOOKS, "schedule", FUTURE_OF_SCHEDULE)
              .astore(f);
          endSuppressed(b, s);
          Label body = b.newLabel();
          b.aload(f).ifnull(body).aload(f).areturn();
          b.labelBinding(body);
        }
        case ENTER_SYSCALL -> {
          Label s = beginSuppressed(b);
          b.invokestatic(HOOKS, "enterSyscall", BOOLEAN).pop();
          endSuppressed(b, s);
        }
        case EXIT_SYSCALL -> {
          Label s = beginSuppressed(b);
          b.invokestatic(HOOKS, "exitSyscall", VOID);
          endSuppressed(b, s);
        }
        case ENTER_UNLESS_TRUE -> {
          Label skip = b.newLabel();
          b.iload(0).ifne(skip);
          Label s = beginSuppressed(b);
          b.invokestatic(HOOKS, "enterSyscall", BOOLEAN).pop();
          endSuppressed(b, s);
          b.labelBinding(skip);
        }
        default -> throw new IllegalArgumentException(hook + " is not woven at entry");
      }
    }

    @Override
    public void accept(CodeBuilder b, CodeElement e) {
      b.with(e);
    }
  }

  /**
   * KNOWN_QUEUED_WORK and MBEAN_SERVER: before every return of a {@code kind} value, the value
   * goes to {@code hook}, which returns what the method returns instead (KNOWN_QUEUED_WORK) or
   * returns nothing, and the value stays (MBEAN_SERVER); on a throw it stays too. One instance
   * per method.
   */
  private static final class AtReturn implements CodeTransform {
    private final TypeKind kind;
    private final String hook;
    private final MethodTypeDesc type;
    private int v = -1;

    AtReturn(TypeKind kind, String hook, MethodTypeDesc type) {
      this.kind = kind;
      this.hook = hook;
      this.type = type;
    }

    @Override
    public void accept(CodeBuilder b, CodeElement e) {
      if (e instanceof ReturnInstruction r && r.typeKind() == kind) {
        if (v < 0) {
          v = b.allocateLocal(kind);
        }
        b.storeLocal(kind, v);
        Label s = beginSuppressed(b);
        b.loadLocal(kind, v).invokestatic(HOOKS, hook, type);
        if (!type.returnType().equals(ConstantDescs.CD_void)) {
          b.storeLocal(kind, v);
        }
        endSuppressed(b, s);
        b.loadLocal(kind, v);
      }
      b.with(e);
    }
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
      entered = b.allocateLocal(TypeKind.BOOLEAN);
      b.iconst_0().istore(entered);
      Label s = beginSuppressed(b);
      b.invokestatic(HOOKS, enter, BOOLEAN).istore(entered);
      endSuppressed(b, s);
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
      Label s = beginSuppressed(b);
      b.iload(entered).invokestatic(HOOKS, exit, VOID_OF_BOOLEAN);
      endSuppressed(b, s);
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
