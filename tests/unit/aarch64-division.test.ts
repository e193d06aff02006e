/**
 * arm64's division by zero, which does not trap, found on the way to a fault: the words of a real
 * function (rows_of_share of tests/fixtures/aarch64/div-zero-index.c, as aarch64-linux-gnu-gcc -O1
 * built it) with the registers at its fault, then the same with the evidence taken away or
 * contradicted: a divisor register written between, a branch landing between, an indirect jump,
 * a divisor not 0, a register not known. Each gives nothing, never a division that did not happen.
 */
import { describe, expect, it } from "vitest";

import { decodeDivide, zeroDivisionBefore } from "../../src/analyzers/aarch64.js";

const START = 0x400704n;
/** sdiv x2,x0,x1; mov/movk x3 (1000's reciprocal); smulh; asr; sub; adrp x0; add x0; ldr x0,[x0,x2,lsl #3]; ldr x0,[x0,#8]; mul; ret */
const ROWS_OF_SHARE = [0x9ac10c02, 0xd29ef9e3, 0xf2bc6a63, 0xf2d374a3, 0xf2e41883, 0x9b437c43, 0x9347fc63, 0xcb82fc62, 0x90000100, 0x91012000, 0xf8627800, 0xf9400400, 0x9b007c20, 0xd65f03c0];
const FAULT = 0x400730n;
const AT_FAULT: Record<string, bigint> = { x0: 0n, x1: 0n, x2: 0n, x3: 0n };
const value = (registers: Record<string, bigint | null>) => (name: string) => registers[name] ?? null;

describe("a division by zero on the way to an arm64 fault", () => {
  it("decodes sdiv and udiv with their registers and width", () => {
    expect(decodeDivide(0x9ac10c02)).toEqual({ signed: true, rd: 2, rn: 0, rm: 1, bits: 64 });
    expect(decodeDivide(0x1ac10802)).toEqual({ signed: false, rd: 2, rn: 0, rm: 1, bits: 32 });
    expect(decodeDivide(0x9b007c20)).toBeNull();
  });

  it("finds the sdiv whose divisor is still 0 at the fault, on straight-line code", () => {
    expect(zeroDivisionBefore(ROWS_OF_SHARE, START, FAULT, value(AT_FAULT))).toEqual({ at: START, divide: { signed: true, rd: 2, rn: 0, rm: 1, bits: 64 } });
  });

  it("reads a 32-bit divisor from the low half of its register", () => {
    const code = [0x1ac10c02, ...ROWS_OF_SHARE.slice(1)];
    expect(zeroDivisionBefore(code, START, FAULT, value({ ...AT_FAULT, x1: 0x100000000n }))?.divide.bits).toBe(32);
  });

  const taken: [string, number[], Record<string, bigint | null>][] = [
    ["a divisor that is not 0 at the fault", ROWS_OF_SHARE, { ...AT_FAULT, x1: 3n }],
    ["a divisor register the dump does not show", ROWS_OF_SHARE, { ...AT_FAULT, x1: null }],
    // mov x1, #0xf7cf in place of the mov to x3: x1 no longer holds what was divided by.
    ["a divisor register written between", ROWS_OF_SHARE.map((word, i) => (i === 1 ? 0xd29ef9e1 : word)), AT_FAULT],
    // stxr w1, x0, [x3] between: its status register is the divisor's.
    ["an exclusive store's status written to the divisor register", ROWS_OF_SHARE.map((word, i) => (i === 5 ? 0xc8017c60 : word)), AT_FAULT],
    // bl somewhere between: x0–x18 may have changed.
    ["a call between", ROWS_OF_SHARE.map((word, i) => (i === 5 ? 0x94000100 : word)), AT_FAULT],
    // b.eq back to the mov after the sdiv, from after the fault: control may have come that way.
    ["a branch landing between", [...ROWS_OF_SHARE.slice(0, 13), 0x54fffe80, 0xd65f03c0], AT_FAULT],
    // br x3: a jump table may land anywhere.
    ["an indirect jump in the function", [...ROWS_OF_SHARE.slice(0, 13), 0xd61f0060, 0xd65f03c0], AT_FAULT],
  ];
  for (const [what, code, registers] of taken) {
    it(`finds nothing for ${what}`, () => {
      expect(zeroDivisionBefore(code, START, FAULT, value(registers))).toBeNull();
    });
  }

  it("finds nothing past the function's code or at a pc not on an instruction", () => {
    expect(zeroDivisionBefore(ROWS_OF_SHARE, START, START + 0x100n, value(AT_FAULT))).toBeNull();
    expect(zeroDivisionBefore(ROWS_OF_SHARE, START, FAULT + 2n, value(AT_FAULT))).toBeNull();
  });
});
