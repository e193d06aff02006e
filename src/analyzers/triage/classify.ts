/**
 * The crash kind, its thread and its culprit, decided from what the other steps read. Pure: no
 * debugger is asked anything here.
 */
import type { ThreadSummary } from "../../debuggers/model.js";
import type { SignalRecord as Siginfo } from "../../debuggers/probe.js";
import type { CrashKind } from "../../report/schema.js";
import { NULL_PAGE_LIMIT } from "../address-space.js";
import { culpritIndex, normalizeFunctionName, RUST_STACK_OVERFLOW_HANDLER, type PlacedFrame } from "../culprit.js";
import { AMBIGUOUS_FREE_MESSAGE } from "../glibc.js";
import { blockedThreads } from "../hang.js";
import type { DeadlockEdge } from "../deadlock.js";
import { recursiveCallIndex } from "../recursion.js";
import { SI_KERNEL, SI_QUEUE, SI_USER, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP, TRAP_BRKPT, sentByProcess } from "../signals.js";
import type { CaughtFault, Fault } from "./fault.js";
import type { GoFindings } from "./go.js";
import type { Hang } from "./hang.js";
import type { Said } from "./messages.js";
import type { Stack } from "./stack.js";
import type { Stop } from "./stop.js";
import { pcInCode, type Target } from "./target.js";

/** What the steps before classification read of the dump. */
export interface Readings {
  target: Target;
  stop: Stop;
  stack: Stack;
  fault: Fault;
  said: Said;
  hang: Hang;
  /** A Go program's runtime, read from its memory (null for any other program). */
  go: GoFindings | null;
  /** Frames fetched from each end of the crashing thread's stack. */
  limit: number;
}

export interface Verdict {
  kind: CrashKind;
  /** The crash's thread: the one the signal or exception stopped, or the first thread of a deadlock's cycle. */
  thread: ThreadSummary | null;
  /** That thread's frames, innermost first. */
  frames: PlacedFrame[];
  /** Index in `frames` of the culprit: the first frame of the program's own code responsible. */
  culprit: number | null;
  /** What every thread of a hung process waits for, when there is no lock cycle ("all 4 threads are blocked waiting: …"). */
  blocked: string | null;
  /** The thread a dump without an exception or a signal was written from while it aborted (an abort handler's dump). */
  abortedIn: number | null;
  /** The fault a crash handler caught, when it is the crash (the stop in the dump is the handler's re-raise or abort). */
  caught: CaughtFault | null;
  /** The lock cycles a runtime's own reading showed (a JVM's Java threads), which the crash's deadlock names instead of the native threads'. */
  cycles?: DeadlockEdge[][];
}

export function classify(readings: Readings): Verdict {
  // Go's runtime turns every crash into its own SIGABRT: what it was is read from the runtime.
  if (readings.go?.kind) return goVerdict(readings.go, readings.target.selected);
  const { target, stop, stack, fault, said, hang, limit } = readings;
  const classified = classifyCrash({
    signal: stop.signal,
    siginfo: stop.siginfo,
    pc: target.pc,
    pcInCode: pcInCode(target),
    frames: stack.innermost,
    stackExhausted: fault.stackExhausted,
    abortMessage: said.abortMessage,
    deadlocked: hang.cycles.length > 0,
    instruction: fault.instruction,
    poppedReturn: stack.popped,
    overranStackTop: fault.overran || fault.underran,
    freedHeaderOverwritten: said.freedHeaderOverwritten,
    raisedBySelf: stop.origin.type === "raised",
  });
  // An exception whose record does not decide it (abort, turned into one) is read from the stack like SIGABRT;
  // a failed check the crash handler recorded beside it (an invalid parameter, a pure call) names it.
  const recordedCheck: CrashKind | null = said.assertion ? (said.assertion.type === "pure-virtual-call" ? "pure-virtual-call" : "assertion-failure") : null;
  // A fault a crash handler caught is the crash, unless the abort machinery it ended in names what
  // happened itself (Rust's stack overflow handler catches the guard page's SIGSEGV to say so).
  const caught = fault.caught && (fault.caught.then === "re-raised" || classified === "abort") ? fault.caught : null;
  const read = caught?.kind ?? recordedCheck ?? (stop.exception === null ? classified : hang.cycles.length > 0 ? "deadlock" : (fault.exception?.kind ?? abortKind(stack.innermost, null)));
  // An abort whose annotations name what ended it (an uncaught exception, an assertion) is that.
  const decided = read === "abort" && said.annotated?.kind ? said.annotated.kind : read;
  // No exception and no signal, but a thread in abort(): the dump was written from an abort handler
  // (a SIGABRT handler, std::terminate's); that thread's stack says why, as for SIGABRT.
  const aborted = decided === "unknown" && stop.signal === null && stop.exception === null && hang.cycles.length === 0 ? abortingThread(hang.framesOf) : null;
  // Every thread blocked and no cycle: a hang, even when no wait records an owner.
  const hung = decided === "unknown" && !aborted && stop.externallyStopped && hang.cycles.length === 0 ? blockedThreads(hang.framesOf) : null;
  const kind = aborted ? abortKind(aborted.frames, null) : hung ? "hang" : decided;
  // For a deadlock, the crash's thread is the first thread of the first cycle.
  const deadlocked = kind === "deadlock" ? (hang.cycles[0]?.[0]?.thread ?? null) : null;
  const away = deadlocked ?? aborted?.thread ?? null;
  const thread = away === null ? target.selected : (target.threads.find((t) => t.id === away) ?? null);
  // A write that ran off the stack overwrote every frame above the writer: what unwinds past it is the data written.
  const overwritten = fault.overran || fault.underran;
  // A caught fault read from a signal frame in memory brings the interrupted frames the debugger did not unwind.
  const frames = caught?.frames ?? (away === null ? (overwritten ? stack.frames.slice(0, (culpritIndex(stack.frames) ?? 0) + 1) : stack.frames) : (hang.framesOf.get(away) ?? []));
  // Behind a re-raised signal, the culprit is read from the frame the first signal interrupted; behind
  // a recorded failed check, from the caller of the function that checked: it passed what failed.
  const checker = said.assertion?.function ? frames.findIndex((frame) => frame.function !== null && normalizeFunctionName(frame.function) === said.assertion?.function) : -1;
  // In an abort handler's dump, the handler (the crash reporter's code) runs above the abort: the culprit is below it.
  const from = caught?.interrupted ?? (checker >= 0 ? checker + 1 : (aborted?.below ?? 0));
  const own = culpritIndex(frames.slice(from).filter((frame) => frame.level < limit));
  const first = own === null ? null : own + from;
  const culprit = kind === "stack-overflow" && stack.recursion !== null && first !== null ? (recursiveCallIndex(frames, first) ?? first) : first;
  return { kind, thread, frames, culprit, blocked: hung, abortedIn: aborted ? (thread?.id ?? null) : null, caught };
}

/** A Go crash: its kind as the runtime saw it, the culprit from the goroutine that panicked, threw, or is blamed for the wait. */
function goVerdict(go: GoFindings, thread: ThreadSummary | null): Verdict {
  const kind = go.kind ?? "unknown";
  const frames = go.goroutine?.frames ?? [];
  return { kind, thread, frames, culprit: culpritIndex(frames), blocked: kind === "hang" ? go.message : null, abortedIn: null, caught: null };
}

/** What a program that aborts itself goes through: abort and raise, a failed assertion, terminate. */
const ABORTING = /^(abort|raise|_?assert|_wassert|__assert_fail|std::terminate|std::__terminate|__cxxabiv1::__terminate|__cxa_throw|_CxxThrowException|_purecall|__cxa_pure_virtual)$/;

/** The first thread whose stack goes through the abort machinery, with its frames and the index just below the outermost of it. */
function abortingThread(framesOf: Map<number, PlacedFrame[]>): { thread: number; frames: PlacedFrame[]; below: number } | null {
  for (const [thread, frames] of framesOf) {
    const outermost = frames.findLastIndex((frame) => ABORTING.test(normalizeFunctionName(frame.function ?? "")));
    if (outermost >= 0) return { thread, frames, below: outermost + 1 };
  }
  return null;
}

export interface Symptoms {
  /** The signal that ended the process; null for a dump of a live process (gcore). */
  signal: number | null;
  siginfo: Siginfo | null;
  pc: bigint | null;
  /** Whether the pc lies in a code section of the program or a library; null when unknown. */
  pcInCode: boolean | null;
  /** The crashing thread's frames, innermost first (at least the first few dozen). */
  frames: PlacedFrame[];
  /** The stack ran out: a recursion thousands of frames deep, or a fault just below the stack. */
  stackExhausted: boolean;
  /** glibc's `__abort_msg` text. */
  abortMessage: string | null;
  /** A cycle of threads waiting for each other's locks was found. */
  deadlocked: boolean;
  /** The faulting instruction (`call *%rax`), when it could be read. */
  instruction?: string | null;
  /** The pc was popped off the stack by a `ret`: the return address there had been overwritten. */
  poppedReturn?: boolean;
  /** A write ran off the top, or walked down off the bottom, of the crashing thread's stack from a buffer on it. */
  overranStackTop?: boolean;
  /** The block a failed free was given has a header holding no size malloc writes. */
  freedHeaderOverwritten?: boolean;
  /** The program sent the signal to itself (abort, raise, kill of its own pid), as the record or the evidence shows. */
  raisedBySelf?: boolean;
}

const FPE_INTDIV = 1;
const FPE_FLTDIV = 3;

/** The crash kind of the design, decided from the symptoms triage measured. */
export function classifyCrash(symptoms: Symptoms): CrashKind {
  if (symptoms.deadlocked) return "deadlock";
  // Sent by a process (kill, sigqueue, tgkill) a fault signal is no fault: no rule may read its
  // "address", which holds the sender's pid and uid. SIGABRT from abort() itself is read below.
  if (sentByProcess(symptoms.siginfo) && symptoms.signal !== SIGABRT) return "unknown";
  // kill -ABRT from another process is no abort; the program killing itself with it is one.
  if (symptoms.signal === SIGABRT && !symptoms.raisedBySelf && symptoms.siginfo && (symptoms.siginfo.code === SI_USER || symptoms.siginfo.code === SI_QUEUE)) return "unknown";
  switch (symptoms.signal) {
    case SIGSEGV:
      return segfaultKind(symptoms);
    case SIGBUS:
      return "bus-error";
    case SIGILL:
      return "illegal-instruction";
    case SIGFPE:
      return symptoms.siginfo?.code === FPE_INTDIV || symptoms.siginfo?.code === FPE_FLTDIV ? "division-by-zero" : "unknown";
    case SIGABRT:
      return abortKind(symptoms.frames, symptoms.abortMessage, symptoms.freedHeaderOverwritten);
    case SIGTRAP:
      // int3 traps with SI_KERNEL on x86, brk with TRAP_BRKPT on arm64: a breakpoint instruction the program ran.
      return symptoms.siginfo === null || symptoms.siginfo.code === SI_KERNEL || symptoms.siginfo.code === TRAP_BRKPT ? "breakpoint" : "unknown";
    default:
      return "unknown";
  }
}

function segfaultKind(symptoms: Symptoms): CrashKind {
  if (symptoms.siginfo?.code === SI_KERNEL) {
    // A `ret` that faults popped a return address that is no address at all: it was overwritten,
    // a stack buffer overflow (without a stack protector to catch it first).
    if (/^ret[qlw]?\b/.test(symptoms.instruction ?? "")) return "stack-buffer-overflow";
    // The address in siginfo is not the one accessed, so it says nothing about NULL: a call or
    // jump through a garbage pointer, or a load or store through one.
    if (symptoms.stackExhausted) return "stack-overflow";
    return /^(call|jmp)\w*\s+\*/.test(symptoms.instruction ?? "") ? "bad-jump" : "invalid-memory-access";
  }
  // Both overwrote the stack from a buffer on it: a stack buffer overflow, with no protector to stop it.
  if (symptoms.poppedReturn || symptoms.overranStackTop) return "stack-buffer-overflow";
  const fault = symptoms.siginfo?.address != null ? BigInt(symptoms.siginfo.address) : null;
  const pc = symptoms.pc;
  // An unknown pc (its registers unread: a debugger that died reading them) is no bad jump; the fault address decides.
  if ((pc !== null && (pc < NULL_PAGE_LIMIT || (fault !== null && fault === pc))) || symptoms.pcInCode === false) {
    return "bad-jump";
  }
  if (symptoms.stackExhausted) return "stack-overflow";
  if (fault !== null && fault < NULL_PAGE_LIMIT) return "null-dereference";
  return "invalid-memory-access";
}


/**
 * What made the program abort: the machinery on its stack, or glibc's message. `headerOverwritten`:
 * the freed block's header holds no size malloc writes, so a "double free or corruption" was the corruption.
 */
export function abortKind(frames: PlacedFrame[], message: string | null, headerOverwritten = false): CrashKind {
  const names = frames.map((frame) => (frame.function ? normalizeFunctionName(frame.function) : ""));
  const has = (pattern: RegExp) => names.some((name) => pattern.test(name));
  const says = (pattern: RegExp) => message !== null && pattern.test(message);
  // Rust's guard-page handler reports "has overflowed its stack" and aborts: the fault was the overflow.
  if (has(RUST_STACK_OVERFLOW_HANDLER)) return "stack-overflow";
  // glibc's __assert_fail; the Windows C runtimes' _assert and _wassert.
  if (has(/^_*assert(_perror)?_fail/) || has(/^_w?assert$/) || says(/Assertion `.*' failed/s)) return "assertion-failure";
  if (has(/^_*stack_chk_fail/) || says(/stack smashing detected/)) return "stack-buffer-overflow";
  if (has(/^_*(fortify_fail|chk_fail)$/) || says(/buffer overflow detected/)) return "fortify-failure";
  if (says(/double free/)) return headerOverwritten && says(AMBIGUOUS_FREE_MESSAGE) ? "heap-corruption" : "double-free";
  if (has(/^malloc_printerr$/) || says(/^(malloc|free|realloc|calloc|munmap_chunk|malloc_consolidate|corrupted|tcache)\b|corrupted/))
    return "heap-corruption";
  // A runtime's fatal out-of-memory: the JVM's (an OutOfMemoryError with -XX:+CrashOnOutOfMemoryError,
  // or the VM's own allocation failing), V8's heap limit.
  if (has(/^(report_java_out_of_memory|report_vm_out_of_memory|v8::internal::V8::FatalProcessOutOfMemory|v8::internal::Heap::FatalProcessOutOfMemory|node::OOMErrorHandler)$/) || says(/^(OutOfMemory encountered: |Out of Memory Error )/)) return "out-of-memory";
  if (has(/^__cxa_pure_virtual$/)) return "pure-virtual-call";
  if (has(/^(__cxa_throw|__cxa_rethrow|std::terminate|std::__terminate|__cxxabiv1::__terminate|__gxx_personality_v0|std::rethrow_exception)$/))
    return "uncaught-exception";
  if (has(/^(rust_panic|__rust_start_panic|(core|std)::panicking::.*|rust_begin_unwind)$/)) return "panic";
  return "abort";
}
