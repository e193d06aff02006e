/**
 * Frames found by scanning a thread's stack memory, for when the debugger cannot unwind it: a
 * minidump read without the system modules stops at frame 0 inside `ntdll` or `msvcrt`, whose
 * unwind tables are not there. Every word of the stack that points into the program's own code,
 * just after a call instruction, is taken for a return address, innermost first, as Breakpad's
 * stack walker does. Pure: the triage reads the memory and the code.
 */
import type { Platform } from "../debuggers/model.js";

/** Words of stack read above the stack pointer (32 KiB). */
export const SCAN_WORDS = 4096;
/** Words read at a time: a read that runs past the stack's top ends the scan there. */
export const SCAN_PIECE_WORDS = 512;
/** Return addresses kept at most. */
export const MAX_SCANNED_FRAMES = 24;
/** Candidates checked at most (each costs two reads of memory). */
export const MAX_SCAN_CANDIDATES = 64;
/** Candidates tried as the innermost caller (each costs a walk of the rest). */
export const MAX_SCAN_STARTS = 8;

export interface ReturnCandidate {
  /** The return address. */
  address: bigint;
  /** Where on the stack it was found. */
  slot: bigint;
}

/** The words from `sp` up that point into code `isOwnCode` accepts, in stack order, each once. */
export function returnCandidates(sp: bigint, words: bigint[], isOwnCode: (address: bigint) => boolean): ReturnCandidate[] {
  const found: ReturnCandidate[] = [];
  const seen = new Set<bigint>();
  for (const [index, word] of words.entries()) {
    if (!isOwnCode(word) || seen.has(word)) continue;
    seen.add(word);
    found.push({ address: word, slot: sp + BigInt(index * 8) });
  }
  return found;
}

/** An AArch64 `bl imm26`, and the indirect calls `blr`, `blraa`, `blrab`, `blraaz`, `blrabz` (arm64e). */
const A64_BL = { mask: 0xfc000000, value: 0x94000000 };
const A64_BLR = [
  { mask: 0xfffffc1f, value: 0xd63f0000 },
  { mask: 0xfefff800, value: 0xd63f0800 },
];

/** The AArch64 instruction word that ends `before` (every instruction is 4 bytes, little-endian). */
function lastWord(before: Uint8Array): number | null {
  const n = before.length;
  if (n < 4) return null;
  return ((before[n - 4] ?? 0) | ((before[n - 3] ?? 0) << 8) | ((before[n - 2] ?? 0) << 16) | ((before[n - 1] ?? 0) << 24)) >>> 0;
}

/**
 * Whether the bytes just before a return address end with a call instruction that returns there:
 * `e8 rel32`, or `ff /2` (an indirect call through a register, memory, a rip-relative slot), with
 * an optional REX prefix; on AArch64, a `bl` or `blr` word. `before` holds the code bytes up to,
 * not including, the return address.
 */
export function endsWithCall(before: Uint8Array, arch: Platform["arch"] = "x86_64"): boolean {
  if (arch === "arm64") {
    const word = lastWord(before);
    return word !== null && (((word & A64_BL.mask) >>> 0) === A64_BL.value || A64_BLR.some((blr) => ((word & blr.mask) >>> 0) === blr.value));
  }
  const at = (back: number) => before[before.length - back];
  if (at(5) === 0xe8) return true;
  // ff /2: the ModRM byte's reg field is 2; its mod and r/m say how many bytes follow it.
  for (let length = 2; length <= 7; length++) {
    const opcode = before.length - length;
    if (opcode < 0 || before[opcode] !== 0xff) continue;
    const modrm = before[opcode + 1];
    if (modrm === undefined || ((modrm >> 3) & 7) !== 2) continue;
    if (modrmLength(modrm, before[opcode + 2]) === length - 1) return true;
  }
  return false;
}

/** Bytes of a ModRM byte with its SIB and displacement (`sib`: the byte after the ModRM). */
function modrmLength(modrm: number, sib: number | undefined): number {
  const mod = modrm >> 6;
  const rm = modrm & 7;
  if (mod === 3) return 1;
  const hasSib = rm === 4 ? 1 : 0;
  // With mod 0, a SIB byte whose base is 5 means no base and a disp32: `call *table(,%rax,8)`.
  if (mod === 0) return rm === 5 ? 5 : hasSib && sib !== undefined && (sib & 7) === 5 ? 6 : 1 + hasSib;
  return 1 + hasSib + (mod === 1 ? 1 : 4);
}

/** The little-endian bytes of words read from memory, in address order. */
export function bytesOf(words: bigint[]): Uint8Array {
  const bytes = new Uint8Array(words.length * 8);
  words.forEach((word, index) => {
    for (let i = 0; i < 8; i++) bytes[index * 8 + i] = Number((word >> BigInt(i * 8)) & 0xffn);
  });
  return bytes;
}

/** Where the call that ends `before` (the bytes up to a return address) goes, as far as its bytes say. */
export type CallTarget = { direct: bigint } | { slot: bigint } | null;

/**
 * The target of the call before `returnAddress`: `e8 rel32` calls `returnAddress + rel32`;
 * `ff 15 disp32` calls through the pointer at `returnAddress + disp32` (an import's slot); any
 * other indirect call's target was in a register and is unknown.
 */
export function callTarget(before: Uint8Array, returnAddress: bigint, arch: Platform["arch"] = "x86_64"): CallTarget {
  const n = before.length;
  if (arch === "arm64") {
    // `bl` goes imm26 words from itself; a `blr`'s target was in a register.
    const word = lastWord(before);
    if (word === null || ((word & A64_BL.mask) >>> 0) !== A64_BL.value) return null;
    const imm26 = word & 0x3ffffff;
    return { direct: returnAddress - 4n + BigInt(imm26 & 0x2000000 ? imm26 - 0x4000000 : imm26) * 4n };
  }
  if (before[n - 5] === 0xe8) return { direct: returnAddress + signed32(before, n - 4) };
  if (before[n - 6] === 0xff && before[n - 5] === 0x15) return { slot: returnAddress + signed32(before, n - 4) };
  // `mov slot(%rip),%reg; call *%reg`: the pointer was loaded from a slot just before (an import, by
  // compilers that call a DLL's function through a register).
  const modrm = before[n - 1];
  if (before[n - 2] === 0xff && modrm !== undefined && modrm >> 6 === 3 && ((modrm >> 3) & 7) === 2) {
    const load = n - 9;
    const loadModrm = before[load + 2];
    if (before[load] === 0x48 && before[load + 1] === 0x8b && loadModrm !== undefined && loadModrm >> 6 === 0 && (loadModrm & 7) === 5 && ((loadModrm >> 3) & 7) === (modrm & 7)) {
      return { slot: returnAddress - 2n + signed32(before, load + 3) };
    }
  }
  return null;
}

/**
 * An import thunk's jump (`ff 25 disp32`, `jmp *slot(%rip)`) at `address`: the slot it jumps
 * through. An ELF PLT entry is one too, and with control-flow protection starts with `endbr64` and
 * may jump with a `bnd` prefix (`f3 0f 1e fa f2 ff 25 disp32`).
 */
export function thunkSlot(code: Uint8Array, address: bigint): bigint | null {
  const endbr = code[0] === 0xf3 && code[1] === 0x0f && code[2] === 0x1e && code[3] === 0xfa ? 4 : 0;
  const jump = endbr + (code[endbr] === 0xf2 ? 1 : 0);
  if (code[jump] !== 0xff || code[jump + 1] !== 0x25) return null;
  return address + BigInt(jump + 6) + signed32(code, jump + 2);
}

function signed32(bytes: Uint8Array, at: number): bigint {
  const value = (bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8) | ((bytes[at + 2] ?? 0) << 16) | ((bytes[at + 3] ?? 0) << 24);
  return BigInt(value | 0);
}
