/** The crash kind of the design, decided from the symptoms triage measured. Pure. */
import type { CrashKind } from "../report/schema.js";
import { normalizeFunctionName, type PlacedFrame } from "./culprit.js";
import { AMBIGUOUS_FREE_MESSAGE } from "./glibc.js";
import type { SignalRecord as Siginfo } from "../debuggers/probe.js";

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
}

const SIGILL = 4;
const SIGABRT = 6;
const SIGBUS = 7;
const SIGFPE = 8;
const SIGSEGV = 11;
const FPE_INTDIV = 1;
const FPE_FLTDIV = 3;
/** A general-protection fault: a non-canonical address, which the kernel reports as 0. */
export const SI_KERNEL = 0x80;
/** Codes of a signal sent by a process rather than raised by the CPU: kill(), sigqueue(), tgkill(). */
const SI_USER = 0;
export const SI_QUEUE = -1;
export const SI_TKILL = -6;

/** Whether a signal was sent by a process (another one, or the process itself) instead of a fault. */
export function sentByProcess(siginfo: { code: number } | null | undefined): boolean {
  return siginfo !== null && siginfo !== undefined && (siginfo.code === SI_USER || siginfo.code === SI_QUEUE || siginfo.code === SI_TKILL);
}
/** The first page(s) are never mapped: an access there came from a NULL pointer (plus offset). */
export const NULL_PAGE_LIMIT = 0x10000n;

export function classifyCrash(symptoms: Symptoms): CrashKind {
  if (symptoms.deadlocked) return "deadlock";
  // Sent by a process (kill, sigqueue, tgkill) a fault signal is no fault: no rule may read its
  // "address", which holds the sender's pid and uid. SIGABRT from abort() itself is read below.
  if (sentByProcess(symptoms.siginfo) && symptoms.signal !== SIGABRT) return "unknown";
  if (symptoms.signal === SIGABRT && symptoms.siginfo && (symptoms.siginfo.code === SI_USER || symptoms.siginfo.code === SI_QUEUE)) return "unknown";
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
  if (pc === null || pc < NULL_PAGE_LIMIT || (fault !== null && fault === pc) || symptoms.pcInCode === false) {
    return "bad-jump";
  }
  if (symptoms.stackExhausted) return "stack-overflow";
  if (fault !== null && fault < NULL_PAGE_LIMIT) return "null-dereference";
  return "invalid-memory-access";
}

/** Rust's SIGSEGV handler for a guard-page hit (`std::sys::pal::unix::stack_overflow::imp::signal_handler`). */
export const RUST_STACK_OVERFLOW_HANDLER = /^std::sys::(pal::)?unix::stack_overflow::(imp::)?signal_handler$/;

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
  if (has(/^__cxa_pure_virtual$/)) return "pure-virtual-call";
  if (has(/^(__cxa_throw|__cxa_rethrow|std::terminate|std::__terminate|__cxxabiv1::__terminate|__gxx_personality_v0|std::rethrow_exception)$/))
    return "uncaught-exception";
  if (has(/^(rust_panic|__rust_start_panic|(core|std)::panicking::.*|rust_begin_unwind)$/)) return "panic";
  return "abort";
}
