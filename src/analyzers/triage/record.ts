/**
 * A crash handler's copy of the signal record (a Breakpad or Crashpad minidump of a Linux process)
 * often leaves si_code 0, which reads as "sent by another process with kill" whatever happened.
 * Such a record is decided on the dump's own evidence, as an engineer would: the instruction at
 * the pc and whether it touched the address the record holds, whether that "address" is the
 * process's own pid, and what the crashing stack shows.
 */
import { hex } from "../../debuggers/dumpfile/file.js";
import type { Inspector } from "../../debuggers/inspector.js";
import { toBigInt, type Instruction } from "../../debuggers/model.js";
import type { SignalRecord } from "../../debuggers/probe.js";
import { culpritIndex, normalizeFunctionName, type PlacedFrame } from "../culprit.js";
import { explainFault } from "../fault.js";
import { FAULT_SIGNALS, SI_KERNEL, SI_TKILL, SI_USER, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP, signalName, TRAP_BRKPT } from "../signals.js";
import { bytesOf } from "../stack-scan.js";
import { memoryAccess, syscallNumberBefore, SYS_TGKILL } from "../x86-64.js";
import { faultingInstruction, operandAddress, type FaultingInstruction } from "./fault.js";
import type { Stack } from "./stack.js";
import { raisedBySelf, type Self, type Stop } from "./stop.js";
import { pcInCode, type Target } from "./target.js";

const SEGV_MAPERR = 1;
const SEGV_ACCERR = 2;
const ILL_ILLOPC = 1;
/** The highest pid Linux hands out (pid_max at most 2^22). */
const PID_MAX = 1 << 22;
/** What the stack of a program that aborted itself goes through. */
const ABORT_MACHINERY = /^(abort|raise|__pthread_kill\w*|pthread_kill|__GI_raise|__GI_abort|__stack_chk_fail|__fortify_fail|__chk_fail|__assert_fail|__assert_perror_fail|__libc_message|malloc_printerr|std::terminate|__cxa_throw|__cxa_pure_virtual|rust_panic|__rust_start_panic)$/;

/** What the evidence says where the record cannot: a fault (with the code it implies, and where no record gave it, the address), the program itself, or no verdict. */
interface Decided {
  type: "fault" | "raised";
  code: number;
  evidence: string;
  address?: bigint;
}

/** The stop as the evidence decides it, when the record is a crash handler's copy that left si_code 0; else the stop as it is. */
export async function decideStop(q: Inspector, target: Target, stop: Stop, stack: Stack): Promise<Stop> {
  const { signal, siginfo } = stop;
  if (!stop.undecided || signal === null) return stop;
  // A core that records the signal alone: decided on the same evidence, or left to the signal's usual origin.
  const bare = siginfo ?? { signo: signal, errno: 0, code: SI_USER, address: null, pid: null };
  const said =
    siginfo === null
      ? "the core records the signal but no signal record (no NT_SIGINFO) to say what raised it"
      : `the signal record is a crash handler's copy whose si_code is 0 (it says "sent with kill" whether or not anything was sent)`;
  // Where no frame is named (libc's symbols missing), the registers of the call that sent it can still show who did.
  const decided = (await faultOrAbort(q, target, signal, bare, stack.innermost)) ?? (signal === SIGABRT ? await tgkillOfItself(q, target, stop.self) : null);
  if (decided) {
    const record = { ...bare, code: decided.code, address: decided.address === undefined ? bare.address : hex(decided.address), pid: null, uid: null };
    q.problems.push(`${said}; ${decided.evidence}, so it is read as ${decided.type === "fault" ? "a fault" : "raised by the program itself"}`);
    return {
      ...stop,
      siginfo: record,
      sent: decided.type === "raised" && decided.code === SI_USER,
      externallyStopped: false,
      undecided: false,
      codeInferred: true,
      origin: { type: decided.type, sender: null, evidence: `${decided.evidence}; ${said}` },
    };
  }
  // With no record, nothing says otherwise than the signal's usual origin (readStop's).
  if (siginfo === null) {
    q.problems.push(`${said} (qemu's cores and kernels before 3.7 write none), and the instruction at the pc and the stack do not show it: it is taken as ${stop.origin.type === "fault" ? "the fault the CPU raises it for" : stop.origin.type === "raised" ? "raised by the program itself" : "sent by a process"}`);
    return { ...stop, undecided: false };
  }
  // No instruction or stack says otherwise: the word the record holds is read as the sender it names.
  const sender = siginfo.pid !== null && siginfo.pid > 0 && siginfo.pid < PID_MAX ? { pid: siginfo.pid, uid: siginfo.uid ?? null } : null;
  if (sender && raisedBySelf(siginfo, stop.self)) {
    return { ...stop, sent: true, undecided: false, origin: { type: "raised", sender, evidence: `the record's sender, pid ${sender.pid}, is the process itself; ${said}` } };
  }
  const named = sender ? `pid ${sender.pid}${sender.uid !== null ? ` (uid ${sender.uid})` : ""}, which is not the process` : "no process";
  q.problems.push(`${said}; the instruction at the pc did not fault on the address the record holds, which names ${named}: it is read as sent`);
  return { ...stop, sent: true, undecided: false, siginfo: sender ? siginfo : { ...siginfo, pid: null, uid: null }, origin: { type: "sent", sender, evidence: `no instruction at the pc faulted and the record names ${named}; ${said}` } };
}

async function faultOrAbort(q: Inspector, target: Target, signal: number, siginfo: SignalRecord, frames: PlacedFrame[]): Promise<Decided | null> {
  const { pc } = target;
  const name = signalName(signal);
  if (signal === SIGABRT) {
    // The outermost machinery frame above the program's own says why (`__stack_chk_fail` over `raise`).
    const own = culpritIndex(frames);
    const machinery = frames.slice(0, own ?? frames.length).findLast((frame) => ABORT_MACHINERY.test(normalizeFunctionName(frame.function ?? "")));
    return machinery?.function ? { type: "raised", code: SI_TKILL, evidence: `the crashing stack goes through \`${normalizeFunctionName(machinery.function)}\`: the program aborted itself` } : null;
  }
  if (!FAULT_SIGNALS.has(signal) && signal !== SIGTRAP) return null;
  const recorded = toBigInt(siginfo.address ?? null);
  if (signal === SIGSEGV || signal === SIGBUS) {
    if (pc !== null && pcInCode(target) === false) {
      return { type: "fault", code: 1, evidence: `the pc ${hex(pc)} is no code of the program or its libraries: the CPU faulted fetching the instruction` };
    }
    if (pc !== null && recorded === pc) return { type: "fault", code: 1, evidence: `the address the record holds is the pc ${hex(pc)} itself: the CPU faulted fetching the instruction` };
  }
  const read = pc === null || target.pcForeign !== null ? null : await faultingInstruction(q, target, { pc, registers: target.registers });
  if (!read) return null;
  const instruction = read.instruction;
  const text = `\`${read.text ?? "the instruction"}\``;
  if (target.arch === "arm64") return a64Fault(signal, read, text, recorded, target);
  if (!instruction) return null;
  switch (signal) {
    case SIGFPE:
      return /^i?div/.test(instruction.mnemonic) ? { type: "fault", code: 1, evidence: `the instruction at the pc is ${text}, a division, the only instruction that raises ${name} for an integer` } : null;
    case SIGILL:
      return /^ud[0-2]?$/.test(instruction.mnemonic) ? { type: "fault", code: 2, evidence: `the instruction at the pc is ${text}, an undefined instruction` } : null;
    case SIGTRAP: {
      const before = pc === null ? null : ((await q.instructions(1, hex(pc - 1n)))?.instructions[0] ?? null);
      return before?.mnemonic === "int3" || /^brk$/.test(instruction.mnemonic) ? { type: "fault", code: SI_KERNEL, evidence: "the instruction that trapped is a breakpoint instruction" } : null;
    }
    default:
      return memoryFault(target, instruction, text, recorded);
  }
}

/**
 * The same decision on AArch64, from the instruction word: `brk` traps (SIGTRAP, TRAP_BRKPT) and
 * `udf` is undefined (SIGILL, ILL_ILLOPC) at the pc itself; a load or store faulted where the
 * address it forms is the record's or, with no record of one, is memory the process did not have
 * (SEGV_MAPERR) or had (SEGV_ACCERR). Integer division does not trap on arm64: no SIGFPE is decided.
 */
function a64Fault(signal: number, read: FaultingInstruction, text: string, recorded: bigint | null, target: Target): Decided | null {
  if (signal === SIGTRAP) return read.trap?.instruction === "brk" ? { type: "fault", code: TRAP_BRKPT, evidence: `the instruction at the pc is ${text}, a breakpoint instruction the CPU trapped on` } : null;
  if (signal === SIGILL) return read.trap?.instruction === "udf" ? { type: "fault", code: ILL_ILLOPC, evidence: `the instruction at the pc is ${text}, permanently undefined` } : null;
  if (signal !== SIGSEGV && signal !== SIGBUS) return null;
  const explanation = read.access ? read.explain(read.access, recorded) : null;
  const touched = explanation ? operandAddress(explanation) : null;
  if (touched === null || read.access === null) return null;
  const verb = read.access === "write" ? "writes" : "reads";
  if (recorded !== null) return touched === recorded ? { type: "fault", code: 1, evidence: `the instruction at the pc, ${text}, ${verb} ${hex(touched)}, the very address the record holds` } : null;
  const mapped = target.mapped.some((range) => range.start <= touched && touched < range.end);
  return mapped
    ? { type: "fault", code: SEGV_ACCERR, address: touched, evidence: `the instruction at the pc, ${text}, ${verb} ${hex(touched)}, memory the process had: a fault of its protection` }
    : { type: "fault", code: SEGV_MAPERR, address: touched, evidence: `the instruction at the pc, ${text}, ${verb} ${hex(touched)}, which no mapping of the process holds` };
}

/**
 * A thread stopped right after a tgkill system call whose arguments name the process itself, its
 * own thread and SIGABRT: the program sent the signal to itself, as abort() and raise() do. The
 * call's number is the constant the code loaded just before its `syscall`, read from the dump's own
 * bytes there (a crash handler saves those around the pc), with no need of the library's file or
 * symbols; tgkill's arguments stay in %rdi, %rsi and %rdx, which `syscall` preserves.
 */
async function tgkillOfItself(q: Inspector, target: Target, self: Self): Promise<Decided | null> {
  const { pc } = target;
  const value = (name: string) => toBigInt(target.registers.find((r) => r.name === name)?.value ?? null);
  const [tgid, tid, sent] = [value("rdi"), value("rsi"), value("rdx")];
  const own = self.pid !== null ? [self.pid] : self.lwps;
  const thread = target.selected?.lwp ?? null;
  if (pc === null || sent !== BigInt(SIGABRT) || tgid === null || !own.includes(Number(tgid)) || (thread !== null && tid !== BigInt(thread))) return null;
  if (syscallNumberBefore(bytesOf(await q.readMemory(hex(pc - 16n), 2))) !== SYS_TGKILL) return null;
  return {
    type: "raised",
    code: SI_TKILL,
    evidence: `the thread stopped right after \`mov $0xea,%eax; syscall\`, a tgkill, whose arguments are the process's own pid ${tgid}, its own thread ${tid} and SIGABRT: the program sent SIGABRT to itself, as abort() and raise() do`,
  };
}

/** A memory instruction whose operand, from the registers, is the address the record holds; or a jump through a non-canonical pointer. */
function memoryFault(target: Target, instruction: Instruction, text: string, recorded: bigint | null): Decided | null {
  const jump = /^(call|jmp)\w*\s*$/.test(instruction.mnemonic) ? /^\*%(\w+)$/.exec(instruction.operands[0] ?? "")?.[1] : undefined;
  if (jump) {
    const target_ = toBigInt(target.registers.find((r) => r.name === jump)?.value ?? null);
    if (target_ !== null && !canonical(target_)) return { type: "fault", code: SI_KERNEL, evidence: `the instruction at the pc is ${text}, and %${jump} holds ${hex(target_)}, no canonical address: a general-protection fault` };
  }
  const access = memoryAccess(instruction);
  if (!access) return null;
  const explanation = explainFault({ instruction, access, faultAddress: recorded, registers: target.registers, mapped: target.mapped });
  const touched = operandAddress(explanation);
  if (touched === null) return null;
  if (recorded !== null && touched === recorded) return { type: "fault", code: 1, evidence: `the instruction at the pc, ${text}, ${access === "write" ? "writes" : "reads"} ${hex(touched)}, the very address the record holds` };
  if (!canonical(touched)) return { type: "fault", code: SI_KERNEL, evidence: `the instruction at the pc, ${text}, touches ${hex(touched)}, no canonical address: a general-protection fault` };
  return null;
}

/** x86-64's canonical addresses: bits 63 to 47 all the same. */
function canonical(address: bigint): boolean {
  const top = address >> 47n;
  return top === 0n || top === 0x1ffffn;
}
