/**
 * A CPython program's side of the crash: the Python frames each thread ran take the place of the
 * interpreter's evaluation loop that ran them, so the crashing thread's stack is one list, native
 * and Python, and its culprit the first frame of the program's own in either language: their Python
 * line for a crash in ctypes, the standard library or the interpreter that their call caused.
 *
 * Two routes read the frames: the interpreter's structures read from the core's memory
 * (runtimes/cpython's direct reader, no debugger and no debug information), first; and where it
 * reads none for the crashing thread, CPython's own gdb extension in the triage's gdb session, over
 * the interpreter's debug information. The crash's runtime says which route read them.
 */
import type { Crash } from "../../report/schema.js";
import type { Inspector } from "../../debuggers/inspector.js";
import { probes } from "../../debuggers/probe.js";
import { extensionCommand, extensionFor, hasScript, readExtensionOutput, readPythonThreads, type PythonFrame, type PythonReading, type PythonThread } from "../../runtimes/cpython/index.js";
import { culpritIndex, normalizeFunctionName, type PlacedFrame } from "../culprit.js";
import type { Verdict } from "./classify.js";
import type { TriageOptions } from "./options.js";

/** What read the Python frames, as the crash's runtime says it, by route. */
const FROM_MEMORY = "CPython's thread states and frames, read from the core's memory";
const extensionSource = (file: string) => `CPython's gdb extension (${file.split("/").pop()}) over the interpreter's debug information`;

const WOULD_SHOW = "the Python functions and lines each thread ran, and the program's own among them as the culprit";

/** The Python frames of a CPython process's core, with what read them (`source`); null for another program's core. */
export interface PythonSide {
  reading: PythonReading | null;
  notes: string[];
  source: string;
}

/**
 * The interpreter's frames for a core of a CPython process (`options.python`), by the direct reader,
 * or where it reads none for the crashing thread (`lwp`; any thread when null) and the debugger is
 * gdb, by CPython's gdb extension through `q`; null for another program's core.
 */
export async function readPython(q: Inspector, options: Pick<TriageOptions, "python" | "debugger" | "modules">, lwp: number | null): Promise<PythonSide | null> {
  if (!options.python) return null;
  const direct = await readFromMemory(options.python);
  if (!direct) return null;
  if (readsThread(direct, lwp)) return { reading: direct, notes: direct.notes, source: FROM_MEMORY };
  const unread = direct.notes.length > 0 ? direct.notes.join("; ") : "it found no Python frames for the crashing thread";
  if (options.debugger !== "gdb") return notRead(direct, [unread]);
  const through = await readThroughExtension(q, (options.modules ?? []).map((module) => module.path));
  if ("why" in through) return notRead(direct, [unread, `the route through gdb did not read them either: ${through.why}`]);
  if (!readsThread(through.reading, lwp)) return notRead(direct, [unread, `CPython's gdb extension (${through.file}) read none for the crashing thread either${through.reading.notes.length > 0 ? ` (${through.reading.notes.join("; ")})` : ""}`]);
  return {
    reading: through.reading,
    notes: [`the Python frames were read by CPython's gdb extension (${through.file}): the core's memory read directly did not give them (${unread})`, ...through.reading.notes],
    source: extensionSource(through.file),
  };
}

async function readFromMemory(core: string): Promise<PythonReading | null> {
  try {
    return await readPythonThreads(core);
  } catch (error) {
    return { version: null, threads: [], notes: [`the core's memory could not be read (${(error as Error).message})`] };
  }
}

/** Whether a reading has Python frames for the thread `lwp` (any thread's, when null). */
function readsThread(reading: PythonReading, lwp: number | null): boolean {
  return reading.threads.some((thread) => thread.frames.length > 0 && (lwp === null || thread.lwp === lwp));
}

/** No route read the crashing thread's frames: the direct reading stands where it read other threads', with why. */
function notRead(direct: PythonReading, why: string[]): PythonSide {
  const read = direct.threads.some((thread) => thread.frames.length > 0);
  return { reading: read ? direct : null, notes: read ? direct.notes : [`${why.join("; ")}; the Python frames were not read, which would show ${WOULD_SHOW}`], source: FROM_MEMORY };
}

/** The frames as CPython's gdb extension reads them, run in the triage's session (its command recorded with the others). */
async function readThroughExtension(q: Inspector, files: string[]): Promise<{ reading: PythonReading; file: string } | { why: string }> {
  const extension = extensionFor(files);
  if ("why" in extension) return extension;
  if (!hasScript()) return { why: "dumpdbg's script that runs the extension (gdb-python-threads.py) is not beside its code" };
  const answer = await q.ask(probes.command(extensionCommand(extension.file)));
  if (!answer.ok || answer.reading === null) return { why: `gdb could not run it (${answer.error ?? answer.errorType ?? "no output"})` };
  const reading = readExtensionOutput(answer.reading);
  return "why" in reading ? reading : { reading, file: extension.file };
}

export function pythonRuntime(python: PythonSide | null): Crash["runtime"] {
  return python?.reading ? { name: "cpython", version: python.reading.version, source: pythonSource(python) } : null;
}

/** The Python exception the thread `lwp` was raising when the process died (`LookupError: no layout for …`); null where none was, or it was not read. */
export function raisedMessage(python: PythonSide | null, lwp: number | null): string | null {
  const raised = lwp === null ? null : python?.reading?.threads.find((thread) => thread.lwp === lwp)?.exception;
  return raised ? `while raising the Python exception ${raised.type}${raised.message !== null ? `: ${raised.message}` : ""}` : null;
}

/** What read the Python side, by its route, as the crash's runtime and the facts say it. */
export function pythonSource(python: PythonSide): string {
  return python.reading?.version ? `${python.source} (CPython ${python.reading.version})` : python.source;
}

/** The interpreter's evaluation loop, which runs one Python frame and those it calls until an entry frame. */
const EVAL_LOOP = /^_PyEval_EvalFrameDefault$/;

/**
 * The verdict with the crashing thread's Python frames in place of the evaluation loops that ran them,
 * and its culprit read again over the mixed stack. In 3.11 one `_PyEval_EvalFrameDefault` runs the
 * Python frames from the innermost up to the frame it was entered with (`entry`): each loop, innermost
 * first, takes the next such group. Where the frames skip levels (a deep recursion's outermost
 * frames, fetched apart from its innermost), the loops past the gap are left as they are: which
 * groups they ran is not known. Where the debugger's unwind reaches no loop at all (another build of
 * a library it could not unwind through, a stack scanned for return addresses), the Python frames
 * follow the native frames it found: every Python frame is outer to the native code it called.
 * Unchanged where the thread has no Python frames.
 */
export function withPython(verdict: Verdict, python: { reading: PythonReading | null } | null): Verdict {
  const lwp = verdict.thread?.lwp ?? null;
  const thread = python?.reading?.threads.find((t) => t.lwp !== null && t.lwp === lwp);
  if (!thread || thread.frames.length === 0) return verdict;
  const from = verdict.caught?.interrupted ?? 0;
  const inLoops = mixedFrames(verdict.frames, thread, from);
  const numbered = inLoops !== verdict.frames ? inLoops : renumbered([...verdict.frames, ...thread.frames.map(placed)]);
  const own = culpritIndex(numbered.slice(from));
  return { ...verdict, frames: numbered, culprit: own === null ? null : own + from };
}

/**
 * A thread's native frames with its Python frames in place of the evaluation loops that ran them,
 * from frame `from` on, numbered again (a native frame keeps the number the debugger gave it as
 * `unwound`); the native frames themselves where no loop is among them.
 */
export function mixedFrames(native: PlacedFrame[], thread: PythonThread, from: number): PlacedFrame[] {
  const groups = entryGroups(thread.frames);
  const mixed: PlacedFrame[] = [];
  let next = 0;
  let contiguous = true;
  native.forEach((frame, index) => {
    const previous = native[index - 1];
    if (previous && frame.level > previous.level + 1) contiguous = false;
    const group = contiguous && index >= from && next < groups.length && EVAL_LOOP.test(normalizeFunctionName(frame.function ?? "")) ? groups[next++] : undefined;
    if (group) mixed.push(...group.map(placed));
    else mixed.push(frame);
  });
  return next === 0 ? native : renumbered(mixed);
}

/** Frames numbered from 0 in order; a native frame whose number changed keeps the debugger's as `unwound`. */
function renumbered(frames: PlacedFrame[]): PlacedFrame[] {
  return frames.map((frame, level) => (frame.found === "runtime" || frame.level === level ? { ...frame, level } : { ...frame, level, unwound: frame.unwound ?? frame.level }));
}

/** Whether a stack holds an evaluation loop the Python frames can take the place of. */
export function reachesEvaluationLoop(frames: PlacedFrame[]): boolean {
  return frames.some((frame) => EVAL_LOOP.test(normalizeFunctionName(frame.function ?? "")));
}

/** The frames split where an evaluation loop was entered: each group ends with its entry frame. */
function entryGroups(frames: PythonFrame[]): PythonFrame[][] {
  const groups: PythonFrame[][] = [];
  let current: PythonFrame[] = [];
  for (const frame of frames) {
    current.push(frame);
    if (frame.entry) {
      groups.push(current);
      current = [];
    }
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

export function placed(frame: PythonFrame): PlacedFrame {
  return { level: 0, address: null, function: frame.function, args: "", file: frame.file, line: frame.line, from: null, module: null, language: "python", found: "runtime", unwound: null };
}
