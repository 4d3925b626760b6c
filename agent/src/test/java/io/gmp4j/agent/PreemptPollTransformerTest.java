package io.gmp4j.agent;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.Test;

/** Which classes reach the poll injector, and what happens when it throws. */
class PreemptPollTransformerTest {
  private static final byte[] IN = {1, 2, 3};
  private static final byte[] OUT = {4, 5, 6};

  private final List<String> seen = new ArrayList<>();
  private final PreemptPollTransformer transformer =
      new PreemptPollTransformer(
          (loader, name, classfile) -> {
            seen.add(name);
            return OUT;
          });
  private final ClassLoader app = new ClassLoader(null) {};

  @Test
  void applicationClassesGoToTheInjector() {
    assertArrayEquals(OUT, transformer.transform(app, "com/acme/Main", null, null, IN));
    assertArrayEquals(OUT, transformer.transform(app, "Main", null, null, IN));
    assertArrayEquals(OUT, transformer.transform(app, "javalike/Main", null, null, IN));
    assertEquals(List.of("com/acme/Main", "Main", "javalike/Main"), seen);
  }

  @Test
  void bootAndPlatformClassesNeverDo() {
    assertNull(transformer.transform(null, "com/acme/Main", null, null, IN));
    assertNull(
        transformer.transform(
            ClassLoader.getPlatformClassLoader(), "com/acme/Main", null, null, IN));
    assertTrue(seen.isEmpty(), seen.toString());
  }

  @Test
  void jdkAgentRuntimeAndByteBuddyClassesNeverDo() {
    for (String name :
        new String[] {
          "java/util/Foo",
          "javax/net/Foo",
          "jdk/internal/Foo",
          "sun/misc/Foo",
          "com/sun/net/Foo",
          "io/gmp4j/runtime/Sched",
          "io/gmp4j/Gmp",
          "io/gmp4j/agent/poll/PollInjector",
          "io/gmp4j/agent/shaded/bytebuddy/ByteBuddy",
          "net/bytebuddy/ByteBuddy"
        }) {
      assertNull(transformer.transform(app, name, null, null, IN), name);
    }
    assertTrue(seen.isEmpty(), seen.toString());
  }

  @Test
  void redefinitionsLambdasAndNamelessClassesNeverDo() {
    assertNull(transformer.transform(app, "com/acme/Main", Executor.class, null, IN));
    assertNull(transformer.transform(app, "com/acme/Main$$Lambda/0x1234", null, null, IN));
    assertNull(transformer.transform(app, null, null, null, IN));
    assertTrue(seen.isEmpty(), seen.toString());
  }

  @Test
  void aThrowingInjectorLeavesTheClassAloneWithOneLine() {
    PreemptPollTransformer throwing =
        new PreemptPollTransformer(
            (loader, name, classfile) -> {
              throw new StackOverflowError("too deep\nsecond line");
            });
    PrintStream err = System.err;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
    try {
      assertNull(throwing.transform(app, "com/acme/Deep", null, null, IN));
    } finally {
      System.setErr(err);
    }
    String out = buf.toString(StandardCharsets.UTF_8);
    assertEquals(
        "gmp4j: left com.acme.Deep uninstrumented: java.lang.StackOverflowError: "
            + "too deep second line"
            + System.lineSeparator(),
        out);
  }

  /**
   * A class whose rewritten method fails the poll injector's frame check (issue 16) loads as it
   * was, with one line that names the class, the method, the offset (in the rewritten code: the
   * poll before the back-edge moves it 3 bytes) and the mismatch.
   */
  @Test
  void aClassFailingTheFrameCheckLoadsAsItWasWithOneLine() {
    PreemptPollTransformer real =
        new PreemptPollTransformer(
            io.gmp4j.agent.poll.BrokenClasses.injectorCheckingEveryMethod()::transform);
    byte[] bytes =
        io.gmp4j.agent.poll.BrokenClasses.handlerWantsLocal(
            "com/acme/Lexer", net.bytebuddy.jar.asm.Opcodes.TOP);
    PrintStream err = System.err;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
    try {
      assertNull(real.transform(app, "com/acme/Lexer", null, null, bytes));
    } finally {
      System.setErr(err);
    }
    assertEquals(
        "gmp4j: left com.acme.Lexer uninstrumented: "
            + "io.gmp4j.agent.poll.FrameCheckException: frame check failed in com/acme/Lexer.f(I)I"
            + " at bci 16: locals[1] is top, not assignable to int in the frame of the handler at"
            + " bci 18"
            + System.lineSeparator(),
        buf.toString(StandardCharsets.UTF_8));
  }
}
