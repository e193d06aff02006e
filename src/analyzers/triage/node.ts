/**
 * A Node.js program's side of the crash: the JavaScript frames llnode reads take the place of V8's
 * generated code in the crashing thread's stack (which the debugger cannot unwind through: past the
 * first builtin it reads the JIT's stack as return addresses), so the stack is one list, native and
 * JavaScript, and its culprit the first frame of the program's own in either language. An uncaught
 * exception V8 aborted on (`--abort-on-uncaught-exception`) is `uncaught-exception`, not a breakpoint.
 */
import path from "node:path";

import type { Crash } from "../../report/schema.js";
import type { Module, ThreadSummary } from "../../debuggers/model.js";
import { ABORT_ON_UNCAUGHT, type NodeReading, type NodeStart, type V8Frame } from "../../runtimes/node/index.js";
import { culpritIndex, normalizeFunctionName, type PlacedFrame } from "../culprit.js";
import type { Verdict } from "./classify.js";
import type { HeapLimit, NodeFacts } from "./result.js";

/**
 * The Node.js side of a Node process's core, begun as triage started (the crashing thread's frames,
 * the heap's error object where V8 aborted on an uncaught exception), finished with the frames of the
 * other threads that run V8's code (a Worker's), told by their native stacks.
 */
export async function readNodeSide(node: NodeStart | null, native: Verdict, threads: readonly ThreadSummary[], framesOf: ReadonlyMap<number, readonly PlacedFrame[]>): Promise<NodeReading | null> {
  if (!node) return null;
  const others = threads.filter((thread) => thread.lwp !== null && thread.lwp !== native.thread?.lwp && runsV8(thread, framesOf.get(thread.id)));
  return node.finish(others.map((thread) => thread.lwp!));
}

/** A thread whose native stack shows V8's generated code: a builtin, or code of no module at all. */
function runsV8(thread: ThreadSummary, frames: readonly PlacedFrame[] | undefined): boolean {
  const generated = (frame: { function: string | null; address: string | null }, module: string | null) => BUILTIN.test(frame.function ?? "") || (frame.function === null && module === null && frame.address !== null);
  if (frames && frames.length > 0) return frames.some((frame) => generated(frame, frame.module));
  return thread.frame !== null && generated(thread.frame, thread.frame.from);
}

function outOfMemory(verdict: Verdict): boolean {
  return verdict.frames.some((frame) => OUT_OF_MEMORY.test(normalizeFunctionName(frame.function ?? "")));
}

function abortedOnUncaught(verdict: Verdict): boolean {
  return verdict.frames.some((frame) => ABORT_ON_UNCAUGHT.test(normalizeFunctionName(frame.function ?? "")));
}

/** V8's generated code as the debugger names it: a builtin, or code of no module at all. */
const BUILTIN = /^Builtins_/;
/** V8's death of a heap that reached its limit, or of an allocation it could not make. */
const OUT_OF_MEMORY = /^(v8::internal::V8::FatalProcessOutOfMemory|v8::internal::Heap::FatalProcessOutOfMemory|node::OOMErrorHandler)\b/;

/**
 * The verdict with llnode's frames from V8's first generated frame on: its JavaScript frames and the
 * native frames it unwound past them (matched to the core's modules by name), V8's stubs left out,
 * and the culprit read again. Unchanged where llnode read no JavaScript frame.
 */
export function withNode(verdict: Verdict, reading: NodeReading | null, modules: readonly Module[]): Verdict {
  if (!reading || !reading.frames.some((frame) => frame.kind === "js")) return verdict;
  const cut = verdict.frames.findIndex((frame) => BUILTIN.test(frame.function ?? "") || (frame.function === null && frame.module === null));
  const first = reading.frames.findIndex((frame) => frame.kind !== "native");
  if (first < 0) return verdict;
  const kept = cut < 0 ? verdict.frames : verdict.frames.slice(0, cut);
  const after = reading.frames.slice(first).filter((frame) => frame.kind !== "v8").map((frame) => placed(frame, modules));
  // The innermost JavaScript frame threw: its line and column are where, where the error kept it.
  const at = reading.error?.at ?? null;
  const thrower = after.findIndex((frame) => frame.language === "javascript");
  if (at && thrower >= 0 && after[thrower]!.file === at.file) after[thrower] = { ...after[thrower]!, line: at.line, column: at.column };
  const frames = [...kept, ...after].map((frame, level) => (frame.found === "runtime" || frame.level === level ? { ...frame, level } : { ...frame, level, unwound: frame.unwound ?? frame.level }));
  const from = verdict.caught?.interrupted ?? 0;
  const own = culpritIndex(frames.slice(from));
  const kind = abortedOnUncaught(verdict) ? "uncaught-exception" : outOfMemory(verdict) ? "out-of-memory" : verdict.kind;
  return { ...verdict, kind, frames, culprit: own === null ? null : own + from };
}

function placed(frame: V8Frame, modules: readonly Module[]): PlacedFrame {
  if (frame.kind === "js") return { level: 0, address: null, function: frame.function ?? "(anonymous)", args: frame.args, file: frame.file, line: frame.line, from: null, module: null, language: "javascript", found: "runtime", unwound: null };
  const module = frame.file === null ? null : (modules.find((candidate) => path.basename(candidate.path) === frame.file)?.path ?? null);
  return { level: 0, address: frame.pc, function: frame.function, args: "", file: null, line: null, from: null, module, unwound: frame.index };
}

/** The runtime named where llnode's frames were read into the stack. */
export function nodeRuntime(reading: NodeReading | null): Crash["runtime"] {
  if (!reading || !reading.frames.some((frame) => frame.kind === "js")) return null;
  const versions = reading.node ? `Node.js ${reading.node}${reading.v8 ? `, V8 ${reading.v8}` : ""}` : null;
  return { name: "node", version: reading.node, source: versions ? `llnode's v8 bt (${versions})` : "llnode's v8 bt" };
}

/** What a Node.js death says where the dump has no message of its own: the uncaught error's class and message where the heap gave them; a heap out of memory. */
export function nodeMessage(verdict: Verdict, reading: NodeReading | null, commandLine: string | null): string | null {
  if (verdict.kind === "out-of-memory") {
    const heapDeath = verdict.frames.some((frame) => /^v8::internal::Heap::FatalProcessOutOfMemory\b/.test(normalizeFunctionName(frame.function ?? "")));
    return heapDeath ? `V8's JavaScript heap out of memory: a garbage collection could not make room for an allocation (Reached heap limit); ${heapLimitText(commandLine)}` : "V8 ran out of memory for an allocation it could not do without";
  }
  if (verdict.kind !== "uncaught-exception") return reading && reading.frames.length > 0 && verdict.thread?.lwp != null && !verdict.caught && verdict.kind === "unknown" ? runningText(verdict, reading) : null;
  const error = reading?.error;
  if (error) return `uncaught ${error.type}${error.message !== null ? `: ${error.message}` : ""}`;
  return "a JavaScript exception nothing caught, on which V8 aborted (--abort-on-uncaught-exception); its class and message were not read from the heap";
}

/** The old generation's limit as the command line the kernel recorded sets it; V8's own default where it sets none. */
export function heapLimit(commandLine: string | null): HeapLimit {
  if (commandLine === null) return { megabytes: null, from: "unknown" };
  const flag = [...commandLine.matchAll(/(?:^|\s)--max[-_]old[-_]space[-_]size[= ](\d+)(?=\s|$)/g)].at(-1);
  if (flag) return { megabytes: Number(flag[1]), from: "flag" };
  // The kernel keeps 80 bytes of it: a longer command line may have lost the flag.
  return { megabytes: null, from: commandLine.length >= 79 ? "unknown" : "default" };
}

function heapLimitText(commandLine: string | null): string {
  const limit = heapLimit(commandLine);
  if (limit.from === "flag") return `the old generation's limit was ${limit.megabytes} MB (--max-old-space-size=${limit.megabytes} on its command line); the heap's used size is not read from the core`;
  if (limit.from === "default") return "its command line sets no --max-old-space-size, so the limit was V8's default, which it sizes from the machine's memory (NODE_OPTIONS may also set it, which the core does not show); the heap's used size is not read from the core";
  return "the limit (--max-old-space-size) is not known: the command line the core keeps is cut short or missing; the heap's used size is not read from the core";
}

/** What each thread that runs JavaScript was running, in a dump taken of a live process. */
function runningText(verdict: Verdict, reading: NodeReading): string | null {
  const running = [{ lwp: verdict.thread!.lwp!, frames: reading.frames }, ...reading.threads].flatMap((thread) => {
    const top = thread.frames.find((frame) => frame.kind === "js");
    return top ? [`LWP ${thread.lwp} in ${top.function ?? "(anonymous)"} (${path.basename(top.file ?? "?")}:${top.line ?? "?"})`] : [];
  });
  if (running.length < 2) return null;
  return `${running.length} threads were running JavaScript when the dump was taken: ${running.join("; ")}`;
}

/** The Node.js side triage read, kept for the playbooks and the chat. */
export function nodeFacts(reading: NodeReading, threads: readonly ThreadSummary[], crashing: ThreadSummary | null, commandLine: string | null, outOfMemory: boolean): NodeFacts {
  const numberOf = (lwp: number) => threads.find((thread) => thread.lwp === lwp)?.id ?? null;
  const jsFrames = (frames: readonly V8Frame[]) => frames.filter((frame) => frame.kind === "js").map((frame) => ({ function: frame.function, file: frame.file, line: frame.line, args: frame.args }));
  const read = [
    ...(crashing?.lwp != null && reading.command ? [{ id: crashing.id, lwp: crashing.lwp, frames: jsFrames(reading.frames), command: reading.command }] : []),
    ...reading.threads.map((thread) => ({ id: numberOf(thread.lwp), lwp: thread.lwp, frames: jsFrames(thread.frames), command: thread.command })),
  ];
  return {
    version: reading.node,
    v8: reading.v8,
    error: reading.error,
    threads: read.filter((thread) => thread.frames.length > 0),
    heapLimit: outOfMemory ? heapLimit(commandLine) : null,
    notes: reading.notes,
  };
}
