/**
 * A CPython process dumped while it was not crashing, read on the Python side, where its threads
 * wait: which lock of `threading` each Python thread was taking, which thread holds it (an RLock
 * records its holder; a Lock does not, so its holder is the thread a `with` block of which holds
 * it), and who held the GIL. A cycle of such waits is a deadlock between Python functions; with no
 * cycle, a hang whose every Python thread's wait is said. A crash's verdict stands as it is.
 */
import type { ThreadSummary } from "../../debuggers/model.js";
import type { DeadlockEdge } from "../deadlock.js";
import type { NamedLock, PythonReading, PythonThread } from "../../runtimes/cpython/index.js";
import { culpritIndex, isRuntimeFrame, normalizeFunctionName, type PlacedFrame } from "../culprit.js";
import type { Verdict } from "./classify.js";
import { mixedFrames, placed } from "./python.js";
import type { PythonFacts } from "./result.js";

/** The interpreter's wait for a lock of `threading` (Lock and RLock both, with or without a timeout). */
const LOCK_WAIT = /^(PyThread_acquire_lock_timed|PyThread_acquire_lock|acquire_timed|lock_PyThread_acquire_lock|rlock_acquire)$/;
/** The interpreter's wait for the GIL. */
const GIL_WAIT = /^(take_gil|PyEval_RestoreThread|PyEval_AcquireThread|_PyEval_EvalFrameDefault\.cold)$/;

/** A Python thread's wait for a lock another thread may hold. */
export interface PythonLockWait {
  thread: PythonThread;
  lock: NamedLock;
  /** The Python thread holding it; null where no thread is shown to (a Lock taken outside a `with` block, or by no thread). */
  holder: PythonThread | null;
}

/** The waits for locks of the process's Python threads: those taking a lock that was held, where the native stack (when read) is in the interpreter's lock wait. */
export function lockWaits(reading: PythonReading, framesOf: (lwp: number | null) => PlacedFrame[] | null): PythonLockWait[] {
  const waits: PythonLockWait[] = [];
  for (const thread of reading.threads) {
    const lock = thread.taking;
    if (!lock || lock.locked !== true) continue;
    const native = framesOf(thread.lwp);
    if (native && native.length > 0 && !native.some((frame) => LOCK_WAIT.test(normalizeFunctionName(frame.function ?? "")))) continue;
    waits.push({ thread, lock, holder: holderOf(reading, lock, thread) });
  }
  return waits;
}

function holderOf(reading: PythonReading, lock: NamedLock, waiter: PythonThread): PythonThread | null {
  if (lock.owner !== null) return reading.threads.find((thread) => thread.ident === lock.owner!.toString()) ?? null;
  return reading.threads.find((thread) => thread !== waiter && thread.frames.some((frame) => frame.holds?.some((held) => held.address === lock.address))) ?? null;
}

/** The cycles among the waits: each thread waits for a lock the next one holds, the last's held by the first. Each cycle once. */
export function waitCycles(waits: PythonLockWait[]): PythonLockWait[][] {
  const byThread = new Map(waits.map((wait) => [wait.thread, wait]));
  const cycles: PythonLockWait[][] = [];
  const done = new Set<PythonThread>();
  for (const start of waits) {
    const path: PythonLockWait[] = [];
    let at: PythonLockWait | undefined = start;
    while (at && !done.has(at.thread) && !path.includes(at)) {
      path.push(at);
      at = at.holder ? byThread.get(at.holder) : undefined;
    }
    if (at && path.includes(at)) cycles.push(path.slice(path.indexOf(at)));
    for (const wait of path) done.add(wait.thread);
  }
  return cycles;
}

/** `threading.Lock orders`, `a threading.RLock`. */
export function lockLabel(lock: NamedLock): string {
  return lock.name ? `${lock.type} ${lock.name}` : `a ${lock.type}`;
}

/** A Python thread as a person names it: `restocker (thread 2)`. */
function threadLabel(thread: PythonThread, summary: ThreadSummary | null): string {
  const number = summary ? `thread ${summary.id}` : thread.lwp !== null ? `LWP ${thread.lwp}` : "a thread";
  return thread.name ? `${number} "${thread.name}"` : number;
}

/** What a thread waiting inside the standard library's synchronisation waits for, by the call the program made. */
const WAITS_FOR: [RegExp, string][] = [
  [/^(Condition\.wait|Condition\.wait_for)$/, "a notify"],
  [/^(Semaphore|BoundedSemaphore)\.acquire$/, "a release"],
  [/^Event\.wait$/, "the event to be set"],
  [/^Thread\.join$/, "the thread it joins to end"],
  [/^Barrier\.wait$/, "the barrier's other parties"],
  [/^(Queue|LifoQueue|PriorityQueue|SimpleQueue)\.get$/, "an item"],
  [/^(Queue|LifoQueue|PriorityQueue)\.(put|join)$/, "room in the queue, or its tasks to be done"],
];

/**
 * The library call a thread waits in, where its innermost frames are the runtime's (threading.py,
 * queue.py): the outermost of them, the one the program called (`Semaphore.acquire`, not the
 * `Condition.wait` it runs), and what it waits for; null where the thread waits in its own code.
 */
function libraryWait(thread: PythonThread): { call: string; waitsFor: string | null } | null {
  const frames = thread.frames.map(placed);
  let call: string | null = null;
  for (const frame of frames) {
    if (!isRuntimeFrame(frame)) break;
    call = frame.function;
  }
  if (call === null) return null;
  return { call, waitsFor: WAITS_FOR.find(([pattern]) => pattern.test(call!))?.[1] ?? null };
}

/** Where a Python thread is: its innermost frame of the program's own, else its innermost. */
function whereOf(thread: PythonThread): string {
  const frames = thread.frames.map(placed);
  const own = culpritIndex(frames) ?? 0;
  const frame = frames[own];
  if (!frame?.function) return "";
  const line = frame.line === null ? "" : ` (${frame.file ? `${frame.file.split("/").pop()}:` : "line "}${frame.line})`;
  return ` in ${frame.function}${line}`;
}

/**
 * The verdict with the Python side's waits where the dump was taken of a process that was not
 * crashing: a cycle of Python threads each taking a lock the next holds is a deadlock, the first's
 * frames (native and Python) the crash's and where it waits the culprit; with no cycle and every
 * Python thread of the program's waiting, a hang that says each one's wait, and names the thread
 * that held the GIL where it held it blocked in C.
 */
export function withPythonWaits(verdict: Verdict, python: { reading: PythonReading | null } | null, threads: ThreadSummary[], framesOf: Map<number, PlacedFrame[]>): Verdict {
  const reading = python?.reading;
  if (!reading || (verdict.kind !== "unknown" && verdict.kind !== "hang")) return verdict;
  const summaryOf = (thread: PythonThread | null) => (thread?.lwp == null ? null : (threads.find((t) => t.lwp === thread.lwp) ?? null));
  const nativeOf = (lwp: number | null) => {
    const summary = lwp === null ? null : threads.find((t) => t.lwp === lwp);
    return summary ? (framesOf.get(summary.id) ?? null) : null;
  };
  const stackOf = (thread: PythonThread) => {
    const native = nativeOf(thread.lwp);
    return native && native.length > 0 ? mixedFrames(native, thread, 0) : thread.frames.map((frame, level) => ({ ...placed(frame), level }));
  };
  const waits = lockWaits(reading, nativeOf);
  const cycle = waitCycles(waits)[0];
  if (cycle) {
    const first = cycle[0]!;
    const frames = stackOf(first.thread);
    const waitsAt = frames.findIndex((frame) => frame.found === "runtime");
    const edges: DeadlockEdge[] = cycle.map((wait) => {
      const at = wait.thread.frames[0];
      return {
        thread: summaryOf(wait.thread)?.id ?? -1,
        function: at?.function ?? null,
        file: at?.file ?? null,
        line: at?.line ?? null,
        lock: wait.lock.address,
        lockName: lockLabel(wait.lock),
        heldByThread: summaryOf(wait.holder)?.id ?? null,
      };
    });
    const summary = summaryOf(first.thread);
    return { ...verdict, kind: "deadlock", thread: summary ? { ...summary, name: first.thread.name ?? summary.name } : null, frames, culprit: waitsAt >= 0 ? waitsAt : culpritIndex(frames), blocked: null, cycles: [edges] };
  }
  const own = reading.threads.filter((thread) => thread.frames.some((frame) => !isRuntimeFrame(placed(frame))));
  if (own.length === 0) return verdict;
  const gil = reading.threads.find((thread) => thread.lwp !== null && thread.lwp === reading.gilHolder) ?? null;
  // The thread that held the GIL is blocked where its native stack's innermost frame is.
  const gilNative = gil ? nativeOf(gil.lwp) : null;
  const gilBlockedIn = gilNative?.[0] ?? null;
  const waitOf = new Map(waits.map((wait) => [wait.thread, wait]));
  const described = own.map((thread) => {
    const label = threadLabel(thread, summaryOf(thread));
    const wait = waitOf.get(thread);
    if (thread === gil && gilBlockedIn) return `${label} holds the GIL${gilBlockedIn.function ? ` and is blocked in ${normalizeFunctionName(gilBlockedIn.function)}` : ""}${whereOf(thread)}`;
    const library = libraryWait(thread);
    if (library) return `${label} waits in ${library.call}${library.waitsFor ? ` for ${library.waitsFor}` : ""}${whereOf(thread)}`;
    if (wait) return `${label} waits for ${lockLabel(wait.lock)}${wait.holder ? ` held by ${threadLabel(wait.holder, summaryOf(wait.holder))}` : ", held by no thread the dump shows"}${whereOf(thread)}`;
    const native = nativeOf(thread.lwp);
    if (gil && native?.some((frame) => GIL_WAIT.test(normalizeFunctionName(frame.function ?? "")))) return `${label} waits for the GIL${whereOf(thread)}`;
    return `${label} waits${whereOf(thread)}`;
  });
  // The thread to blame: the one blocked in C holding the GIL every other waits for, else the main thread, else the first.
  const blamed = gil && gilBlockedIn ? gil : (own.find((thread) => thread.name === "MainThread") ?? own[0]!);
  if (verdict.kind === "unknown" && !(gil && gilBlockedIn) && waits.length < own.length) return verdict;
  const frames = stackOf(blamed);
  const summary = summaryOf(blamed);
  return {
    ...verdict,
    kind: "hang",
    thread: summary ? { ...summary, name: blamed.name ?? summary.name } : verdict.thread,
    frames,
    culprit: culpritIndex(frames),
    blocked: `${own.length === 1 ? "the one Python thread" : `all ${own.length} Python threads`} of the program's own wait${own.length === 1 ? "s" : ""}, and no lock cycle joins them: ${described.join("; ")}`,
  };
}

/** A hang's message from the Python side, whose waits say for themselves where no holder is shown. */
export function pythonHangMessage(blocked: string): string {
  return `hung: ${blocked}`;
}

/** The name the Python side's reading is kept under as evidence: no debugger command read it, dumpdbg did, from the core. */
export function pythonThreadsCommand(core: string): string {
  return `cpython-threads ${core}`;
}

/** The Python side as evidence: each thread with its name, locks and frames (innermost first) with their locals, as py-bt and py-locals would print them. */
export function pythonThreadsText(facts: PythonFacts): string {
  const lines = [`CPython ${facts.version ?? "(version not read)"}: ${facts.threads.length} Python thread${facts.threads.length === 1 ? "" : "s"}${facts.gil ? `; the GIL held by LWP ${facts.gil.lwp}` : ""}`];
  for (const thread of facts.threads) {
    lines.push("", `Thread ${thread.id ?? "?"} (LWP ${thread.lwp ?? "?"})${thread.name ? ` "${thread.name}"` : ""}`);
    if (thread.holds.length > 0) lines.push(`  holds ${thread.holds.join(", ")}`);
    if (thread.waitsFor) lines.push(`  waits for ${thread.waitsFor}${thread.waitsForHeldBy !== null ? `, held by thread ${thread.waitsForHeldBy}` : ""}`);
    if (thread.exception) lines.push(`  raising ${thread.exception.type}${thread.exception.message !== null ? `: ${thread.exception.message}` : ""}`);
    for (const frame of thread.frames) {
      lines.push(`  File "${frame.file ?? "?"}", line ${frame.line ?? "?"}, in ${frame.function ?? "?"}`);
      for (const local of frame.locals ?? []) lines.push(`    ${local.name} = ${local.value}`);
    }
  }
  return lines.join("\n");
}

/** What a report, the playbooks and the chat take of the Python side beside the crashing thread's frames. */
export function pythonFacts(reading: PythonReading, threads: ThreadSummary[], source: string, framesOf: Map<number, PlacedFrame[]>, kept: { threadsCommand: string | null; waitsDecided: boolean }): PythonFacts {
  const summaryOf = (lwp: number | null) => (lwp === null ? null : (threads.find((t) => t.lwp === lwp) ?? null));
  const waits = lockWaits(reading, (lwp) => {
    const summary = summaryOf(lwp);
    return summary ? (framesOf.get(summary.id) ?? null) : null;
  });
  const gil = summaryOf(reading.gilHolder ?? null);
  return {
    version: reading.version,
    source,
    ...kept,
    gil: reading.gilHolder == null ? null : { thread: gil?.id ?? null, lwp: reading.gilHolder, name: reading.threads.find((t) => t.lwp === reading.gilHolder)?.name ?? null },
    threads: reading.threads.slice(0, MAX_THREADS_KEPT).map((thread) => {
      const wait = waits.find((w) => w.thread === thread);
      const holds = new Map(thread.frames.flatMap((frame) => frame.holds ?? []).map((lock) => [lock.address, lock]));
      return {
        id: summaryOf(thread.lwp)?.id ?? null,
        lwp: thread.lwp,
        name: thread.name ?? null,
        holds: [...holds.values()].map((lock) => `${lockLabel(lock)} at ${lock.address}`),
        waitsFor: wait ? `${lockLabel(wait.lock)} at ${wait.lock.address}` : null,
        waitsForHeldBy: wait?.holder ? (summaryOf(wait.holder.lwp)?.id ?? null) : null,
        exception: thread.exception ?? null,
        frames: thread.frames.slice(0, MAX_FRAMES_KEPT).map((frame) => ({ function: frame.function, file: frame.file, line: frame.line, locals: frame.locals ?? null })),
      };
    }),
  };
}

/** The Python threads, and frames of each, kept for the chat. */
const MAX_THREADS_KEPT = 500;
const MAX_FRAMES_KEPT = 24;
