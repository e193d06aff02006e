/**
 * Crash triage: drives a debugger through a command runner (a session, or the analysis's
 * evidence-storing executor) with a fixed, cheap set of read-only commands and returns the
 * `crash` object of the JSON report plus what a report shows next to it. No model, no store.
 */
import { abortMessageAddress, fileBuildId, importsOf, type DumpInfo, type ImportLookup } from "../debuggers/dump.js";
import type { Address, ExceptionStop, Frame, Register, Instruction, MemoryRegion, Module, Platform, SignalStop, StopReason, SymbolAt } from "../debuggers/model.js";
import { packageOf, type InstalledPackage } from "../debuggers/packages.js";
import { foreignAt, foreignLibraries, foreignNote, type BuildIdReader, type ForeignLibrary } from "./libraries.js";
import { explainFault, stringEndBytes, textBytes, type FaultExplanation, type Range } from "./fault.js";
import { thousands } from "../report/numbers.js";
import { normalizeAddress, toBigInt } from "../debuggers/model.js";
import { Inspector, type Ask } from "../debuggers/inspector.js";
import type { Probe, SharedLibrary, SignalRecord, TargetFiles } from "../debuggers/probe.js";
import type { Crash, CrashKind } from "../report/schema.js";
import { coreSegmentAt, holds, isCodeAddress, placeFault, type FaultPlace } from "./address-space.js";
import { abortKind, classifyCrash, RUST_STACK_OVERFLOW_HANDLER, NULL_PAGE_LIMIT, sentByProcess, SI_KERNEL, SI_QUEUE, SI_TKILL } from "./classify.js";
import { CLR_EXCEPTION, criticalSectionOf, criticalSectionOwnerAddress, EXCEPTION_ACCESS_VIOLATION, exceptionName, managedExceptionText, readException } from "./windows.js";
import {
  crashSignature,
  culpritIndex,
  isRuntimeFrame,
  isRuntimeModule,
  moduleLocator,
  normalizeFunctionName,
  placeFrames,
  type ModuleLocator,
  type PlacedFrame,
} from "./culprit.js";
import { deadlockCycles, globalName, lockExpressionIn, lockWait, type DeadlockEdge, type LockWait } from "./deadlock.js";
import { hangSummary } from "./hang.js";
import { exceptionText, readManaged, withManaged } from "./managed.js";
import { AMBIGUOUS_FREE_MESSAGE, chunkHeaderAddress, CHUNK_HEADER_WORDS, freedExpression, mutexOwnerExpression, plausibleChunkSize } from "./glibc.js";
import { acceptPanicMessage, panicMessageCandidates } from "./panic-message.js";
import { RECURSION_WINDOW, RECURSION_WINDOW_SKIP, recursionOf, recursiveCallIndex, repeatingCycle, type Cycle, type Recursion } from "./recursion.js";
import {
  bytesOf,
  callTarget,
  endsWithCall,
  MAX_SCAN_CANDIDATES,
  MAX_SCAN_STARTS,
  MAX_SCANNED_FRAMES,
  returnCandidates,
  SCAN_PIECE_WORDS,
  SCAN_WORDS,
  thunkSlot,
  type CallTarget,
  type ReturnCandidate,
} from "./stack-scan.js";
import { unquoteCString } from "../debuggers/c-text.js";
import { demangleTypeinfo } from "./itanium.js";
import { keyRegisters } from "./registers.js";
import { signalCodeName, signalName } from "./signals.js";
import { argumentRegisters, callArgumentAddress, memoryAccess } from "./x86-64.js";
import type { ThreadSummary } from "../debuggers/model.js";

export interface TriageOptions {
  /** Frames fetched from each end of the crashing thread's stack (default 40). */
  frameLimit?: number;
  /**
   * What the dump file itself records as the stop (an ELF core's NT_SIGINFO), read by dumpdbg: the
   * ground truth for the signal, its code, the fault address and the sender, whatever the debugger says.
   */
  stopReason?: StopReason | null;
  /** The dump's platform: Windows' calling convention differs from System V's. */
  platform?: Platform | null;
  /** The dumped process's pid, when the dump records it: tells a signal it sent itself from one sent to it. */
  pid?: number | null;
  /** The dump's memory regions as its file records them (segments of a core, a minidump's memory info). */
  regions?: MemoryRegion[];
  /** Which DLL function a Windows program's import slot holds (from its import table). */
  imports?: ImportLookup | null;
  /** The modules the dump maps, with the build ids its copies of their first pages hold. */
  modules?: Module[];
  /** Reads a local file's build id: tells a library found here from the build the process ran. */
  buildIdOf?: BuildIdReader;
  /** Finds glibc's abort message in the dump's memory without symbols (the address of its text). */
  findAbortMessage?: () => Address | null;
  /** The installed package a file comes from, with its version (Debian's dpkg). */
  packageOf?: (path: string) => Promise<InstalledPackage | null>;
}

export interface ThreadGroup {
  /** The innermost function the threads are in. */
  function: string;
  threads: number[];
}

export interface TriageResult {
  crash: Crash;
  /** The operating system the dump comes from (its locks, its calling convention); null when unknown. */
  os: Platform["os"] | null;
  /** The crashing thread's frames from the culprit outwards (as many as were fetched). */
  frames: PlacedFrame[];
  /** Runtime and machinery frames above the culprit that `frames` leaves out. */
  hiddenFrames: number;
  /** Frames on the crashing thread's stack. */
  stackDepth: number;
  recursion: Recursion | null;
  registers: { pc: string | null; sp: string | null; fp: string | null };
  /** The faulting instruction, as the debugger printed it. */
  instruction: string | null;
  /** What the faulting instruction did with memory, read like an engineer reads it (memory faults). */
  fault: FaultExplanation | null;
  /** Where the fault address falls in the address space (memory faults). */
  faultPlace?: FaultPlace | null;
  threads: { count: number; groups: ThreadGroup[] };
  executable: string | null;
  modules: SharedLibrary[];
  /** Every command triage ran, in order. */
  commands: string[];
  /** What triage could not establish, said plainly. */
  notes: string[];
  /**
   * How a stack buffer overflow without a protector showed: a `ret` faulted on the word it popped,
   * a `ret` returned to an address that maps nothing, or a write ran off the top of the stack.
   */
  smashed?: "faulting-ret" | "returned" | "ran-off-top" | "ran-off-bottom" | null;
  /**
   * The library function a memory fault happened in, called by the culprit (`strlen` in libc), with
   * its first argument's register when that holds the faulting address (or a NULL for a fault there).
   */
  faultIn?: { function: string; module: string | null; argument: { register: string; value: string } | null } | null;
  /** Libraries of the dumped process that are not here as they were (a core from another machine). */
  foreignLibraries?: { path: string; status: "missing" | "different"; found: string | null }[];
  /** The packages of the crash's modules that have no debug information here: whose debug symbols to get. */
  packages?: { path: string; name: string; version: string }[];
}

const SIGABRT = 6;
const SIGSTOP = 19;
const MEMORY_FAULTS = new Set<CrashKind>(["null-dereference", "invalid-memory-access", "bus-error"]);
const FAULT_SIGNALS = new Set([4, 7, 8, 11]);
/** Exceptions raised by an instruction (access violation, in-page error, illegal instruction, division). */
const FAULTING_EXCEPTIONS = new Set([EXCEPTION_ACCESS_VIOLATION, "0xc0000006", "0xc000001d", "0xc0000096", "0xc0000094", "0xc000008e"]);
/** How far below the stack's lowest mapped page a fault still counts as running off its end. */
const STACK_GUARD_REACH = 1n << 20n;
const STACK_NEAR_SP = 1n << 16n;
/** Upper bound on the stack words read when looking for a Rust panic payload. */
const MAX_PANIC_SCAN_WORDS = 4096;
const MAX_PANIC_CANDIDATES = 16;
/** Every thread's stack, as the deadlock search reads them (the chat asks the same, so the store answers it). */
export const ALL_STACKS = { kind: "thread-backtraces", threads: "all", limit: 64 } as const satisfies Probe;
/** Frames past the culprit whose return addresses are checked on Windows. */
const UNWIND_CHECKS = 4;
/** Stack words searched for the critical section a thread waits on, and pointers tried. */
const CRITICAL_SECTION_SCAN_WORDS = 256;
const MAX_CRITICAL_SECTION_CANDIDATES = 48;
/** Words below the stack pointer searched for the last call of a function that returned through a smashed address. */
const STALE_RETURN_WORDS = 64;

/** What the dump file says that triage takes as given: its stop reason, platform, regions and the program's imports. */
export function triageOptionsOf(dump: DumpInfo | null, executable: string | null): TriageOptions {
  if (!dump) return {};
  return {
    stopReason: dump.facts.stopReason,
    platform: dump.facts.platform,
    regions: dump.facts.regions,
    imports: importsOf(dump, executable),
    pid: "pid" in dump.facts ? dump.facts.pid : null,
    ...(dump.format === "elf-core" ? { modules: dump.facts.modules, buildIdOf: fileBuildId, findAbortMessage: () => abortMessageAddress(dump), packageOf } : {}),
  };
}

export async function triage(ask: Ask, options: TriageOptions = {}): Promise<TriageResult> {
  const limit = options.frameLimit ?? 40;
  const os = options.platform?.os;
  const commands: string[] = [];
  const q = new Inspector(async (probe) => {
    const answer = await ask(probe);
    commands.push(answer.command);
    return answer;
  });
  const notes = q.problems;

  // The thread the debugger selects when it opens a core is the one that received the signal.
  const threads = await q.threads();
  const selected = threads.find((thread) => thread.current) ?? threads[0] ?? null;
  const recorded = options.stopReason?.type === "signal" ? options.stopReason : null;
  // A Windows minidump's exception record (none in a hang dump).
  const exception = options.stopReason?.type === "exception" ? options.stopReason : null;
  // SIGSTOP cannot end a process: a dump whose threads show it was taken of a stopped or attached
  // process (gcore), as a debugger that reads the threads' current signal (lldb) reports.
  const exitSignal = await q.exitSignal();
  const reported = exitSignal === SIGSTOP ? null : exitSignal;
  const signal = recorded?.signo ?? reported;
  if (recorded && reported !== null && reported !== recorded.signo) {
    notes.push(`the debugger reports ${signalName(reported)} but the dump's notes record ${signalName(recorded.signo)}; the notes are used`);
  }
  if (recorded?.thread != null && selected?.lwp != null && selected.lwp !== recorded.thread) {
    notes.push(`the debugger selected LWP ${selected.lwp}, but the dump's notes say LWP ${recorded.thread} received the signal`);
  }
  const libraries = await q.sharedLibraries();
  const files = await q.sections();
  const allRegisters = await q.registers();
  const registers = keyRegisters(allRegisters);
  const pc = toBigInt(registers.pc);
  const sp = toBigInt(registers.sp);
  // A core from another machine: libraries missing here, or here in another build.
  const foreign = options.modules && options.buildIdOf ? foreignLibraries(options.modules, libraries, files.executable, options.buildIdOf) : [];
  const foreignSaid = foreignNote(foreign);
  if (foreignSaid) notes.push(foreignSaid);
  const pcForeign = foreignAt(foreign, pc);
  // The memory holding the stack pointer: where a stack ran out, or a write ran off it.
  const stack = stackOf(files, options.regions ?? [], sp);
  const mapped = mappedRanges(files, options.regions ?? []);

  const moduleAt = moduleLocator(files, libraries);
  const top = await q.backtrace(limit);
  let frames: Frame[] = top.frames;
  let stackDepth = frames.length;
  let recursion: Recursion | null = null;
  if (top.truncated) {
    // A recursion is measured, not unwound: the debugger would walk every one of its frames for the outermost.
    let cycle = repeatingCycle(frames);
    if (cycle === null) {
      // The stack may have run out deep inside a library call: the cycle starts below these frames.
      const deeper = await q.backtrace(RECURSION_WINDOW);
      cycle = repeatingCycle(deeper.frames, RECURSION_WINDOW_SKIP);
      if (cycle) frames = deeper.frames;
    }
    const estimate = cycle ? await estimateDepth(q, files, frames, cycle) : null;
    if (cycle && estimate !== null) {
      stackDepth = estimate;
      recursion = recursionOf(cycle, estimate, true);
    } else {
      const bottom = (await q.backtrace(limit, {}, true)).frames;
      const outermost = bottom.at(-1);
      stackDepth = outermost ? outermost.level + 1 : stackDepth;
      recursion = recursionOf(cycle, stackDepth, false);
      frames = [...frames, ...bottom.filter((frame) => frame.level >= frames.length)];
    }
  }
  const isOwnCode = ownCode(files);
  const unwound = placeFrames(frames, moduleAt, registers.pc);
  const scan = unwindLost(unwound, files, foreign) ? await scanStack(q, unwound, sp, isOwnCode, moduleAt, options.imports ?? null) : null;
  // Windows code the debugger has no unwind tables for (mingw's SEH-only runtime under LLDB) sends
  // its unwind astray past the program's frames: checked there, and redone from the stack if so.
  const repaired = !scan && os === "windows" ? await repairUnwind(q, unwound, sp, isOwnCode, moduleAt, options.imports ?? null) : null;
  const read = signal !== null && exception === null ? await q.signalInfo() : null;
  const siginfo = recorded ? signalRecordOf(recorded) : read;
  if (recorded && read && (read.code !== recorded.code || (recorded.address !== null && read.address !== recorded.address))) {
    notes.push(`the debugger's signal record (code ${read.code}, address ${read.address ?? "none"}) differs from the dump's notes (code ${recorded.code}, address ${recorded.address ?? "none"}); the notes are used`);
  }
  const sent = signal !== null && exception === null && sentByProcess(siginfo);
  // A `ret` popped an overwritten return address that is canonical but maps nothing: the pc is the
  // popped word, still just below the stack pointer, and the function that returned is gone from the unwind.
  const popped =
    signal === 11 && !sent && pc !== null && sp !== null && toBigInt(siginfo?.address ?? null) === pc && files.sections.length > 0 && !isCodeAddress(files, pc)
      ? (await q.readMemory(hex(sp - 8n), 1))[0] === pc
      : false;
  const returner = popped && sp !== null ? await returningFrame(q, sp, isOwnCode, moduleAt) : null;
  const placed = returner ? [{ ...(unwound[0] as PlacedFrame), level: 0 }, returner] : (scan ?? repaired?.frames ?? unwound);
  if (scan) notes.push(scanNote(scan, pcForeign));
  if (repaired) notes.push(repaired.note);
  if (popped) notes.push(returner ? `the function that returned is no longer on the unwound stack: ${returner.function ?? "it"} was found from the last call it made, whose return address is still below the stack pointer` : "the function that returned is no longer on the stack, and no call it made was found below the stack pointer");
  const innermost = placed.filter((frame) => frame.level < limit);
  let instruction: string | null = null;
  let faulting: Instruction | null = null;
  let access: Crash["access"] = null;
  // A signal a process sent (kill, sigqueue, tgkill) is not a fault: nothing faulted, and the
  // record's "address" holds the sender's pid and uid.
  // The code of a library from elsewhere is not in the dump (or is another build's): no instruction to read.
  if (!sent && pcForeign === null && ((signal !== null && FAULT_SIGNALS.has(signal)) || (exception !== null && FAULTING_EXCEPTIONS.has(exception.code)))) {
    faulting = (await q.instructions(1))?.instructions[0] ?? null;
    if (faulting) {
      instruction = `${faulting.mnemonic} ${faulting.operands.join(",")}`.trim();
      access = memoryAccess(faulting);
    }
    const fault = toBigInt(siginfo?.address ?? null);
    if (fault !== null && pc !== null && fault === pc) access = "execute";
    // A general-protection fault (SI_KERNEL): the pointer was not even a canonical address; for
    // an indirect call or jump it is the target that was bad.
    if (siginfo?.code === SI_KERNEL && /^(call|jmp)\w*\s+\*/.test(instruction ?? "")) access = "execute";
    if (signal !== 11 && signal !== 7) access = null;
  }
  const verdict = exception ? readException(exception, { stackExhausted: recursion !== null || ranOffStack(stack, exceptionFault(exception), sp), instruction }) : null;
  // The exception record says how memory was touched; the instruction is a guess.
  if (verdict) access = verdict.access;
  const faultAddress = verdict ? verdict.faultAddress : !sent && (signal === 11 || signal === 7) ? (siginfo?.code === SI_KERNEL ? null : (siginfo?.address ?? null)) : null;
  const fault =
    faulting && access
      ? explainFault({ instruction: faulting, access, faultAddress: toBigInt(faultAddress), registers: allRegisters, mapped })
      : null;

  const abortMessage = signal === SIGABRT ? ((await q.abortMessage()) ?? (foreign.length > 0 ? await abortMessageWithoutSymbols(q, options.findAbortMessage, notes) : null)) : null;

  // A hung process is dumped without a signal, or killed from outside (kill -ABRT/-QUIT).
  const externallyStopped = (signal === null && exception === null) || (siginfo !== null && siginfo.code === 0);
  const { cycles: lockCycles, framesOf } = externallyStopped
    ? await findDeadlocks(q, threads, moduleAt, files, isOwnCode, os, notes, options.imports ?? null)
    : { cycles: [], framesOf: new Map<number, PlacedFrame[]>() };
  // A .NET dump (null for any other): SOS's managed side, whose monitor cycles are a hang's too.
  const dotnet = exception?.code === CLR_EXCEPTION || externallyStopped ? await readManaged(q, exception === null ? "hang" : "exception") : null;
  const cycles = [...lockCycles, ...(dotnet?.cycles ?? [])];

  const freedHeader = abortMessage !== null && AMBIGUOUS_FREE_MESSAGE.test(abortMessage) ? await freedBlockHeader(q, innermost) : null;
  if (freedHeader && !freedHeader.plausible) notes.push(freedHeader.note);
  const overran = access === "write" && overranStackTop(stack, faultAddress);
  const underran = access === "write" && recursion === null && underranStack(stack, faultAddress, sp);
  // Either way the writer's own return address was in the path of the write.
  const overwritten = overran || underran;
  if (overwritten) notes.push("the frames above the one that wrote are not shown: the write overwrote their return addresses, so what a debugger unwinds past it is made of the data written");
  const classified = classifyCrash({
    signal,
    siginfo,
    pc,
    pcInCode: pc === null || files.sections.length === 0 ? null : isCodeAddress(files, pc) || pcForeign !== null,
    frames: innermost,
    stackExhausted: recursion !== null || ranOffStack(stack, siginfo, sp),
    abortMessage,
    deadlocked: cycles.length > 0,
    instruction,
    poppedReturn: popped,
    overranStackTop: overwritten,
    freedHeaderOverwritten: freedHeader !== null && !freedHeader.plausible,
  });
  // A crash handler that re-raised the signal it caught: the first signal is read from the frame it interrupted.
  // Only a fault signal: abort() called inside a handler (Rust's stack overflow handler) is read from the stack like any abort.
  const reraised = sent && siginfo && signal !== null && FAULT_SIGNALS.has(signal) && raisedBySelf(siginfo, options.pid ?? null) ? await reraisedSignal(q, innermost, signal, mapped) : null;
  // An exception whose record does not decide it (abort, turned into one) is read from the stack like SIGABRT.
  const kind = reraised?.kind ?? (exception === null ? classified : cycles.length > 0 ? "deadlock" : (verdict?.kind ?? abortKind(innermost, null)));

  // For a deadlock, the crash's thread is the first thread of the first cycle.
  const deadlocked = kind === "deadlock" ? (cycles[0]?.[0]?.thread ?? null) : null;
  const thread = deadlocked === null ? selected : (threads.find((t) => t.id === deadlocked) ?? null);
  const threadFrames = deadlocked === null ? (overwritten ? placed.slice(0, (culpritIndex(placed) ?? 0) + 1) : placed) : (framesOf.get(deadlocked) ?? []);
  const fromFrame = reraised?.interrupted ?? 0;
  const ownFrom = culpritIndex(threadFrames.slice(fromFrame).filter((frame) => frame.level < limit));
  const first = ownFrom === null ? null : ownFrom + fromFrame;
  const culprit = kind === "stack-overflow" && recursion !== null && first !== null ? (recursiveCallIndex(threadFrames, first) ?? first) : first;
  const culpritFrame = culprit === null ? null : (threadFrames[culprit] ?? null);

  // Every thread blocked and no cycle: a hang, even when no wait records an owner.
  const hang = kind === "unknown" && externallyStopped && cycles.length === 0 ? hangSummary(framesOf) : null;
  const sentText = sent && kind === "unknown" && siginfo && signal !== null ? sentMessage(signal, siginfo, options.pid ?? null, culpritFrame) : null;
  if (reraised) notes.push("the signal in the dump's notes is the one the crash handler raised; the one it was handling is not recorded, so it is read from the frame it interrupted (its registers are exact)");
  // A .NET exception: what the runtime died with names its type and message (SOS's `!pe` under cdb).
  const managed = dotnet ? exceptionText(dotnet.exception) : exception?.code === CLR_EXCEPTION ? managedExceptionText(await q.abortMessage()) : null;
  const message =
    managed ??
    verdict?.message ??
    (reraised ? reraisedMessage(reraised, signal, culpritFrame) : null) ??
    (hang
      ? `${hang}${sentText ? `; ${sentText.replace(/; it was not a fault.*$/, "")}` : ""}`
      : sentText
        ? sentText
      : overran && sp !== null
        ? await overrunMessage(q, culpritFrame, toBigInt(faultAddress), sp, fault)
      : underran && sp !== null
        ? underrunMessage(culpritFrame, toBigInt(faultAddress), sp, stack)
      : kind === "stack-buffer-overflow" && signal === 11 && sp !== null
        ? smashedReturnMessage(culpritFrame ?? innermost[0] ?? null, popped ? pc : ((await q.readMemory(`0x${sp.toString(16)}`, 1))[0] ?? null))
        : await crashMessage(q, kind, abortMessage, innermost, culprit, sp, os));
  if (kind === "unknown" && signal === null && exception === null) notes.push("the dump has no signal and no lock cycle was found: a live process dumped while it was running or waiting");

  // Stripped modules of the crash, here in the build that ran: name their packages, whose debug symbols give names and lines.
  const strippedModules = [
    ...(culpritFrame && culpritFrame.file === null && culpritFrame.module ? [culpritFrame.module] : []),
    ...(files.executable && !threadFrames.some((frame) => frame.file !== null && frame.module === files.executable) ? [files.executable] : []),
  ].filter((module, index, all) => all.indexOf(module) === index && sameBuildAsDumped(module, options));
  const { packageOf } = options;
  const owners = packageOf ? await Promise.all(strippedModules.map(async (path) => ({ path, owner: await packageOf(path) }))) : [];
  const packages = owners.flatMap(({ path, owner }) => (owner ? [{ path, ...owner }] : []));
  if (packages.length > 0) {
    const said = packages.map((p) => `${p.path.split("/").at(-1)} is from ${p.name} ${p.version}`).join(", ");
    notes.push(`no debug information here for the code that crashed: ${said}, the builds that ran (the files here have the dump's build ids); install those versions' debug symbols (from Debian's debug archive, or through debuginfod) and analyse again for function names, lines and variables`);
  }

  const crash: Crash = {
    kind,
    signal: exception ? (exceptionName(exception.code) ?? "exception") : signal === null ? null : signalName(signal),
    signalCode: exception ? exception.code : siginfo && signal !== null ? signalCodeName(signal, siginfo.code) : null,
    // The kernel reports 0 for a general-protection fault: that address was never accessed.
    faultAddress: verdict ? verdict.faultAddress : signal !== null && !sent && FAULT_SIGNALS.has(signal) && siginfo?.code !== SI_KERNEL ? (siginfo?.address ?? null) : null,
    access,
    message,
    thread: { id: thread?.id ?? null, lwp: thread?.lwp ?? null, name: thread?.name ?? null },
    culprit: {
      function: culpritFrame?.function ? normalizeFunctionName(culpritFrame.function) : null,
      file: culpritFrame?.file ?? null,
      line: culpritFrame?.line ?? null,
      frame: culpritFrame?.level ?? null,
      module: culpritFrame?.module ?? null,
    },
    // A deadlock is every thread of its cycle, in an order that does not depend on thread numbers.
    signature: kind === "deadlock" && cycles[0] ? ["deadlock", ...cycles[0].map((edge) => edge.function ?? "??").sort()].join(" | ") : crashSignature(kind, threadFrames, culprit),
    deadlock: kind === "deadlock" ? { cycle: cycles.flat() } : null,
  };

  return withManaged<TriageResult>({
    crash,
    os: os ?? null,
    frames: culprit === null ? threadFrames : threadFrames.slice(culprit),
    hiddenFrames: culprit ?? 0,
    stackDepth: deadlocked === null && !overwritten && !returner && !scan ? stackDepth : threadFrames.length,
    recursion,
    registers,
    instruction,
    fault,
    faultPlace: await namedPlace(q, crash.faultAddress === null ? null : toBigInt(crash.faultAddress), files, sp),
    threads: { count: threads.length, groups: groupThreads(threads) },
    executable: files.executable,
    modules: libraries,
    commands,
    notes,
    foreignLibraries: foreign.map((lib) => ({ path: lib.path, status: lib.status, found: lib.found })),
    packages,
    smashed: kind !== "stack-buffer-overflow" || signal !== 11 ? null : overran ? "ran-off-top" : underran ? "ran-off-bottom" : popped ? "returned" : "faulting-ret",
    faultIn: MEMORY_FAULTS.has(kind) && culprit !== null ? libraryFault(threadFrames.slice(0, culprit), allRegisters, toBigInt(crash.faultAddress), os, pcForeign?.path ?? null) : null,
  }, dotnet);
}

/**
 * Whether the debugger lost the thread's unwind at its innermost frame: code it knows nothing of
 * (no symbol, no line) in a module, typically a system DLL a minidump's machine had and this one
 * lacks. What it shows past such a frame is a guess.
 */
function unwindLost(frames: PlacedFrame[], files: TargetFiles, foreign: ForeignLibrary[] = []): boolean {
  const top = frames[0];
  const pc = toBigInt(top?.address ?? null);
  if (!top || pc === null || top.function !== null || top.file !== null) return false;
  if (foreignAt(foreign, pc) !== null) return true;
  return files.sections.some((section) => section.loaded === false && holds(section, pc));
}

/** Code of the program's own modules (not the system's or a runtime's). */
function ownCode(files: TargetFiles): (address: bigint) => boolean {
  const sections = files.sections.filter(
    (section) => section.source !== "core" && /^\.text$|^\.init$|^\.fini$/.test(section.name) && (section.source === "exec" || !isRuntimeModule(section.source)),
  );
  return (address) => sections.some((section) => holds(section, address));
}

/**
 * The thread's frames from its stack memory: its innermost frame as the debugger has it, then each
 * word above the stack pointer that points into the program's own code right after a call, named
 * by the debugger's symbols. Null when the scan finds none.
 */
async function scanStack(
  q: Inspector,
  frames: PlacedFrame[],
  sp: bigint | null,
  isOwnCode: (address: bigint) => boolean,
  moduleAt: ModuleLocator,
  imports: ImportLookup | null,
): Promise<PlacedFrame[] | null> {
  const top = frames[0];
  if (!top || sp === null) return null;
  // In pieces: the read ends where the stack does.
  const words: bigint[] = [];
  while (words.length < SCAN_WORDS) {
    const piece = await q.readMemory(hex(sp + BigInt(words.length * 8)), SCAN_PIECE_WORDS);
    words.push(...piece);
    if (piece.length < SCAN_PIECE_WORDS) break;
  }
  const calls: ScannedCall[] = [];
  for (const candidate of returnCandidates(sp, words, isOwnCode).slice(0, MAX_SCAN_CANDIDATES)) {
    // The 16 bytes before the return address hold the call that returns there, if it is one.
    const code = bytesOf(await q.readMemory(hex(candidate.address - 16n), 2));
    if (code.length < 16 || !endsWithCall(code)) continue;
    calls.push({ ...candidate, call: await classifyCall(q, callTarget(code, candidate.address), isOwnCode) });
  }
  const symbols = new Map<bigint, SymbolAt | null>();
  const symbolOf = async (address: bigint) => {
    if (!symbols.has(address)) symbols.set(address, await q.symbolAt(hex(address - 1n)));
    return symbols.get(address) ?? null;
  };
  // The innermost caller called out of the program, into the module the thread stopped in. Stale
  // return addresses of calls that have returned lie around on the stack too: of the chains that
  // start with a call out, the longest whose every caller called the function below it wins.
  let best: ScannedCall[] = [];
  for (const start of calls.filter((c) => c.call.kind !== "direct" || !isOwnCode(c.call.target)).slice(0, MAX_SCAN_STARTS)) {
    const chain = [start];
    for (const next of calls) {
      if (chain.length === MAX_SCANNED_FRAMES) break;
      const callee = chain[chain.length - 1];
      if (!callee || next.slot <= callee.slot) continue;
      const symbol = await symbolOf(callee.address);
      const calleeStart = symbol ? callee.address - 1n - BigInt(symbol.offset) : null;
      if (callsInto(next.call, calleeStart)) chain.push(next);
    }
    if (chain.length > best.length) best = chain;
  }
  if (best.length === 0) return null;
  const found: PlacedFrame[] = [];
  // The innermost caller called out through an import: its slot names the function it called
  // (`__imp__assert`), another module's code the dump does not unwind.
  const first = best[0]?.call;
  const imported = first?.kind === "import" && first.slot !== null ? (imports?.(first.slot) ?? null) : first?.kind === "import" && first.target !== undefined ? await pltImport(q, first.target) : null;
  if (imported) {
    found.push({ level: 1, address: null, function: imported.name, args: "", file: null, line: null, from: imported.dll, found: "scan", module: imported.dll });
  }
  for (const call of best) {
    // The call itself, one byte back, is on the caller's line.
    const symbol = await symbolOf(call.address);
    const line = symbol && !symbol.line ? await q.sourceLine(hex(call.address - 1n)) : null;
    found.push({
      level: found.length + 1,
      address: hex(call.address),
      function: symbol?.symbol ?? null,
      args: "",
      file: symbol?.file ?? line?.file ?? null,
      line: symbol?.line ?? line?.line ?? null,
      from: null,
      found: "scan",
      module: moduleAt(call.address),
    });
  }
  return [{ ...top, level: 0 }, ...found];
}

/** The function an ELF program called through its PLT (`strlen@plt`): the library is not known from the stub. */
async function pltImport(q: Inspector, stub: bigint): Promise<{ dll: string | null; name: string } | null> {
  const name = /^(.+)@plt$/.exec((await q.symbolAt(hex(stub)))?.symbol ?? "")?.[1];
  return name ? { dll: null, name } : null;
}

interface ScannedCall extends ReturnCandidate {
  call: CallKind;
}

/** What a call instruction calls: a known function, a function in another module (an import), or a pointer it held. */
type CallKind = { kind: "direct"; target: bigint } | { kind: "import"; slot: bigint | null; target?: bigint } | { kind: "indirect" };

/** Whether a call could have called the function that starts at `start` (in the program's own code). */
function callsInto(call: CallKind, start: bigint | null): boolean {
  if (call.kind === "indirect") return true;
  if (call.kind === "import") return false;
  return start === null || call.target === start;
}

/** A call's target: its direct address, or the pointer in its slot, through an import thunk's jump. */
async function classifyCall(q: Inspector, target: CallTarget, isOwnCode: (address: bigint) => boolean): Promise<CallKind> {
  if (target === null) return { kind: "indirect" };
  const slot = "slot" in target ? target.slot : null;
  let address: bigint | null = "direct" in target ? target.direct : ((await q.readMemory(hex(target.slot), 1))[0] ?? null);
  if (address === null || !isOwnCode(address)) return { kind: "import", slot, ...(address !== null ? { target: address } : {}) };
  const thunk = thunkSlot(bytesOf(await q.readMemory(hex(address), 1)), address);
  if (thunk !== null) {
    // An import thunk (`jmp *__imp_f`): the call goes to another module.
    address = (await q.readMemory(hex(thunk), 1))[0] ?? null;
    if (address === null || !isOwnCode(address)) return { kind: "import", slot: thunk };
  }
  return { kind: "direct", target: address };
}

function hex(value: bigint): string {
  return `0x${value.toString(16)}`;
}

/**
 * Checks the frames just past the culprit: each return address must follow a call. At the first
 * that does not, the debugger's unwind has gone wrong; the stack scan's frames replace it from the
 * culprit on when they include the culprit's own return address, else the frames stop there.
 */
async function repairUnwind(
  q: Inspector,
  frames: PlacedFrame[],
  sp: bigint | null,
  isOwnCode: (address: bigint) => boolean,
  moduleAt: ModuleLocator,
  imports: ImportLookup | null,
): Promise<{ frames: PlacedFrame[]; note: string } | null> {
  const culprit = culpritIndex(frames);
  if (culprit === null) return null;
  let broken: number | null = null;
  for (let i = culprit + 1; i < Math.min(frames.length, culprit + UNWIND_CHECKS + 1); i++) {
    const address = toBigInt(frames[i]?.address ?? null);
    if (address === null || frames[i - 1]?.function === "<signal handler called>") continue;
    const code = bytesOf(await q.readMemory(hex(address - 16n), 2));
    if (code.length === 16 && !endsWithCall(code)) {
      broken = i;
      break;
    }
  }
  if (broken === null) return null;
  const culpritAddress = frames[culprit]?.address ?? null;
  const scanned = await scanStack(q, frames, sp, isOwnCode, moduleAt, imports);
  const from = scanned?.findIndex((frame) => frame.address !== null && frame.address === culpritAddress) ?? -1;
  if (scanned && from > 0) {
    const rest = scanned.slice(from + 1).map((frame, i) => ({ ...frame, level: culprit + 1 + i }));
    return { frames: [...frames.slice(0, culprit + 1), ...rest], note: `the debugger's unwind went astray past frame ${culprit} (frame ${broken}'s return address follows no call): the frames after it were found by scanning the stack` };
  }
  return { frames: frames.slice(0, broken), note: `the debugger's unwind went astray at frame ${broken} (its return address follows no call): the stack is shown up to it` };
}

function scanNote(frames: PlacedFrame[], foreign: ForeignLibrary | null): string {
  const module = foreign?.path ?? frames[0]?.module ?? null;
  return `the debugger could not unwind past frame 0 (${module?.split(/[\\/]/).at(-1) ?? "a system module"}, whose unwind information this machine lacks): frames 1–${frames.length - 1} were found by scanning the stack for return addresses into the program's code; ${foreign ? "--solib-search-path DIR with that machine's libraries" : "--modules-path DIR with the dump's system modules"} gives the exact stack`;
}

/**
 * glibc's abort message found in the dump's memory without libc's symbols, read back through the
 * debugger so that it is evidence like any other.
 */
async function abortMessageWithoutSymbols(q: Inspector, find: (() => Address | null) | undefined, notes: string[]): Promise<string | null> {
  const address = find?.() ?? null;
  if (address === null) return null;
  const text = (await q.readString(address))?.replace(/\n$/, "") ?? null;
  if (text) notes.push(`glibc's abort message was found in the process's memory at ${address}, without libc's symbols`);
  return text || null;
}

/** Memory the process had: the debugger's sections and segments, and the regions the dump file records. */
function mappedRanges(files: TargetFiles, regions: MemoryRegion[]): Range[] {
  return [
    ...files.sections.map((section) => ({ start: BigInt(section.start), end: BigInt(section.end) })),
    ...regions.filter((region) => region.permissions === null || !region.permissions.startsWith("---")).map((region) => ({ start: BigInt(region.start), end: BigInt(region.end) })),
  ];
}

/** An access violation's address as the signal record the stack checks read. */
function exceptionFault(exception: ExceptionStop): SignalRecord | null {
  const address = exception.code === EXCEPTION_ACCESS_VIOLATION ? exception.parameters[1] : undefined;
  return address === undefined ? null : { signo: 11, errno: 0, code: 1, address, pid: null };
}

/**
 * What a signal a process sent says: who sent it, or that the process raised it at itself (tgkill,
 * as raise() and pthread_kill() do) and where; in both cases that nothing faulted.
 */
export function sentMessage(signal: number, siginfo: SignalRecord, processPid: number | null, at: PlacedFrame | null): string {
  const name = signalName(signal);
  if (raisedBySelf(siginfo, processPid)) {
    const where = at?.function ? ` in ${normalizeFunctionName(at.function)}${at.file ? ` (${at.file.split("/").pop()}:${at.line ?? "?"})` : ""}` : "";
    const how = siginfo.code === SI_TKILL ? "tgkill, as raise() and pthread_kill() do" : siginfo.code === SI_QUEUE ? "sigqueue" : "kill() with its own pid";
    return `the process raised ${name} at itself${where} (${how}); it was not a fault`;
  }
  const how = siginfo.code === SI_QUEUE ? "sigqueue" : siginfo.code === SI_TKILL ? "tgkill" : "kill";
  const sender = siginfo.pid !== null ? `by pid ${siginfo.pid}${siginfo.uid !== null && siginfo.uid !== undefined ? ` (uid ${siginfo.uid})` : ""}` : "by another process";
  return `the process was sent ${name} ${sender} with ${how}; it was not a fault: the threads were where the signal found them`;
}

/**
 * A `ret` that faulted: the word it popped, and what it looks like. Text bytes ('AAAAAAAA') are
 * input that ran past a buffer on the stack, and a senior engineer leads with that.
 */
export function smashedReturnMessage(frame: PlacedFrame | null, popped: bigint | null): string {
  const fn = frame?.function ? normalizeFunctionName(frame.function) : "the function";
  if (popped === null) return `${fn} returned through a return address that is no address: it was overwritten on the stack`;
  const word = `0x${popped.toString(16).padStart(16, "0")}`;
  const text = textBytes(popped);
  const end = text ? null : stringEndBytes(popped);
  const what = text
    ? ` with the bytes "${text}", text written past a buffer on the stack (input, not a pointer)`
    : end
      ? ` with the bytes "${end}" and the NUL that ends a string: a string copied past a buffer on the stack (input, not a pointer)`
      : "";
  return `${fn} returned to ${word}, which is no address: its return address on the stack was overwritten${what}`;
}

/** The file's record of a signal in the shape the debugger's is read into. */
function signalRecordOf(stop: SignalStop): SignalRecord {
  return { signo: stop.signo, errno: stop.errno, code: stop.code, address: stop.address, pid: stop.senderPid, uid: stop.senderUid };
}

/**
 * Frames on a recursing stack: the fetched ones, plus the rest of the stack segment divided by
 * the bytes one turn of the cycle takes (the distance between two of its frames' CFAs).
 */
async function estimateDepth(q: Inspector, files: TargetFiles, frames: Frame[], cycle: Cycle): Promise<number | null> {
  const deepest = frames.at(-1)?.level;
  if (deepest === undefined || deepest - cycle.functions.length < cycle.skip) return null;
  const cfa = async (level: number) => toBigInt(await q.frameCfa(level));
  const inner = await cfa(deepest - cycle.functions.length);
  const outer = await cfa(deepest);
  if (inner === null || outer === null || outer <= inner) return null;
  const stack = coreSegmentAt(files, outer);
  if (stack === null) return null;
  const turns = (BigInt(stack.end) - outer) / (outer - inner);
  return deepest + 1 + Number(turns) * cycle.functions.length;
}

/**
 * The header of the block a failed free was given, read from the culprit's line (`free(s->log);`):
 * the expression freed, evaluated in the culprit's frame, and the two words before it. Null when the
 * line or the value cannot be read (no debug info, no source).
 */
async function freedBlockHeader(q: Inspector, frames: PlacedFrame[]): Promise<{ plausible: boolean; note: string } | null> {
  const index = culpritIndex(frames);
  const frame = index === null ? null : frames[index];
  if (!frame?.file || frame.line === null) return null;
  const code = (await q.source(frame.file, frame.line)).find((l) => l.line === frame.line)?.text ?? "";
  const freed = freedExpression(code);
  if (!freed) return null;
  const words = await q.readMemory(chunkHeaderAddress(freed), CHUNK_HEADER_WORDS, { frame: frame.level });
  if (words.length < CHUNK_HEADER_WORDS) return null;
  const size = words[1] ?? 0n;
  const text = textBytes(size);
  return {
    plausible: plausibleChunkSize(words),
    note: `glibc says "double free or corruption", but the header of the block \`${freed}\` points to holds size ${hex(size)}${text ? ` (the bytes "${text}")` : ""}, no size malloc writes: the header was overwritten, by a write past the end of the block before it, and the free found it corrupt`,
  };
}

/** Whether a sent signal came from the dumped process itself: its own pid, or tgkill with no sender recorded. */
function raisedBySelf(siginfo: SignalRecord, processPid: number | null): boolean {
  return siginfo.pid !== null && processPid !== null ? siginfo.pid === processPid : siginfo.code === SI_TKILL && siginfo.pid === null;
}

interface Reraised {
  kind: CrashKind;
  /** Index of the frame the first signal interrupted (just under `<signal handler called>`). */
  interrupted: number;
  /** The program's function that re-raised it, from inside its signal handler. */
  handler: string | null;
  explanation: FaultExplanation | null;
  instruction: string | null;
}

/**
 * A signal a process raised at itself from inside a signal handler (Redis, Chromium and many servers
 * log a crash report and re-raise the fatal signal): the kernel recorded the re-raise, not the
 * fault. The fault is in the frame under `<signal handler called>`: its pc is the faulting
 * instruction itself and its registers, unwound from the signal frame, are exact; the kind is read
 * from them as for a fault.
 */
async function reraisedSignal(q: Inspector, frames: PlacedFrame[], signal: number, mapped: Range[]): Promise<Reraised | null> {
  const trampoline = frames.findIndex((frame) => frame.function === "<signal handler called>");
  const interrupted = trampoline < 0 ? null : frames[trampoline + 1];
  if (!interrupted?.address) return null;
  const handlerFrame = frames.slice(0, trampoline).find((frame) => !isRuntimeFrame(frame) && frame.function !== null) ?? null;
  const handler = handlerFrame?.function ? normalizeFunctionName(handlerFrame.function) : null;
  const base = { interrupted: trampoline + 1, handler };
  const code = (await q.instructions(1, interrupted.address))?.instructions[0] ?? null;
  const instruction = code ? `${code.mnemonic} ${code.operands.join(",")}`.trim() : null;
  if (signal === 4) return { ...base, kind: "illegal-instruction", explanation: null, instruction };
  if (signal === 8) return { ...base, kind: /^i?div/.test(code?.mnemonic ?? "") ? "division-by-zero" : "unknown", explanation: null, instruction };
  const access = code ? memoryAccess(code) : null;
  if (!code || !access || (signal !== 11 && signal !== 7)) return { ...base, kind: signal === 7 ? "bus-error" : "invalid-memory-access", explanation: null, instruction };
  const registers = await q.registers({ frame: interrupted.level });
  const explanation = explainFault({ instruction: code, access, faultAddress: null, registers, mapped });
  const address = operandAddress(explanation);
  const kind: CrashKind = signal === 7 ? "bus-error" : address !== null && address < NULL_PAGE_LIMIT ? "null-dereference" : "invalid-memory-access";
  return { ...base, kind, explanation, instruction };
}

/** The address a memory operand names: base + index × scale + displacement, from the registers' values. */
function operandAddress(explanation: FaultExplanation): bigint | null {
  const base = toBigInt(explanation.base?.value ?? null);
  if (base === null) return null;
  const index = toBigInt(explanation.index?.value ?? null) ?? 0n;
  const address = base + index * BigInt(explanation.index?.scale ?? 1) + BigInt(explanation.displacement);
  return BigInt.asUintN(64, address);
}

function reraisedMessage(reraised: Reraised, signal: number | null, frame: PlacedFrame | null): string {
  const name = signal === null ? "the signal" : signalName(signal);
  const at = frame?.function ? normalizeFunctionName(frame.function) : frame?.module ? `code in ${frame.module.split("/").at(-1)}` : "the interrupted frame";
  const what = reraised.explanation ? `: ${reraised.explanation.text} (${reraised.instruction})` : reraised.instruction ? ` at \`${reraised.instruction}\`` : "";
  return `${reraised.handler ?? "the program's signal handler"} re-raised ${name} with kill() from inside its signal handler, as a crash handler does; the ${name} it was handling arrived in ${at}${what}`;
}

/** Whether the file here is the build the dump's process ran: the same build id as the dump's copy of its first page. */
function sameBuildAsDumped(path: string, options: TriageOptions): boolean {
  const dumped = options.modules?.find((module) => module.path === path)?.buildId ?? null;
  return dumped !== null && options.buildIdOf !== undefined && options.buildIdOf(path) === dumped;
}

/**
 * The library function the thread faulted in, above the culprit: the innermost named frame of a
 * library (`__strlen_evex` is strlen), or the function the culprit called through its PLT when the
 * library's frames are unknown. Its first argument register is named when it holds the faulting
 * address (or, for a NULL-page fault, a pointer into the NULL page): the caller passed it.
 */
function libraryFault(above: PlacedFrame[], registers: Register[], fault: bigint | null, os: Platform["os"] | undefined, foreignModule: string | null): TriageResult["faultIn"] {
  const frame = above.find((f) => f.function !== null && f.function !== "<signal handler called>");
  if (!frame?.function) return null;
  const name = libraryFunctionName(frame.function);
  const register = argumentRegisters(os)[0] ?? "rdi";
  const value = toBigInt(registers.find((r) => r.name === register)?.value ?? null);
  const passed = value !== null && fault !== null && (value === fault || (fault < NULL_PAGE_LIMIT && value < NULL_PAGE_LIMIT));
  return { function: name, module: frame.module ?? frame.from ?? foreignModule, argument: passed ? { register: `%${register}`, value: hex(value) } : null };
}

/** glibc's internal and CPU-specific names as the program called them: `__strlen_evex` → strlen, `__GI___libc_free` → free. */
export function libraryFunctionName(name: string): string {
  const plain = normalizeFunctionName(name).replace(/^_+(libc_)?/, "");
  return plain.replace(/_(sse2|ssse3|sse4_[12]|avx2?|avx512\w*|evex\w*|erms|unaligned\w*)(_\w+)?$/, "");
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

function underrunMessage(frame: PlacedFrame | null, fault: bigint | null, sp: bigint, stack: Range | null): string {
  const fn = frame?.function ? normalizeFunctionName(frame.function) : "the function";
  const below = fault === null ? "" : ` at ${hex(fault)}, ${thousands(Number(sp - fault))} bytes below the stack pointer`;
  const room = stack === null ? "far above it" : `${thousands(Number(sp - stack.start))} bytes above the stack's end`;
  return `${fn} wrote downwards past the start of a buffer on the stack and ran off the bottom of the stack${below}: not a stack overflow — the stack pointer is ${room} and nothing recursed — but a write below a buffer's start (an index or length gone negative or too large, a copy running backwards)`;
}

/** What a write that ran off the stack's top did, from where the buffer started (the access's base on the stack). */
async function overrunMessage(q: Inspector, frame: PlacedFrame | null, fault: bigint | null, sp: bigint, explained: FaultExplanation | null): Promise<string> {
  const fn = frame?.function ? normalizeFunctionName(frame.function) : "the function";
  const base = toBigInt(explained?.base?.value ?? null);
  const start = base !== null && base >= sp && fault !== null && base < fault ? base : null;
  const span = start !== null && fault !== null ? ` ${thousands(Number(fault - start))} bytes past the start of a buffer at ${hex(start)} (the stack pointer${start === sp ? "" : ` + ${thousands(Number(start - sp))}`}), and` : "";
  // The word at the top of the stack held the environment's pointers: now what was copied.
  const last = fault === null ? null : ((await q.readMemory(hex(fault - 8n), 1))[0] ?? null);
  const text = last === null ? null : textBytes(last);
  return `${fn} wrote${span} ran off the top of the stack at ${fault === null ? "its end" : hex(fault)}: every frame above ${fn} was overwritten${text ? ` with the bytes "${text}" (input, not pointers)` : ""}; a copy into a buffer on the stack with no bound`;
}

/**
 * The function whose `ret` popped an overwritten return address: its frame was just below the
 * stack pointer, and the last call it made left a return address into it there. The nearest such
 * word (right after a call instruction, in the program's own code) names it; the frame is placed
 * at its `ret`, where it returned, as a stack protector's report would be.
 */
async function returningFrame(q: Inspector, sp: bigint, isOwnCode: (address: bigint) => boolean, moduleAt: ModuleLocator): Promise<PlacedFrame | null> {
  const below = sp - BigInt(STALE_RETURN_WORDS * 8);
  const words = await q.readMemory(hex(below), STALE_RETURN_WORDS);
  for (let i = words.length - 1; i >= 0; i--) {
    const word = words[i];
    if (word === undefined || !isOwnCode(word)) continue;
    const code = bytesOf(await q.readMemory(hex(word - 16n), 2));
    if (code.length < 16 || !endsWithCall(code)) continue;
    const caller = await q.symbolAt(hex(word - 1n));
    if (!caller?.symbol) continue;
    const body = await q.disassemble(hex(word - 1n));
    const ret = body?.instructions.find((instruction) => /^ret[qlw]?$/.test(instruction.mnemonic) && toBigInt(instruction.address) !== null && (toBigInt(instruction.address) ?? 0n) > word - 1n);
    const at = ret ? await q.sourceLine(ret.address) : null;
    return {
      level: 1,
      address: ret?.address ?? hex(word),
      function: caller.symbol,
      args: "",
      file: at?.file ?? caller.file ?? null,
      line: at?.line ?? null,
      from: null,
      found: "scan",
      module: moduleAt(word),
    };
  }
  return null;
}

/**
 * The memory that holds the stack pointer: the core segment the debugger lists, else the region the
 * dump file records (LLDB lists no core segments).
 */
function stackOf(files: TargetFiles, regions: MemoryRegion[], sp: bigint | null): Range | null {
  if (sp === null) return null;
  const segment = coreSegmentAt(files, sp);
  if (segment) return { start: BigInt(segment.start), end: BigInt(segment.end) };
  const region = regions.find((r) => holds(r, sp));
  return region ? { start: BigInt(region.start), end: BigInt(region.end) } : null;
}

/** A fault at the lower end of the crashing thread's stack: the stack ran into its guard. */
function ranOffStack(stack: Range | null, siginfo: SignalRecord | null, sp: bigint | null): boolean {
  const fault = toBigInt(siginfo?.address ?? null);
  if (siginfo?.signo !== 11 || fault === null || sp === null || fault < NULL_PAGE_LIMIT) return false;
  if (stack === null) return fault + STACK_NEAR_SP >= sp && fault <= sp + STACK_NEAR_SP;
  const low = stack.start;
  // The stack ran out only if the stack pointer got there too: a fault below the stack from far above is a write (underranStack).
  return fault < low && low - fault <= STACK_GUARD_REACH && sp - low <= STACK_GUARD_REACH;
}

async function crashMessage(
  q: Inspector,
  kind: CrashKind,
  abortMessage: string | null,
  frames: PlacedFrame[],
  culprit: number | null,
  sp: bigint | null,
  os: Platform["os"] | undefined,
): Promise<string | null> {
  switch (kind) {
    case "uncaught-exception": {
      const type = await thrownType(q, frames, os);
      return type === null ? "terminate called after throwing an exception" : `terminate called after throwing an instance of '${type}'`;
    }
    case "pure-virtual-call":
      // What libstdc++'s __cxa_pure_virtual prints before it terminates.
      return "pure virtual method called";
    case "panic":
      return panicMessage(q, frames, culprit, sp);
    case "deadlock":
      return null;
    case "assertion-failure":
      return abortMessage ?? windowsAssertion(frames);
    case "stack-overflow":
      return frames.some((frame) => RUST_STACK_OVERFLOW_HANDLER.test(normalizeFunctionName(frame.function ?? "")))
        ? "the thread ran into its stack's guard page and Rust's handler aborted the process (\"has overflowed its stack\")"
        : abortMessage;
    default:
      return abortMessage;
  }
}

/** The Windows C runtime's assertion, from its `_wassert(str=L"…", file=L"…", line=N)` frame: its own message. */
function windowsAssertion(frames: PlacedFrame[]): string | null {
  const frame = frames.find((f) => /^_w?assert$/.test(normalizeFunctionName(f.function ?? "")) && /\bstr=L?"/.test(f.args));
  if (!frame) return null;
  const text = (name: string) => {
    const quoted = new RegExp(`\\b${name}=L?("(?:[^"\\\\]|\\\\.)*")`).exec(frame.args)?.[1];
    return quoted ? unquoteCString(quoted) : null;
  };
  const condition = text("str");
  if (!condition) return null;
  const line = /\bline=(\d+)/.exec(frame.args)?.[1];
  const file = text("file");
  return `Assertion failed: ${condition}${file ? `, file ${file}` : ""}${line ? `, line ${line}` : ""}`;
}

/**
 * The thrown type: libstdc++ has no debug info, so __cxa_throw's `tinfo` argument (its second) is
 * read from the code of its caller, which loads the type_info's address just before the call.
 */
async function thrownType(q: Inspector, frames: PlacedFrame[], os: Platform["os"] | undefined): Promise<string | null> {
  const throwing = frames.findIndex((frame) => /^(__cxa_throw|__cxa_rethrow)$/.test(normalizeFunctionName(frame.function ?? "")));
  const caller = throwing < 0 ? null : frames[throwing + 1];
  if (!caller?.address) return null;
  // libstdc++'s own throwers (std::__throw_out_of_range_fmt, ...) sit in cold sections with no
  // symbol, where a function cannot be disassembled: disassemble the bytes before the call instead.
  const code = caller.function ? await q.disassemble(caller.address) : await q.disassemble(caller.address, 64);
  const tinfo = callArgumentAddress(code?.instructions ?? [], caller.address, argumentRegisters(os)[1] ?? "rsi");
  if (!tinfo) return null;
  // gdb names the symbol demangled; LLDB leaves a versioned one (`_ZTISt13runtime_error@GLIBCXX_3.4`) mangled.
  const typeinfo = (symbol: string | null | undefined) => /^typeinfo for (.*?)(?:@\S+)?$/.exec(demangleTypeinfo(symbol ?? "") ?? symbol ?? "")?.[1] ?? null;
  const named = typeinfo(tinfo.symbol);
  if (named) return named;
  // The address is the type_info itself (lea), or a GOT slot holding it (mov from memory).
  return typeinfo((await q.symbolAt(tinfo.address))?.symbol) ?? typeinfo((await q.symbolAt(tinfo.address, true))?.symbol);
}

/** The panic payload, from the stack between the innermost frame and the panicking frame. */
async function panicMessage(q: Inspector, frames: PlacedFrame[], culprit: number | null, sp: bigint | null): Promise<string | null> {
  if (culprit === null || sp === null) return null;
  const level = frames[culprit]?.level ?? culprit;
  const cfa = await q.frameCfa(level);
  if (!cfa) return null;
  const count = Math.min(MAX_PANIC_SCAN_WORDS, Number((BigInt(cfa) - sp) / 8n));
  if (count <= 0) return null;
  const words = await q.readMemory(normalizeAddress(`0x${sp.toString(16)}`), count);
  const candidates = panicMessageCandidates(words, { low: sp, high: BigInt(cfa) + STACK_NEAR_SP });
  for (const candidate of candidates.slice(0, MAX_PANIC_CANDIDATES)) {
    const text = await q.readString(`0x${candidate.address.toString(16)}`);
    const message = acceptPanicMessage(text, candidate.length);
    if (message !== null) return message;
  }
  return null;
}

/**
 * Threads blocked in a mutex lock, each mutex's owner read from the mutex itself, and the
 * cycles of who waits for whom.
 */
async function findDeadlocks(
  q: Inspector,
  threads: ThreadSummary[],
  moduleAt: ModuleLocator,
  files: TargetFiles,
  isOwnCode: (address: bigint) => boolean,
  os: Platform["os"] | undefined,
  notes: string[],
  imports: ImportLookup | null,
): Promise<{ cycles: DeadlockEdge[][]; framesOf: Map<number, PlacedFrame[]> }> {
  const traces = await q.threadBacktraces(ALL_STACKS.threads, ALL_STACKS.limit);
  const framesOf = new Map(traces.map((trace) => [trace.thread, placeFrames(trace.frames, moduleAt, null)]));
  const threadOfLwp = new Map(threads.flatMap((thread) => (thread.lwp === null ? [] : [[thread.lwp, thread.id] as const])));
  const waits: LockWait[] = [];
  const foundOnStack: number[] = [];
  for (const [thread, frames] of framesOf) {
    const wait = lockWait(thread, frames);
    if (wait) {
      waits.push(wait);
      continue;
    }
    // A thread stopped in a system module the debugger cannot unwind: its frames from its stack
    // memory, and on Windows the critical section it waits for from its stack too.
    if (!unwindLost(frames, files)) continue;
    const sp = toBigInt(await q.register("sp", { thread }));
    const scanned = await scanStack(q, frames, sp, isOwnCode, moduleAt, imports);
    if (!scanned) continue;
    framesOf.set(thread, scanned);
    const own = culpritIndex(scanned);
    const lwp = threads.find((t) => t.id === thread)?.lwp ?? null;
    const lock = os === "windows" && sp !== null && own !== null ? await heldCriticalSectionOnStack(q, sp, lwp, threadOfLwp, isOwnCode) : null;
    if (lock) {
      waits.push({ thread, lock, waiter: scanned[own ?? 0] ?? null });
      foundOnStack.push(thread);
    }
  }
  if (foundOnStack.length > 0) {
    notes.push(`without the system modules no frame names the lock a thread waits for: the critical sections thread${foundOnStack.length > 1 ? "s" : ""} ${foundOnStack.join(", ")} wait${foundOnStack.length > 1 ? "" : "s"} on were found on ${foundOnStack.length > 1 ? "their stacks" : "its stack"}, held by another thread`);
  }
  if (waits.length < 2) return { cycles: [], framesOf };
  // Without glibc's debug info the lock frames show no arguments; a thread blocked in the futex
  // syscall still has the futex word, which is the mutex's first field, in its first argument register.
  for (const wait of waits.filter((w) => w.lock === null)) {
    const value = toBigInt(await q.register(argumentRegisters(os)[0] ?? "rdi", { thread: wait.thread }));
    if (value !== null && value >= NULL_PAGE_LIMIT) wait.lock = `0x${value.toString(16)}`;
  }
  const ownerOf = new Map<string, number>();
  for (const lock of new Set(waits.map((wait) => wait.lock).filter((lock): lock is string => lock !== null))) {
    const owner = os === "windows" ? await criticalSectionOwner(q, lock) : await q.evaluate(mutexOwnerExpression(lock));
    const thread = owner !== null && /^\d+$/.test(owner) ? threadOfLwp.get(Number(owner)) : undefined;
    if (thread !== undefined) ownerOf.set(lock, thread);
  }
  const cycles = deadlockCycles(waits, ownerOf);
  for (const edge of cycles.flat()) edge.lockName = await lockName(q, edge, framesOf.get(edge.thread) ?? []);
  return { cycles, framesOf };
}

/**
 * Where a fault address falls, and in a file's data the global it is in, by the debugger's symbol
 * (`audit_log+8 in the program .bss`): names over addresses.
 */
async function namedPlace(q: Inspector, address: bigint | null, files: TargetFiles, sp: bigint | null): Promise<FaultPlace | null> {
  if (address === null) return null;
  const place = placeFault(files, address, sp);
  if (!place.within || !/ \.(bss|data|rodata|tbss|tdata)/.test(place.within.label)) return place;
  const global = globalName(await q.symbolAt(place.address));
  return global ? { ...place, within: { ...place.within, label: `${global} in ${place.within.label}` } } : place;
}

/**
 * The name of the lock a thread waits for, where the debugger knows one: a global's symbol, else
 * the expression its own locking call passed, kept only when it evaluates, in that frame, to the
 * lock's address.
 */
async function lockName(q: Inspector, edge: DeadlockEdge, frames: PlacedFrame[]): Promise<string | null> {
  if (edge.lock === null) return null;
  const global = globalName(await q.symbolAt(edge.lock));
  if (global) return global;
  const waiter = culpritIndex(frames);
  const frame = waiter === null ? null : frames[waiter];
  if (!frame?.file || frame.line === null) return null;
  const expression = lockExpressionIn((await q.source(frame.file, frame.line)).find((l) => l.line === frame.line)?.text ?? "");
  if (!expression) return null;
  // Printed as a typed pointer: `(pthread_mutex_t *) 0x7ffd2e8b9bd0`.
  const printed = (await q.evaluate(`&${expression}`, { thread: edge.thread, frame: frame.level })) ?? "";
  const address = toBigInt(/0x[0-9a-f]+(?![\s\S]*0x[0-9a-f])/i.exec(printed)?.[0] ?? null);
  return address !== null && address === BigInt(edge.lock) ? expression : null;
}

/**
 * The critical section a thread waits for, found on its stack where no frame names it: the nearest
 * word above its stack pointer that points at a CRITICAL_SECTION held by another thread of the dump
 * (RecursionCount at least 1, OwningThread one of the dump's thread ids). Windows' wait functions
 * keep the section they wait on in their frames, below the program's own.
 */
async function heldCriticalSectionOnStack(
  q: Inspector,
  sp: bigint,
  self: number | null,
  threadOfLwp: Map<number, number>,
  isOwnCode: (address: bigint) => boolean,
): Promise<string | null> {
  const words = await q.readMemory(`0x${sp.toString(16)}`, CRITICAL_SECTION_SCAN_WORDS);
  const pointers = [...new Set(words.filter((word) => word >= NULL_PAGE_LIMIT && word % 8n === 0n && !isOwnCode(word)))].slice(0, MAX_CRITICAL_SECTION_CANDIDATES);
  for (const pointer of pointers) {
    const fields = await q.readMemory(`0x${pointer.toString(16)}`, 3);
    const section = criticalSectionOf(fields);
    if (section && section.owner !== self && threadOfLwp.has(section.owner)) return `0x${pointer.toString(16)}`;
  }
  return null;
}

/**
 * A critical section's owner, read as a word of memory: LLDB cannot evaluate an expression on a
 * minidump (it has no process to hold the result in), but reads its memory.
 */
async function criticalSectionOwner(q: Inspector, lock: string): Promise<string | null> {
  const owner = criticalSectionOwnerAddress(lock);
  if (owner === null) return null;
  const words = await q.readMemory(owner, 1);
  return words[0] === undefined ? null : words[0].toString();
}

/** Threads grouped by the function they are in, the biggest group first. */
function groupThreads(threads: ThreadSummary[]): ThreadGroup[] {
  const groups = new Map<string, number[]>();
  for (const thread of threads) {
    const name = thread.frame?.function ? normalizeFunctionName(thread.frame.function) : "??";
    groups.set(name, [...(groups.get(name) ?? []), thread.id]);
  }
  return [...groups.entries()]
    .map(([fn, ids]) => ({ function: fn, threads: ids }))
    .sort((a, b) => b.threads.length - a.threads.length);
}
