/**
 * The faulting instruction read as a senior engineer reads it: which operand was dereferenced, how
 * (read, write, execute), how many bytes, and what the address was made of: a base register and its
 * value, an index, a displacement (`mov 0x20(%rax),%eax` with %rax = 0: NULL plus 0x20, reading 4
 * bytes). When the bad pointer differs from mapped memory by a single bit, it may be a flipped bit
 * (failing RAM, a bad cosmic day): the candidate is named. Pure; x86-64, AT&T operands (AArch64's
 * instruction words are read in aarch64.ts into the same explanation).
 */
import { toBigInt, type Address, type Instruction, type Register } from "../debuggers/model.js";
import { NULL_PAGE_LIMIT } from "./address-space.js";

export interface Range {
  start: bigint;
  end: bigint;
}

/**
 * Plain data (hex strings, not bigints): it is part of the triage result the graph's state
 * checkpoints.
 */
export interface FaultExplanation {
  access: "read" | "write" | "execute";
  /** Bytes accessed; null when neither the mnemonic nor a register operand says. */
  size: number | null;
  /** The memory operand as the instruction spells it (`0x20(%rax)`). */
  operand: string | null;
  base: { register: string; value: Address } | null;
  index: { register: string; value: Address; scale: number } | null;
  /** Signed hex: `0x20`, `-0x18`. */
  displacement: string;
  /** A mapped address one bit away from the bad pointer, and which bit. */
  bitFlip: { pointer: Address; candidate: Address; bit: number } | null;
  /** One line for a person. */
  text: string;
}

export interface Operand {
  base: { register: string; value: bigint } | null;
  index: { register: string; value: bigint; scale: number } | null;
  displacement: bigint;
  bitFlip: { pointer: bigint; candidate: bigint; bit: number } | null;
}

const REGISTER_BYTES: [RegExp, number][] = [
  [/^%xmm\d+$/, 16],
  [/^%ymm\d+$/, 32],
  [/^%zmm\d+$/, 64],
  [/^%r(?:[abcd]x|[sd]i|[sb]p|\d+)$/, 8],
  [/^%(?:e(?:[abcd]x|[sd]i|[sb]p)|r\d+d)$/, 4],
  [/^%(?:[abcd]x|[sd]i|[sb]p|r\d+w)$/, 2],
  [/^%(?:[abcd][lh]|[sd]il|[sb]pl|r\d+b)$/, 1],
];
const SUFFIX_BYTES: Record<string, number> = { b: 1, w: 2, l: 4, q: 8 };

/** The 64-bit register a name belongs to (`%eax` → `rax`, `%r8d` → `r8`). */
function fullName(register: string): string {
  const name = register.replace(/^%/, "");
  const legacy: Record<string, string> = { eax: "rax", ebx: "rbx", ecx: "rcx", edx: "rdx", esi: "rsi", edi: "rdi", ebp: "rbp", esp: "rsp" };
  return legacy[name] ?? /^(r\d+)[dwb]?$/.exec(name)?.[1] ?? name;
}

function accessSize(instruction: Instruction, memoryIndex: number): number | null {
  // movzbl/movsbq: the source's size is the suffix's first letter.
  const extend = /^mov[sz]([bwl])[wlq]$/.exec(instruction.mnemonic);
  if (extend) return memoryIndex === 0 ? (SUFFIX_BYTES[extend[1] ?? ""] ?? null) : null;
  // A scalar SSE instruction, movd or movq touches one value, whatever the register's width.
  const scalar = /^v?(?:(?:mov|add|sub|mul|div|min|max|sqrt|u?comi|cvtt?)s([sd])(?:2|$)|mov([dq])$)/.exec(instruction.mnemonic);
  if (scalar) return scalar[1] === "s" || scalar[2] === "d" ? 4 : 8;
  for (const [index, operand] of instruction.operands.entries()) {
    if (index === memoryIndex) continue;
    const bytes = REGISTER_BYTES.find(([pattern]) => pattern.test(operand))?.[1];
    if (bytes !== undefined) return bytes;
  }
  const suffix = /^(?:mov|add|sub|and|or|xor|cmp|test|inc|dec|neg|not|push|pop)([bwlq])$/.exec(instruction.mnemonic)?.[1];
  if (suffix) return SUFFIX_BYTES[suffix] ?? null;
  if (/^(push|pop|call|ret)/.test(instruction.mnemonic)) return 8;
  return null;
}

export function explainFault(input: {
  instruction: Instruction;
  access: "read" | "write" | "execute";
  faultAddress: bigint | null;
  registers: Register[];
  /** Mapped memory: the dump's segments and the modules' sections. */
  mapped: Range[];
}): FaultExplanation {
  const { instruction, access, faultAddress, registers, mapped } = input;
  const value = (name: string) => toBigInt(registers.find((register) => register.name === fullName(name))?.value ?? null);
  const memoryIndex = instruction.operands.findIndex((operand) => /\(/.test(operand.replace(/^\*/, "")));
  const operand = memoryIndex < 0 ? null : (instruction.operands[memoryIndex] ?? null);
  const parts = operand === null ? null : /^\*?(?:%[a-z]s:)?(-?0x[0-9a-f]+|-?\d+)?\((%\w+)?(?:,(%\w+)(?:,(\d))?)?\)$/.exec(operand);
  const displacementText = parts?.[1] ?? "0";
  const displacement = displacementText.startsWith("-") ? -BigInt(displacementText.slice(1)) : BigInt(displacementText);
  const baseName = parts?.[2] && parts[2] !== "%rip" ? parts[2] : null;
  const baseValue = baseName ? value(baseName) : null;
  const base = baseName && baseValue !== null ? { register: baseName, value: baseValue } : null;
  const indexName = parts?.[3] ?? null;
  const indexValue = indexName ? value(indexName) : null;
  const index = indexName && indexValue !== null ? { register: indexName, value: indexValue, scale: Number(parts?.[4] ?? 1) } : null;
  const size = access === "execute" ? null : accessSize(instruction, memoryIndex);
  return explainOperand({ access, size, operand, base, index, displacement, faultAddress, mapped });
}

/**
 * A memory access explained from its parts, however they were read (an AT&T operand, an AArch64
 * instruction word): the address's terms with their values, a NULL base, a flipped bit.
 */
export function explainOperand(input: {
  access: "read" | "write" | "execute";
  size: number | null;
  operand: string | null;
  base: Operand["base"];
  index: Operand["index"];
  displacement: bigint;
  faultAddress: bigint | null;
  mapped: Range[];
}): FaultExplanation {
  const { access, size, operand, base, index, displacement, faultAddress, mapped } = input;
  const pointer = base?.value ?? faultAddress;
  const bitFlip = pointer !== null && pointer >= NULL_PAGE_LIMIT && !isMapped(pointer, mapped) ? oneBitAway(pointer, mapped) : null;
  return {
    access,
    size,
    operand,
    base: base && { register: base.register, value: hex(base.value) },
    index: index && { register: index.register, value: hex(index.value), scale: index.scale },
    displacement: hex(displacement),
    bitFlip: bitFlip && { pointer: hex(bitFlip.pointer), candidate: hex(bitFlip.candidate), bit: bitFlip.bit },
    text: describe(access, size, faultAddress, operand, base, index, displacement, bitFlip),
  };
}

function isMapped(address: bigint, mapped: Range[]): boolean {
  return mapped.some((range) => range.start <= address && address < range.end);
}

/** How near a mapping a pointer may lie and still be a flip rather than a walk just past its end. */
const OVERRUN_REACH = 1n << 16n;

/**
 * A mapped address that differs from `pointer` in exactly one of its 48 user-space bits. Only bits
 * from 16 up: a pointer within 64 KiB of a mapping has more likely run past its end (an overrun)
 * than had a low bit flipped, and is not called a flip.
 */
function oneBitAway(pointer: bigint, mapped: Range[]): { pointer: bigint; candidate: bigint; bit: number } | null {
  if (mapped.some((range) => pointer + OVERRUN_REACH >= range.start && pointer < range.end + OVERRUN_REACH)) return null;
  for (let bit = 16; bit < 48; bit++) {
    const candidate = pointer ^ (1n << BigInt(bit));
    if (candidate >= NULL_PAGE_LIMIT && isMapped(candidate, mapped)) return { pointer, candidate, bit };
  }
  return null;
}

function hex(value: bigint): string {
  return value < 0n ? `-0x${(-value).toString(16)}` : `0x${value.toString(16)}`;
}

function describe(
  access: "read" | "write" | "execute",
  size: number | null,
  fault: bigint | null,
  operand: string | null,
  base: Operand["base"],
  index: Operand["index"],
  displacement: bigint,
  bitFlip: Operand["bitFlip"],
): string {
  const verb = { read: "reading", write: "writing", execute: "executing" }[access];
  const amount = size === null ? "" : ` ${size} byte${size === 1 ? "" : "s"}`;
  const at = fault === null ? "" : ` at ${hex(fault)}`;
  const sentences = [`${verb}${amount}${at}`];
  if (base) {
    const terms = [`${base.register} (${hex(base.value)})`];
    if (index) terms.push(`${index.register} (${hex(index.value)})${index.scale !== 1 ? ` * ${index.scale}` : ""}`);
    if (displacement !== 0n) terms.push(hex(displacement));
    const nullBase = base.value < NULL_PAGE_LIMIT ? `: ${base.register} was ${base.value === 0n ? "NULL" : "a near-NULL value"}${displacement > 0n ? `, and ${hex(displacement)} is the offset of the member accessed` : ""}` : "";
    sentences[0] += ` through \`${operand}\` = ${terms.join(" + ")}${nullBase}`;
  }
  if (bitFlip) {
    sentences.push(`${hex(bitFlip.pointer)} is one bit (bit ${bitFlip.bit}) away from mapped memory at ${hex(bitFlip.candidate)}: it may be a flipped bit (failing memory) rather than a software bug`);
  }
  // A pointer whose bytes are all printable text ('AAAA…', "GET /") is input where an address should be.
  const text = base ? textBytes(base.value) : null;
  if (text !== null && base) sentences.unshift(`${base.register} holds the bytes "${text}": text where a pointer should be, input that overwrote it`);
  return sentences.join("; ");
}

/**
 * The bytes of a pointer-sized word as text (little-endian, as memory holds them), when every one
 * is printable: eight in a 64-bit process, four in a 32-bit one, whose addresses have no upper half.
 */
export function textBytes(word: bigint, wordBytes: 4 | 8 = 8): string | null {
  if (word < 0n || word >> BigInt(8 * wordBytes) !== 0n) return null;
  const bytes = Array.from({ length: wordBytes }, (_, i) => Number((word >> BigInt(8 * i)) & 0xffn));
  return bytes.every(printable) ? String.fromCharCode(...bytes) : null;
}

/**
 * The end of a C string in a word: at least four printable bytes then only NULs (`"BBBBBB\0\0"`,
 * what strcpy leaves where it stopped). Only for a word known to be no pointer: a user-space
 * pointer's top bytes are NULs too.
 */
export function stringEndBytes(word: bigint): string | null {
  if (word < 0n) return null;
  const bytes = Array.from({ length: 8 }, (_, i) => Number((word >> BigInt(8 * i)) & 0xffn));
  const length = bytes.findIndex((b) => b === 0);
  if (length < 4 || !bytes.slice(length).every((b) => b === 0)) return null;
  return bytes.slice(0, length).every(printable) ? String.fromCharCode(...bytes.slice(0, length)) : null;
}

const printable = (byte: number) => byte >= 0x20 && byte < 0x7f;
