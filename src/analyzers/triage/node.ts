/**
 * A Node.js program's side of the crash: the JavaScript frames llnode reads take the place of V8's
 * generated code in the crashing thread's stack (which the debugger cannot unwind through: past the
 * first builtin it reads the JIT's stack as return addresses), so the stack is one list, native and
 * JavaScript, and its culprit the first frame of the program's own in either language. An uncaught
 * exception V8 aborted on (`--abort-on-uncaught-exception`) is `uncaught-exception`, not a breakpoint.
 */
import path from "node:path";

import type { Crash } from "../../report/schema.js";
import type { Module } from "../../debuggers/model.js";
import { readNode, type NodeCore, type NodeReading, type V8Frame } from "../../runtimes/node/index.js";
import { culpritIndex, normalizeFunctionName, type PlacedFrame } from "../culprit.js";
import type { Verdict } from "./classify.js";

/** The Node.js side of a Node process's core, the heap's error objects read where V8 aborted on an uncaught exception. */
export async function readNodeSide(node: NodeCore | null | undefined, native: Verdict): Promise<NodeReading | null> {
  return node ? readNode(node, abortedOnUncaught(native)) : null;
}

function outOfMemory(verdict: Verdict): boolean {
  return verdict.frames.some((frame) => OUT_OF_MEMORY.test(normalizeFunctionName(frame.function ?? "")));
}

function abortedOnUncaught(verdict: Verdict): boolean {
  return verdict.frames.some((frame) => ABORT_ON_UNCAUGHT.test(normalizeFunctionName(frame.function ?? "")));
}

/** V8's generated code as the debugger names it: a builtin, or code of no module at all. */
const BUILTIN = /^Builtins_/;
/** The frame V8 aborts from where an exception nothing catches is thrown under `--abort-on-uncaught-exception`. */
const ABORT_ON_UNCAUGHT = /^v8::internal::Isolate::CreateMessageOrAbort\b/;
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
export function nodeMessage(verdict: Verdict, reading: NodeReading | null): string | null {
  if (verdict.kind === "out-of-memory") {
    const heapDeath = verdict.frames.some((frame) => /^v8::internal::Heap::FatalProcessOutOfMemory\b/.test(normalizeFunctionName(frame.function ?? "")));
    return heapDeath ? "V8's JavaScript heap out of memory: a garbage collection could not make room for an allocation (the heap reached its limit, --max-old-space-size)" : "V8 ran out of memory for an allocation it could not do without";
  }
  if (verdict.kind !== "uncaught-exception") return null;
  const error = reading?.error;
  if (error) return `uncaught ${error.type}${error.message !== null ? `: ${error.message}` : ""}`;
  return "a JavaScript exception nothing caught, on which V8 aborted (--abort-on-uncaught-exception); its class and message were not read from the heap";
}
