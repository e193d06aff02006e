/**
 * What a macOS or iOS minidump's exception record says, in the design's crash kinds. Breakpad's and
 * Crashpad's writers keep the Mach exception type as the record's code, its first code as the
 * flags (KERN_INVALID_ADDRESS, EXC_I386_DIV, the signal inside EXC_CRASH) and the subcode (the
 * address of a bad access) as the address; Crashpad adds simulated exceptions of its own. Pure.
 */
import type { ExceptionStop, Instruction } from "../debuggers/model.js";
import type { CrashKind, OriginType } from "../report/schema.js";
import { NULL_PAGE_LIMIT } from "./address-space.js";
import { SIGABRT, signalName } from "./signals.js";
import type { ExceptionVerdict } from "./windows.js";
import { memoryAccess } from "./x86-64.js";

const EXC_BAD_ACCESS = 1;
const EXC_BAD_INSTRUCTION = 2;
const EXC_ARITHMETIC = 3;
const EXC_SOFTWARE = 5;
const EXC_BREAKPOINT = 6;
const EXC_CRASH = 10;
const EXC_RESOURCE = 11;
const EXC_GUARD = 12;
/** Crashpad's own: a dump the program asked for without crashing ('CPsx'), and an uncaught NSException ('CPnx'). */
const CRASHPAD_SIMULATED = 0x43507378;
const CRASHPAD_NSEXCEPTION = 0x43506e78;

const KERN_INVALID_ADDRESS = 1;
const KERN_PROTECTION_FAILURE = 2;
/** x86's general-protection fault inside EXC_BAD_ACCESS: the address was not canonical. */
const EXC_I386_GPFLT = 13;
const EXC_I386_DIV = 1;
const EXC_UNIX_ABORT = 0x10002;
const EXC_SOFT_SIGNAL = 0x10003;

const NAMES: Record<number, string> = {
  1: "EXC_BAD_ACCESS",
  2: "EXC_BAD_INSTRUCTION",
  3: "EXC_ARITHMETIC",
  4: "EXC_EMULATION",
  5: "EXC_SOFTWARE",
  6: "EXC_BREAKPOINT",
  7: "EXC_SYSCALL",
  8: "EXC_MACH_SYSCALL",
  9: "EXC_RPC_ALERT",
  10: "EXC_CRASH",
  11: "EXC_RESOURCE",
  12: "EXC_GUARD",
  13: "EXC_CORPSE_NOTIFY",
  [CRASHPAD_SIMULATED]: "Crashpad simulated exception (DumpWithoutCrashing)",
  [CRASHPAD_NSEXCEPTION]: "uncaught NSException (Crashpad)",
};

const RESOURCES: Record<number, string> = { 1: "CPU time", 2: "wakeups", 3: "memory", 4: "I/O", 5: "threads", 6: "ports" };

/** Whether the CPU raised the exception for the instruction at the pc (a bad access, a bad instruction, arithmetic, a breakpoint). */
export function machFaulted(code: string): boolean {
  return [EXC_BAD_ACCESS, EXC_BAD_INSTRUCTION, EXC_ARITHMETIC, EXC_BREAKPOINT].includes(Number(code));
}

/** The name of a Mach exception type, or of Crashpad's own. */
export function machExceptionName(code: string): string | null {
  return NAMES[Number(code)] ?? null;
}

/** Where a Mach exception came from. */
export function machExceptionOrigin(exception: ExceptionStop): { type: OriginType; evidence: string } {
  const type = Number(exception.code);
  const named = `Mach exception ${NAMES[type] ?? exception.code} (code ${exception.flags})`;
  switch (type) {
    case CRASHPAD_SIMULATED:
      return { type: "requested", evidence: `${named}: the program asked Crashpad for a dump without crashing` };
    case EXC_RESOURCE:
      return { type: "requested", evidence: `${named}: the system reported a resource limit the process exceeded; it may have gone on running` };
    case CRASHPAD_NSEXCEPTION:
      return { type: "exception", evidence: `${named}: an Objective-C exception nothing caught` };
    case EXC_CRASH:
    case EXC_SOFTWARE:
      return { type: "raised", evidence: `${named}: the process ended itself (${signalOf(exception) !== null ? signalName(signalOf(exception) as number) : "a software exception"})` };
    default:
      return { type: "fault", evidence: `${named}: the CPU raised it for the instruction at the pc` };
  }
}

/** What the Mach exception record alone says; the faulting instruction tells a read from a write. */
export function readMachException(exception: ExceptionStop, context: { stackExhausted: boolean; faulting: Instruction | null; pc: bigint | null }): ExceptionVerdict {
  const type = Number(exception.code);
  const code = exception.flags;
  const verdict = (kind: CrashKind | null, message: string | null = null, access: ExceptionVerdict["access"] = null, faultAddress: string | null = null): ExceptionVerdict => ({ kind, access, faultAddress, message });
  switch (type) {
    case EXC_BAD_ACCESS: {
      const address = BigInt(exception.address);
      const fault = `0x${address.toString(16)}`;
      const access = context.faulting ? memoryAccess(context.faulting) : null;
      if (context.pc !== null && address === context.pc) return verdict("bad-jump", null, "execute", fault);
      if (code === EXC_I386_GPFLT) {
        if (context.stackExhausted) return verdict("stack-overflow");
        const jump = /^(call|jmp)/.test(context.faulting?.mnemonic ?? "") && /^\*/.test(context.faulting?.operands[0] ?? "");
        return jump ? verdict("bad-jump", null, "execute") : verdict("invalid-memory-access", null, access);
      }
      if (context.stackExhausted) return verdict("stack-overflow", null, access, fault);
      if (address < NULL_PAGE_LIMIT) return verdict("null-dereference", null, access, fault);
      const how = code === KERN_PROTECTION_FAILURE ? "protection failure" : code === KERN_INVALID_ADDRESS ? "invalid address" : `code ${code}`;
      return verdict("invalid-memory-access", code === KERN_INVALID_ADDRESS || code === KERN_PROTECTION_FAILURE ? null : `EXC_BAD_ACCESS (${how})`, access, fault);
    }
    case EXC_BAD_INSTRUCTION:
      return verdict("illegal-instruction");
    case EXC_ARITHMETIC:
      return code === EXC_I386_DIV ? verdict("division-by-zero") : verdict("unknown", `arithmetic exception (EXC_ARITHMETIC, code ${code})`);
    case EXC_BREAKPOINT:
      return verdict("breakpoint", "breakpoint trap (EXC_BREAKPOINT): a trap instruction the code ran, as Swift's and Rust's runtime checks and __builtin_trap do");
    case EXC_SOFTWARE:
      if (code === EXC_UNIX_ABORT) return verdict(null);
      return verdict("unknown", code === EXC_SOFT_SIGNAL ? "a signal delivered as a software exception (EXC_SOFTWARE, EXC_SOFT_SIGNAL)" : `software exception (EXC_SOFTWARE, code 0x${code.toString(16)})`);
    case EXC_CRASH: {
      // The signal that ended the process sits in bits 24–31 of the code; SIGABRT is told from the stack.
      const signal = signalOf(exception);
      return signal === SIGABRT ? verdict(null) : verdict("unknown", `the process ended with ${signal === null ? "a signal" : signalName(signal)} (EXC_CRASH)`);
    }
    case EXC_RESOURCE: {
      const resource = RESOURCES[Number((BigInt(exception.parameters[0] ?? "0") >> 61n) & 7n)];
      return verdict("unknown", `resource limit exceeded (EXC_RESOURCE${resource ? `: ${resource}` : ""})`);
    }
    case EXC_GUARD:
      return verdict("abort", "guard violation (EXC_GUARD): the program misused a guarded file descriptor or Mach port, and the system ended it");
    case CRASHPAD_SIMULATED:
      return verdict("unknown", "a dump the program asked for without crashing (Crashpad's DumpWithoutCrashing)");
    case CRASHPAD_NSEXCEPTION:
      return verdict("uncaught-exception", "uncaught NSException");
    default:
      return verdict("unknown", `Mach exception ${exception.code}`);
  }
}

function signalOf(exception: ExceptionStop): number | null {
  const signal = (exception.flags >>> 24) & 0xff;
  return signal === 0 ? null : signal;
}
