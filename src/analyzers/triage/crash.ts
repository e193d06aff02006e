/** The `crash` object of the JSON report, and the result a report shows beside it, from what triage read and decided. */
import type { Inspector } from "../../debuggers/inspector.js";
import { toBigInt } from "../../debuggers/model.js";
import type { Crash } from "../../report/schema.js";
import { codeAt } from "../address-space.js";
import { crashSignature, normalizeFunctionName } from "../culprit.js";
import { languageOf } from "../language.js";
import { FAULT_SIGNALS, SI_KERNEL, SIGSEGV, signalCodeName, signalName } from "../signals.js";
import { machExceptionName } from "../mach.js";
import { exceptionName } from "../windows.js";
import type { Readings, Verdict } from "./classify.js";
import { rateExploitability } from "../exploitability.js";
import { libraryFault, namedPlace } from "./fault.js";
import { abortHandlerOrigin, caughtOrigin } from "./stop.js";
import { goReading } from "./go.js";
import type { TriageResult } from "./result.js";
import { addressSpaceOf, groupThreads } from "./target.js";

/** The functions a program aborts through, by their names: what shows an abort was the program's own decision. */
const ABORT_MACHINERY = /^(abort|raise|__GI_abort|__GI_raise|pthread_kill|__pthread_kill\w*|_?assert\w*|__assert_fail|std::terminate|__cxa_\w+|_purecall|_invalid_parameter\w*|__fortify_fail|__chk_fail|__stack_chk_fail|malloc_printerr)$/;

const MEMORY_FAULTS = new Set<Crash["kind"]>(["null-dereference", "invalid-memory-access", "bus-error"]);

export function crashOf(readings: Readings, verdict: Verdict, message: string | null, annotations: Crash["annotations"], runtime: Crash["runtime"], cut: Crash["cut"]): Crash {
  const { stop, fault, hang } = readings;
  const { exception } = stop;
  const { kind, thread, frames, culprit, caught } = verdict;
  // The fault a handler caught is the crash: its signal, code and address where the signal frame holds its record.
  const signal = caught?.record?.signo ?? stop.signal;
  const siginfo = caught ? caught.record : stop.siginfo;
  const culpritFrame = culprit === null ? null : (frames[culprit] ?? null);
  // A Go program's lock cycles are its goroutines', read from the runtime; the threads' are its OS threads, which wait for work.
  const cycles = verdict.cycles ?? (readings.go?.cycles.length ? readings.go.cycles : hang.cycles);
  const cycle = cycles[0];
  const origin = caught
    ? caughtOrigin(stop.origin, caught)
    : verdict.abortedIn !== null
      ? abortHandlerOrigin(verdict.abortedIn)
      : stop.origin;
  // The kernel reports 0 for a general-protection fault: that address was never accessed.
  const faultAddress =
    readings.go?.faultAddress ??
    (fault.exception ? fault.exception.faultAddress : signal !== null && (caught !== null || !stop.sent) && FAULT_SIGNALS.has(signal) && siginfo?.code !== SI_KERNEL ? (siginfo?.address ?? null) : null);
  const access = readings.go?.access ?? (caught ? caught.access : fault.access);
  const pc = caught ? toBigInt(caught.pc) : readings.target.pc;
  return {
    kind,
    signal: exception ? ((readings.target.os === "macos" ? machExceptionName(exception.code) : exceptionName(exception.code)) ?? "exception") : signal === null ? null : signalName(signal),
    signalCode: exception ? exception.code : siginfo && signal !== null && (caught !== null || !stop.codeInferred) ? signalCodeName(signal, siginfo.code) : null,
    faultAddress,
    access,
    message,
    thread: { id: thread?.id ?? null, lwp: thread?.lwp ?? null, name: thread?.name ?? null },
    culprit: {
      function: culpritFrame?.function ? normalizeFunctionName(culpritFrame.function) : null,
      file: culpritFrame?.file ?? null,
      line: culpritFrame?.line ?? null,
      column: culpritFrame?.column ?? null,
      frame: culpritFrame?.level ?? null,
      module: culpritFrame?.module ?? null,
      language: culpritFrame ? languageOf(culpritFrame) : null,
    },
    runtime,
    // A deadlock is every thread of its cycle, in an order that does not depend on thread numbers. A Go
    // program's is its blamed goroutine's frames: the same whether or not the debugger shows who holds each lock.
    signature: kind === "deadlock" && cycle && !readings.go ? ["deadlock", ...cycle.map((edge) => edge.function ?? "??").sort()].join(" | ") : crashSignature(kind, frames, culprit),
    deadlock: kind === "deadlock" ? { cycle: cycles.flat() } : null,
    origin,
    exploitability: rateExploitability({
      kind,
      origin: origin.type,
      access,
      faultAddress: toBigInt(faultAddress),
      pc,
      pcInCode: pc === null ? null : codeAt(addressSpaceOf(readings.target), pc),
      instruction: caught ? caught.instruction : fault.instruction,
      smashedWord: readings.stack.popped ? readings.target.pc : null,
      sp: readings.target.sp,
      pointerBytes: readings.target.pointerBytes,
      regions: readings.target.regions,
      abortNamed: frames.some((frame) => ABORT_MACHINERY.test(normalizeFunctionName(frame.function ?? ""))) || readings.said.annotated !== null,
      jit: readings.target.libraries.some((library) => /(^|\/)libjvm\.so$/.test(library.path)) ? "the JVM" : null,
    }),
    annotations,
    cut,
  };
}

/** What a report shows beside the crash: the stack from the culprit out, the fault read like an engineer reads it, the threads. */
export async function resultOf(q: Inspector, readings: Readings, verdict: Verdict, crash: Crash, said: { commands: string[]; packages: NonNullable<TriageResult["packages"]>; thrown: string | null }): Promise<TriageResult> {
  const { target, stack, fault } = readings;
  const { kind, frames, culprit } = verdict;
  const overwritten = fault.overran || fault.underran;
  const smashed = kind !== "stack-buffer-overflow" || readings.stop.signal !== SIGSEGV ? null : fault.overran ? "ran-off-top" : fault.underran ? "ran-off-bottom" : stack.poppedIntoCode ? "returned-into-code" : stack.popped ? "returned" : "faulting-ret";
  return {
    crash,
    os: target.os ?? null,
    frames: culprit === null ? frames : frames.slice(culprit),
    hiddenFrames: culprit ?? 0,
    // A stack a runtime's frames, or a signal frame's, were read into is as deep as its list, not as the debugger's unwind.
    stackDepth: kind !== "deadlock" && !overwritten && !stack.returner && !stack.scanned && !verdict.caught?.frames && !frames.some((frame) => frame.language) ? stack.depth : frames.length,
    recursion: stack.recursion,
    registers: target.keyRegisters,
    // A fault a handler caught is read in the frame it interrupted, not where the handler stopped.
    instruction: verdict.caught ? verdict.caught.instruction : fault.instruction,
    fault: verdict.caught ? verdict.caught.explanation : fault.explanation,
    caught: verdict.caught ? { frame: verdict.caught.frame, pc: verdict.caught.pc, recordAt: verdict.caught.recordAt } : null,
    faultPlace: await namedPlace(q, crash.faultAddress === null ? null : toBigInt(crash.faultAddress), target.files, target.sp),
    threads: { count: target.threads.length, groups: groupThreads(target.threads) },
    blocked: verdict.blocked,
    ...(readings.hang.unreadOwners.length > 0 ? { unreadLockOwners: readings.hang.unreadOwners } : {}),
    ...(readings.hang.unreadStacks.length > 0 ? { unreadStacks: readings.hang.unreadStacks } : {}),
    executable: target.files.executable,
    modules: target.libraries,
    commands: said.commands,
    notes: q.problems,
    foreignLibraries: target.foreign.map((lib) => ({ path: lib.path, status: lib.status, found: lib.found })),
    packages: said.packages,
    thrown: said.thrown,
    smashed,
    go: goReading(readings.go),
    faultIn:
      MEMORY_FAULTS.has(kind) && culprit !== null
        ? verdict.caught
          ? libraryFault(frames.slice(verdict.caught.interrupted, culprit), verdict.caught.registers, toBigInt(crash.faultAddress), target.os, null)
          : libraryFault(frames.slice(0, culprit), target.registers, toBigInt(crash.faultAddress), target.os, target.pcForeign?.path ?? null)
        : null,
  };
}
