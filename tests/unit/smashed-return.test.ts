/** A `ret` that faulted: classified as a stack buffer overflow, its popped word read like an engineer would. */
import { describe, expect, it } from "vitest";
import { classifyCrash } from "../../src/analyzers/triage/classify.js";
import { smashedReturnMessage } from "../../src/analyzers/triage/explain.js";

const facts = (instruction: string, code = 0x80) => ({
  signal: 11,
  siginfo: { signo: 11, errno: 0, code, address: "0x0", pid: null },
  pc: 0x401185n,
  pcInCode: true,
  frames: [],
  stackExhausted: false,
  abortMessage: null,
  deadlocked: false,
  instruction,
});

describe("a ret that faulted", () => {
  it("is a stack buffer overflow; other general-protection faults are not", () => {
    expect(classifyCrash(facts("ret"))).toBe("stack-buffer-overflow");
    expect(classifyCrash(facts("retq"))).toBe("stack-buffer-overflow");
    expect(classifyCrash(facts("mov (%rax),%eax"))).toBe("invalid-memory-access");
    expect(classifyCrash(facts("call *%rax"))).toBe("bad-jump");
  });

  it("says what the popped word is: input text, or just no address", () => {
    const frame = { level: 0, function: "greet", file: "/src/greet.c", line: 9, address: null, args: "", module: null } as never;
    expect(smashedReturnMessage(frame, 0x4141414141414141n)).toMatch(/^greet returned to 0x4141414141414141, which is no address: .* with the bytes "AAAAAAAA", text written past a buffer on the stack \(input, not a pointer\)$/);
    expect(smashedReturnMessage(frame, 0x0102030405060708n)).toBe("greet returned to 0x0102030405060708, which is no address: its return address on the stack was overwritten");
    expect(smashedReturnMessage(null, null)).toBe("the function returned through a return address that is no address: it was overwritten on the stack");
  });
});

describe("a pointer made of text", () => {
  it("is read as the bytes memory holds, only when every byte is printable", async () => {
    const { textBytes } = await import("../../src/analyzers/fault.js");
    expect(textBytes(0x4141414141414141n)).toBe("AAAAAAAA");
    expect(textBytes(0x2f20544547n)).toBeNull();
    expect(textBytes(0x6f6c6c6568202f20n)).toBe(" / hello");
    expect(textBytes(0x555555554000n)).toBeNull();
    expect(textBytes(0n)).toBeNull();
  });
});
