/**
 * What the program or its runtime said as it died: glibc's abort and assertion messages, the C++
 * exception's type, a Rust panic's payload, the Windows C runtime's assertion, a .NET exception;
 * and where none said anything, dumpdbg's own sentence for what happened (explain.ts).
 */
import { unquoteCString } from "../../debuggers/c-text.js";
import { hex } from "../../debuggers/dumpfile/file.js";
import type { Inspector } from "../../debuggers/inspector.js";
import { normalizeAddress, toBigInt, type Address, type MemoryRegion, type RecordedAssertion } from "../../debuggers/model.js";
import { signalStory, type SignalStoryFacts } from "../../report/origin.js";
import type { CrashKind } from "../../report/schema.js";
import { culpritIndex, normalizeFunctionName, RUST_STACK_OVERFLOW_HANDLER, type PlacedFrame } from "../culprit.js";
import { textBytes } from "../fault.js";
import { AMBIGUOUS_FREE_MESSAGE, chunkHeaderAddress, CHUNK_HEADER_WORDS, freedExpression, inUseBitOverwritten, nextChunkHeaderAddress, plausibleChunkSize, walkHeap } from "../glibc.js";
import { demangleTypeinfo } from "../itanium.js";
import { annotatedEnding, type AnnotatedEnding } from "../annotations.js";
import { hangMessage } from "../hang.js";
import { exceptionText, type ManagedFindings } from "../managed.js";
import { acceptPanicMessage, panicMessageCandidates } from "../panic-message.js";
import { FATAL_ERROR_CALLS, fatalErrorFromArguments, fatalErrorText, onFatalErrorPath } from "../python-fatal.js";
import { SIGABRT, SIGSEGV, signalCodeName, signalName } from "../signals.js";
import { CLR_EXCEPTION, managedExceptionText } from "../windows.js";
import { argumentRegisters, callArgumentAddress } from "../x86-64.js";
import { callArgumentAddress as a64CallArgument } from "../aarch64.js";
import { caughtMessage, overrunMessage, returnedIntoCodeMessage, sentMessage, smashedReturnMessage, underrunMessage } from "./explain.js";
import { STACK_NEAR_SP, type CaughtFault, type Fault } from "./fault.js";
import type { GoFindings } from "./go.js";
import type { TriageOptions } from "./options.js";
import type { Stack } from "./stack.js";
import type { Stop } from "./stop.js";
import type { Target } from "./target.js";

/** Upper bound on the stack words read when looking for a Rust panic payload. */
const MAX_PANIC_SCAN_WORDS = 4096;
const MAX_PANIC_CANDIDATES = 16;
/** The anonymous regions tried as malloc's heap, and the chunks walked in each, before giving up. */
const MAX_HEAP_REGIONS = 16;
const MAX_HEAP_CHUNKS = 1024;

/** What was said before the kind is decided, which the kind rests on. */
export interface Said {
  /** The failed check the crash handler recorded beside the exception (Breakpad's assertion stream). */
  assertion: RecordedAssertion | null;
  /** What the crash's annotations (Crashpad's) say of how it ended. */
  annotated: AnnotatedEnding | null;
  /**
   * glibc's abort message (`__abort_msg`), also found in memory without libc's symbols; or, in a JVM,
   * the fatal error the VM's error handler reported before it aborted (`VMError::_detail_msg`).
   */
  abortMessage: string | null;
  /** The block a failed free was given has a header holding no size malloc writes: "double free or corruption" was the corruption. */
  freedHeaderOverwritten: boolean;
}

export async function readMessages(q: Inspector, target: Target, stop: Stop, stack: Stack, options: Pick<TriageOptions, "findAbortMessage" | "assertion" | "annotations" | "jvm">): Promise<Said> {
  const { findAbortMessage } = options;
  const abortMessage =
    stop.signal === SIGABRT ? ((await q.abortMessage()) ?? (target.foreign.length > 0 ? await abortMessageWithoutSymbols(q, findAbortMessage) : null) ?? (options.jvm ? await vmErrorMessage(q, stack.innermost) : null)) : null;
  const ambiguous = abortMessage !== null && AMBIGUOUS_FREE_MESSAGE.test(abortMessage);
  // Where the freed block's frame cannot be evaluated in (a core from another machine, a program without debug info), the heap is walked instead.
  const freedHeader = ambiguous ? ((await freedBlockHeader(q, stack.innermost)) ?? (await heapWalked(q, target.regions, abortMessage))) : null;
  if (freedHeader?.note) q.problems.push(freedHeader.note);
  return { assertion: options.assertion ?? null, annotated: annotatedEnding(options.annotations), abortMessage, freedHeaderOverwritten: freedHeader !== null && !freedHeader.plausible };
}

/** What the message is composed from: the steps' readings and the kind decided from them. */
interface Told {
  readings: { target: Target; stop: Stop; stack: Stack; fault: Fault; said: Said; go: GoFindings | null };
  verdict: { kind: CrashKind; frames: PlacedFrame[]; culprit: number | null; blocked: string | null; abortedIn: number | null; caught: CaughtFault | null };
}

/**
 * The type of the exception nothing caught: the annotations' name for it, else the type_info
 * `__cxa_throw` was passed, read from its caller's code. Null for any other kind.
 */
export async function readThrownType(q: Inspector, readings: Told["readings"], verdict: Told["verdict"]): Promise<string | null> {
  if (verdict.kind !== "uncaught-exception") return null;
  if (readings.said.annotated?.thrown) return readings.said.annotated.thrown;
  return thrownType(q, verdict.abortedIn !== null ? verdict.frames : readings.stack.innermost, readings.target);
}

/** The crash's message: what the program or its runtime said, else what happened in dumpdbg's words. */
export async function messageOf(q: Inspector, readings: Told["readings"], verdict: Told["verdict"], dotnet: ManagedFindings | null, thrown: string | null): Promise<string | null> {
  const { target, stop, stack, fault } = readings;
  const { signal, siginfo, exception } = stop;
  const { kind, culprit } = verdict;
  const culpritFrame = culprit === null ? null : (verdict.frames[culprit] ?? null);
  const sp = target.sp;
  // A .NET exception: what the runtime died with names its type and message (SOS's `!pe` under cdb).
  if (readings.go?.message) return readings.go.message;
  const managed = dotnet ? exceptionText(dotnet.exception) : exception?.code === CLR_EXCEPTION ? managedExceptionText(await q.abortMessage()) : null;
  if (managed !== null) return managed;
  const { assertion, annotated } = readings.said;
  if (assertion) return assertionMessage(assertion);
  // An exception the annotations name (an uncaught NSException) is told by them.
  if (annotated?.kind && annotated.kind === kind) return annotated.message;
  if (fault.exception?.message != null) return fault.exception.message;
  if (verdict.caught) return caughtMessage(verdict.caught, signal, culpritFrame);
  // A signal a process sent explains a dump no fault rule classifies.
  const story: SignalStoryFacts | null =
    stop.sent && (kind === "unknown" || kind === "hang") && siginfo && signal !== null
      ? {
          signal: signalName(signal),
          signalCode: signalCodeName(signal, siginfo.code),
          origin: stop.origin,
          culprit: { function: culpritFrame?.function ? normalizeFunctionName(culpritFrame.function) : null, file: culpritFrame?.file ?? null, line: culpritFrame?.line ?? null },
        }
      : null;
  if (verdict.blocked) return `${hangMessage(verdict.blocked)}${story ? `; ${signalStory(story)}` : ""}`;
  if (story) return sentMessage(story);
  if (fault.overran && sp !== null) return overrunMessage(q, culpritFrame, toBigInt(fault.address), sp, fault.explanation);
  if (fault.underran && sp !== null) return underrunMessage(culpritFrame, toBigInt(fault.address), sp, target.stack);
  if (kind === "stack-buffer-overflow" && signal === SIGSEGV && sp !== null && stack.poppedIntoCode && target.pc !== null) {
    // The saved frame pointer lay just below the return address: what overwrote one overwrote it first.
    const saved = (await q.readMemory(hex(sp - 16n), 1))[0] ?? null;
    return returnedIntoCodeMessage(culpritFrame, target.pc, stack.innermost[0] ?? null, saved, target.pcForeign === null);
  }
  if (kind === "stack-buffer-overflow" && signal === SIGSEGV && sp !== null) {
    return smashedReturnMessage(culpritFrame ?? stack.innermost[0] ?? null, stack.popped ? target.pc : ((await q.readMemory(hex(sp), 1))[0] ?? null));
  }
  // An abort handler's dump: the aborting thread's frames say why, not the selected thread's.
  const frames = verdict.abortedIn !== null ? verdict.frames : stack.innermost;
  return (await crashMessage(q, kind, readings.said.abortMessage, frames, culprit, sp, thrown)) ?? annotated?.message ?? null;
}

/** "invalid parameter: `format != nullptr` failed in common_vfprintf (…\\output.cpp:32)". */
export function assertionMessage(assertion: RecordedAssertion): string {
  const what = assertion.type === "invalid-parameter" ? "invalid parameter" : assertion.type === "pure-virtual-call" ? "pure virtual function call" : "assertion";
  const check = assertion.expression ? `: \`${assertion.expression}\` failed` : "";
  const where = assertion.function ? ` in ${assertion.function}` : "";
  const at = assertion.file ? ` (${assertion.file}${assertion.line !== null ? `:${assertion.line}` : ""})` : "";
  return `${what}${check}${where}${at}`;
}

async function crashMessage(q: Inspector, kind: CrashKind, abortMessage: string | null, frames: PlacedFrame[], culprit: number | null, sp: bigint | null, thrown: string | null): Promise<string | null> {
  switch (kind) {
    case "uncaught-exception":
      return thrown === null ? "terminate called after throwing an exception" : `terminate called after throwing an instance of '${thrown}'`;
    case "pure-virtual-call":
      // What libstdc++'s __cxa_pure_virtual prints before it terminates.
      return "pure virtual method called";
    case "panic":
      return panicMessage(q, frames, culprit, sp);
    case "deadlock":
      return null;
    case "assertion-failure":
      return abortMessage ?? windowsAssertion(frames);
    case "out-of-memory":
      // HotSpot reports an OutOfMemoryError it crashes on as "OutOfMemory encountered: <the error's message>".
      return abortMessage?.replace(/^OutOfMemory encountered: /, "java.lang.OutOfMemoryError: ") ?? null;
    case "abort":
      return abortMessage ?? (await pythonFatalError(q, frames));
    case "stack-overflow":
      return frames.some((frame) => RUST_STACK_OVERFLOW_HANDLER.test(normalizeFunctionName(frame.function ?? "")))
        ? "the thread ran into its stack's guard page and Rust's handler aborted the process (\"has overflowed its stack\")"
        : abortMessage;
    default:
      return abortMessage;
  }
}

/**
 * CPython's fatal error ("Fatal Python error: …") where the abort came from it: the text from the
 * arguments the debugger shows for the interpreter's frames, else from the code of the caller that
 * passed it; where neither shows it, the message says so rather than guess. Null for another abort.
 */
async function pythonFatalError(q: Inspector, frames: PlacedFrame[]): Promise<string | null> {
  if (!frames.some(onFatalErrorPath)) return null;
  const shown = fatalErrorFromArguments(frames) ?? (await fatalErrorFromCaller(q, frames));
  if (shown !== null) return shown;
  q.problems.push("the interpreter aborted on a fatal error, but its message is not shown: the interpreter's frames have no arguments here (its debug information would show them) and the caller's code does not pass it from a constant");
  return "Fatal Python error (its message could not be read from the dump)";
}

/** The fatal error's text from the code of the function that called `_Py_FatalErrorFunc` or `Py_FatalError`: the constants it loads into the argument registers just before the call. */
async function fatalErrorFromCaller(q: Inspector, frames: PlacedFrame[]): Promise<string | null> {
  const called = frames.findIndex((frame) => frame.function !== null && normalizeFunctionName(frame.function) in FATAL_ERROR_CALLS);
  const registers = called < 0 ? undefined : FATAL_ERROR_CALLS[normalizeFunctionName(frames[called]?.function ?? "")];
  const caller = called < 0 ? null : frames[called + 1];
  if (!registers || !caller?.address) return null;
  const returnAddress = caller.address;
  const code = caller.function ? await q.disassemble(returnAddress) : await q.disassemble(returnAddress, 64);
  const passed = async (register: string) => {
    const argument = callArgumentAddress(code?.instructions ?? [], returnAddress, register);
    return argument ? await q.readString(argument.address) : null;
  };
  const msg = await passed(registers.msg);
  if (msg === null) return null;
  return fatalErrorText(registers.prefix ? await passed(registers.prefix) : null, msg);
}

/**
 * What a HotSpot VM's fatal error handler reported (`fatal error: OutOfMemory encountered: Java heap
 * space`, a failed `guarantee`) when it is what aborted: the text the VM keeps in `VMError::_detail_msg`
 * (libjvm.so's symbol table names it) for its hs_err file.
 */
async function vmErrorMessage(q: Inspector, frames: PlacedFrame[]): Promise<string | null> {
  if (!frames.some((frame) => /^VMError::report_and_die\b/.test(frame.function ?? ""))) return null;
  const address = await q.symbolAddress("VMError::_detail_msg");
  const text = address === null ? null : await q.readString(address);
  return text ? text.slice(0, 1000) : null;
}

/**
 * glibc's abort message found in the dump's memory without libc's symbols, read back through the
 * debugger so that it is evidence like any other.
 */
async function abortMessageWithoutSymbols(q: Inspector, find: (() => Address | null) | undefined): Promise<string | null> {
  const address = find?.() ?? null;
  if (address === null) return null;
  const text = (await q.readString(address))?.replace(/\n$/, "") ?? null;
  if (text) q.problems.push(`glibc's abort message was found in the process's memory at ${address}, without libc's symbols`);
  return text || null;
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
  if (!plausibleChunkSize(words)) {
    return {
      plausible: false,
      note: `glibc says "double free or corruption", but the header of the block \`${freed}\` points to holds size ${hex(size)}${text ? ` (the bytes "${text}")` : ""}, no size malloc writes: the header was overwritten, by a write past the end of the block before it, and the free found it corrupt`,
    };
  }
  // Its own header intact, the block's neighbour may not be: "(!prev)" reads the next header's in-use bit.
  const next = await q.readMemory(nextChunkHeaderAddress(freed), CHUNK_HEADER_WORDS, { frame: frame.level });
  if (next.length < CHUNK_HEADER_WORDS) return { plausible: true, note: "" };
  if (plausibleChunkSize(next)) {
    if (!inUseBitOverwritten(words, next)) return { plausible: true, note: "" };
    const footer = next[0] ?? 0n;
    const footerText = textBytes(footer);
    return {
      plausible: false,
      note: `glibc says "double free or corruption", but the header of the block after \`${freed}\` marks it free (the in-use bit clear) while its prev_size holds ${hex(footer)}${footerText ? ` (the bytes "${footerText}")` : ""}, not the size ${hex(size & ~7n)} a free of it leaves there: a write past the end of \`${freed}\` cleared the bit, and the free found it corrupt`,
    };
  }
  const nextSize = next[1] ?? 0n;
  const nextText = textBytes(nextSize);
  return {
    plausible: false,
    note: `glibc says "double free or corruption", but the header of the block after \`${freed}\` holds size ${hex(nextSize)}${nextText ? ` (the bytes "${nextText}")` : ""}, no size malloc writes: a write past the end of \`${freed}\` overwrote its neighbour's header, and the free found it corrupt`,
  };
}

/**
 * Without the freed block's expression, the heap itself: each anonymous writable region walked chunk
 * by chunk from its start (`walkHeap`), the first that chains to its end taken as malloc's heap, for
 * a block whose in-use bit a write past its end cleared. Where no region walks, what could not be
 * read is said and glibc's words stand.
 */
async function heapWalked(q: Inspector, regions: MemoryRegion[], message: string): Promise<{ plausible: boolean; note: string }> {
  const read = (address: bigint, words: number) => q.readMemory(hex(address), words);
  const anonymous = regions.filter((region) => region.file === null && region.permissions?.startsWith("rw")).slice(0, MAX_HEAP_REGIONS);
  for (const region of anonymous) {
    const [start, end] = [BigInt(region.start), BigInt(region.end)];
    const walked = await walkHeap(read, start, end, MAX_HEAP_CHUNKS);
    if (walked === null) continue;
    const heap = `the heap at ${hex(start)}–${hex(end)}, walked chunk by chunk without the freed block's frame,`;
    const cleared = walked.cleared;
    if (!cleared) return { plausible: true, note: `glibc says "${message}"; ${heap} holds no block whose in-use bit a write past its end cleared, so it is read as a double free` };
    const text = textBytes(cleared.footer);
    return {
      plausible: false,
      note: `glibc says "${message}", but ${heap} holds the block at ${hex(cleared.chunk + 16n)} (size ${hex(cleared.size)}) whose next block's header marks it free while its prev_size holds ${hex(cleared.footer)}${text ? ` (the bytes "${text}")` : ""}, not the size a free of it leaves there: a write past the end of that block cleared the bit, and the free found it corrupt`,
    };
  }
  return { plausible: true, note: `glibc's "${message}" is said for a block freed twice and for one whose header, or its neighbour's, a write overwrote; the freed block's header could not be read from the culprit's frame and no region of the dump walks as malloc's heap to its end, so it is read as a double free, as glibc's words say` };
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
async function thrownType(q: Inspector, frames: PlacedFrame[], target: Target): Promise<string | null> {
  const throwing = frames.findIndex((frame) => /^(__cxa_throw|__cxa_rethrow)$/.test(normalizeFunctionName(frame.function ?? "")));
  const caller = throwing < 0 ? null : frames[throwing + 1];
  if (!caller?.address) return null;
  // gdb names the symbol demangled; LLDB leaves a versioned one (`_ZTISt13runtime_error@GLIBCXX_3.4`) mangled.
  const typeinfo = (symbol: string | null | undefined) => /^typeinfo for (.*?)(?:@\S+)?$/.exec(demangleTypeinfo(symbol ?? "") ?? symbol ?? "")?.[1] ?? null;
  if (target.arch === "arm64") {
    const tinfo = await a64TypeinfoArgument(q, caller.address);
    return tinfo === null ? null : typeinfo((await q.symbolAt(hex(tinfo.address), tinfo.indirect))?.symbol);
  }
  // libstdc++'s own throwers (std::__throw_out_of_range_fmt, ...) sit in cold sections with no
  // symbol, where a function cannot be disassembled: disassemble the bytes before the call instead.
  const code = caller.function ? await q.disassemble(caller.address) : await q.disassemble(caller.address, 64);
  const tinfo = callArgumentAddress(code?.instructions ?? [], caller.address, argumentRegisters(target.os)[1] ?? "rsi");
  if (!tinfo) return null;
  const named = typeinfo(tinfo.symbol);
  if (named) return named;
  // The address is the type_info itself (lea), or a GOT slot holding it (mov from memory).
  return typeinfo((await q.symbolAt(tinfo.address))?.symbol) ?? typeinfo((await q.symbolAt(tinfo.address, true))?.symbol);
}

/** Instructions read before a call on arm64 for the argument it was passed: an adrp and its add or ldr sit within a few. */
const A64_ARGUMENT_WORDS = 16;

/**
 * `__cxa_throw`'s second argument (x1, the type_info) on arm64, from the instruction words of the
 * caller up to its `bl`, decoded here (aarch64.ts), as the fault's instruction is: the same for every debugger.
 */
async function a64TypeinfoArgument(q: Inspector, returnAddress: string): Promise<{ address: bigint; indirect: boolean } | null> {
  const call = BigInt(returnAddress) - 4n;
  const start = call - BigInt(4 * (A64_ARGUMENT_WORDS - 1));
  const words = await q.readMemory(hex(start), A64_ARGUMENT_WORDS / 2);
  if (words.length < A64_ARGUMENT_WORDS / 2) return null;
  const code = words.flatMap((word) => [Number(word & 0xffffffffn), Number(word >> 32n)]);
  return a64CallArgument(code, call, "x1");
}

/** The panic payload, from the stack between the innermost frame and the panicking frame. */
async function panicMessage(q: Inspector, frames: PlacedFrame[], culprit: number | null, sp: bigint | null): Promise<string | null> {
  if (culprit === null || sp === null) return null;
  const level = frames[culprit]?.level ?? culprit;
  const cfa = await q.frameCfa(level);
  if (!cfa) return null;
  const count = Math.min(MAX_PANIC_SCAN_WORDS, Number((BigInt(cfa) - sp) / 8n));
  if (count <= 0) return null;
  const words = await q.readMemory(normalizeAddress(hex(sp)), count);
  const candidates = panicMessageCandidates(words, { low: sp, high: BigInt(cfa) + STACK_NEAR_SP });
  for (const candidate of candidates.slice(0, MAX_PANIC_CANDIDATES)) {
    const text = await q.readString(hex(candidate.address));
    const message = acceptPanicMessage(text, candidate.length);
    if (message !== null) return message;
  }
  return null;
}
