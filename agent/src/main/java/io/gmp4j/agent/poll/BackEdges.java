package io.gmp4j.agent.poll;

import java.nio.charset.StandardCharsets;
import java.util.BitSet;
import java.util.HashSet;
import java.util.Set;

/**
 * The transformer's fast reject: whether a class file has any backward branch at all, read
 * straight from its bytes, before {@link PollInjector} pays for ASM's full pass.
 *
 * <h2>Implementation overview: 'Fast reject'</h2>
 *
 * Most classes an application loads have no loop: of the 3,457 classes Spring Boot 4's web
 * starter handed the transformer at start-up, 2,671 (77%) got no poll (issue 17). For each of
 * them, {@link PollInjector} ran a {@code ClassReader} with expanded frames and a {@link
 * LoopScanner} per method only to find nothing. This class walks the class file once instead: it
 * skips the constant pool, the fields and every attribute but {@code Code}, and in each method's
 * code steps from opcode to opcode by their lengths, looking only at branch offsets.
 *
 * <p>A branch is backward under the same rule as LoopScanner's: its target is at or before the
 * branch (offset {@code <= 0}), for {@code if*}, {@code goto}, {@code goto_w}, and any case or
 * default of a {@code tableswitch} / {@code lookupswitch}; {@code jsr} and {@code jsr_w} are
 * calls, not loops. When this answers false, no method has a backward branch, so LoopScanner
 * would plan nothing in any method, and without prologue polls the class would be left alone as
 * {@code no loops}: the fast path records exactly that. It may answer true where the slow path
 * still finds nothing (a loop in {@code <clinit>} or a bridge); that class takes the slow path.
 * On anything it cannot read (a truncated file, an unknown opcode) it answers true, and the
 * slow path reports the class as before.
 *
 * <p>The same walk gives the methods that have a backward branch ({@link #methods}): in a class
 * that gets polls, PollInjector's scanning pass reads only those, and ASM skips the others'
 * code, which the emitter then copies byte for byte.
 *
 * <p>Cost: one pass over the bytes; no allocation but the result.
 *
 * <p>Any thread; stateless.
 */
final class BackEdges {
  private BackEdges() {}

  /** True if some method of {@code classfile} may branch backward; see 'Fast reject'. */
  static boolean any(byte[] classfile) {
    BitSet m = methods(classfile);
    return m == null || !m.isEmpty();
  }

  /**
   * The methods, by their index in the class file's method table (ASM's visitMethod order), that
   * may branch backward; null if the file cannot be read this way. A method not in the set has
   * no backward branch: LoopScanner would plan nothing for it, so PollInjector does not scan it.
   */
  static BitSet methods(byte[] classfile) {
    try {
      BitSet out = new BitSet();
      return scan(classfile, out, null) ? null : out;
    } catch (RuntimeException unreadable) {
      return null; // e.g. ArrayIndexOutOfBoundsException: the slow path says what is wrong
    }
  }

  /**
   * The names of the methods that may branch backward, as {@link #methods} finds them; null if
   * the file cannot be read this way. 'Running classes' in the agent's Retransformer.
   */
  static Set<String> methodNames(byte[] classfile) {
    try {
      Set<String> names = new HashSet<>();
      return scan(classfile, new BitSet(), names) ? null : names;
    } catch (RuntimeException unreadable) {
      return null;
    }
  }

  /**
   * Fills {@code out}, and {@code names} with those methods' names unless it is null; true if
   * the file cannot be read this way.
   */
  private static boolean scan(byte[] b, BitSet out, Set<String> names) {
    if (u4(b, 0) != 0xCAFEBABE) {
      return true;
    }
    int count = u2(b, 8);
    int[] at = names == null ? null : new int[count]; // constant-pool index -> offset
    int code = -1; // constant-pool index of the Utf8 "Code"
    int p = 10;
    for (int i = 1; i < count; i++) {
      int tag = b[p] & 0xFF;
      if (at != null) {
        at[i] = p;
      }
      if (tag == 1
          && u2(b, p + 1) == 4
          && b[p + 3] == 'C'
          && b[p + 4] == 'o'
          && b[p + 5] == 'd'
          && b[p + 6] == 'e') {
        code = i;
      }
      int len = constantLength(b, p);
      if (len < 0) {
        return true;
      }
      p += len;
      i += tag == 5 || tag == 6 ? 1 : 0; // Long, Double: two slots
    }
    if (code < 0) {
      return false; // no method has code
    }
    p += 6; // access_flags, this_class, super_class
    p += 2 + 2 * u2(b, p); // interfaces
    int fields = u2(b, p);
    p += 2;
    for (int f = 0; f < fields; f++) {
      p = skipAttributes(b, p + 6);
    }
    int methods = u2(b, p);
    p += 2;
    for (int m = 0; m < methods; m++) {
      int nameAt = p + 2; // method_info: access_flags, name_index, descriptor_index, attributes
      int attributes = u2(b, p + 6);
      p += 8;
      for (int a = 0; a < attributes; a++) {
        int name = u2(b, p);
        int len = u4(b, p + 2);
        if (name == code && backward(b, p + 14, u4(b, p + 10))) {
          out.set(m);
          if (names != null) {
            names.add(utf8(b, at[u2(b, nameAt)]));
          }
        }
        p += 6 + len;
      }
    }
    return false;
  }

  /**
   * The length in bytes of the constant-pool entry at {@code p}, its tag included; -1 for a tag
   * this JDK does not define. Also read by {@link EarlyPolls}.
   */
  static int constantLength(byte[] b, int p) {
    return switch (b[p] & 0xFF) {
      case 1 -> 3 + u2(b, p + 1); // Utf8
      case 3, 4, 9, 10, 11, 12, 17, 18 -> 5;
      case 5, 6 -> 9; // Long, Double
      case 7, 8, 16, 19, 20 -> 3;
      case 15 -> 4;
      default -> -1;
    };
  }

  /**
   * The CONSTANT_Utf8 at {@code p}, decoded as UTF-8: the same as the JVM's modified UTF-8 for
   * every name without a NUL or a character outside the BMP.
   */
  private static String utf8(byte[] b, int p) {
    if ((b[p] & 0xFF) != 1) {
      throw new IllegalArgumentException("not a Utf8 at " + p);
    }
    return new String(b, p + 3, u2(b, p + 1), StandardCharsets.UTF_8);
  }

  private static int skipAttributes(byte[] b, int p) {
    int attributes = u2(b, p);
    p += 2;
    for (int a = 0; a < attributes; a++) {
      p += 6 + u4(b, p + 2);
    }
    return p;
  }

  /** Whether the bytecode at {@code start}, {@code length} bytes long, branches backward. */
  private static boolean backward(byte[] b, int start, int length) {
    int end = start + length;
    int pc = start;
    while (pc < end) {
      int op = b[pc] & 0xFF;
      if ((op >= 153 && op <= 167) || op == 198 || op == 199) { // if*, goto, ifnull, ifnonnull
        if ((short) u2(b, pc + 1) <= 0) {
          return true;
        }
        pc += 3;
      } else if (op == 200) { // goto_w
        if (u4(b, pc + 1) <= 0) {
          return true;
        }
        pc += 5;
      } else if (op == 170 || op == 171) { // tableswitch, lookupswitch
        int q = start + ((pc - start + 4) & ~3); // 0-3 bytes of padding after the opcode
        if (u4(b, q) <= 0) { // default
          return true;
        }
        if (op == 170) {
          int n = u4(b, q + 8) - u4(b, q + 4) + 1;
          for (int i = 0; i < n; i++) {
            if (u4(b, q + 12 + 4 * i) <= 0) {
              return true;
            }
          }
          pc = q + 12 + 4 * n;
        } else {
          int n = u4(b, q + 4);
          for (int i = 0; i < n; i++) {
            if (u4(b, q + 12 + 8 * i) <= 0) {
              return true;
            }
          }
          pc = q + 8 + 8 * n;
        }
      } else if (op == 196) { // wide: iinc has a 2-byte constant too
        pc += (b[pc + 1] & 0xFF) == 132 ? 6 : 4;
      } else {
        int len = op < LENGTH.length ? LENGTH[op] : 0;
        if (len == 0) {
          throw new IllegalArgumentException("opcode " + op); // the slow path says what is wrong
        }
        pc += len;
      }
    }
    return false;
  }

  /**
   * Instruction lengths by opcode for every opcode handled by the general case: 1 unless
   * listed; 0 for bytes that are no opcode (186 is invokedynamic, valid; 202 and up are not).
   * Written only by the static initialiser; also read by {@link EarlyPolls}.
   */
  static final byte[] LENGTH = new byte[202];

  static {
    java.util.Arrays.fill(LENGTH, (byte) 1);
    LENGTH[16] = 2; // bipush
    LENGTH[17] = 3; // sipush
    LENGTH[18] = 2; // ldc
    LENGTH[19] = 3; // ldc_w
    LENGTH[20] = 3; // ldc2_w
    for (int op = 21; op <= 25; op++) {
      LENGTH[op] = 2; // iload .. aload
    }
    for (int op = 54; op <= 58; op++) {
      LENGTH[op] = 2; // istore .. astore
    }
    LENGTH[132] = 3; // iinc
    LENGTH[168] = 3; // jsr: a call, never a loop
    LENGTH[169] = 2; // ret
    for (int op = 178; op <= 184; op++) {
      LENGTH[op] = 3; // get/putstatic, get/putfield, invokevirtual/special/static
    }
    LENGTH[185] = 5; // invokeinterface
    LENGTH[186] = 5; // invokedynamic
    LENGTH[187] = 3; // new
    LENGTH[188] = 2; // newarray
    LENGTH[189] = 3; // anewarray
    LENGTH[192] = 3; // checkcast
    LENGTH[193] = 3; // instanceof
    LENGTH[197] = 4; // multianewarray
    LENGTH[201] = 5; // jsr_w
  }

  private static int u2(byte[] b, int p) {
    return ((b[p] & 0xFF) << 8) | (b[p + 1] & 0xFF);
  }

  private static int u4(byte[] b, int p) {
    return (b[p] << 24) | ((b[p + 1] & 0xFF) << 16) | ((b[p + 2] & 0xFF) << 8) | (b[p + 3] & 0xFF);
  }
}
