/**
 * The memory operand and registers of an instruction as the debugger listed it, in either syntax
 * the debuggers print: AT&T for x86-64 (gdb's, and LLDB's and cdb's once read into it) and AArch64
 * (gdb-multiarch's and LLDB's). Pure.
 */

export interface MemoryOperand {
  displacement: bigint;
  /** Without the `%`, e.g. `rax`; `x0` on arm64. */
  base: string | null;
  index: string | null;
  /** The base register as the listing writes it: `%rax`, `x0`. */
  shown: string | null;
  /** The operand as written: `0x20(%rax)`, `[x0, #32]`. */
  text: string;
}

/**
 * The memory operand of an instruction as the debugger listed it: AT&T (`mov 0x20(%rax),%eax` →
 * 0x20 off %rax), or AArch64 (`ldr w1, [x0, #32]` → 32 off x0; a post-indexed `[x1], #8` uses x1
 * itself; a register offset `[x1, x2, lsl #3]` has x2 as its index).
 */
export function memoryOperand(instruction: string | null): MemoryOperand | null {
  if (instruction === null) return null;
  const att = /(-?0x[0-9a-f]+|-?\d+)?\(%(\w+)?(?:,%(\w+)(?:,\d)?)?\)/.exec(instruction);
  if (att) {
    const base = att[2] ?? null;
    return { displacement: signed(att[1] ?? "0"), base, index: att[3] ?? null, shown: base && `%${base}`, text: att[0] };
  }
  const a64 = /\[\s*([xw]\d+|w?sp)\s*(?:,\s*#(-?(?:0x[0-9a-f]+|\d+))|,\s*([xw]\d+)[^\]]*)?\s*\]/i.exec(instruction);
  if (!a64) return null;
  const base = (a64[1] as string).toLowerCase();
  return { displacement: signed(a64[2] ?? "0"), base, index: a64[3]?.toLowerCase() ?? null, shown: base, text: a64[0] };
}

function signed(text: string): bigint {
  return text.startsWith("-") ? -BigInt(text.slice(1)) : BigInt(text);
}

/** 64-bit register a 32/16/8-bit name belongs to, so `%eax` is read from `rax` (and arm64's `w1` from `x1`). */
export function fullRegister(name: string): string {
  const legacy: Record<string, string> = { eax: "rax", ebx: "rbx", ecx: "rcx", edx: "rdx", esi: "rsi", edi: "rdi", ebp: "rbp", esp: "rsp", wsp: "sp" };
  if (legacy[name]) return legacy[name] as string;
  const word = /^w(\d+)$/.exec(name);
  if (word) return `x${word[1]}`;
  const numbered = /^(r\d+)[dwb]?$/.exec(name);
  return numbered ? (numbered[1] as string) : name;
}
