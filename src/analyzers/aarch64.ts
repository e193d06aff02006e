/**
 * AArch64 knowledge over an instruction word: which way a load or store touches memory, how many
 * bytes, and the address it forms from its registers (`ldr x1, [x0, #8]` with x0 = 0 reads 8
 * bytes at 0x8 through x0); the trap instructions (`brk #imm`, `udf #imm`); pointers that
 * pointer authentication mangled. Decoded from the 32-bit word itself, by the encoding classes of
 * the Arm Architecture Reference Manual (C4.1.4, "Loads and Stores"), not from any debugger's
 * disassembly text, so that gdb's, LLDB's and a minidump's readings agree. Pure.
 */
import { toBigInt, type Register } from "../debuggers/model.js";
import { explainOperand, type FaultExplanation, type Range } from "./fault.js";

/** How an instruction forms its address from its base register. */
export type AddressingMode = "offset" | "pre-index" | "post-index" | "literal";

export interface A64MemoryAccess {
  access: "read" | "write";
  /** Bytes accessed (both registers of a pair); null where the encoding does not say simply (single SIMD lanes). */
  size: number | null;
  /** The base register's number (31 is sp); null for a pc-relative literal load. */
  base: number | null;
  /** The offset register, its extension and shift (`x2, lsl #3`, `w2, sxtw`); null for an immediate offset. */
  index: { register: number; extend: Extend; shift: number } | null;
  /** The immediate added to the base (0 for a post-index access, which adds it after). */
  offset: bigint;
  mode: AddressingMode;
  /** The memory operand in Arm's syntax (`[x0, #0x8]`, `[sp, #-0x10]!`, `[x1], #0x10`). */
  operand: string;
}

/** How an offset register is extended before it is added (`lsl` is `uxtx` of a 64-bit register). */
export type Extend = "uxtw" | "lsl" | "sxtw" | "sxtx";

/** One class of the load/store encodings: the bits that identify it, and its reading. */
interface EncodingClass {
  mask: number;
  value: number;
  decode(word: number): A64MemoryAccess | null;
}

const bits = (word: number, high: number, low: number) => (word >>> low) & ((1 << (high - low + 1)) - 1);
const signed = (value: number, width: number) => (value & (1 << (width - 1)) ? value - (1 << width) : value);
const offsetText = (value: bigint) => (value < 0n ? `#-0x${(-value).toString(16)}` : `#0x${value.toString(16)}`);
const baseName = (n: number) => (n === 31 ? "sp" : `x${n}`);

/**
 * A single register's load or store (`LDR`, `STRB`, `LDRSW`, the SIMD&FP `LDR q0`): its
 * direction and size from size:V:opc; null for a prefetch (PRFM), which never faults.
 */
function registerTransfer(word: number): { access: "read" | "write"; size: number; scale: number } | null {
  const size = bits(word, 31, 30);
  const simd = bits(word, 26, 26) === 1;
  const opc = bits(word, 23, 22);
  if (simd) {
    // opc 1x with size 00 is a 128-bit q register.
    if (opc >= 2) return size === 0 ? { access: opc === 2 ? "write" : "read", size: 16, scale: 4 } : null;
    return { access: opc === 0 ? "write" : "read", size: 1 << size, scale: size };
  }
  if (opc === 0) return { access: "write", size: 1 << size, scale: size };
  // size 11 with opc 10 is PRFM; size 11 with opc 11, and size 10 with opc 11, are unallocated.
  if (opc >= 2 && (size === 3 || (size === 2 && opc === 3))) return null;
  return { access: "read", size: 1 << size, scale: size };
}

/** The classes with a base register and an immediate, each of its own addressing. */
function immediateClass(mode: AddressingMode, offsetOf: (word: number, scale: number) => bigint): (word: number) => A64MemoryAccess | null {
  return (word) => {
    const transfer = registerTransfer(word);
    if (!transfer) return null;
    const base = bits(word, 9, 5);
    const offset = offsetOf(word, transfer.scale);
    const name = baseName(base);
    const operand = mode === "post-index" ? `[${name}], ${offsetText(offset)}` : `[${name}${offset === 0n ? "" : `, ${offsetText(offset)}`}]${mode === "pre-index" ? "!" : ""}`;
    return { access: transfer.access, size: transfer.size, base, index: null, offset: mode === "post-index" ? 0n : offset, mode, operand };
  };
}

const EXTENDS: Record<number, Extend> = { 2: "uxtw", 3: "lsl", 6: "sxtw", 7: "sxtx" };

/** `LDR x0, [x1, x2, lsl #3]`: a register offset, extended and shifted by the access's size when S is set. */
function registerOffset(word: number): A64MemoryAccess | null {
  const transfer = registerTransfer(word);
  const extend = EXTENDS[bits(word, 15, 13)];
  if (!transfer || !extend) return null;
  const base = bits(word, 9, 5);
  const register = bits(word, 20, 16);
  const shift = bits(word, 12, 12) ? transfer.scale : 0;
  const indexName = `${extend === "uxtw" || extend === "sxtw" ? "w" : "x"}${register === 31 ? "zr" : register}`;
  const modifier = extend === "lsl" ? (shift ? `, lsl #${shift}` : "") : `, ${extend}${shift ? ` #${shift}` : ""}`;
  return { access: transfer.access, size: transfer.size, base, index: { register, extend, shift }, offset: 0n, mode: "offset", operand: `[${baseName(base)}, ${indexName}${modifier}]` };
}

/** `LDP`/`STP` (and LDNP, LDPSW, the SIMD&FP pairs): two registers at base + imm7 × their size. */
function pair(word: number): A64MemoryAccess | null {
  const opc = bits(word, 31, 30);
  const simd = bits(word, 26, 26) === 1;
  const load = bits(word, 22, 22) === 1;
  const scale = simd ? 2 + opc : opc === 2 ? 3 : 2;
  if (opc === 3 || (!simd && opc === 1 && !load)) return null;
  const mode = ([null, "post-index", "offset", "pre-index"] as const)[bits(word, 24, 23)] ?? "offset";
  const offset = BigInt(signed(bits(word, 21, 15), 7)) << BigInt(scale);
  const base = bits(word, 9, 5);
  const name = baseName(base);
  const operand = mode === "post-index" ? `[${name}], ${offsetText(offset)}` : `[${name}${offset === 0n ? "" : `, ${offsetText(offset)}`}]${mode === "pre-index" ? "!" : ""}`;
  return { access: load ? "read" : "write", size: 2 << scale, base, index: null, offset: mode === "post-index" ? 0n : offset, mode, operand };
}

/** `LDR x0, label`: pc-relative, imm19 words from the instruction (its address is added by the caller). */
function literal(word: number): A64MemoryAccess | null {
  const opc = bits(word, 31, 30);
  const simd = bits(word, 26, 26) === 1;
  if (!simd && opc === 3) return null; // PRFM (literal)
  const size = simd ? 4 << opc : opc === 0 ? 4 : 8;
  const offset = BigInt(signed(bits(word, 23, 5), 19)) * 4n;
  return { access: "read", size, base: null, index: null, offset, mode: "literal", operand: `[pc, ${offsetText(offset)}]` };
}

/** Exclusive and ordered accesses (`LDXR`, `LDAR`, `STLR`, `STXR`, `CAS`): at the base register alone. */
function exclusive(word: number): A64MemoryAccess {
  const load = bits(word, 22, 22) === 1;
  const base = bits(word, 9, 5);
  return { access: load ? "read" : "write", size: 1 << bits(word, 31, 30), base, index: null, offset: 0n, mode: "offset", operand: `[${baseName(base)}]` };
}

/** Atomic memory operations (`LDADD`, `SWP`, `LDSET`…): they read and write the word at the base register. */
function atomic(word: number): A64MemoryAccess {
  const base = bits(word, 9, 5);
  return { access: "write", size: 1 << bits(word, 31, 30), base, index: null, offset: 0n, mode: "offset", operand: `[${baseName(base)}]` };
}

/** Registers each `LD1`–`LD4`/`ST1`–`ST4` (multiple structures) opcode moves. */
const STRUCTURE_REGISTERS: Record<number, number> = { 0: 4, 2: 4, 4: 3, 6: 3, 7: 1, 8: 2, 10: 2 };

/** SIMD structure loads and stores (`LD1 {v0.16b}, [x0]`, with a post-index or not). */
function structure(single: boolean): (word: number) => A64MemoryAccess | null {
  return (word) => {
    const base = bits(word, 9, 5);
    const load = bits(word, 22, 22) === 1;
    const registers = single ? undefined : STRUCTURE_REGISTERS[bits(word, 15, 12)];
    if (!single && registers === undefined) return null;
    const size = registers === undefined ? null : registers * (bits(word, 30, 30) ? 16 : 8);
    const post = bits(word, 23, 23) === 1;
    return { access: load ? "read" : "write", size, base, index: null, offset: 0n, mode: post ? "post-index" : "offset", operand: `[${baseName(base)}]` };
  };
}

/** The load/store classes this reader knows, by their fixed bits (C4.1.4). */
const LOAD_STORE_CLASSES: EncodingClass[] = [
  { mask: 0x3b000000, value: 0x39000000, decode: immediateClass("offset", (w, scale) => BigInt(bits(w, 21, 10)) << BigInt(scale)) },
  { mask: 0x3b200c00, value: 0x38000000, decode: immediateClass("offset", (w) => BigInt(signed(bits(w, 20, 12), 9))) },
  { mask: 0x3b200c00, value: 0x38000400, decode: immediateClass("post-index", (w) => BigInt(signed(bits(w, 20, 12), 9))) },
  { mask: 0x3b200c00, value: 0x38000800, decode: immediateClass("offset", (w) => BigInt(signed(bits(w, 20, 12), 9))) },
  { mask: 0x3b200c00, value: 0x38000c00, decode: immediateClass("pre-index", (w) => BigInt(signed(bits(w, 20, 12), 9))) },
  { mask: 0x3b200c00, value: 0x38200800, decode: registerOffset },
  { mask: 0x3b200c00, value: 0x38200000, decode: atomic },
  { mask: 0x3a000000, value: 0x28000000, decode: pair },
  { mask: 0x3b000000, value: 0x18000000, decode: literal },
  { mask: 0x3f000000, value: 0x08000000, decode: exclusive },
  { mask: 0xbfbf0000, value: 0x0c000000, decode: structure(false) },
  { mask: 0xbfa00000, value: 0x0c800000, decode: structure(false) },
  { mask: 0xbf9f0000, value: 0x0d000000, decode: structure(true) },
  { mask: 0xbf800000, value: 0x0d800000, decode: structure(true) },
];

/** The memory access an instruction word makes; null when it is no load or store (or a prefetch). */
export function decodeMemoryAccess(word: number): A64MemoryAccess | null {
  const encoding = LOAD_STORE_CLASSES.find((c) => ((word & c.mask) >>> 0) === c.value);
  return encoding ? encoding.decode(word >>> 0) : null;
}

/**
 * The address an access touches, from the registers: base (sp for 31) plus the extended, shifted
 * offset register or the immediate; a literal's from the pc. Null when a register is not known.
 */
export function accessAddress(access: A64MemoryAccess, value: (register: string) => bigint | null, pc: bigint | null): bigint | null {
  const base = access.base === null ? pc : value(baseName(access.base));
  if (base === null) return null;
  const index = access.index === null ? 0n : indexValue(access.index, value);
  if (index === null) return null;
  return BigInt.asUintN(64, base + (index << BigInt(access.index?.shift ?? 0)) + access.offset);
}

/** The offset register's value as extended: the low word zero- or sign-extended, or all 64 bits. */
export function indexValue(index: NonNullable<A64MemoryAccess["index"]>, value: (register: string) => bigint | null): bigint | null {
  const raw = index.register === 31 ? 0n : value(`x${index.register}`);
  if (raw === null) return null;
  if (index.extend === "uxtw") return BigInt.asUintN(32, raw);
  if (index.extend === "sxtw") return BigInt.asIntN(32, raw);
  return BigInt.asIntN(64, raw);
}

/** The names debuggers give the registers that have two: gdb's x29/x30 are LLDB's fp/lr. */
export const REGISTER_ALIASES: Record<string, string[]> = { x29: ["x29", "fp"], x30: ["x30", "lr"], sp: ["sp", "x31"] };

/** A trap instruction: `brk #imm` (SIGTRAP; `__builtin_trap` is `brk #0x3e8`), `udf #imm` (SIGILL). */
export function decodeTrap(word: number): { instruction: "brk" | "udf"; immediate: number } | null {
  if (((word & 0xffe0001f) >>> 0) === 0xd4200000) return { instruction: "brk", immediate: bits(word, 20, 5) };
  if (((word & 0xffff0000) >>> 0) === 0) return { instruction: "udf", immediate: bits(word, 15, 0) };
  return null;
}

/**
 * The address a call passed in `register` (`x1`), from the instruction words before it (`code`,
 * the last one the `bl` at `pc`): the `adrp` that made its page, with the `add` of its low bits (the
 * address itself) or the `ldr` from a slot on that page (a GOT slot holding it: `indirect`), through
 * plain register moves. Null when something else set it, or a branch lies in between.
 */
export function callArgumentAddress(code: number[], pc: bigint, register: string): { address: bigint; indirect: boolean } | null {
  const last = code.length - 1;
  if (last < 0 || ((code[last]! & 0xfc000000) >>> 0) !== 0x94000000) return null;
  let wanted = /^x(\d+)$/.exec(register) ? Number(register.slice(1)) : null;
  if (wanted === null) return null;
  let offset = 0n;
  let indirect = false;
  for (let i = last - 1; i >= 0; i--) {
    const word = code[i]!;
    const at = pc - BigInt(4 * (last - i));
    // Any branch between: what follows it may not have run.
    if (((word & 0x7c000000) >>> 0) === 0x14000000 || ((word & 0xfe000000) >>> 0) === 0xd6000000 || ((word & 0xfe000000) >>> 0) === 0x54000000) return null;
    if (bits(word, 4, 0) !== wanted) continue;
    if (((word & 0x9f000000) >>> 0) === 0x90000000) {
      const page = BigInt(signed((bits(word, 23, 5) << 2) | bits(word, 30, 29), 21)) << 12n;
      return { address: BigInt.asUintN(64, (at & ~0xfffn) + page + offset), indirect };
    }
    if (((word & 0xffe0ffe0) >>> 0) === 0xaa0003e0) {
      wanted = bits(word, 20, 16);
      continue;
    }
    // An ldr of a 64-bit slot, unsigned offset: the value is what the slot holds. Only the last step may load.
    if (((word & 0xffc00000) >>> 0) === 0xf9400000 && !indirect && offset === 0n) {
      indirect = true;
      offset = BigInt(bits(word, 21, 10) * 8);
      wanted = bits(word, 9, 5);
      continue;
    }
    if (((word & 0xff800000) >>> 0) === 0x91000000 && !indirect && offset === 0n) {
      offset = BigInt(bits(word, 21, 10));
      wanted = bits(word, 9, 5);
      continue;
    }
    return null;
  }
  return null;
}

/** What a `brk` immediate says, where a compiler or runtime gives it a meaning. */
export function trapMeaning(immediate: number): string | null {
  // Clang's check of an authenticated pointer traps with 0xc470 plus the key (IA, IB, DA, DB).
  if (immediate >= 0xc470 && immediate <= 0xc473) return "a pointer authentication failure (arm64e): a signed pointer that did not authenticate";
  const known: Record<number, string> = {
    0x3e8: "__builtin_trap() (GCC and Clang; Rust's intrinsics::abort, an unreachable path)",
    0xf000: "a debugger breakpoint (__debugbreak)",
    0x1: "Swift's runtime trap (a failed precondition, an overflow, a forced unwrap of nil)",
  };
  return known[immediate] ?? null;
}

/** The lowest bit above a user-space address on Linux and macOS arm64 (48-bit virtual addresses). */
const VA_BITS = 48n;
/** Bits the top-byte-ignore feature leaves out of an address (56–63). */
const TAG_SHIFT = 56n;

/**
 * A pointer that pointer authentication left mangled: bits between the address and the top byte
 * (48–55) set, which no user-space address has and a kernel one has all of. arm64e signs pointers
 * there, and a failed authentication puts an error code there, so the access faults instead of
 * using a forged pointer.
 */
export function pacMangled(pointer: bigint): boolean {
  const between = (BigInt.asUintN(64, pointer) >> VA_BITS) & ((1n << (TAG_SHIFT - VA_BITS)) - 1n);
  return between !== 0n && between !== (1n << (TAG_SHIFT - VA_BITS)) - 1n;
}

/**
 * The fault of a decoded access explained as the x86-64 one is (fault.ts): the address's terms
 * with their values, a NULL base and the member's offset; and a base that pointer authentication
 * mangled, named as such. `registers` by gdb's or LLDB's names (x29 or fp, x30 or lr).
 */
export function explainA64Access(decoded: A64MemoryAccess, input: { access: "read" | "write"; faultAddress: bigint | null; registers: Register[]; mapped: Range[]; pc: bigint | null }): FaultExplanation {
  const value = registerValues(input.registers);
  const baseRegister = decoded.base === null ? "pc" : baseName(decoded.base);
  const baseValue = decoded.base === null ? input.pc : value(baseRegister);
  const index = decoded.index === null ? null : indexValue(decoded.index, value);
  const indexRegister = decoded.index === null ? null : `${decoded.index.extend === "uxtw" || decoded.index.extend === "sxtw" ? "w" : "x"}${decoded.index.register === 31 ? "zr" : decoded.index.register}`;
  const explanation = explainOperand({
    access: input.access,
    size: decoded.size,
    operand: decoded.operand,
    base: baseValue === null ? null : { register: baseRegister, value: baseValue },
    index: index === null || indexRegister === null ? null : { register: indexRegister, value: BigInt.asUintN(64, index), scale: 1 << (decoded.index?.shift ?? 0) },
    displacement: decoded.offset,
    faultAddress: input.faultAddress,
    mapped: input.mapped,
  });
  if (baseValue === null || !pacMangled(baseValue)) return explanation;
  const pac = `${baseRegister} holds ${`0x${baseValue.toString(16)}`}, whose bits 48–55 no user-space address sets: a pointer signed by pointer authentication (arm64e) that failed to authenticate, or was used unauthenticated`;
  return { ...explanation, text: `${pac}; ${explanation.text}` };
}

/** A register's value by its number's name (`x29`, `sp`), whichever name the debugger gave it. */
export function registerValues(registers: Register[]): (name: string) => bigint | null {
  return (name) => {
    const names = REGISTER_ALIASES[name] ?? [name];
    return toBigInt(registers.find((r) => names.includes(r.name))?.value ?? null);
  };
}

/** `sdiv`/`udiv`: the quotient's, dividend's and divisor's register numbers, and their width. */
export interface A64Divide {
  signed: boolean;
  rd: number;
  rn: number;
  rm: number;
  bits: 32 | 64;
}

/** An integer division (C6.2: SDIV, UDIV); null for any other word. */
export function decodeDivide(word: number): A64Divide | null {
  const fixed = (word & 0x7fe0f800) >>> 0;
  if (fixed !== 0x1ac00800) return null;
  return { signed: bits(word, 10, 10) === 1, rd: bits(word, 4, 0), rn: bits(word, 9, 5), rm: bits(word, 20, 16), bits: bits(word, 31, 31) ? 64 : 32 };
}

/** Where a direct branch in `code` (starting at `start`) goes: B, B.cond, CBZ/CBNZ, TBZ/TBNZ; null for any other word. */
function branchTarget(word: number, at: bigint): bigint | null {
  if (((word & 0x7c000000) >>> 0) === 0x14000000) return at + BigInt(signed(bits(word, 25, 0), 26) * 4);
  if (((word & 0xff000010) >>> 0) === 0x54000000 || ((word & 0x7e000000) >>> 0) === 0x34000000) return at + BigInt(signed(bits(word, 23, 5), 19) * 4);
  if (((word & 0x7e000000) >>> 0) === 0x36000000) return at + BigInt(signed(bits(word, 18, 5), 14) * 4);
  return null;
}

/** `br`, `blr`, `ret` and their authenticated forms (bits 24–21: 0 br, 1 blr, 2 ret): an indirect branch. */
const isIndirectBranch = (word: number) => ((word & 0xfe1f0000) >>> 0) === 0xd61f0000;
/** `bl` or `blr`: a call, which may change every caller-saved register and lr. */
const isCall = (word: number) => ((word & 0xfc000000) >>> 0) === 0x94000000 || ((word & 0xfffffc1f) >>> 0) === 0xd63f0000;
/** `b label`: control does not fall through. */
const isJump = (word: number) => ((word & 0xfc000000) >>> 0) === 0x14000000;

/**
 * The registers an instruction may write, over-counted: its bits 4–0 (the destination of nearly
 * every instruction that has one, and a store's source, counted anyway), a load pair's second
 * register, a written-back base, an exclusive or compare-and-swap access's status and compare
 * registers, and for a call x0–x18 and lr. Over-counting only makes the
 * division rule below say less.
 */
function mayWrite(word: number): number[] {
  if (isCall(word)) return [...Array.from({ length: 19 }, (_, i) => i), 30];
  const written = [bits(word, 4, 0)];
  const access = decodeMemoryAccess(word);
  if (access && ((word & 0x3a000000) >>> 0) === 0x28000000) written.push(bits(word, 14, 10));
  // Exclusive and compare-and-swap accesses: STXR's status register, CAS's compare register, and the pairs' second registers.
  if (((word & 0x3f000000) >>> 0) === 0x08000000) written.push(bits(word, 20, 16), (bits(word, 20, 16) + 1) % 32, bits(word, 14, 10), (bits(word, 4, 0) + 1) % 32);
  if (access && access.base !== null && (access.mode === "pre-index" || access.mode === "post-index")) written.push(access.base);
  return written;
}

/**
 * An integer division that divided by zero on the way to `pc`, read from the function's code
 * (`code`, its words from `start`, covering the whole function) and the registers at `pc`: an
 * `sdiv`/`udiv` before the pc whose divisor register is 0 now, with no instruction between it and
 * the pc that may write that register, and straight-line code between them (no branch in the
 * function lands after the division up to the pc, no jump leaves it, none is indirect). Then
 * control reached the pc only through the division, with its divisor already 0: arm64's division
 * does not trap and gave 0. Null where any of it is not shown.
 */
export function zeroDivisionBefore(code: readonly number[], start: bigint, pc: bigint, value: (register: string) => bigint | null): { at: bigint; divide: A64Divide } | null {
  const index = pc - start;
  if (index < 0n || index % 4n !== 0n || index / 4n >= BigInt(code.length)) return null;
  const p = Number(index / 4n);
  // A `br` (a jump table) may land anywhere: only calls and returns among the indirect branches are let be.
  if (code.some((word) => isIndirectBranch(word) && bits(word, 24, 21) !== 1 && bits(word, 24, 21) !== 2)) return null;
  const targets = new Set(code.flatMap((word, i) => {
    const target = branchTarget(word, start + BigInt(4 * i));
    return target === null ? [] : [target];
  }));
  const written = new Set<number>();
  for (let i = p - 1; i >= 0; i--) {
    // Control came to the instruction after this one only from this one.
    if (targets.has(start + BigInt(4 * (i + 1)))) return null;
    const word = code[i]!;
    if (isJump(word) || isIndirectBranch(word)) return null;
    const divide = decodeDivide(word);
    if (divide && divide.rm !== 31 && !written.has(divide.rm)) {
      const divisor = value(`x${divide.rm}`);
      if (divisor !== null && (divide.bits === 32 ? BigInt.asUintN(32, divisor) : divisor) === 0n) return { at: start + BigInt(4 * i), divide };
    }
    for (const register of mayWrite(word)) written.add(register);
  }
  return null;
}

