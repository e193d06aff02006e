/**
 * A CPython program's side of the crash: the Python frames each thread ran, read from the
 * interpreter's own structures in the core's memory (runtimes/cpython), take the place of the
 * interpreter's evaluation loop that ran them, so the crashing thread's stack is one list, native
 * and Python, and its culprit the first frame of the program's own in either language: their Python
 * line for a crash in ctypes, the standard library or the interpreter that their call caused.
 */
import type { Crash } from "../../report/schema.js";
import { readPythonThreads, type PythonFrame, type PythonReading, type PythonThread } from "../../runtimes/cpython/index.js";
import { culpritIndex, normalizeFunctionName, type PlacedFrame } from "../culprit.js";
import type { Verdict } from "./classify.js";

/** What read the Python frames, as the crash's runtime says it. */
const SOURCE = "CPython's thread states and frames, read from the core's memory";

const WOULD_SHOW = "the Python functions and lines each thread ran, and the program's own among them as the culprit";

/** The interpreter's frames for a core of a CPython process (`core`); null for another program's. */
export async function readPython(core: string | null | undefined): Promise<{ reading: PythonReading | null; notes: string[] } | null> {
  if (!core) return null;
  try {
    const reading = await readPythonThreads(core);
    if (!reading) return null;
    const read = reading.threads.some((thread) => thread.frames.length > 0);
    return { reading: read ? reading : null, notes: read ? reading.notes : [...reading.notes.map((note) => `${note}; the Python frames were not read, which would show ${WOULD_SHOW}`)] };
  } catch (error) {
    return { reading: null, notes: [`the Python frames were not read (${(error as Error).message}): they would show ${WOULD_SHOW}`] };
  }
}

export function pythonRuntime(python: { reading: PythonReading | null } | null): Crash["runtime"] {
  return python?.reading ? { name: "cpython", version: python.reading.version, source: pythonSource(python.reading) } : null;
}

/** What read the Python side, as the crash's runtime and the facts say it. */
export function pythonSource(reading: PythonReading): string {
  return reading.version ? `${SOURCE} (CPython ${reading.version})` : SOURCE;
}

/** The interpreter's evaluation loop, which runs one Python frame and those it calls until an entry frame. */
const EVAL_LOOP = /^_PyEval_EvalFrameDefault$/;

/**
 * The verdict with the crashing thread's Python frames in place of the evaluation loops that ran them,
 * and its culprit read again over the mixed stack. In 3.11 one `_PyEval_EvalFrameDefault` runs the
 * Python frames from the innermost up to the frame it was entered with (`entry`): each loop, innermost
 * first, takes the next such group. Where the frames skip levels (a deep recursion's outermost
 * frames, fetched apart from its innermost), the loops past the gap are left as they are: which
 * groups they ran is not known. Unchanged where the thread has no Python frames or no loop.
 */
export function withPython(verdict: Verdict, python: { reading: PythonReading | null } | null): Verdict {
  const lwp = verdict.thread?.lwp ?? null;
  const thread = python?.reading?.threads.find((t) => t.lwp !== null && t.lwp === lwp);
  if (!thread || thread.frames.length === 0) return verdict;
  const from = verdict.caught?.interrupted ?? 0;
  const numbered = mixedFrames(verdict.frames, thread, from);
  if (numbered === verdict.frames) return verdict;
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
  if (next === 0) return native;
  return mixed.map((frame, level) => (frame.found === "runtime" || frame.level === level ? { ...frame, level } : { ...frame, level, unwound: frame.unwound ?? frame.level }));
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
