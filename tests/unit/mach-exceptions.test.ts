/** Mach exceptions of macOS and iOS minidumps, in the design's crash kinds: the pure table. */
import { describe, expect, it } from "vitest";
import { machExceptionName, machExceptionOrigin, machFaulted, readMachException } from "../../src/analyzers/mach.js";
import type { ExceptionStop } from "../../src/debuggers/model.js";

const exception = (type: number, code: number, address = "0x0", parameters: string[] = []): ExceptionStop => ({ type: "exception", code: `0x${type.toString(16).padStart(8, "0")}`, flags: code, address, parameters, thread: 1 });
const read = (stop: ExceptionStop, over: Partial<Parameters<typeof readMachException>[1]> = {}) =>
  readMachException(stop, { stackExhausted: false, faulting: { address: "0x1000", mnemonic: "mov", operands: ["%rdx", "0x18(%rax)"], bytes: null, location: null } as never, pc: 0x1000n, ...over });

describe("Mach exceptions", () => {
  it("reads EXC_BAD_ACCESS by its subcode: near NULL, far, at the pc, a general-protection fault", () => {
    expect(read(exception(1, 1, "0x18"))).toMatchObject({ kind: "null-dereference", access: "write", faultAddress: "0x18" });
    expect(read(exception(1, 2, "0x7f00dead0000"))).toMatchObject({ kind: "invalid-memory-access", faultAddress: "0x7f00dead0000" });
    expect(read(exception(1, 1, "0x1000"))).toMatchObject({ kind: "bad-jump", access: "execute" });
    expect(read(exception(1, 13, "0x0"), { faulting: { address: "0x1000", mnemonic: "call", operands: ["*%rdx"] } as never })).toMatchObject({ kind: "bad-jump", access: "execute", faultAddress: null });
    expect(read(exception(1, 1, "0x7ffe0000fff8"), { stackExhausted: true }).kind).toBe("stack-overflow");
  });

  it("maps the other types: instruction, arithmetic, breakpoint, EXC_CRASH's signal, guard, resource", () => {
    expect(read(exception(2, 1)).kind).toBe("illegal-instruction");
    expect(read(exception(3, 1)).kind).toBe("division-by-zero");
    expect(read(exception(3, 5))).toMatchObject({ kind: "unknown", message: "arithmetic exception (EXC_ARITHMETIC, code 5)" });
    expect(read(exception(6, 1)).kind).toBe("breakpoint");
    // SIGABRT inside EXC_CRASH is an abort the stack explains; another signal is said.
    expect(read(exception(10, 6 << 24)).kind).toBeNull();
    expect(read(exception(10, 9 << 24))).toMatchObject({ kind: "unknown", message: "the process ended with SIGKILL (EXC_CRASH)" });
    expect(read(exception(12, 0)).kind).toBe("abort");
    expect(read(exception(11, 0, "0x0", ["0x6000000000000000"]))).toMatchObject({ kind: "unknown", message: "resource limit exceeded (EXC_RESOURCE: memory)" });
  });

  it("knows Crashpad's own: a dump without a crash is requested, an uncaught NSException an exception", () => {
    expect(read(exception(0x43507378, 0)).message).toMatch(/without crashing/);
    expect(machExceptionOrigin(exception(0x43507378, 0)).type).toBe("requested");
    expect(read(exception(0x43506e78, 0)).kind).toBe("uncaught-exception");
    expect(machExceptionOrigin(exception(0x43506e78, 0)).type).toBe("exception");
    expect(machExceptionOrigin(exception(10, 6 << 24))).toMatchObject({ type: "raised", evidence: expect.stringMatching(/SIGABRT/) });
    expect(machExceptionName("0x00000001")).toBe("EXC_BAD_ACCESS");
    expect([1, 2, 3, 6, 10].map((type) => machFaulted(`0x${type.toString(16).padStart(8, "0")}`))).toEqual([true, true, true, true, false]);
  });
});
