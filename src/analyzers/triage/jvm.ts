/**
 * A HotSpot JVM's side of the crash: its Java frames, read by the JDK's own tools (runtimes/jvm)
 * with their source files and lines, take the place of the code the VM generated to run them
 * (interpreter, JIT, stubs: frames in no module and named by nothing), so the crashing thread's
 * stack is one list, native and Java, and its culprit the first frame of the program's own in
 * either language; a hung JVM's waits are read in Java.
 */
import { debuggerLevel, type ThreadSummary } from "../../debuggers/model.js";
import type { Crash } from "../../report/schema.js";
import { logSays, startJvm, javaFrames, type JstackFrame, type JstackThread, type JvmCore, type JvmRead, type JvmReading, type JvmStart } from "../../runtimes/jvm/index.js";
import { culpritIndex, isRuntimeFrame, type PlacedFrame } from "../culprit.js";
import type { Verdict } from "./classify.js";
import type { JvmFacts } from "./result.js";

/**
 * The JVM's reading begun as triage starts (jhsdb's own JVM starts up and reads the core while the
 * debugger reads the native side); null for a core of no JVM.
 */
export function startJava(jvm: JvmCore | null | undefined, record?: (command: string, output: string, ms: number) => void): JvmStart | null {
  return jvm ? startJvm(jvm, record) : null;
}

/** The JVM read for the native verdict's thread, with its heap where it ran out of memory; null for a core of no JVM. */
export async function readJava(started: JvmStart | null, verdict: Verdict): Promise<JvmRead | null> {
  return started ? started.finish(verdict.thread?.lwp ?? null, verdict.kind === "out-of-memory") : null;
}

/** The Java threads, and frames of each, that the analysis keeps for the chat: a server's few hundred threads, their innermost frames. */
const MAX_THREADS_KEPT = 500;
const MAX_FRAMES_KEPT = 24;

/** `Bank$Account` of `Bank$Account.deposit`. */
function classOf(method: string | null): string {
  return method === null ? "" : method.slice(0, Math.max(0, method.lastIndexOf(".")));
}

/** What a report and the playbooks take of the JVM's reading beside its frames. */
export function jvmFacts(reading: JvmReading, threads: ThreadSummary[]): JvmFacts {
  // The source files read for some frames (the crashing thread's, the deadlock's) name their classes' in every thread.
  const files = new Map(reading.threads.flatMap((thread) => thread.frames.flatMap((frame) => (frame.file ? [[classOf(frame.function), frame.file] as const] : []))));
  const ref = (lock: { type: string; address: string }) => `a ${lock.type} (${lock.address})`;
  return {
    version: reading.version,
    source: reading.source,
    heap: reading.heap,
    threadsCommand: reading.threadsCommand,
    errorLog: reading.errorLog ? { path: reading.errorLog.path, says: logSays(reading.errorLog.log), commandLine: reading.errorLog.log.commandLine, vmState: reading.errorLog.log.vmState } : null,
    threads: reading.locks.threads.slice(0, MAX_THREADS_KEPT).map((thread) => ({
      id: threads.find((t) => t.lwp !== null && t.lwp === thread.lwp)?.id ?? null,
      lwp: thread.lwp,
      name: thread.name,
      state: thread.state,
      holds: thread.holds.map(ref),
      waitsFor: thread.waitsFor ? ref(thread.waitsFor) : null,
      waitKind: thread.waitKind,
      frames: thread.frames.slice(0, MAX_FRAMES_KEPT).map((frame) => ({ function: frame.function, file: frame.file ?? files.get(classOf(frame.function)) ?? null, line: frame.line })),
    })),
  };
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

/** A Java thread's state that is a wait: blocked on a monitor, waiting, parked (with or without a timeout). */
const WAITING_STATE = /^(BLOCKED|WAITING|TIMED_WAITING)\b/;

/**
 * A dump of a JVM that was not crashing (no fault of its own: a gcore, a watchdog's signal), read on
 * the Java side, where its threads wait: a cycle of Java threads each waiting for a lock another holds
 * is a deadlock, the cycle's first thread the crash's and where it waits the culprit; every thread of
 * the program's own waiting, with no cycle, is a hang. A crash's verdict stands as it is.
 */
export function withJavaWaits(verdict: Verdict, java: JvmRead | null, threads: ThreadSummary[]): Verdict {
  const reading = java?.reading;
  if (!reading || (verdict.kind !== "unknown" && verdict.kind !== "hang")) return verdict;
  const threadOf = (lwp: number | null) => (lwp === null ? null : (threads.find((thread) => thread.lwp === lwp) ?? null));
  const cycle = reading.cycles[0];
  if (cycle) {
    const first = cycle.waits[0];
    const frames = framesOf(reading.threads.find((thread) => thread.lwp !== null && thread.lwp === first?.thread.lwp));
    const waitsAt = first?.frame ? frames.findIndex((frame) => frame.function === first.frame?.function && frame.line === first.frame?.line) : -1;
    const edges = reading.cycles.map((found) =>
      found.waits.map((wait) => ({
        thread: threadOf(wait.thread.lwp)?.id ?? -1,
        function: wait.frame?.function ?? null,
        file: wait.frame?.file ?? null,
        line: wait.frame?.line ?? null,
        lock: wait.lock.address,
        lockName: `a ${wait.lock.type}`,
        heldByThread: threadOf(wait.heldBy.lwp)?.id ?? null,
      })),
    );
    return { ...verdict, kind: "deadlock", thread: threadOf(first?.thread.lwp ?? null), frames, culprit: waitsAt >= 0 ? waitsAt : culpritIndex(frames), blocked: null, cycles: edges };
  }
  // Threads running the program's own code: the VM's and the JDK's service threads wait by design.
  const own = reading.threads.filter((thread) => javaFrames(thread).some((frame) => !isRuntimeFrame(placed(frame))));
  const states = new Map(reading.locks.threads.map((thread) => [thread.lwp, thread]));
  const waiting = own.filter((thread) => WAITING_STATE.test(states.get(thread.lwp)?.state ?? ""));
  if (own.length === 0 || waiting.length < own.length) return verdict;
  const blamed = waiting.find((thread) => thread.name === "main") ?? waiting[0]!;
  const frames = framesOf(blamed);
  const described = waiting.map((thread) => {
    const locks = states.get(thread.lwp);
    const where = frames.length ? framesOf(thread)[culpritIndex(framesOf(thread)) ?? 0] : null;
    const on = locks?.waitsFor ? ` on a ${locks.waitsFor.type}` : "";
    return `${thread.name ?? `thread ${thread.lwp}`} ${locks?.state ?? "waiting"}${on}${where?.function ? ` in ${where.function}${where.line !== null ? ` (${where.file ?? "line"}${where.file ? ":" : " "}${where.line})` : ""}` : ""}`;
  });
  return { ...verdict, kind: "hang", thread: threadOf(blamed.lwp), frames, culprit: culpritIndex(frames), blocked: `all ${waiting.length} Java threads of the program's own wait and no lock cycle joins them: ${described.join("; ")}` };
}

/** A Java thread's frames as the crash's: the Java frames jhsdb read, numbered from 0. */
function framesOf(thread: JstackThread | undefined): PlacedFrame[] {
  return (thread?.frames ?? []).filter((frame) => frame.language === "java").map((frame, level) => ({ ...placed(frame), level }));
}
