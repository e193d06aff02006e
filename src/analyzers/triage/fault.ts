/**
 * The fault: the instruction the CPU faulted on, how it touched memory, what the address was and
 * where it falls, a write that ran off the stack, and, behind a crash handler that re-raised the
 * signal, the fault it was handling.
 */
import { hex } from "../../debuggers/dumpfile/file.js";
import type { Inspector } from "../../debuggers/inspector.js";
import { toBigInt, type ExceptionStop, type Instruction, type Platform, type Register } from "../../debuggers/model.js";
import type { SignalRecord, TargetFiles } from "../../debuggers/probe.js";
import type { Crash, CrashKind } from "../../report/schema.js";
import { codeAt, NULL_PAGE_LIMIT, placeFault, type FaultPlace } from "../address-space.js";
import { normalizeFunctionName, type PlacedFrame } from "../culprit.js";
import { globalName } from "../deadlock.js";
import { explainFault, type FaultExplanation, type Range } from "../fault.js";
import { FAULT_SIGNALS, SI_KERNEL, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSEGV } from "../signals.js";
import { machFaulted, readMachException } from "../mach.js";
import { EXCEPTION_ACCESS_VIOLATION, readException, type ExceptionVerdict } from "../windows.js";
import { argumentRegisters, memoryAccess } from "../x86-64.js";
import { decodeMemoryAccess, decodeTrap, explainA64Access } from "../aarch64.js";
import { A64_SIGFRAME, isKernelFrameRecord, readA64Sigframe, type A64SignalFrame, type A64SigframeChecks } from "../aarch64-sigframe.js";
import type { Stack } from "./stack.js";
import { raisedBySelf, type Stop } from "./stop.js";
import { addressSpaceOf, stackOf, type Target } from "./target.js";

/** Exceptions raised by an instruction (access violation, in-page error, illegal instruction, division). */
const FAULTING_EXCEPTIONS = new Set([EXCEPTION_ACCESS_VIOLATION, "0xc0000006", "0xc000001d", "0xc0000096", "0xc0000094", "0xc000008e"]);
/** How far below the stack's lowest mapped page a fault still counts as running off its end. */
const STACK_GUARD_REACH = 1n << 20n;
export const STACK_NEAR_SP = 1n << 16n;

export interface Fault {
  /** The faulting instruction, as the debugger printed it. */
  instruction: string | null;
  access: Crash["access"];
  /** What a Windows exception record alone says. */
  exception: ExceptionVerdict | null;
  /** The address the fault touched, as the record gives it (none for a general-protection fault). */
  address: string | null;
  explanation: FaultExplanation | null;
  /** The stack ran out: a recursion thousands of frames deep, or a fault just below the stack. */
  stackExhausted: boolean;
  /** A write ran off the top of the stack from a buffer on it. */
  overran: boolean;
  /** A write walked down off the bottom of the stack from a buffer on it. */
  underran: boolean;
  /** The fault a crash handler caught before it re-raised its signal or aborted. */
  caught: CaughtFault | null;
}

/** A fault a crash handler caught, and then re-raised or aborted on: the crash is that fault. */
export interface CaughtFault {
  kind: CrashKind;
  /** Index of the frame the first signal interrupted (just under `<signal handler called>`). */
  interrupted: number;
  /** That frame's pc: the instruction that faulted. */
  pc: string;
  /** The function that handled it, from inside the signal handler (`JVM_handle_linux_signal`). */
  handler: string | null;
  /** The module the handler's code is in, where the debugger knows it. */
  handlerModule: string | null;
  /** What the handler did after: raised the signal again at itself, or aborted. */
  then: "re-raised" | "aborted";
  /** The signal record the kernel handed the handler, read from the signal frame; null where the dump does not show it. */
  record: SignalRecord | null;
  /**
   * Whether the re-raised signal was delivered where the handler returned to, the faulting
   * instruction itself: raised while the handler ran with its signal blocked (Node's), it waited
   * until then, so no signal frame is left on the stack.
   */
  deliveredOnReturn?: boolean;
  /** The debugger's number of the interrupted frame, whose registers are the fault's. */
  frame: number;
  /** Those registers, unwound from the signal frame. */
  registers: Register[];
  /** Where on the signal frame the record was read (its first three words); null where it could not be. */
  recordAt: string | null;
  /**
   * The crashing thread's frames where the debugger did not unwind past the handler (arm64: the
   * signal frame read from memory): the handler's side as unwound, then the interrupted frames
   * rebuilt from the signal frame's registers and the frame records they lead to. `interrupted`
   * indexes into these; null where the debugger's unwind shows them.
   */
  frames?: PlacedFrame[] | null;
  access: Crash["access"];
  explanation: FaultExplanation | null;
  instruction: string | null;
}

export async function readFault(q: Inspector, target: Target, stop: Stop, stack: Stack): Promise<Fault> {
  const { signal, exception, siginfo, sent } = stop;
  const { pc, sp } = target;
  let instruction: string | null = null;
  let faulting: Instruction | null = null;
  let access: Crash["access"] = null;
  // A signal a process sent is no fault: nothing faulted, and the record's "address" holds the sender.
  // The code of a library from elsewhere is not in the dump (or is another build's): no instruction to read.
  const mach = target.os === "macos";
  const cpuRaised = exception !== null && (mach ? machFaulted(exception.code) : FAULTING_EXCEPTIONS.has(exception.code));
  let read: FaultingInstruction | null = null;
  if (!sent && target.pcForeign === null && ((signal !== null && FAULT_SIGNALS.has(signal)) || cpuRaised)) {
    read = await faultingInstruction(q, target, { pc, registers: target.registers });
    faulting = read?.instruction ?? null;
    instruction = read?.text ?? null;
    access = read?.access ?? null;
    const fault = toBigInt(siginfo?.address ?? null);
    if (fault !== null && pc !== null && fault === pc) access = "execute";
    // A general-protection fault (SI_KERNEL): the pointer was not even a canonical address; for
    // an indirect call or jump it is the target that was bad.
    if (siginfo?.code === SI_KERNEL && /^(call|jmp)\w*\s+\*/.test(instruction ?? "")) access = "execute";
    if (signal !== SIGSEGV && signal !== SIGBUS) access = null;
  }
  const stackExhausted = stack.recursion !== null || ranOffStack(target.stack, exception ? exceptionFault(exception, mach) : siginfo, sp);
  const verdict = exception ? (mach ? readMachException(exception, { stackExhausted, faulting, pc }) : readException(exception, { stackExhausted, instruction })) : null;
  // The exception record says how memory was touched; the instruction is a guess.
  if (verdict) access = verdict.access;
  const address = verdict ? verdict.faultAddress : !sent && (signal === SIGSEGV || signal === SIGBUS) ? (siginfo?.code === SI_KERNEL ? null : (siginfo?.address ?? null)) : null;
  const explanation = read && access ? read.explain(access, toBigInt(address)) : null;
  const overran = access === "write" && overranStackTop(target.stack, address);
  const underran = access === "write" && stack.recursion === null && underranStack(target.stack, address, sp);
  if (overran || underran) q.problems.push("the frames above the one that wrote are not shown: the write overwrote their return addresses, so what a debugger unwinds past it is made of the data written");
  // A crash handler that caught a fault and then re-raised its signal or aborted: the fault is read
  // from the frame it interrupted, and its signal record from the signal frame, where the kernel put it.
  const then = handlerEnding(stop);
  const caught = then ? await caughtFault(q, target, stack.innermost, then, then === "re-raised" ? signal : null) : null;
  return { instruction, access, exception: verdict, address, explanation, stackExhausted, overran, underran, caught };
}

/** The instruction a thread stopped at, as the debugger printed it, and how it touches memory. */
export interface FaultingInstruction {
  /** As the debugger printed it (`mov 0x20(%rax),%eax`, `ldr w0,[x0, #32]`); null where it printed none. */
  text: string | null;
  instruction: Instruction | null;
  /** How it touches data memory; null when it does not (or it could not be read). */
  access: "read" | "write" | null;
  /** The access explained, with the address the fault record gives (null: none). */
  explain(access: "read" | "write" | "execute", faultAddress: bigint | null): FaultExplanation | null;
  /** An AArch64 trap instruction at the pc (`brk #0x3e8`, `udf #0`). */
  trap: { instruction: "brk" | "udf"; immediate: number } | null;
}

/**
 * The instruction at `pc` read the way the dump's processor needs: x86-64's from the debugger's
 * AT&T disassembly; AArch64's from its 32-bit word in the dump (its load/store encoding decoded,
 * aarch64.ts), with the debugger's disassembly for the text. `at`: the address to disassemble,
 * where it is not the selected frame's pc.
 */
export async function faultingInstruction(q: Inspector, target: Target, where: { pc: bigint | null; registers: Register[]; at?: string }): Promise<FaultingInstruction | null> {
  const listed = (await q.instructions(1, where.at))?.instructions[0] ?? null;
  const text = listed ? `${listed.mnemonic} ${listed.operands.join(",")}`.trim() : null;
  if (target.arch !== "arm64") {
    if (!listed) return null;
    const explain = (access: "read" | "write" | "execute", faultAddress: bigint | null) => explainFault({ instruction: listed, access, faultAddress, registers: where.registers, mapped: target.mapped });
    return { text, instruction: listed, access: memoryAccess(listed), explain, trap: null };
  }
  const word = where.pc === null ? null : await instructionWord(q, where.pc);
  if (word === null && !listed) return null;
  const decoded = word === null ? null : decodeMemoryAccess(word);
  const explain = (access: "read" | "write" | "execute", faultAddress: bigint | null) =>
    decoded && access !== "execute" ? explainA64Access(decoded, { access, faultAddress, registers: where.registers, mapped: target.mapped, pc: where.pc }) : null;
  return { text, instruction: listed, access: decoded?.access ?? null, explain, trap: word === null ? null : decodeTrap(word) };
}

/** The 32-bit AArch64 instruction word at `pc`, from the dump's memory (or the program's file, where the debugger reads it). */
async function instructionWord(q: Inspector, pc: bigint): Promise<number | null> {
  const [word] = await q.readMemory(hex(pc), 1);
  if (word !== undefined) return Number(word & 0xffffffffn);
  // The word after may lie on a page the dump lacks: the one before it holds the instruction in its high half.
  const [before] = await q.readMemory(hex(pc - 4n), 1);
  return before === undefined ? null : Number(before >> 32n);
}

/**
 * The library function the thread faulted in, above the culprit: the innermost named frame of a
 * library (`__strlen_evex` is strlen), or the function the culprit called through its PLT when the
 * library's frames are unknown. The argument register that holds the faulting address is named
 * (memcpy's source in its second), or the first where it holds a pointer into the NULL page for a
 * NULL-page fault: the caller passed it.
 */
export function libraryFault(above: PlacedFrame[], registers: Register[], fault: bigint | null, os: Platform["os"] | undefined, foreignModule: string | null) {
  const frame = above.find((f) => f.function !== null && f.function !== "<signal handler called>");
  if (!frame?.function) return null;
  const name = libraryFunctionName(frame.function);
  const candidates = argumentRegisters(os).slice(0, ARGUMENTS_SEARCHED);
  const valueOf = (register: string) => toBigInt(registers.find((r) => r.name === register)?.value ?? null);
  const exact = fault === null ? -1 : candidates.findIndex((register) => valueOf(register) === fault);
  const first = candidates[0] ?? "rdi";
  const nullPage = fault !== null && fault < NULL_PAGE_LIMIT && (valueOf(first) ?? NULL_PAGE_LIMIT) < NULL_PAGE_LIMIT;
  const position = exact >= 0 ? exact : nullPage ? 0 : -1;
  const register = candidates[position] ?? first;
  const value = valueOf(register);
  return { function: name, module: frame.module ?? frame.from ?? foreignModule, argument: position >= 0 && value !== null ? { register: `%${register}`, value: hex(value), position: position + 1 } : null };
}

/** The argument registers searched for the faulting address: a library function's pointers come first. */
const ARGUMENTS_SEARCHED = 4;

/** glibc's internal and CPU-specific names as the program called them: `__strlen_evex` → strlen, `__GI___libc_free` → free. */
export function libraryFunctionName(name: string): string {
  const plain = normalizeFunctionName(name).replace(/^_+(libc_)?/, "");
  return plain.replace(/_(sse2|ssse3|sse4_[12]|avx2?|avx512\w*|evex\w*|erms|unaligned\w*)(_\w+)?$/, "");
}

/**
 * Where a fault address falls, and in a file's data the global it is in, by the debugger's symbol
 * (`audit_log+8 in the program .bss`): names over addresses.
 */
export async function namedPlace(q: Inspector, address: bigint | null, files: TargetFiles, sp: bigint | null): Promise<FaultPlace | null> {
  if (address === null) return null;
  const place = placeFault(files, address, sp);
  if (!place.within || !/ \.(bss|data|rodata|tbss|tdata)/.test(place.within.label)) return place;
  const global = globalName(await q.symbolAt(place.address));
  return global ? { ...place, within: { ...place.within, label: `${global} in ${place.within.label}` } } : place;
}

/**
 * How the dump's signal could end a crash handler: a fault signal the process raised at itself (Redis,
 * Chromium and many servers log a report and re-raise it) or an abort (the JVM's handler writes
 * hs_err and calls abort()). Null for any other stop. Only the stack then shows whether a handler ran.
 */
function handlerEnding(stop: Stop): CaughtFault["then"] | null {
  const { signal, siginfo } = stop;
  if (signal === null) return null;
  if (FAULT_SIGNALS.has(signal)) return siginfo !== null && stop.sent && raisedBySelf(siginfo, stop.self) ? "re-raised" : null;
  // An abort needs no record of its own (qemu's cores have none): the signal frame found behind it is checked.
  return signal === SIGABRT && stop.origin.type === "raised" ? "aborted" : null;
}

/**
 * The fault a crash handler caught: the frame under `<signal handler called>` is where it arrived,
 * its pc the faulting instruction itself and its registers, unwound from the signal frame, exact.
 * The kernel's record of it lies on the signal frame (`rt_sigframe`: the ucontext, then the
 * siginfo); it gives the signal, its code and the fault address, checked before it is believed.
 * Without it, a re-raised signal is the one caught; an abort's is not known, and the kind is read
 * from the instruction alone.
 */
async function caughtFault(q: Inspector, target: Target, frames: PlacedFrame[], then: CaughtFault["then"], reraisedSignal: number | null): Promise<CaughtFault | null> {
  const trampoline = frames.findIndex((frame) => isSignalTrampoline(frame.function));
  const inMemory = trampoline < 0 && target.arch === "arm64" && (target.os ?? "linux") === "linux" ? await caughtFromA64Sigframe(q, target, frames, then) : null;
  if (inMemory) return inMemory;
  if (trampoline < 0 && then === "re-raised") return pendingReraise(q, target, frames, reraisedSignal);
  const interrupted = trampoline < 1 ? null : frames[trampoline + 1];
  if (!interrupted) return null;
  // gdb prints no address for a frame stopped at the start of a line: its registers have the pc.
  const registers = await q.registers({ frame: interrupted.level });
  const pc = toBigInt(interrupted.address) ?? toBigInt(registers.find((r) => r.name === "rip" || r.name === "pc")?.value ?? null);
  if (pc === null) return null;
  // The nearest named frame above the signal frame is the handler the kernel called.
  const handlerFrame = frames.slice(0, trampoline).findLast((frame) => frame.function !== null) ?? null;
  const { record, at: recordAt } = await signalFrameRecord(q, frames[trampoline]?.level ?? trampoline, target.os, target.arch);
  const signal = record?.signo ?? reraisedSignal;
  if (signal === null) return null;
  const base = {
    interrupted: trampoline + 1,
    pc: hex(pc),
    handler: handlerFrame?.function ? normalizeFunctionName(handlerFrame.function) : null,
    handlerModule: handlerFrame?.module ?? handlerFrame?.from ?? null,
    then,
    record,
    frame: interrupted.level,
    registers,
    recordAt,
  };
  return faultCaught(q, target, base, signal, pc, registers);
}

/** The functions that send a signal: a re-raise delivered in them is not at the faulting instruction. */
const SENDS_SIGNAL = /(^|_)(raise|kill|tgkill|tkill|pthread_kill\w*|abort|sigqueue|syscall)$/;

/**
 * A fault signal the process raised at itself with no signal frame on the stack, delivered at an
 * instruction of the program rather than in a function that sends signals: a handler re-raised it
 * while it ran with the signal blocked (Node's SIGSEGV handler does), and the kernel delivered it
 * when the handler returned, at the instruction that faulted. Its registers are the fault's.
 */
async function pendingReraise(q: Inspector, target: Target, frames: PlacedFrame[], signal: number | null): Promise<CaughtFault | null> {
  const top = frames[0];
  if (!top?.function || SENDS_SIGNAL.test(libraryFunctionName(top.function)) || signal === null) return null;
  const registers = await q.registers({ frame: top.level });
  const pc = toBigInt(top.address) ?? toBigInt(registers.find((r) => r.name === "rip" || r.name === "pc")?.value ?? null);
  if (pc === null) return null;
  const base = { interrupted: 0, pc: hex(pc), handler: null, handlerModule: null, then: "re-raised" as const, record: null, deliveredOnReturn: true, frame: top.level, registers, recordAt: null };
  const caught = await faultCaught(q, target, base, signal, pc, registers);
  // A signal another thread sent lands on whatever instruction ran: only one that could not have run is a fault.
  return caught && couldNotRun(caught, target) ? caught : null;
}

/** Bytes above the stack pointer searched for an arm64 signal frame: the handler's frames, and those it called, lie below it. */
const A64_SIGFRAME_REACH = 64n * 1024n;
/** Return addresses below the signal frame tried for the handler, and frame records followed from the interrupted frame. */
const A64_HANDLER_TRIES = 32;
const A64_FRAME_RECORDS = 16;

/**
 * A fault a handler caught on arm64 Linux where the debugger did not unwind to the signal frame
 * (gdb-multiarch does not come back from qemu-user's trampoline, LLDB stops at the handler): the
 * kernel's `rt_sigframe` found in stack memory above the stack pointer and believed only where every
 * field reads as a fault's (aarch64-sigframe.ts) and the thread's chain of frame records, from its
 * x29, reaches the record the kernel put after it; its registers are the interrupted frame's. The handler
 * is the function the nearest return address below the frame returns into; the interrupted stack is
 * rebuilt from the saved pc, lr and frame records. Null where no frame reads so: unknown, not "no fault".
 */
async function caughtFromA64Sigframe(q: Inspector, target: Target, frames: PlacedFrame[], then: CaughtFault["then"]): Promise<CaughtFault | null> {
  const sp = target.sp;
  if (sp === null) return null;
  const reach = target.stack && target.stack.end > sp ? (target.stack.end - sp < A64_SIGFRAME_REACH ? target.stack.end - sp : A64_SIGFRAME_REACH) : A64_SIGFRAME_REACH;
  const words = await q.readMemory(hex(sp), Number(reach / 8n));
  const space = addressSpaceOf(target);
  const checks = (pc: bigint, word: number | null): A64SigframeChecks => ({
    inCode: (address) => codeAt(space, address),
    mapped: (address) => target.mapped.some((range) => range.start <= address && address < range.end),
    instructionAt: (address) => (address === pc ? word : null),
  });
  const span = A64_SIGFRAME.size / 8;
  let found: { frame: A64SignalFrame; index: number } | null = null;
  for (let i = Number((sp & 0xfn) / 8n); i + span <= words.length && !found; i += 2) {
    const signo = words[i];
    const pc = words[i + A64_SIGFRAME.pc / 8];
    if (signo === undefined || pc === undefined || !FAULT_SIGNALS.has(Number(signo & 0xffffffffn))) continue;
    const word = codeAt(space, pc) === true ? await instructionWord(q, pc) : null;
    const read = readA64Sigframe(words.slice(i, i + span), sp + BigInt(8 * i), checks(pc, word));
    if (read.frame && (await onRecordChain(q, target, read.frame))) found = { frame: read.frame, index: i };
  }
  if (!found) return null;
  const { frame, index } = found;
  const handler = await a64Handler(q, target, words.slice(0, index));
  const kept = handler ? frames.slice(0, frames.findLastIndex((f) => f.function !== null && normalizeFunctionName(f.function) === handler.name) + 1) : [];
  const handlerSide = handler && kept.length === 0 ? [...frames.filter((f) => !target.isOwnCode(toBigInt(f.address) ?? 0n)).slice(0, 8), handler.frame] : kept;
  const interrupted = await a64InterruptedFrames(q, target, frame);
  const all = [...handlerSide, ...interrupted].map((f, level) => ({ ...f, level }));
  const base = {
    interrupted: handlerSide.length,
    pc: hex(frame.pc),
    handler: handler?.name ?? null,
    handlerModule: handler?.frame.module ?? null,
    then,
    record: frame.record,
    // No debugger frame holds these registers: the innermost frame is the one a probe can name.
    frame: 0,
    registers: frame.registers,
    recordAt: hex(frame.at),
    frames: all,
  };
  return faultCaught(q, target, base, frame.record.signo, frame.pc, frame.registers);
}

/**
 * Whether the crashing thread's chain of frame records, from its x29, reaches the record the kernel
 * put after the signal frame: the handler that runs was called on that frame (a copy of one left
 * on the stack by a signal handled earlier is not on the chain).
 */
async function onRecordChain(q: Inspector, target: Target, frame: A64SignalFrame): Promise<boolean> {
  let fp = toBigInt(target.registers.find((r) => r.name === "x29" || r.name === "fp")?.value ?? null);
  const limit = frame.at + BigInt(A64_SIGFRAME.whole) + A64_SIGFRAME_REACH;
  for (let n = 0; n < A64_FRAME_RECORDS * 4 && fp !== null && fp !== 0n && (fp & 0x7n) === 0n && fp <= limit; n++) {
    const [next, lr] = await q.readMemory(hex(fp), 2);
    if (next === undefined || lr === undefined) return false;
    if (isKernelFrameRecord(frame, fp, next, lr)) return true;
    if (next <= fp) return false;
    fp = next;
  }
  return false;
}

/** The function the nearest return address below the signal frame returns into (right after a `bl` or `blr`): the handler the kernel called. */
async function a64Handler(q: Inspector, target: Target, below: (bigint | undefined)[]): Promise<{ name: string; frame: PlacedFrame } | null> {
  let tries = 0;
  for (let i = below.length - 1; i >= 0 && tries < A64_HANDLER_TRIES; i--) {
    const word = below[i];
    if (word === undefined || target.moduleAt(word) === null || codeAt(addressSpaceOf(target), word) !== true) continue;
    tries++;
    const call = await instructionWord(q, word - 4n);
    if (call === null || !isA64Call(call)) continue;
    const frame = await a64Frame(q, target, word, true);
    if (frame.function) return { name: normalizeFunctionName(frame.function), frame };
  }
  return null;
}

/** `bl label` or `blr xN`. */
const isA64Call = (word: number) => ((word & 0xfc000000) >>> 0) === 0x94000000 || ((word & 0xfffffc1f) >>> 0) === 0xd63f0000;

/**
 * The interrupted frames: the saved pc, the saved lr where it returns into another function than the
 * pc's and is not the first frame record's (a leaf function keeps its return address in lr alone),
 * then the frame records from the saved x29, each holding its caller's x29 and return address.
 */
async function a64InterruptedFrames(q: Inspector, target: Target, frame: A64SignalFrame): Promise<PlacedFrame[]> {
  const value = (name: string) => toBigInt(frame.registers.find((r) => r.name === name)?.value ?? null);
  const frames = [await a64Frame(q, target, frame.pc, false)];
  const returns: bigint[] = [];
  let fp = value("x29");
  for (let n = 0; n < A64_FRAME_RECORDS && fp !== null && fp !== 0n && (fp & 0x7n) === 0n; n++) {
    const [next, lr] = await q.readMemory(hex(fp), 2);
    if (next === undefined || lr === undefined || lr === 0n || codeAt(addressSpaceOf(target), lr) !== true) break;
    returns.push(lr);
    if (next <= fp) break;
    fp = next;
  }
  const lr = value("x30");
  if (lr !== null && lr !== returns[0] && codeAt(addressSpaceOf(target), lr) === true) {
    const caller = await a64Frame(q, target, lr, true);
    if (caller.function !== null && caller.function !== frames[0]!.function) frames.push(caller);
  }
  for (const address of returns) frames.push(await a64Frame(q, target, address, true));
  return frames;
}

/** A frame at `address` named by the debugger's symbols; a return address's line is its call's. */
async function a64Frame(q: Inspector, target: Target, address: bigint, returnAddress: boolean): Promise<PlacedFrame> {
  const at = returnAddress ? address - 4n : address;
  const symbol = await q.symbolAt(hex(at));
  const line = await q.sourceLine(hex(at));
  return {
    level: 0,
    address: hex(address),
    function: symbol?.symbol ?? null,
    args: "",
    file: line?.file ?? symbol?.file ?? null,
    line: line?.line ?? symbol?.line ?? null,
    from: null,
    found: "scan",
    unwound: null,
    module: target.moduleAt(address),
  };
}

function couldNotRun(caught: CaughtFault, target: Target): boolean {
  if (caught.kind === "null-dereference" || caught.kind === "stack-overflow" || caught.kind === "division-by-zero") return true;
  if (caught.kind !== "invalid-memory-access" || !caught.explanation) return false;
  const address = operandAddress(caught.explanation);
  return address !== null && !target.regions.some((region) => BigInt(region.start) <= address && address < BigInt(region.end));
}

type CaughtBase = Omit<CaughtFault, "kind" | "access" | "explanation" | "instruction">;

/** The caught fault's kind, read from the instruction at its pc with its registers and the kernel's record where there is one. */
async function faultCaught(q: Inspector, target: Target, base: CaughtBase, signal: number, pc: bigint, registers: Register[]): Promise<CaughtFault | null> {
  const record = base.record;
  const read = await faultingInstruction(q, target, { pc, registers, at: hex(pc) });
  const instruction = read?.text ?? null;
  const recorded = toBigInt(record?.address ?? null);
  if (signal === SIGILL) return { ...base, kind: "illegal-instruction", access: null, explanation: null, instruction };
  if (signal === SIGFPE) return { ...base, kind: /^i?div/.test(read?.instruction?.mnemonic ?? "") ? "division-by-zero" : "unknown", access: null, explanation: null, instruction };
  if (signal !== SIGSEGV && signal !== SIGBUS) return null;
  if (recorded !== null && recorded === pc) return { ...base, kind: "bad-jump", access: "execute", explanation: null, instruction };
  const access = read?.access ?? null;
  const explanation = read && access ? read.explain(access, recorded) : null;
  // The record's address where the kernel gave one (a general-protection fault gives 0), else the operand's.
  const address = record && record.code !== SI_KERNEL ? recorded : explanation ? operandAddress(explanation) : null;
  // Just below the stack the interrupted frame ran on (the handler ran on a stack of its own, as faulthandler's does): the stack ran out.
  const sp = toBigInt(registers.find((r) => r.name === "rsp" || r.name === "sp")?.value ?? null);
  const ranOut = address !== null && ranOffStack(stackOf(target.files, target.regions, sp), { signo: SIGSEGV, errno: 0, code: 1, address: hex(address), pid: null }, sp);
  const kind: CrashKind = signal === SIGBUS ? "bus-error" : ranOut ? "stack-overflow" : address !== null && address < NULL_PAGE_LIMIT ? "null-dereference" : "invalid-memory-access";
  return { ...base, kind, access, explanation, instruction };
}

/** The frame the kernel builds to call a signal handler: gdb's `<signal handler called>`, glibc's `__restore_rt` under LLDB. */
function isSignalTrampoline(name: string | null): boolean {
  return name === "<signal handler called>" || name === "__restore_rt";
}

/**
 * Where the siginfo lies from a signal frame's stack pointer on Linux: on x86-64 past the kernel's
 * ucontext (flags, link, stack, sigcontext, mask); on arm64 at it (the siginfo comes first).
 */
const sigframeSiginfoOffset = (arch: Platform["arch"] | undefined) => (arch === "arm64" ? 0n : 8n + 8n + 24n + 256n + 8n);

/**
 * The signal record on a signal frame (x86-64 Linux): si_signo and si_errno, si_code, then the
 * fault address. Believed only when it reads as a fault's record: a fault signal, a kernel code.
 */
async function signalFrameRecord(q: Inspector, level: number, os: Platform["os"] | undefined, arch: Platform["arch"] | undefined): Promise<{ record: SignalRecord | null; at: string | null }> {
  if (os !== undefined && os !== "linux") return { record: null, at: null };
  const sp = toBigInt((await q.registers({ frame: level })).find((r) => r.name === "rsp" || r.name === "sp")?.value ?? null);
  if (sp === null) return { record: null, at: null };
  const at = hex(sp + sigframeSiginfoOffset(arch));
  const [first, second, address] = await q.readMemory(at, 3);
  if (first === undefined || second === undefined || address === undefined) return { record: null, at: null };
  const signo = Number(first & 0xffffffffn);
  const code = Number(BigInt.asIntN(32, second & 0xffffffffn));
  if (!FAULT_SIGNALS.has(signo) || !((code > 0 && code <= 9) || code === SI_KERNEL)) return { record: null, at: null };
  return { record: { signo, errno: Number(first >> 32n), code, address: hex(address), pid: null }, at };
}

/** What the report notes of a caught fault that is the crash. */
export function caughtNote(caught: CaughtFault): string {
  if (caught.frames && caught.recordAt) return `the signal in the dump's notes is the one the crash handler ${caught.then === "aborted" ? "raised by aborting" : "raised"}; the debugger did not unwind past the handler, so the fault it caught is read from the signal frame the kernel built on the stack, found in memory at ${caught.recordAt} (its signal, code and fault address agree with the instruction at its saved pc), and the frames it interrupted from its saved registers and the frame records they lead to`;
  if (caught.deliveredOnReturn) return "the signal in the dump's notes is the one a crash handler re-raised, delivered at the instruction that faulted once the handler returned; the fault is read from that instruction and its registers, with no signal record of the fault itself";
  return (
    `the signal in the dump's notes is the one the crash handler ${caught.then === "aborted" ? "raised by aborting" : "raised"}; the fault it caught is read from the frame it interrupted (its registers are exact)` +
    (caught.record ? " and from the signal record the kernel handed the handler, on the signal frame" : ", and no signal record of it was found on the signal frame")
  );
}

/** The address a memory operand names: base + index × scale + displacement, from the registers' values. */
export function operandAddress(explanation: FaultExplanation): bigint | null {
  const base = toBigInt(explanation.base?.value ?? null);
  if (base === null) return null;
  const index = toBigInt(explanation.index?.value ?? null) ?? 0n;
  const address = base + index * BigInt(explanation.index?.scale ?? 1) + BigInt(explanation.displacement);
  return BigInt.asUintN(64, address);
}

/** An access violation's (or EXC_BAD_ACCESS's) address as the signal record the stack checks read. */
function exceptionFault(exception: ExceptionStop, mach: boolean): SignalRecord | null {
  const address = mach ? (Number(exception.code) === 1 ? exception.address : undefined) : exception.code === EXCEPTION_ACCESS_VIOLATION ? exception.parameters[1] : undefined;
  return address === undefined ? null : { signo: SIGSEGV, errno: 0, code: 1, address, pid: null };
}

/**
 * A fault just past the top of the crashing thread's stack, far above its stack pointer: a copy
 * into a buffer on the stack ran upwards through every frame above it and off the stack's end.
 */
function overranStackTop(stack: Range | null, faultAddress: string | null): boolean {
  const fault = toBigInt(faultAddress);
  if (fault === null || stack === null) return false;
  const top = stack.end;
  return fault >= top && fault - top < STACK_NEAR_SP;
}

/**
 * A write just below the end of the stack while the stack pointer is far above it, with no
 * recursion: not a stack overflow (that faults near the stack pointer) but a write that walked down
 * from a buffer on the stack (an index or length gone negative, or a copy running backwards).
 */
function underranStack(stack: Range | null, faultAddress: string | null, sp: bigint | null): boolean {
  const fault = toBigInt(faultAddress);
  if (fault === null || stack === null || sp === null) return false;
  return fault < stack.start && stack.start - fault <= STACK_GUARD_REACH && sp - stack.start > STACK_GUARD_REACH;
}

/** A fault at the lower end of the crashing thread's stack: the stack ran into its guard. */
function ranOffStack(stack: Range | null, siginfo: SignalRecord | null, sp: bigint | null): boolean {
  const fault = toBigInt(siginfo?.address ?? null);
  if (siginfo?.signo !== SIGSEGV || fault === null || sp === null || fault < NULL_PAGE_LIMIT) return false;
  if (stack === null) return fault + STACK_NEAR_SP >= sp && fault <= sp + STACK_NEAR_SP;
  const low = stack.start;
  // The stack ran out only if the stack pointer got there too: a fault below the stack from far above is a write (underranStack).
  return fault < low && low - fault <= STACK_GUARD_REACH && sp - low <= STACK_GUARD_REACH;
}
