/**
 * The registers of a minidump's CONTEXT records, by the offsets of winnt.h's structures, which
 * Breakpad and Crashpad write too: an arm64 macOS or Android dump reads its x0–x30, sp and pc.
 */
import { describe, expect, it } from "vitest";
import { Fields } from "../../src/debuggers/dumpfile/file.js";
import { contextRegisters, contextRegistersBytes } from "../../src/debuggers/dumpfile/minidump-context.js";

describe("a minidump thread context", () => {
  it("reads an arm64 context: x0–x30, sp and pc, the flags and cpsr words left out", () => {
    const context = Buffer.alloc(0x390);
    context.writeUInt32LE(0x00400003, 0); // ContextFlags: CONTEXT_ARM64 | CONTROL | INTEGER
    context.writeUInt32LE(0x60000000, 4); // Cpsr
    for (let i = 0; i < 31; i++) context.writeBigUInt64LE(0x1000n + BigInt(i), 8 + i * 8);
    context.writeBigUInt64LE(0x16fdff2a0n, 0x100);
    context.writeBigUInt64LE(0x100003f58n, 0x108);
    const registers = contextRegisters(new Fields(context, "arm64 context"), "arm64");
    expect(registers.x0).toBe("0x1000");
    expect(registers.x29).toBe("0x101d");
    expect(registers.x30).toBe("0x101e");
    expect(registers.sp).toBe("0x16fdff2a0");
    expect(registers.pc).toBe("0x100003f58");
    expect(Object.keys(registers)).toHaveLength(33);
    expect(contextRegistersBytes("arm64")).toBe(0x110);
  });

  it("reads a 32-bit x86 context's registers at their offsets", () => {
    const context = Buffer.alloc(0x2cc);
    context.writeUInt32LE(0x401a2b, 0xb8); // Eip
    context.writeUInt32LE(0x0019ff30, 0xc4); // Esp
    context.writeUInt32LE(0x45, 0xb0); // Eax
    const registers = contextRegisters(new Fields(context, "x86 context"), "x86");
    expect(registers).toMatchObject({ eip: "0x401a2b", esp: "0x19ff30", eax: "0x45" });
  });

  it("reads nothing for an architecture it does not know, rather than guessing offsets", () => {
    expect(contextRegisters(new Fields(Buffer.alloc(64), "context"), "unknown" as never)).toEqual({});
    expect(contextRegistersBytes("unknown" as never)).toBe(0);
  });
});
