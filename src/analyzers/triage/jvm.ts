/**
 * A HotSpot JVM's side of the crash: its Java frames, read by the JDK's own tool (runtimes/jvm) with their source files and lines,
 * take the place of the code the VM generated to run them (interpreter, JIT, stubs: frames in no
 * module and named by nothing), so the crashing thread's stack is one list, native and Java, and
 * its culprit the first frame of the program's own in either language.
 */
import { debuggerLevel } from "../../debuggers/model.js";
import type { Crash } from "../../report/schema.js";
import { readJvm, javaFrames, type JstackFrame, type JvmCore, type JvmRead } from "../../runtimes/jvm/index.js";
import { culpritIndex, type PlacedFrame } from "../culprit.js";
import type { Verdict } from "./classify.js";

/** The JVM read for the crashing thread (`lwp`); null for a core of no JVM. */
export async function readJava(jvm: JvmCore | null | undefined, verdict: Verdict): Promise<JvmRead | null> {
  return jvm ? readJvm(jvm, verdict.thread?.lwp ?? null, { heap: verdict.kind === "out-of-memory" }) : null;
}

/** The runtime the crash object names: who read the Java frames. */
export function runtimeOf(java: JvmRead | null): Crash["runtime"] {
  return java?.reading ? { name: "jvm", version: java.reading.version, source: java.reading.source } : null;
}

/**
 * The verdict with the crashing thread's Java frames mixed in, and its culprit read again over the
 * mixed stack; unchanged where the thread has no Java frames or its stack no generated code for them.
 */
export function withJava(verdict: Verdict, java: JvmRead | null): Verdict {
  const lwp = verdict.thread?.lwp ?? null;
  const thread = java?.reading?.threads.find((t) => t.lwp !== null && t.lwp === lwp);
  const frames = thread ? javaFrames(thread) : [];
  if (frames.length === 0) return verdict;
  // The Java frames ran on the first stretch of generated code below where the thread stopped (or the
  // fault a handler caught): where the debugger unwound into it, at the pc of the innermost Java frame.
  const from = verdict.caught?.interrupted ?? 0;
  const at = (index: number, frame: PlacedFrame) => index >= from && generated(frame);
  const matched = frames[0]?.pc ? verdict.frames.findIndex((frame, index) => at(index, frame) && sameAddress(frame.address, frames[0]?.pc ?? null)) : -1;
  const start = matched >= 0 ? matched : verdict.frames.findIndex((frame, index) => at(index, frame));
  if (start < 0) return verdict;
  const length = verdict.frames.slice(start).findIndex((frame) => !generated(frame));
  const end = length < 0 ? verdict.frames.length : start + length;
  // Each frame is numbered in the one list; the debugger's frames keep their own number for its commands.
  const mixed = [...verdict.frames.slice(0, start), ...frames.map(placed), ...verdict.frames.slice(end)].map((frame, level) => (frame.found === "runtime" || frame.level === level ? { ...frame, level } : { ...frame, level, unwound: debuggerLevel(frame) }));
  const own = culpritIndex(mixed.slice(from));
  return { ...verdict, frames: mixed, culprit: own === null ? null : own + from };
}

/** Code the VM generated: no module holds it and nothing names it. */
function generated(frame: PlacedFrame): boolean {
  return frame.module === null && frame.function === null && frame.file === null;
}

function placed(frame: JstackFrame): PlacedFrame {
  return { level: 0, address: frame.pc, function: frame.function, args: frame.parameters ?? "", file: frame.file ?? null, line: frame.line, from: null, module: null, language: frame.language, found: "runtime", unwound: null };
}

function sameAddress(a: string | null, b: string | null): boolean {
  return a !== null && b !== null && BigInt(a) === BigInt(b);
}
