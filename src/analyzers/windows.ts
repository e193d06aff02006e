/**
 * What a Windows exception record says, in the design's crash kinds: the NTSTATUS codes a crash
 * ends with, the access-violation parameters (the access and the address), fail-fast codes, and
 * the system and runtime modules a culprit is never in. Pure.
 */
import { toBigInt, type ExceptionStop } from "../debuggers/model.js";
import type { Crash, CrashKind, OriginType } from "../report/schema.js";
import { NULL_PAGE_LIMIT } from "./address-space.js";

export const EXCEPTION_ACCESS_VIOLATION = "0xc0000005";
export const EXCEPTION_STACK_OVERFLOW = "0xc00000fd";
const EXCEPTION_IN_PAGE_ERROR = "0xc0000006";
const STATUS_STACK_BUFFER_OVERRUN = "0xc0000409";
const STATUS_FATAL_APP_EXIT = "0x40000015";
const MSVC_CXX_EXCEPTION = "0xe06d7363";
/** The CLR raises every unhandled .NET exception with this code; parameter 0 is its HRESULT. */
export const CLR_EXCEPTION = "0xe0434352";
const NON_CANONICAL = 0xffffffffffffffffn;
/** The customer bit of an NTSTATUS: set in the codes programs raise themselves with RaiseException. */
const CUSTOMER_CODE = 0x20000000n;

const NAMES: Record<string, string> = {
  "0xc0000005": "EXCEPTION_ACCESS_VIOLATION",
  "0xc0000006": "EXCEPTION_IN_PAGE_ERROR",
  "0xc000001d": "EXCEPTION_ILLEGAL_INSTRUCTION",
  "0xc0000096": "EXCEPTION_PRIV_INSTRUCTION",
  "0xc0000094": "EXCEPTION_INT_DIVIDE_BY_ZERO",
  "0xc0000095": "EXCEPTION_INT_OVERFLOW",
  "0xc000008e": "EXCEPTION_FLT_DIVIDE_BY_ZERO",
  "0xc00000fd": "EXCEPTION_STACK_OVERFLOW",
  "0xc0000409": "STATUS_STACK_BUFFER_OVERRUN",
  "0xc0000374": "STATUS_HEAP_CORRUPTION",
  "0xc0000602": "STATUS_FAIL_FAST_EXCEPTION",
  "0xc0000420": "STATUS_ASSERTION_FAILURE",
  "0xc000000d": "STATUS_INVALID_PARAMETER",
  "0xc0000025": "STATUS_NONCONTINUABLE_EXCEPTION",
  "0x40000015": "STATUS_FATAL_APP_EXIT",
  "0x80000003": "EXCEPTION_BREAKPOINT",
  "0x80000004": "EXCEPTION_SINGLE_STEP",
  "0x80000002": "EXCEPTION_DATATYPE_MISALIGNMENT",
  "0xc000008c": "EXCEPTION_ARRAY_BOUNDS_EXCEEDED",
  "0xe06d7363": "C++ exception (MSVC)",
  "0xe0434352": "CLR exception (.NET)",
  "0x0517a7ed": "Crashpad simulated exception (DumpWithoutCrashing)",
  "0x0cca11ed": "Crashpad triggered exception (DumpAndCrashTargetProcess)",
};

/** Crashpad's own codes: a dump the program asked for without crashing, and one another process forced (a hung child's). */
const CRASHPAD_SIMULATED = "0x0517a7ed";
const CRASHPAD_TRIGGERED = "0x0cca11ed";

/** `__fastfail` codes (winnt.h FAST_FAIL_*) worth naming. */
const FAST_FAIL: Record<number, string> = {
  2: "FAST_FAIL_STACK_COOKIE_CHECK_FAILURE",
  3: "FAST_FAIL_CORRUPT_LIST_ENTRY",
  4: "FAST_FAIL_INCORRECT_STACK",
  5: "FAST_FAIL_INVALID_ARG",
  6: "FAST_FAIL_GS_COOKIE_INIT",
  7: "FAST_FAIL_FATAL_APP_EXIT",
  10: "FAST_FAIL_INVALID_SET_OF_CONTEXT",
  13: "FAST_FAIL_GUARD_ICALL_CHECK_FAILURE",
  14: "FAST_FAIL_INVALID_BUFFER_ACCESS",
  23: "FAST_FAIL_INVALID_FILE_OPERATION",
};

/** Where a CRITICAL_SECTION keeps its owner's thread id: OwningThread, at offset 0x10 on x64. */
export function criticalSectionOwnerAddress(lock: string): string | null {
  const address = toBigInt(lock);
  return address === null ? null : `0x${(address + 0x10n).toString(16)}`;
}

/**
 * A held CRITICAL_SECTION from its first three x64 words (DebugInfo; LockCount and RecursionCount;
 * OwningThread), or null when the words cannot be one that a thread holds.
 */
export function criticalSectionOf(words: bigint[]): { owner: number; recursion: number } | null {
  const [, counts, owner] = words;
  if (counts === undefined || owner === undefined) return null;
  const recursion = Number((counts >> 32n) & 0xffffffffn) | 0;
  // Thread ids are multiples of 4 below 2^32; a section is rarely entered recursively many times.
  if (recursion < 1 || recursion > 1024 || owner === 0n || owner >= 1n << 32n || owner % 4n !== 0n) return null;
  return { owner: Number(owner), recursion };
}

/**
 * A managed exception as the debugger named what the runtime died with (`System.NullReferenceException:
 * Object reference not set…`, SOS's `!pe`): a dotted .NET type, then its message. Null for anything else.
 */
export function managedExceptionText(text: string | null): string | null {
  return text !== null && /^[A-Za-z_][\w`+]*(?:\.[A-Za-z_][\w`+]*)+(?::\s.*)?$/.test(text) ? text : null;
}

/** Exceptions the CPU raises for the instruction it ran. */
const CPU_EXCEPTIONS = new Set(["0xc0000005", "0xc0000006", "0xc000001d", "0xc0000096", "0xc0000094", "0xc0000095", "0xc000008e", "0xc00000fd", "0x80000003", "0x80000004", "0x80000002", "0xc000008c"]);
/** Exceptions the program, its runtime or the system's libraries raise to end it: abort, __fastfail, the heap manager, an assertion. */
const ENDING_EXCEPTIONS = new Set(["0xc0000409", "0x40000015", "0xc0000602", "0xc0000420", "0xc0000374", "0xc000000d"]);

/** Where an exception came from, by its code: the CPU, the program ending itself, or a software exception. */
export function exceptionOrigin(code: string): { type: OriginType; evidence: string } {
  const named = `exception ${code}${NAMES[code] ? ` (${NAMES[code]})` : ""}`;
  if (code === CRASHPAD_SIMULATED) return { type: "requested", evidence: `${named}: the program asked Crashpad for a dump and went on running` };
  if (code === CRASHPAD_TRIGGERED) return { type: "requested", evidence: `${named}: another process had Crashpad dump this one, as a browser does with a renderer that stopped answering` };
  if (CPU_EXCEPTIONS.has(code)) return { type: "fault", evidence: `${named}: the CPU raised it for the instruction at the exception address` };
  if (ENDING_EXCEPTIONS.has(code)) return { type: "raised", evidence: `${named}: the program, its C runtime or the system's libraries raised it to end the process` };
  return { type: "exception", evidence: `${named}: a software exception thrown by the program and not handled` };
}

/** The name of an exception code, null for one the program defined itself. */
export function exceptionName(code: string): string | null {
  return NAMES[code] ?? null;
}

export interface ExceptionVerdict {
  /** The kind, or null when it takes the stack to tell (an abort: an uncaught C++ exception, an assert). */
  kind: CrashKind | null;
  access: Crash["access"];
  faultAddress: string | null;
  message: string | null;
}

/** What the exception record alone says. */
export function readException(exception: ExceptionStop, context: { stackExhausted: boolean; instruction: string | null }): ExceptionVerdict {
  const { stackExhausted, instruction } = context;
  const parameter = (index: number) => {
    const text = exception.parameters[index];
    return text === undefined ? null : BigInt(text);
  };
  const verdict = (kind: CrashKind | null, message: string | null = null, access: Crash["access"] = null, faultAddress: string | null = null): ExceptionVerdict => ({ kind, access, faultAddress, message });
  switch (exception.code) {
    case EXCEPTION_ACCESS_VIOLATION: {
      // Parameter 0: 0 read, 1 write, 8 execute (DEP); parameter 1: the address accessed.
      const how = parameter(0);
      const address = parameter(1);
      const access = how === 1n ? "write" : how === 8n ? "execute" : how === 0n ? "read" : null;
      const fault = address === null ? null : `0x${address.toString(16)}`;
      if (access === "execute" || BigInt(exception.address) === address) return verdict("bad-jump", null, "execute", fault);
      // A non-canonical address (a general-protection fault) is reported as all ones: it was never
      // the address accessed. Through a call or jump it was the target that was bad.
      if (address === NON_CANONICAL) {
        if (stackExhausted) return verdict("stack-overflow");
        return /^(call|jmp)\w*\s+\*/.test(instruction ?? "") ? verdict("bad-jump", null, "execute") : verdict("invalid-memory-access", null, access);
      }
      if (stackExhausted) return verdict("stack-overflow", null, access, fault);
      if (address !== null && address < NULL_PAGE_LIMIT) return verdict("null-dereference", null, access, fault);
      return verdict("invalid-memory-access", null, access, fault);
    }
    case EXCEPTION_IN_PAGE_ERROR:
      return verdict("bus-error", null, parameter(0) === 1n ? "write" : "read", parameter(1) === null ? null : `0x${parameter(1)?.toString(16)}`);
    case "0xc0000094":
    case "0xc000008e":
      return verdict("division-by-zero");
    case "0xc000001d":
    case "0xc0000096":
      return verdict("illegal-instruction");
    case EXCEPTION_STACK_OVERFLOW:
      return verdict("stack-overflow");
    case "0xc0000374":
      return verdict("heap-corruption", "the heap manager found its structures corrupted (STATUS_HEAP_CORRUPTION)");
    case STATUS_STACK_BUFFER_OVERRUN: {
      // Since Windows 8 this is __fastfail: parameter 0 is the fail-fast code.
      const code = Number(parameter(0) ?? -1);
      if (code === 2) return verdict("stack-buffer-overflow", "stack cookie check failed (/GS): a buffer on the stack was overrun");
      if (code === 7) return verdict(null, "fatal app exit (__fastfail)");
      return verdict("abort", `__fastfail(${FAST_FAIL[code] ?? code})`);
    }
    case STATUS_FATAL_APP_EXIT:
      // abort(), turned into an exception by a crash reporter: the stack tells why it was called.
      return verdict(null);
    case "0xc0000602":
      return verdict("abort", "fail-fast exception (STATUS_FAIL_FAST_EXCEPTION)");
    case "0xc0000420":
      return verdict("assertion-failure", "assertion failure (STATUS_ASSERTION_FAILURE)");
    case "0xc000000d":
      // The C runtime's parameter validation failed (a NULL format, a bad handle): a check, raised by a crash handler.
      return verdict("assertion-failure", "an invalid parameter was passed to a C runtime function (STATUS_INVALID_PARAMETER)");
    case "0x80000003":
      // __debugbreak() or a debug build's assertion stopped the program on purpose.
      return verdict("breakpoint", "breakpoint (EXCEPTION_BREAKPOINT): __debugbreak() or a debug build's assertion");
    case MSVC_CXX_EXCEPTION:
      return verdict("uncaught-exception");
    case CRASHPAD_SIMULATED:
      return verdict("unknown", "a dump the program asked for without crashing (Crashpad's DumpWithoutCrashing): no fault; the stacks are where the threads were");
    case CRASHPAD_TRIGGERED:
      return verdict("unknown", "a dump another process forced (Crashpad's DumpAndCrashTargetProcess), as a watchdog does with a process that stopped answering: no fault; the stacks show what it was doing");
    case CLR_EXCEPTION: {
      // The record holds only the HRESULT (sign-extended); the type and message are SOS's to read (`!pe`).
      const hresult = parameter(0);
      return verdict("uncaught-exception", `unhandled .NET exception${hresult === null ? "" : ` (HRESULT 0x${(hresult & 0xffffffffn).toString(16).padStart(8, "0")})`}`);
    }
    default:
      if (BigInt(exception.code) & CUSTOMER_CODE) {
        return verdict("uncaught-exception", `unhandled exception ${exception.code} raised by the program (RaiseException)`);
      }
      return verdict("unknown", `unhandled exception ${exception.code}`);
  }
}
