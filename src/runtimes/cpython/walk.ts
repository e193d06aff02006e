/**
 * The walk py-spy and pystack make, over any memory: from `_PyRuntime` to each interpreter, each of
 * its thread states, and each thread's chain of frames (the frame it runs, then each `previous`),
 * reading each frame's code for its function, file and line. Bounded in threads, frames and
 * string lengths; a list that loops back is a stop, and what could not be read stops that thread's
 * walk with a reason, keeping the frames before it.
 */
import { lineAt } from "./line-table.js";
import type { PythonLayout } from "./layouts.js";
import type { ProcessMemory } from "./memory.js";
import { hexAddress, pointerAt, readCode, type Read, type TypeAddresses } from "./objects.js";

export interface PythonFrame {
  /** The code's qualified name (`Worker.run`, `<module>`); null where it could not be read. */
  function: string | null;
  file: string | null;
  /** The line the frame was running; null where its code has no line there or its line table could not be read. */
  line: number | null;
  /** The code's first line (its `def`). */
  firstLine: number | null;
  /** The first Python frame of a run of the interpreter loop, called from C: where the native stack holds an evaluation of its own. */
  entry: boolean;
  /** The frame's local variables and their reprs, cut short, where the reader reads them (CPython's gdb extension); null where not read. */
  locals?: { name: string; value: string }[] | null;
}

export interface PythonThread {
  /** The kernel's id of the thread (native_thread_id), as the core's threads are numbered; null where not set. */
  lwp: number | null;
  /** The innermost first. */
  frames: PythonFrame[];
  /** Everything of the thread's frames was read; when not, `why` says what was not. */
  complete: boolean;
  why: string | null;
}

export interface PythonWalk {
  threads: PythonThread[];
  notes: string[];
}

const MAX_INTERPRETERS = 64;
const MAX_THREADS = 1000;
const MAX_FRAMES = 1000;

/** Every interpreter's threads and their frames, from the runtime state at `runtime`. */
export function walkThreads(memory: ProcessMemory, layout: PythonLayout, types: TypeAddresses, runtime: bigint): PythonWalk {
  const notes: string[] = [];
  const threads: PythonThread[] = [];
  const head = readPointer(memory, runtime + BigInt(layout.runtime.interpretersHead));
  if (head === null) return { threads, notes: [`_PyRuntime at ${hexAddress(runtime)} is not in the core: no interpreter could be found`] };
  const interpreters = new Set<bigint>();
  const states = new Set<bigint>();
  for (let interpreter = head; interpreter !== 0n; ) {
    if (interpreters.has(interpreter)) {
      notes.push(`the list of interpreters loops back to ${hexAddress(interpreter)}`);
      break;
    }
    if (interpreters.size === MAX_INTERPRETERS) {
      notes.push(`more than ${MAX_INTERPRETERS} interpreters: the rest were not read`);
      break;
    }
    interpreters.add(interpreter);
    const bytes = memory.read(interpreter, layout.interpreter.size);
    if (bytes === null) {
      notes.push(`the interpreter at ${hexAddress(interpreter)} is not in the core: its threads and those of the interpreters after it are unknown`);
      break;
    }
    for (let state = pointerAt(bytes, layout.interpreter.threadsHead); state !== 0n; ) {
      if (states.has(state)) {
        notes.push(`the list of threads loops back to ${hexAddress(state)}`);
        break;
      }
      if (states.size === MAX_THREADS) {
        notes.push(`more than ${MAX_THREADS} threads: the rest were not read`);
        return { threads, notes };
      }
      states.add(state);
      const thread = memory.read(state, layout.thread.size);
      if (thread === null) {
        notes.push(`the thread state at ${hexAddress(state)} is not in the core: it and the threads after it are unknown`);
        break;
      }
      threads.push(readThread(memory, layout, types, thread));
      state = pointerAt(thread, layout.thread.next);
    }
    interpreter = pointerAt(bytes, layout.interpreter.next);
  }
  return { threads, notes };
}

function readThread(memory: ProcessMemory, layout: PythonLayout, types: TypeAddresses, state: Buffer): PythonThread {
  const native = pointerAt(state, layout.thread.nativeThreadId);
  const lwp = native === 0n || native > 0x7fffffffn ? null : Number(native);
  const cframe = pointerAt(state, layout.thread.cframe);
  const current = cframe === 0n ? null : readPointer(memory, cframe + BigInt(layout.cframe.currentFrame));
  if (current === null) return { lwp, frames: [], complete: false, why: cframe === 0n ? "its thread state has no C frame" : `its C frame at ${hexAddress(cframe)} is not in the core` };
  const { frames, why } = readFrames(memory, layout, types, current);
  return { lwp, frames, complete: why === null, why };
}

/** The chain of frames from `first`, innermost first, skipping those not yet started (as CPython's own tracebacks do). */
function readFrames(memory: ProcessMemory, layout: PythonLayout, types: TypeAddresses, first: bigint): { frames: PythonFrame[]; why: string | null } {
  const frames: PythonFrame[] = [];
  const problems: string[] = [];
  const seen = new Set<bigint>();
  for (let address = first; address !== 0n; ) {
    if (seen.has(address)) return { frames, why: [...problems, `its frames loop back to ${hexAddress(address)}`].join("; ") };
    if (seen.size === MAX_FRAMES) return { frames, why: [...problems, `more than ${MAX_FRAMES} frames: the outer ones were not read`].join("; ") };
    seen.add(address);
    const bytes = memory.read(address, layout.frame.size);
    if (bytes === null) return { frames, why: [...problems, `the frame at ${hexAddress(address)} is not in the core: it and the frames that called it are unknown`].join("; ") };
    const code = readCode(memory, layout, types, pointerAt(bytes, layout.frame.code));
    if ("why" in code) return { frames, why: [...problems, `the frame at ${hexAddress(address)}: ${code.why}; it and the frames that called it are unknown`].join("; ") };
    const { value } = code;
    const offset = pointerAt(bytes, layout.frame.prevInstr) - value.instructions;
    const started = bytes[layout.frame.owner] === layout.ownedByGenerator || offset >= BigInt(value.firstTraceable * 2);
    if (started) {
      const frame = {
        function: text(value.function, problems),
        file: text(value.file, problems),
        line: lineOf(value.lineTable, value.firstLine, offset, problems),
        firstLine: value.firstLine,
        entry: bytes[layout.frame.isEntry] !== 0,
      };
      frames.push(frame);
    }
    address = pointerAt(bytes, layout.frame.previous);
  }
  return { frames, why: problems.length > 0 ? problems.join("; ") : null };
}

function text(read: Read<string>, problems: string[]): string | null {
  if ("value" in read) return read.value;
  problems.push(read.why);
  return null;
}

/** The line of the instruction `offset` bytes into the code; an offset no instruction can have is no line. */
function lineOf(table: Read<Buffer>, firstLine: number, offset: bigint, problems: string[]): number | null {
  if ("why" in table) {
    problems.push(table.why);
    return null;
  }
  if (offset < -2n || offset > BigInt(table.value.length) * 16n) {
    problems.push(`the frame's last instruction lies ${offset} bytes from its code's start, outside it`);
    return null;
  }
  return lineAt(table.value, firstLine, Number(offset));
}

function readPointer(memory: ProcessMemory, address: bigint): bigint | null {
  const bytes = memory.read(address, 8);
  return bytes === null ? null : pointerAt(bytes, 0);
}
