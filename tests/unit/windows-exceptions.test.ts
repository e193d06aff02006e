/**
 * What a Windows exception record says on its own: every NTSTATUS code the reader maps to a crash
 * kind (with the access violation's access and address, the fail-fast codes, the codes a program
 * raises itself), the names of codes, and a held CRITICAL_SECTION read from its first three words.
 */
import { describe, expect, it } from "vitest";
import { criticalSectionOf, criticalSectionOwnerAddress, exceptionName, exceptionOrigin, readException, type ExceptionVerdict } from "../../src/analyzers/windows.js";
import type { ExceptionStop } from "../../src/debuggers/model.js";

/** The faulting instruction's pc in the program's own code. */
const PC = "0x140001550";
const NOT_EXHAUSTED = { stackExhausted: false, instruction: "mov 0x8(%rax),%rdx" };

function raised(code: string, parameters: string[] = [], address = PC): ExceptionStop {
  return { type: "exception", code, flags: 0, address, parameters, thread: 6732 };
}

function read(code: string, parameters: string[] = [], context: Partial<typeof NOT_EXHAUSTED> = {}, address = PC): ExceptionVerdict {
  return readException(raised(code, parameters, address), { ...NOT_EXHAUSTED, ...context });
}

const verdict = (kind: ExceptionVerdict["kind"], extra: Partial<ExceptionVerdict> = {}): ExceptionVerdict => ({ kind, access: null, faultAddress: null, message: null, ...extra });

describe("an access violation: parameter 0 the access, parameter 1 the address", () => {
  const AV = "0xc0000005";

  it("a read near NULL", () => {
    expect(read(AV, ["0x0", "0x8"])).toEqual(verdict("null-dereference", { access: "read", faultAddress: "0x8" }));
  });

  it("a write to NULL", () => {
    expect(read(AV, ["0x1", "0x0"])).toEqual(verdict("null-dereference", { access: "write", faultAddress: "0x0" }));
  });

  it("a read far from NULL", () => {
    expect(read(AV, ["0x0", "0x7ff6deadbeef"])).toEqual(verdict("invalid-memory-access", { access: "read", faultAddress: "0x7ff6deadbeef" }));
  });

  it("a write far from NULL", () => {
    expect(read(AV, ["0x1", "0x1d2c0a0f000"])).toEqual(verdict("invalid-memory-access", { access: "write", faultAddress: "0x1d2c0a0f000" }));
  });

  it("the NULL page ends at 0x10000", () => {
    expect(read(AV, ["0x0", "0xffff"]).kind).toBe("null-dereference");
    expect(read(AV, ["0x0", "0x10000"]).kind).toBe("invalid-memory-access");
  });

  it("an execute (DEP) access is a bad jump", () => {
    expect(read(AV, ["0x8", "0x1d2c0a0f000"])).toEqual(verdict("bad-jump", { access: "execute", faultAddress: "0x1d2c0a0f000" }));
  });

  it("a read at the pc itself is an execute: a call to NULL", () => {
    expect(read(AV, ["0x0", "0x0"], {}, "0x0")).toEqual(verdict("bad-jump", { access: "execute", faultAddress: "0x0" }));
  });

  it("the all-ones non-canonical address is no address accessed", () => {
    expect(read(AV, ["0x0", "0xffffffffffffffff"])).toEqual(verdict("invalid-memory-access", { access: "read" }));
  });

  it("the all-ones address under an indirect call or jump: the target was bad", () => {
    for (const instruction of ["call *0x10(%rax)", "callq *0x10(%rax)", "jmp *%rax"]) {
      expect(read(AV, ["0x0", "0xffffffffffffffff"], { instruction })).toEqual(verdict("bad-jump", { access: "execute" }));
    }
    expect(read(AV, ["0x0", "0xffffffffffffffff"], { instruction: "call 0x140001000" }).kind).toBe("invalid-memory-access");
  });

  it("with the stack exhausted, it is the stack's overflow", () => {
    expect(read(AV, ["0x1", "0x5f2ff8"], { stackExhausted: true })).toEqual(verdict("stack-overflow", { access: "write", faultAddress: "0x5f2ff8" }));
    expect(read(AV, ["0x0", "0xffffffffffffffff"], { stackExhausted: true, instruction: "call *0x10(%rax)" })).toEqual(verdict("stack-overflow"));
  });

  it("without parameters: no access, no address", () => {
    expect(read(AV)).toEqual(verdict("invalid-memory-access"));
  });
});

describe("the other codes", () => {
  const cases: Array<[string, string, string[], ExceptionVerdict]> = [
    ["in-page error, a read", "0xc0000006", ["0x0", "0x7ff6a0000000", "0xc000009c"], verdict("bus-error", { access: "read", faultAddress: "0x7ff6a0000000" })],
    ["in-page error, a write", "0xc0000006", ["0x1", "0x7ff6a0000000", "0xc000009c"], verdict("bus-error", { access: "write", faultAddress: "0x7ff6a0000000" })],
    ["integer division by zero", "0xc0000094", [], verdict("division-by-zero")],
    ["floating-point division by zero", "0xc000008e", [], verdict("division-by-zero")],
    ["illegal instruction", "0xc000001d", [], verdict("illegal-instruction")],
    ["privileged instruction", "0xc0000096", [], verdict("illegal-instruction")],
    ["stack overflow", "0xc00000fd", ["0x1", "0x5f2ff8"], verdict("stack-overflow")],
    ["heap corruption", "0xc0000374", [], verdict("heap-corruption", { message: "the heap manager found its structures corrupted (STATUS_HEAP_CORRUPTION)" })],
    ["__fastfail(2): the /GS stack cookie", "0xc0000409", ["0x2"], verdict("stack-buffer-overflow", { message: "stack cookie check failed (/GS): a buffer on the stack was overrun" })],
    ["__fastfail(7): the stack tells why", "0xc0000409", ["0x7"], verdict(null, { message: "fatal app exit (__fastfail)" })],
    ["__fastfail with a named code", "0xc0000409", ["0x5"], verdict("abort", { message: "__fastfail(FAST_FAIL_INVALID_ARG)" })],
    ["__fastfail with an unnamed code", "0xc0000409", ["0x28"], verdict("abort", { message: "__fastfail(40)" })],
    ["fatal app exit: the stack tells why", "0x40000015", [], verdict(null)],
    ["fail-fast exception", "0xc0000602", [], verdict("abort", { message: "fail-fast exception (STATUS_FAIL_FAST_EXCEPTION)" })],
    ["assertion failure", "0xc0000420", [], verdict("assertion-failure", { message: "assertion failure (STATUS_ASSERTION_FAILURE)" })],
    ["breakpoint", "0x80000003", [], verdict("breakpoint", { message: "breakpoint (EXCEPTION_BREAKPOINT): __debugbreak() or a debug build's assertion" })],
    ["MSVC C++ exception", "0xe06d7363", ["0x19930520", "0x14fd10", "0x140005080", "0x140000000"], verdict("uncaught-exception")],
    ["a code the program raised (customer bit)", "0xe0000001", [], verdict("uncaught-exception", { message: "unhandled exception 0xe0000001 raised by the program (RaiseException)" })],
    ["another with the customer bit", "0x2badf00d", [], verdict("uncaught-exception", { message: "unhandled exception 0x2badf00d raised by the program (RaiseException)" })],
    ["an invalid parameter to the C runtime", "0xc000000d", [], verdict("assertion-failure", { message: "an invalid parameter was passed to a C runtime function (STATUS_INVALID_PARAMETER)" })],
    ["Crashpad's DumpWithoutCrashing", "0x0517a7ed", [], verdict("unknown", { message: "a dump the program asked for without crashing (Crashpad's DumpWithoutCrashing): no fault; the stacks are where the threads were" })],
    ["a dump another process forced through Crashpad", "0x0cca11ed", [], verdict("unknown", { message: expect.stringMatching(/^a dump another process forced \(Crashpad's DumpAndCrashTargetProcess\)/) as unknown as string })],
    ["an unknown system code", "0xc0000008", [], verdict("unknown", { message: "unhandled exception 0xc0000008" })],
    ["a named code with no kind of its own", "0xc0000095", [], verdict("unknown", { message: "unhandled exception 0xc0000095" })],
  ];
  for (const [name, code, parameters, expected] of cases) {
    it(`${code}: ${name}`, () => expect(read(code, parameters)).toEqual(expected));
  }
});

describe("the names of exception codes", () => {
  const cases: Array<[string, string | null]> = [
    ["0xc0000005", "EXCEPTION_ACCESS_VIOLATION"],
    ["0xc0000006", "EXCEPTION_IN_PAGE_ERROR"],
    ["0xc00000fd", "EXCEPTION_STACK_OVERFLOW"],
    ["0xc0000409", "STATUS_STACK_BUFFER_OVERRUN"],
    ["0xc0000095", "EXCEPTION_INT_OVERFLOW"],
    ["0x40000015", "STATUS_FATAL_APP_EXIT"],
    ["0x80000003", "EXCEPTION_BREAKPOINT"],
    ["0xe06d7363", "C++ exception (MSVC)"],
    ["0xe0000001", null],
    ["0xc0000008", null],
  ];
  for (const [code, name] of cases) {
    it(`${code} → ${name}`, () => expect(exceptionName(code)).toBe(name));
  }
});

describe("a CRITICAL_SECTION from its first three words", () => {
  /** DebugInfo: -1 since Windows 8, whatever the section's state. */
  const DEBUG_INFO = 0xffffffffffffffffn;
  /** LockCount in the low half of the second word, RecursionCount in the high half. */
  const counts = (recursion: bigint, lockCount = 0xfffffffan) => (recursion << 32n) | lockCount;

  it("held: the owner's thread id and the recursion", () => {
    expect(criticalSectionOf([DEBUG_INFO, counts(1n), 0x1a4cn])).toEqual({ owner: 0x1a4c, recursion: 1 });
    expect(criticalSectionOf([DEBUG_INFO, counts(3n), 0x2290n])).toEqual({ owner: 0x2290, recursion: 3 });
    expect(criticalSectionOf([DEBUG_INFO, counts(1024n), 0x1a4cn])).toEqual({ owner: 0x1a4c, recursion: 1024 });
  });

  const notHeld: Array<[string, bigint[]]> = [
    ["free: no recursion, no owner", [DEBUG_INFO, counts(0n, 0xffffffffn), 0n]],
    ["recursion 0 with an owner", [DEBUG_INFO, counts(0n), 0x1a4cn]],
    ["owner 0 with a recursion", [DEBUG_INFO, counts(1n), 0n]],
    ["an owner that is not a multiple of 4", [DEBUG_INFO, counts(1n), 0x1a4dn]],
    ["an owner of 2^32 or more: a pointer", [DEBUG_INFO, counts(1n), 0x7ff6a0b0c040n]],
    ["a huge recursion", [DEBUG_INFO, counts(0x7fffffffn), 0x1a4cn]],
    ["a recursion just past the limit", [DEBUG_INFO, counts(1025n), 0x1a4cn]],
    ["a negative recursion", [DEBUG_INFO, counts(0xffffffffn), 0x1a4cn]],
    ["fewer than three words", [DEBUG_INFO, counts(1n)]],
  ];
  for (const [name, words] of notHeld) {
    it(`not held: ${name}`, () => expect(criticalSectionOf(words)).toBeNull());
  }

  it("its owner is at offset 0x10", () => {
    expect(criticalSectionOwnerAddress("0x7ff6a0b0c040")).toBe("0x7ff6a0b0c050");
    expect(criticalSectionOwnerAddress("4096")).toBe("0x1010");
    expect(criticalSectionOwnerAddress("g_lock")).toBeNull();
  });
});

describe("where an exception came from", () => {
  it("the CPU, the program ending itself, a software exception, or a dump taken on request", () => {
    expect(["0xc0000005", "0x80000003", "0xc0000409", "0xc000000d", "0xe06d7363", "0x0517a7ed", "0x0cca11ed"].map((code) => exceptionOrigin(code).type)).toEqual([
      "fault",
      "fault",
      "raised",
      "raised",
      "exception",
      "requested",
      "requested",
    ]);
  });
});
