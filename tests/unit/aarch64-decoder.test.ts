/**
 * The AArch64 load/store reader against real encodings: each snippet is assembled by binutils'
 * aarch64-linux-gnu-as at test time and its words read back with objdump, so the words are the
 * assembler's, not ours; where binutils is missing, the same words as fixed numbers checked once
 * against objdump's reading.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

import { accessAddress, callArgumentAddress, decodeMemoryAccess, decodeTrap, pacMangled, trapMeaning } from "../../src/analyzers/aarch64.js";

/** Each line assembled, with what the reader must make of it (size in bytes, offset added to the base). */
const CASES: { asm: string; word: number; access: "read" | "write" | null; size?: number | null; operand?: string; address?: bigint }[] = [
  { asm: "ldr x1, [x0, #8]", word: 0xf9400401, access: "read", size: 8, operand: "[x0, #0x8]", address: 0x8n },
  { asm: "ldr w0, [x0, #32]", word: 0xb9402000, access: "read", size: 4, operand: "[x0, #0x20]", address: 0x20n },
  { asm: "strb w1, [x0, #3]", word: 0x39000c01, access: "write", size: 1, operand: "[x0, #0x3]", address: 0x3n },
  { asm: "ldrsw x2, [x3, #4]", word: 0xb9800462, access: "read", size: 4, operand: "[x3, #0x4]", address: 0x1004n },
  { asm: "ldur x0, [x1, #-8]", word: 0xf85f8020, access: "read", size: 8, operand: "[x1, #-0x8]", address: 0xff8n },
  { asm: "stur w0, [x29, #-4]", word: 0xb81fc3a0, access: "write", size: 4, operand: "[x29, #-0x4]", address: 0x7ffcn },
  { asm: "ldr x0, [x1], #16", word: 0xf8410420, access: "read", size: 8, operand: "[x1], #0x10", address: 0x1000n },
  { asm: "str x0, [sp, #-16]!", word: 0xf81f0fe0, access: "write", size: 8, operand: "[sp, #-0x10]!", address: 0x7ff0n },
  { asm: "ldr x0, [x1, x2, lsl #3]", word: 0xf8627820, access: "read", size: 8, operand: "[x1, x2, lsl #3]", address: 0x1000n + 3n * 8n },
  { asm: "ldr w0, [x1, w2, sxtw #2]", word: 0xb862d820, access: "read", size: 4, operand: "[x1, w2, sxtw #2]", address: 0x1000n + 3n * 4n },
  { asm: "ldrb w0, [x1, x2]", word: 0x38626820, access: "read", size: 1, operand: "[x1, x2]", address: 0x1003n },
  { asm: "ldp x29, x30, [sp], #16", word: 0xa8c17bfd, access: "read", size: 16, operand: "[sp], #0x10", address: 0x8000n },
  { asm: "stp x29, x30, [sp, #-32]!", word: 0xa9be7bfd, access: "write", size: 16, operand: "[sp, #-0x20]!", address: 0x7fe0n },
  { asm: "ldp w1, w2, [x0, #8]", word: 0x29410801, access: "read", size: 8, operand: "[x0, #0x8]", address: 0x8n },
  { asm: "ldpsw x1, x2, [x0]", word: 0x69400801, access: "read", size: 8, operand: "[x0]", address: 0x0n },
  { asm: "ldr q0, [x0, #16]", word: 0x3dc00400, access: "read", size: 16, operand: "[x0, #0x10]", address: 0x10n },
  { asm: "str d1, [x0, #8]", word: 0xfd000401, access: "write", size: 8, operand: "[x0, #0x8]", address: 0x8n },
  { asm: "ldr s2, [x3]", word: 0xbd400062, access: "read", size: 4, operand: "[x3]", address: 0x1000n },
  { asm: "stp q0, q1, [x0, #32]", word: 0xad010400, access: "write", size: 32, operand: "[x0, #0x20]", address: 0x20n },
  { asm: "ld1 {v0.16b}, [x0]", word: 0x4c407000, access: "read", size: 16, operand: "[x0]", address: 0x0n },
  { asm: "st1 {v0.4s, v1.4s}, [x1], #32", word: 0x4c9fa820, access: "write", size: 32, operand: "[x1]", address: 0x1000n },
  { asm: "ldxr x0, [x1]", word: 0xc85f7c20, access: "read", size: 8, operand: "[x1]", address: 0x1000n },
  { asm: "stlr w0, [x1]", word: 0x889ffc20, access: "write", size: 4, operand: "[x1]", address: 0x1000n },
  { asm: "ldadd w0, w1, [x2]", word: 0xb8200041, access: "write", size: 4, operand: "[x2]", address: 0x3n },
  { asm: "prfm pldl1keep, [x0]", word: 0xf9800000, access: null },
  { asm: "add x0, x1, #8", word: 0x91002020, access: null },
  { asm: "bl .", word: 0x94000000, access: null },
];

/** The registers the addresses above are formed from. */
const REGISTERS: Record<string, bigint> = { x0: 0n, x1: 0x1000n, x2: 3n, x3: 0x1000n, x29: 0x8000n, sp: 0x8000n };
const value = (name: string) => REGISTERS[name] ?? null;

/** The words binutils assembles the snippets into, in order; null where it is not installed. */
function assembled(lines: string[]): number[] | null {
  const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-a64-"));
  try {
    writeFileSync(path.join(dir, "s.s"), `${lines.join("\n")}\n`);
    execFileSync("aarch64-linux-gnu-as", ["-march=armv8.1-a", "-o", path.join(dir, "s.o"), path.join(dir, "s.s")]);
    const dump = execFileSync("aarch64-linux-gnu-objdump", ["-d", path.join(dir, "s.o")], { encoding: "utf8" });
    return [...dump.matchAll(/^\s*[0-9a-f]+:\s+([0-9a-f]{8})\s/gm)].map((m) => parseInt(m[1] ?? "0", 16));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("decodeMemoryAccess", () => {
  const words = assembled(CASES.map((c) => c.asm));

  it("reads the same words as binutils assembles", () => {
    if (words === null) return;
    expect(words.map((w) => w.toString(16))).toEqual(CASES.map((c) => c.word.toString(16)));
  });

  for (const c of CASES) {
    it(`${c.asm}: ${c.access ?? "no access"}`, () => {
      const access = decodeMemoryAccess(c.word);
      if (c.access === null) {
        expect(access).toBeNull();
        return;
      }
      expect(access).not.toBeNull();
      expect(access?.access).toBe(c.access);
      if (c.size !== undefined) expect(access?.size).toBe(c.size);
      if (c.operand !== undefined) expect(access?.operand).toBe(c.operand);
      if (c.address !== undefined && access) expect(accessAddress(access, value, 0x400000n)).toBe(c.address);
    });
  }

  it("forms a literal's address from the pc", () => {
    const access = decodeMemoryAccess(0x58000040); // ldr x0, . + 8
    expect(access?.mode).toBe("literal");
    expect(accessAddress(access!, value, 0x400000n)).toBe(0x400008n);
  });
});

describe("decodeTrap", () => {
  it("reads brk and udf with their immediates", () => {
    const words = assembled(["brk #0x3e8", "brk #0", "udf #7", "nop"]) ?? [0xd4207d00, 0xd4200000, 0x00000007, 0xd503201f];
    expect(words.map(decodeTrap)).toEqual([{ instruction: "brk", immediate: 0x3e8 }, { instruction: "brk", immediate: 0 }, { instruction: "udf", immediate: 7 }, null]);
    expect(trapMeaning(0x3e8)).toMatch(/__builtin_trap/);
    expect(trapMeaning(0xc472)).toMatch(/pointer authentication/);
  });
});

describe("pacMangled", () => {
  it("tells a pointer with bits between the address and the top byte from a canonical or tagged one", () => {
    expect(pacMangled(0x0000aaaabbbbccccn)).toBe(false);
    expect(pacMangled(0xffff800000001000n)).toBe(false);
    // Top-byte tags (MTE, HWASan) are ignored by the hardware, and are no authentication.
    expect(pacMangled(0x0b00aaaabbbbccccn)).toBe(false);
    expect(pacMangled(0x002d00010000abcdn)).toBe(true);
  });
});

describe("the address a call passed in a register, from the words before its bl", () => {
  // g++'s throw of std::runtime_error in a non-PIE program, as objdump reads it: the type_info from a GOT slot.
  const THROW = [
    0xb00000e2, // 40216c adrp x2, 0x41f000
    0xf947d842, // 402170 ldr x2, [x2, #4016]
    0xb00000e1, // 402174 adrp x1, 0x41f000
    0xf947ec21, // 402178 ldr x1, [x1, #4056]
    0xaa1303e0, // 40217c mov x0, x19
    0x97ffff5c, // 402180 bl __cxa_throw@plt
  ];

  it("reads x1 as the GOT slot at page + offset, to be dereferenced", () => {
    expect(callArgumentAddress(THROW, 0x402180n, "x1")).toEqual({ address: 0x41ffd8n, indirect: true });
    expect(callArgumentAddress(THROW, 0x402180n, "x2")).toEqual({ address: 0x41ffb0n, indirect: true });
  });

  it("reads an adrp and add as the address itself, through register moves", () => {
    const code = [
      0x90000101, // 400000 adrp x1, 0x420000
      0x91048c21, // 400004 add x1, x1, #0x123
      0xaa1303e0, // 400008 mov x0, x19
      0xaa0103e3, // 40000c mov x3, x1
      0xaa0303e1, // 400010 mov x1, x3
      0x94008043, // 400014 bl
    ];
    expect(callArgumentAddress(code, 0x400014n, "x1")).toEqual({ address: 0x420123n, indirect: false });
  });

  it("gives nothing where the register was set otherwise, or the last word is no bl", () => {
    expect(callArgumentAddress(THROW, 0x402180n, "x0")).toBeNull();
    expect(callArgumentAddress(THROW.slice(0, -1), 0x40217cn, "x1")).toBeNull();
  });
});
