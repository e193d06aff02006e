/**
 * The signal frame Linux builds on an arm64 thread's stack to call a signal handler
 * (arch/arm64/kernel/signal.c: `struct rt_sigframe { siginfo_t info; struct ucontext uc; }`, the
 * handler entered with sp at its start), read from memory where no debugger unwinds past the
 * handler: gdb-multiarch does not come back from unwinding qemu-user's trampoline, and LLDB stops
 * at the handler. The ucontext's `uc_mcontext` (a `struct sigcontext`, 16-byte aligned after
 * uc_flags, uc_link, uc_stack, the 8-byte uc_sigmask and 120 bytes of padding) holds the fault
 * address and the interrupted registers; qemu-user writes the same layout. A frame is believed only
 * when every field reads as a fault's: a fault signal and a kernel code, the two copies of the
 * fault address agreeing, the saved pc in code, the saved sp in memory, EL0 in pstate, and the
 * instruction at the saved pc touching the fault address. Anything missing is no frame: unknown,
 * never "no fault". Pure.
 */
import { hex } from "../debuggers/dumpfile/file.js";
import type { Register } from "../debuggers/model.js";
import type { SignalRecord } from "../debuggers/probe.js";
import { accessAddress, decodeMemoryAccess, registerValues } from "./aarch64.js";
import { FAULT_SIGNALS, SIGBUS, SIGSEGV } from "./signals.js";

/**
 * Byte offsets in `struct rt_sigframe` (siginfo 128 bytes; the ucontext's mcontext at 128 + 176);
 * `size` is what is read of it, `whole` its size with the mcontext's 4096 reserved bytes, after
 * which the kernel puts a frame record (`next_frame`) holding the interrupted x29 and x30, where
 * the handler's x29 points (further, where SVE state overflows into an extra context).
 */
export const A64_SIGFRAME = { faultAddress: 304, registers: 312, sp: 560, pc: 568, pstate: 576, size: 584, whole: 4688 } as const;

/** How far past the frame the kernel's frame record may lie (an extra context for SVE's state). */
const EXTRA_CONTEXT_REACH = 64n * 1024n;

/**
 * Whether the frame record at `at` holding `fp` and `lr` is the one the kernel put after `frame`:
 * past the whole frame, holding the interrupted x29 and x30. Found on the crashing thread's chain of
 * frame records, it ties the frame to the handler that is running, not to a stale copy on the stack.
 */
export function isKernelFrameRecord(frame: A64SignalFrame, at: bigint, fp: bigint, lr: bigint): boolean {
  const value = (name: string) => frame.registers.find((r) => r.name === name)?.value;
  const start = frame.at + BigInt(A64_SIGFRAME.whole);
  return at >= start && at - start <= EXTRA_CONTEXT_REACH && hex(fp) === value("x29") && hex(lr) === value("x30");
}

/** Bits of an address the top-byte-ignore feature leaves out (a tagged pointer's tag). */
const UNTAGGED = (1n << 56n) - 1n;

export interface A64SignalFrame {
  /** Where the frame (its siginfo) starts. */
  at: bigint;
  /** The siginfo: signal, code and fault address. */
  record: SignalRecord;
  /** The interrupted registers by gdb's names: x0–x30, sp, pc, cpsr. */
  registers: Register[];
  pc: bigint;
  sp: bigint;
}

/** What the reader needs of the dump beyond the frame's words; null for what the dump does not show. */
export interface A64SigframeChecks {
  /** Whether an address is in code the process mapped executable (null: not known). */
  inCode(address: bigint): boolean | null;
  /** Whether an address is in memory the process had. */
  mapped(address: bigint): boolean;
  /** The instruction word at an address, where the dump holds it. */
  instructionAt(address: bigint): number | null;
}

/**
 * The signal frame whose words start at `at` (`words[i]` the 8 bytes at at + 8i, undefined where
 * the dump lacks them), or why it is not one.
 */
export function readA64Sigframe(words: readonly (bigint | undefined)[], at: bigint, checks: A64SigframeChecks): { frame: A64SignalFrame } | { frame: null; why: string } {
  const word = (offset: number) => words[offset / 8];
  const fields = [0, 8, 16, A64_SIGFRAME.faultAddress, A64_SIGFRAME.sp, A64_SIGFRAME.pc, A64_SIGFRAME.pstate].map(word);
  const saved = Array.from({ length: 31 }, (_, i) => word(A64_SIGFRAME.registers + 8 * i));
  if (fields.some((value) => value === undefined) || saved.some((value) => value === undefined)) return { frame: null, why: "the dump does not hold the whole frame" };
  const [first, second, siAddr, faultAddress, sp, pc, pstate] = fields as bigint[];
  const signo = Number(first! & 0xffffffffn);
  const code = Number(BigInt.asIntN(32, second! & 0xffffffffn));
  if (!FAULT_SIGNALS.has(signo)) return { frame: null, why: `its signal number (${signo}) is no fault's` };
  if (code <= 0 || code > 9) return { frame: null, why: `its si_code (${code}) is no fault's` };
  if ((siAddr! & UNTAGGED) !== (faultAddress! & UNTAGGED)) return { frame: null, why: "the siginfo's address and the sigcontext's fault_address differ" };
  // EL0 in AArch64 state: the mode bits of a user thread's pstate are all clear, and bits 32 up are unused.
  if ((pstate! & 0x1fn) !== 0n || pstate! >> 32n !== 0n) return { frame: null, why: "its pstate is no user thread's" };
  // A jump to a bad address faults at the pc itself, which is then in no code.
  const jumped = (faultAddress! & UNTAGGED) === pc! && (signo === SIGSEGV || signo === SIGBUS);
  if (!jumped && checks.inCode(pc!) !== true) return { frame: null, why: "its saved pc is not in code the dump shows" };
  if (!checks.mapped(sp!) || (sp! & 0xfn) !== 0n) return { frame: null, why: "its saved sp is not in the process's memory, aligned" };
  const registers: Register[] = [
    ...saved.map((value, i) => ({ name: `x${i}`, value: hex(value!), natural: hex(value!) })),
    { name: "sp", value: hex(sp!), natural: hex(sp!) },
    { name: "pc", value: hex(pc!), natural: hex(pc!) },
    { name: "cpsr", value: hex(pstate!), natural: hex(pstate!) },
  ];
  const why = instructionDisagrees(signo, faultAddress!, pc!, registers, checks);
  if (why) return { frame: null, why };
  return { frame: { at, record: { signo, errno: Number(BigInt.asIntN(32, first! >> 32n)), code, address: hex(faultAddress!), pid: null }, registers, pc: pc!, sp: sp! } };
}

/**
 * Why the instruction at the saved pc could not have raised the record, or null where it could: a
 * memory fault's address is the pc itself (a jump to it) or inside what the load or store touches
 * with the saved registers; any other fault signal's is the pc (the kernel gives SIGILL and
 * SIGTRAP the instruction's address).
 */
function instructionDisagrees(signo: number, faultAddress: bigint, pc: bigint, registers: Register[], checks: A64SigframeChecks): string | null {
  const fault = faultAddress & UNTAGGED;
  if (fault === pc) return null;
  if (signo !== SIGSEGV && signo !== SIGBUS) return "its fault address is not the pc, as this signal's is";
  const word = checks.instructionAt(pc);
  if (word === null) return "the instruction at its saved pc is not in the dump";
  const access = decodeMemoryAccess(word);
  if (!access) return "the instruction at its saved pc touches no memory";
  const address = accessAddress(access, registerValues(registers), pc);
  if (address === null) return "the address the instruction forms is not known";
  const start = address & UNTAGGED;
  // A pair or a vector crossing into an unmapped page faults at the page, past its start.
  const end = start + BigInt(access.size ?? 4096);
  return fault >= start && fault < end ? null : `the instruction at its saved pc touches ${hex(start)}, not the fault address`;
}
