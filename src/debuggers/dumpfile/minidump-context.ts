/**
 * The general registers of a minidump CONTEXT record, by architecture. Offsets are those of
 * Microsoft's CONTEXT structures (winnt.h), which Breakpad and Crashpad write as well.
 */
import type { Address, Platform } from "../model.js";
import { hex, type Fields } from "./file.js";

/** Name, offset and width of each register kept. */
type Layout = [name: string, at: number, bytes: 2 | 4 | 8][];

const AMD64: Layout = [
  ["rax", 0x78, 8],
  ["rcx", 0x80, 8],
  ["rdx", 0x88, 8],
  ["rbx", 0x90, 8],
  ["rsp", 0x98, 8],
  ["rbp", 0xa0, 8],
  ["rsi", 0xa8, 8],
  ["rdi", 0xb0, 8],
  ...Array.from({ length: 8 }, (_, i): [string, number, 8] => [`r${i + 8}`, 0xb8 + i * 8, 8]),
  ["rip", 0xf8, 8],
  ["eflags", 0x44, 4],
  ["cs", 0x38, 2],
  ["ss", 0x42, 2],
];

const X86: Layout = [
  ["edi", 0x9c, 4],
  ["esi", 0xa0, 4],
  ["ebx", 0xa4, 4],
  ["edx", 0xa8, 4],
  ["ecx", 0xac, 4],
  ["eax", 0xb0, 4],
  ["ebp", 0xb4, 4],
  ["eip", 0xb8, 4],
  ["eflags", 0xc0, 4],
  ["esp", 0xc4, 4],
];

// Breakpad's older ARM64 layout starts with a 64-bit flags word where Microsoft's has flags and
// cpsr: the registers after it lie at the same offsets, so only cpsr is left out.
const ARM64: Layout = [
  ...Array.from({ length: 31 }, (_, i): [string, number, 8] => [`x${i}`, 8 + i * 8, 8]),
  ["sp", 0x100, 8],
  ["pc", 0x108, 8],
];

const ARM: Layout = [
  ...Array.from({ length: 13 }, (_, i): [string, number, 4] => [`r${i}`, 4 + i * 4, 4]),
  ["sp", 0x38, 4],
  ["lr", 0x3c, 4],
  ["pc", 0x40, 4],
  ["cpsr", 0x44, 4],
];

const LAYOUTS: Partial<Record<Platform["arch"], Layout>> = { x86_64: AMD64, x86: X86, arm64: ARM64, arm: ARM };

/** How many bytes at the start of a context record hold the registers kept; 0 for an unknown architecture. */
export function contextRegistersBytes(arch: Platform["arch"]): number {
  return Math.max(0, ...(LAYOUTS[arch] ?? []).map(([, at, bytes]) => at + bytes));
}

/** The registers a context record holds; empty for an architecture this reader does not know. */
export function contextRegisters(context: Fields, arch: Platform["arch"]): Record<string, Address> {
  const registers: Record<string, Address> = {};
  for (const [name, at, bytes] of LAYOUTS[arch] ?? []) {
    registers[name] = hex(bytes === 8 ? context.u64(at) : bytes === 4 ? context.u32(at) : context.u16(at));
  }
  return registers;
}
