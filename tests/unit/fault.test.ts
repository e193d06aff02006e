/**
 * The faulting instruction explained, on instructions spelled as gdb prints them (AT&T): the memory
 * operand read as base, index and displacement with the registers' values, the bytes accessed, the
 * sentence a person reads, and a bad pointer one bit away from mapped memory named as a flipped bit.
 */
import { describe, expect, it } from "vitest";
import { explainFault, type FaultExplanation, type Range } from "../../src/analyzers/fault.js";
import type { Instruction, Register } from "../../src/debuggers/model.js";

function at(mnemonic: string, ...operands: string[]): Instruction {
  return { address: "0x401136", location: "parse_header+22", mnemonic, operands, reference: null, current: true };
}

function registers(values: Record<string, bigint>): Register[] {
  return Object.entries(values).map(([name, value]) => ({ name, value: `0x${value.toString(16)}`, natural: value.toString() }));
}

/** A PIE's text and data, its heap, and a thread's stack. */
const MAPPED: Range[] = [
  { start: 0x555555554000n, end: 0x555555559000n },
  { start: 0x55555555a000n, end: 0x55555557b000n },
  { start: 0x7ffffffde000n, end: 0x7ffffffff000n },
];
const HEAP_POINTER = 0x55555555a2c0n;

/** The explanation with its hex values read back as numbers, for comparing. */
interface Numeric extends Omit<FaultExplanation, "base" | "index" | "displacement" | "bitFlip"> {
  base: { register: string; value: bigint } | null;
  index: { register: string; value: bigint; scale: number } | null;
  displacement: bigint;
  bitFlip: { pointer: bigint; candidate: bigint; bit: number } | null;
}

function signed(hex: string): bigint {
  return hex.startsWith("-") ? -BigInt(hex.slice(1)) : BigInt(hex);
}

function explain(
  instruction: Instruction,
  facts: { access?: FaultExplanation["access"]; fault?: bigint | null; registers?: Record<string, bigint>; mapped?: Range[] } = {},
): Numeric {
  const fault = explainFault({
    instruction,
    access: facts.access ?? "read",
    faultAddress: facts.fault ?? null,
    registers: registers(facts.registers ?? {}),
    mapped: facts.mapped ?? MAPPED,
  });
  return {
    ...fault,
    base: fault.base && { register: fault.base.register, value: BigInt(fault.base.value) },
    index: fault.index && { register: fault.index.register, value: BigInt(fault.index.value), scale: fault.index.scale },
    displacement: signed(fault.displacement),
    bitFlip: fault.bitFlip && { pointer: BigInt(fault.bitFlip.pointer), candidate: BigInt(fault.bitFlip.candidate), bit: fault.bitFlip.bit },
  };
}

describe("the explanation is plain data", () => {
  it("survives JSON (the graph's state checkpoints it), with its numbers in hex", () => {
    const fault = explainFault({
      instruction: at("mov", "-0x18(%rax)", "%rdx"),
      access: "read",
      faultAddress: HEAP_POINTER ^ (1n << 40n),
      registers: registers({ rax: (HEAP_POINTER ^ (1n << 40n)) + 0x18n }),
      mapped: MAPPED,
    });
    expect(JSON.parse(JSON.stringify(fault))).toEqual(fault);
    expect(fault.displacement).toBe("-0x18");
    expect(fault.base?.value).toMatch(/^0x[0-9a-f]+$/);
    expect(fault.bitFlip).toEqual({ pointer: `0x${((HEAP_POINTER ^ (1n << 40n)) + 0x18n).toString(16)}`, candidate: `0x${(HEAP_POINTER + 0x18n).toString(16)}`, bit: 40 });
  });
});

describe("the memory operand is read as base, index and displacement", () => {
  it("disp(base): the base register's value and the displacement", () => {
    const fault = explain(at("mov", "0x20(%rax)", "%eax"), { fault: 0x20n, registers: { rax: 0n, rbx: 7n } });
    expect(fault.operand).toBe("0x20(%rax)");
    expect(fault.base).toEqual({ register: "%rax", value: 0n });
    expect(fault.index).toBeNull();
    expect(fault.displacement).toBe(0x20n);
  });

  it("disp(base,index,scale): the index register, its value and the scale", () => {
    const fault = explain(at("mov", "0x10(%rdx,%rcx,8)", "%rax"), { registers: { rdx: HEAP_POINTER, rcx: 5n } });
    expect(fault.base).toEqual({ register: "%rdx", value: HEAP_POINTER });
    expect(fault.index).toEqual({ register: "%rcx", value: 5n, scale: 8 });
    expect(fault.displacement).toBe(0x10n);
  });

  it("an index without a scale has scale 1, and no displacement is 0", () => {
    const fault = explain(at("movzbl", "(%rdi,%rsi)", "%eax"), { registers: { rdi: HEAP_POINTER, rsi: 3n } });
    expect(fault.index).toEqual({ register: "%rsi", value: 3n, scale: 1 });
    expect(fault.displacement).toBe(0n);
  });

  it("numbered registers and 32-bit names are read from the 64-bit register", () => {
    const fault = explain(at("mov", "0x4(%r9,%r10,4)", "%r8d"), { registers: { r9: HEAP_POINTER, r10: 2n } });
    expect(fault.base).toEqual({ register: "%r9", value: HEAP_POINTER });
    expect(fault.index).toEqual({ register: "%r10", value: 2n, scale: 4 });
    expect(explain(at("mov", "(%edx)", "%eax"), { registers: { rdx: 0x1000n } }).base).toEqual({ register: "%edx", value: 0x1000n });
  });

  it("rip-relative: no base register, the displacement kept", () => {
    const fault = explain(at("mov", "0x2ee5(%rip)", "%rax"), { registers: { rip: 0x555555555149n } });
    expect(fault.operand).toBe("0x2ee5(%rip)");
    expect(fault.base).toBeNull();
    expect(fault.index).toBeNull();
    expect(fault.displacement).toBe(0x2ee5n);
  });

  it("a segment prefix is part of the operand, not of the address's terms", () => {
    const fault = explain(at("mov", "%fs:0x8(%rax)", "%rdx"), { registers: { rax: 0n } });
    expect(fault.operand).toBe("%fs:0x8(%rax)");
    expect(fault.base).toEqual({ register: "%rax", value: 0n });
    expect(fault.displacement).toBe(8n);
  });

  it("a negative displacement is negative", () => {
    const fault = explain(at("mov", "-0x18(%rbp)", "%rax"), { registers: { rbp: 0x7ffffffde010n } });
    expect(fault.displacement).toBe(-0x18n);
    expect(fault.text).toContain("%rbp (0x7ffffffde010) + -0x18");
  });

  it("an indirect call's operand, with its star", () => {
    const fault = explain(at("call", "*0x8(%rax)"), { fault: 8n, registers: { rax: 0n } });
    expect(fault.operand).toBe("*0x8(%rax)");
    expect(fault.base).toEqual({ register: "%rax", value: 0n });
    expect(fault.displacement).toBe(8n);
  });

  it("no memory operand: nothing to decompose", () => {
    const fault = explain(at("push", "%rbp"), { access: "write", fault: 0x7ffffffddff8n, registers: { rbp: 0x7ffffffde010n } });
    expect(fault).toMatchObject({ operand: null, base: null, index: null, displacement: 0n });
  });

  it("a base register whose value is unknown gives no base", () => {
    expect(explain(at("mov", "0x8(%rbx)", "%rax"), { registers: { rax: 0n } }).base).toBeNull();
  });
});

describe("the bytes accessed", () => {
  const cases: Array<[string, Instruction, number | null]> = [
    ["%rax", at("mov", "(%rdx)", "%rax"), 8],
    ["%eax", at("mov", "0x20(%rax)", "%eax"), 4],
    ["%ax", at("mov", "%ax", "(%rdx)"), 2],
    ["%al", at("mov", "%al", "(%rdx)"), 1],
    ["%r8d", at("mov", "%r8d", "0x8(%rdx)"), 4],
    ["%r11w", at("mov", "%r11w", "(%rdx)"), 2],
    ["%r8b", at("mov", "%r8b", "(%rdx)"), 1],
    ["%sil", at("mov", "%sil", "(%rdx)"), 1],
    ["%xmm0", at("movdqu", "(%rax)", "%xmm0"), 16],
    ["%ymm1", at("vmovdqu", "%ymm1", "0x20(%rdi)"), 32],
    ["movsd into %xmm0 reads a double", at("movsd", "0x8(%rax)", "%xmm0"), 8],
    ["movss into %xmm0 reads a float", at("movss", "(%rax)", "%xmm0"), 4],
    ["cvtss2sd reads its source, a float", at("cvtss2sd", "(%rax)", "%xmm1"), 4],
    ["movq into %xmm0", at("movq", "0x8(%rax)", "%xmm0"), 8],
    ["movd into %xmm0", at("movd", "(%rax)", "%xmm0"), 4],
    ["movl", at("movl", "$0x1", "(%rax)"), 4],
    ["movq", at("movq", "$0x0", "0x8(%rax)"), 8],
    ["movb", at("movb", "$0x0", "(%rdi)"), 1],
    ["movw", at("movw", "$0x0", "(%rdi)"), 2],
    ["cmpb", at("cmpb", "$0x0", "(%rax)"), 1],
    ["movzbl: the source's byte, not the destination's four", at("movzbl", "(%rax)", "%eax"), 1],
    ["movsbq", at("movsbq", "0x1(%rdx)", "%rax"), 1],
    ["movzwl", at("movzwl", "(%rax)", "%eax"), 2],
    ["movslq", at("movslq", "(%rdi)", "%rax"), 4],
    ["push", at("push", "%rbp"), 8],
    ["push of memory", at("push", "0x8(%rax)"), 8],
    ["call through memory", at("call", "*0x8(%rax)"), 8],
    ["neither a register nor a suffix says", at("clflush", "(%rax)"), null],
  ];
  for (const [name, instruction, bytes] of cases) {
    it(`${instruction.mnemonic} ${instruction.operands.join(",")}: ${name} → ${bytes}`, () => {
      expect(explain(instruction, { registers: { rax: 0n, rdx: 0n, rdi: 0n } }).size).toBe(bytes);
    });
  }

  it("an execute access has no size", () => {
    expect(explain(at("call", "*0x8(%rax)"), { access: "execute", registers: { rax: HEAP_POINTER } }).size).toBeNull();
  });
});

describe("the sentence a person reads", () => {
  it("a NULL base: the member's offset is named", () => {
    const fault = explain(at("mov", "0x20(%rax)", "%eax"), { fault: 0x20n, registers: { rax: 0n } });
    expect(fault.text).toBe("reading 4 bytes at 0x20 through `0x20(%rax)` = %rax (0x0) + 0x20: %rax was NULL, and 0x20 is the offset of the member accessed");
  });

  it("a NULL base without a displacement: no offset, and one byte is singular", () => {
    const fault = explain(at("movb", "$0x0", "(%rdi)"), { access: "write", fault: 0n, registers: { rdi: 0n } });
    expect(fault.text).toBe("writing 1 byte at 0x0 through `(%rdi)` = %rdi (0x0): %rdi was NULL");
  });

  it("a near-NULL base is said to be one", () => {
    const fault = explain(at("mov", "(%rax)", "%rdx"), { fault: 8n, registers: { rax: 8n } });
    expect(fault.text).toBe("reading 8 bytes at 0x8 through `(%rax)` = %rax (0x8): %rax was a near-NULL value");
  });

  it("an index and its scale are terms of the address", () => {
    const fault = explain(at("mov", "0x10(%rdx,%rcx,8)", "%rax"), { fault: 0x58n, registers: { rdx: 0n, rcx: 7n } });
    expect(fault.text).toBe(
      "reading 8 bytes at 0x58 through `0x10(%rdx,%rcx,8)` = %rdx (0x0) + %rcx (0x7) * 8 + 0x10: %rdx was NULL, and 0x10 is the offset of the member accessed",
    );
  });

  it("a wild base (a general-protection fault, no address): the value, never NULL, no flipped bit", () => {
    const fault = explain(at("mov", "0x8(%rax)", "%rdx"), { fault: null, registers: { rax: 0x4141414141414141n } });
    // Its bytes are text ('AAAAAAAA'): said first, as an engineer would lead with it.
    expect(fault.text).toBe('%rax holds the bytes "AAAAAAAA": text where a pointer should be, input that overwrote it; reading 8 bytes through `0x8(%rax)` = %rax (0x4141414141414141) + 0x8');
    expect(fault.bitFlip).toBeNull();
    const garbage = explain(at("mov", "0x8(%rax)", "%rdx"), { fault: null, registers: { rax: 0xdeadbeefdeadbeefn } });
    expect(garbage.text).toBe("reading 8 bytes through `0x8(%rax)` = %rax (0xdeadbeefdeadbeef) + 0x8");
  });

  it("an execute access: where, without a size", () => {
    const fault = explain(at("call", "*%rdx"), { access: "execute", fault: 0n, registers: { rdx: 0n } });
    expect(fault).toMatchObject({ access: "execute", size: null, operand: null, base: null });
    expect(fault.text).toBe("executing at 0x0");
  });
});

describe("a pointer one bit away from mapped memory", () => {
  const flipped = HEAP_POINTER ^ (1n << 40n);

  it("names the mapped candidate and the bit", () => {
    const fault = explain(at("mov", "0x8(%rax)", "%rdx"), { fault: flipped + 8n, registers: { rax: flipped } });
    expect(fault.bitFlip).toEqual({ pointer: flipped, candidate: HEAP_POINTER, bit: 40 });
    expect(fault.text).toContain(`0x${flipped.toString(16)} is one bit (bit 40) away from mapped memory at 0x${HEAP_POINTER.toString(16)}`);
  });

  it("without a base register, the fault address is the pointer", () => {
    const fault = explain(at("mov", "0x2ee5(%rip)", "%rax"), { fault: HEAP_POINTER ^ (1n << 36n), mapped: [{ start: HEAP_POINTER, end: HEAP_POINTER + 8n }] });
    expect(fault.bitFlip).toEqual({ pointer: HEAP_POINTER ^ (1n << 36n), candidate: HEAP_POINTER, bit: 36 });
  });

  it("a pointer just past the end of a mapping ran off it: no flip, though a low bit would land inside", () => {
    const mapped = [{ start: 0x555555600000n, end: 0x555555601000n }];
    const fault = explain(at("mov", "(%rax)", "%rdx"), { fault: 0x555555601000n, registers: { rax: 0x555555601000n }, mapped });
    expect(fault.bitFlip).toBeNull();
  });

  it("two bits away: none", () => {
    const twice = flipped ^ (1n << 33n);
    expect(explain(at("mov", "0x8(%rax)", "%rdx"), { fault: twice + 8n, registers: { rax: twice } }).bitFlip).toBeNull();
  });

  it("a pointer below 0x10000: none, though bit 22 away is mapped", () => {
    const mapped = [{ start: 0x401000n, end: 0x402000n }];
    const fault = explain(at("mov", "(%rax)", "%rdx"), { fault: 0x1000n, registers: { rax: 0x1000n }, mapped });
    expect(fault.bitFlip).toBeNull();
  });

  it("a candidate below 0x10000: none", () => {
    const mapped = [{ start: 0x1000n, end: 0x2000n }];
    expect(explain(at("mov", "(%rax)", "%rdx"), { fault: 0x11000n, registers: { rax: 0x11000n }, mapped }).bitFlip).toBeNull();
  });

  it("a mapped pointer: none, though its neighbours one bit away are mapped too", () => {
    const fault = explain(at("mov", "0x100000(%rax)", "%rdx"), { fault: HEAP_POINTER + 0x100000n, registers: { rax: HEAP_POINTER } });
    expect(fault.bitFlip).toBeNull();
  });
});
