/**
 * The walk py-spy and pystack make, over any memory: from `_PyRuntime` to each interpreter, each of
 * its thread states, and each thread's chain of frames (the frame it runs, then each `previous`),
 * reading each frame's code for its function, file and line. Bounded in threads, frames and
 * string lengths; a list that loops back is a stop, and what could not be read stops that thread's
 * walk with a reason, keeping the frames before it.
 */
import { liveDepthAt } from "./exception-table.js";
import { lineAt } from "./line-table.js";
import type { PythonLayout } from "./layouts.js";
import type { ProcessMemory } from "./memory.js";
import { hexAddress, pointerAt, readCode, type CodeObject, type Read } from "./objects.js";
import { PythonObjects, type PythonLock, type ValueAddresses } from "./values.js";

/** A lock as a frame shows it: the variable that holds it, where one of the frame's locals or its module's globals does. */
export interface NamedLock extends PythonLock {
  /** `orders`, `self.inventory`; null where no variable of the frame's reach holds it. */
  name: string | null;
}

/** A local variable and its value's short repr. */
export interface PythonLocal {
  name: string;
  value: string;
}

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
  /** Its local variables as they stood (unbound ones left out, at most MAX_LOCALS); null where they were not read. */
  locals?: PythonLocal[] | null;
  /** The locks the frame holds by a `with` block it is in (their `__exit__` kept on its stack). */
  holds?: NamedLock[];
}

export interface PythonThread {
  /** The kernel's id of the thread (native_thread_id), as the core's threads are numbered; null where not set. */
  lwp: number | null;
  /** Python's id of the thread (`threading.get_ident()`, its pthread), as an RLock records its holder; null where not read. */
  ident?: string | null;
  /** Its `threading.Thread`'s name (`MainThread` for the main thread's); null where it has none or it could not be read. */
  name?: string | null;
  /**
   * The lock its innermost frame was taking (`with lock:`, `lock.acquire()`) and another held: what
   * it waits for, where its native stack is in the interpreter's lock wait. Null where none was being taken.
   */
  taking?: NamedLock | null;
  /** The exception being raised in it at the time: its type and message (the first argument, where a str). */
  exception?: { type: string; message: string | null } | null;
  /** The innermost first. */
  frames: PythonFrame[];
  /** Everything of the thread's frames was read; when not, `why` says what was not. */
  complete: boolean;
  why: string | null;
}

export interface PythonWalk {
  threads: PythonThread[];
  /** Who held the GIL: the kernel's id of its thread; null where none did or it could not be read. */
  gilHolder?: number | null;
  notes: string[];
}

const MAX_INTERPRETERS = 64;
const MAX_THREADS = 1000;
const MAX_FRAMES = 1000;
/** Locals read of a frame at most, and frames whose locals are read (the innermost of each thread). */
export const MAX_LOCALS = 24;
const FRAMES_WITH_LOCALS = 32;
/** Locals read in all, over every thread: a server's thousand threads are read for their frames, not each one's variables. */
const MAX_LOCALS_READ = 4000;
/** Slots above a frame's known stack searched for the lock it is taking. */
const TAKING_SLOTS = 4;

/** Every interpreter's threads and their frames, from the runtime state at `runtime`. */
export function walkThreads(memory: ProcessMemory, layout: PythonLayout, types: ValueAddresses, runtime: bigint): PythonWalk {
  const notes: string[] = [];
  const objects = new PythonObjects(memory, layout, types);
  const states = new Map<bigint, number | null>();
  const main = memory.read(runtime + BigInt(layout.runtime.mainThread), 8);
  const walk = walkStates(objects, runtime, notes, states, main === null ? null : pointerAt(main, 0), { locals: MAX_LOCALS_READ });
  const gil = memory.read(runtime + BigInt(layout.runtime.gilLastHolder), layout.runtime.gilLocked - layout.runtime.gilLastHolder + 4);
  const held = gil === null ? null : gil.readInt32LE(layout.runtime.gilLocked - layout.runtime.gilLastHolder) !== 0;
  const gilHolder = gil === null || !held ? null : (states.get(pointerAt(gil, 0)) ?? null);
  return { ...walk, gilHolder };
}

function walkStates(objects: PythonObjects, runtime: bigint, notes: string[], lwps: Map<bigint, number | null>, main: bigint | null, budget: { locals: number }): PythonWalk {
  const { memory, layout } = objects;
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
      const read = readThread(objects, thread, main, budget);
      threads.push(read);
      lwps.set(state, read.lwp);
      state = pointerAt(thread, layout.thread.next);
    }
    interpreter = pointerAt(bytes, layout.interpreter.next);
  }
  return { threads, notes };
}

function readThread(objects: PythonObjects, state: Buffer, main: bigint | null, budget: { locals: number }): PythonThread {
  const { memory, layout } = objects;
  const native = pointerAt(state, layout.thread.nativeThreadId);
  const lwp = native === 0n || native > 0x7fffffffn ? null : Number(native);
  const ident = pointerAt(state, layout.thread.threadId);
  const known = { lwp, ident: ident === 0n ? null : ident.toString(), exception: exceptionOf(objects, pointerAt(state, layout.thread.currentExceptionType), pointerAt(state, layout.thread.currentException)) };
  const mainName = ident !== 0n && ident === main ? "MainThread" : null;
  const cframe = pointerAt(state, layout.thread.cframe);
  const current = cframe === 0n ? null : readPointer(memory, cframe + BigInt(layout.cframe.currentFrame));
  if (current === null) return { ...known, name: mainName, frames: [], taking: null, complete: false, why: cframe === 0n ? "its thread state has no C frame" : `its C frame at ${hexAddress(cframe)} is not in the core` };
  const { frames, taking, thread, why } = readFrames(objects, current, budget);
  const name = thread === null ? null : objects.text(objects.attribute(thread, "_name") ?? 0n);
  return { ...known, name: name ?? mainName, frames, taking, complete: why === null, why };
}

/**
 * The exception being raised: its type's name and message. C code that sets an error leaves it
 * unnormalized (the type, and a str or args as the value); raised from Python, the value is the
 * exception itself, whose first argument is its message where it is a str.
 */
function exceptionOf(objects: PythonObjects, type: bigint, value: bigint): PythonThread["exception"] {
  if (type === 0n && value === 0n) return null;
  const named = type === 0n ? null : objects.typeObjectName(type);
  const valueType = value === 0n ? null : objects.typeName(value);
  if (value !== 0n && valueType !== null && valueType === named) {
    const args = objects.pointer(value + BigInt(objects.layout.exception.args));
    const first = args === null ? null : (objects.tupleItems(args, 1)?.[0] ?? null);
    return { type: named, message: first === null ? null : objects.text(first) };
  }
  const name = named ?? valueType;
  if (name === null) return null;
  return { type: name, message: value === 0n ? null : (objects.text(value) ?? (named === null ? null : objects.repr(value))) };
}

/** The chain of frames from `first`, innermost first, skipping those not yet started (as CPython's own tracebacks do). */
function readFrames(objects: PythonObjects, first: bigint, budget: { locals: number }): { frames: PythonFrame[]; taking: NamedLock | null; thread: bigint | null; why: string | null } {
  const { memory, layout, types } = objects;
  let taking: NamedLock | null = null;
  // The threading.Thread the thread runs: `self` of threading's bootstrap, its outermost frame.
  let thread: bigint | null = null;
  const frames: PythonFrame[] = [];
  const problems: string[] = [];
  const seen = new Set<bigint>();
  for (let address = first; address !== 0n; ) {
    if (seen.has(address)) return { frames, taking, thread, why: [...problems, `its frames loop back to ${hexAddress(address)}`].join("; ") };
    if (seen.size === MAX_FRAMES) return { frames, taking, thread, why: [...problems, `more than ${MAX_FRAMES} frames: the outer ones were not read`].join("; ") };
    seen.add(address);
    const bytes = memory.read(address, layout.frame.size);
    if (bytes === null) return { frames, taking, thread, why: [...problems, `the frame at ${hexAddress(address)} is not in the core: it and the frames that called it are unknown`].join("; ") };
    const code = readCode(memory, layout, types, pointerAt(bytes, layout.frame.code));
    if ("why" in code) return { frames, taking, thread, why: [...problems, `the frame at ${hexAddress(address)}: ${code.why}; it and the frames that called it are unknown`].join("; ") };
    const { value } = code;
    const offset = pointerAt(bytes, layout.frame.prevInstr) - value.instructions;
    const started = bytes[layout.frame.owner] === layout.ownedByGenerator || offset >= BigInt(value.firstTraceable * 2);
    if (started) {
      const stack = frameStack(objects, address, bytes, value, offset);
      const frame = {
        function: text(value.function, problems),
        file: text(value.file, problems),
        line: lineOf(value.lineTable, value.firstLine, offset, problems),
        firstLine: value.firstLine,
        entry: bytes[layout.frame.isEntry] !== 0,
        locals: frames.length < FRAMES_WITH_LOCALS && budget.locals > 0 ? readLocals(objects, stack.locals, budget) : null,
        holds: stack.live.flatMap((slot) => {
          const of = objects.methodOfLock(slot);
          return of?.method === "__exit__" ? [named(objects, of.lock, of.self, stack.locals, bytes)] : [];
        }),
      };
      if (frames.length === 0) taking = takenLock(objects, stack.above, stack.locals, bytes);
      if (frame.function === "Thread._bootstrap" && frame.file?.endsWith("threading.py")) thread = stack.locals.find((local) => local.name === "self")?.value ?? null;
      frames.push(frame);
    }
    address = pointerAt(bytes, layout.frame.previous);
  }
  return { frames, taking, thread, why: problems.length > 0 ? problems.join("; ") : null };
}

/**
 * A frame's variables and value stack: its locals by name, the stack's slots known to be live (up
 * to the top the interpreter saved when the frame called another, else the depth the exception
 * table keeps where it is), and the few slots above them, where the instruction running puts what
 * it works on (a `with` statement's `__exit__`, a method and its object). Empty where the code's
 * counts are not believable or its slots are not in the core.
 */
function frameStack(objects: PythonObjects, address: bigint, bytes: Buffer, code: CodeObject, offset: bigint): { locals: { name: string; value: bigint }[]; live: bigint[]; above: bigint[] } {
  const { memory, layout } = objects;
  const none = { locals: [], live: [], above: [] };
  if (code.localsCount < 0 || code.localsCount > 4096 || code.stackSize < 0 || code.stackSize > 4096) return none;
  const slots = memory.read(address + BigInt(layout.frame.size), (code.localsCount + code.stackSize) * 8);
  if (slots === null) return none;
  const slot = (i: number) => pointerAt(slots, i * 8);
  const names = objects.tupleItems(code.localNames, code.localsCount) ?? [];
  const locals = names.flatMap((name, i) => {
    const text = objects.text(name);
    return text === null || slot(i) === 0n ? [] : [{ name: text, value: slot(i) }];
  });
  const saved = bytes.readInt32LE(layout.frame.stackTop) - code.localsCount;
  const kept = "value" in code.exceptionTable && offset >= 0n ? liveDepthAt(code.exceptionTable.value, Number(offset / 2n)) : 0;
  const depth = Math.min(code.stackSize, saved >= 0 ? saved : kept);
  const stack = Array.from({ length: code.stackSize }, (_, i) => slot(code.localsCount + i));
  return { locals, live: stack.slice(0, depth).filter((value) => value !== 0n), above: saved >= 0 ? [] : stack.slice(depth, depth + TAKING_SLOTS).filter((value) => value !== 0n) };
}

/** The lock the instruction running was taking, from the slots above the frame's known stack: the lock itself or a method of it. */
function takenLock(objects: PythonObjects, above: bigint[], locals: { name: string; value: bigint }[], frame: Buffer): NamedLock | null {
  for (const slot of above) {
    const lock = objects.lockAt(slot);
    if (lock) return named(objects, lock, slot, locals, frame);
    const method = objects.methodOfLock(slot);
    if (method) return named(objects, method.lock, method.self, locals, frame);
  }
  return null;
}

/**
 * A lock with the name of the variable holding the object taken (`holder`: the lock, or the
 * Condition whose lock it is): a local of the frame, an attribute of one (`self.orders`), or a
 * global of its module.
 */
function named(objects: PythonObjects, lock: PythonLock, holder: bigint, locals: { name: string; value: bigint }[], frame: Buffer): NamedLock {
  const targets = new Set([holder, BigInt(lock.address)]);
  const local = locals.find((entry) => targets.has(entry.value));
  if (local) return { ...lock, name: local.name };
  for (const entry of locals.slice(0, 4)) {
    const attribute = objects.attributes(entry.value)?.find((a) => targets.has(a.value));
    if (attribute) return { ...lock, name: `${entry.name}.${attribute.key}` };
  }
  const globals = pointerAt(frame, objects.layout.frame.globals);
  const global = objects.dictEntries(globals)?.find((entry) => targets.has(entry.value));
  return { ...lock, name: global?.key ?? null };
}

/** A frame's locals' reprs, at most MAX_LOCALS, taken from what the walk may still read. */
function readLocals(objects: PythonObjects, locals: { name: string; value: bigint }[], budget: { locals: number }): PythonLocal[] {
  const taken = locals.slice(0, Math.min(MAX_LOCALS, budget.locals));
  budget.locals -= taken.length;
  return taken.flatMap(({ name, value }) => repr(objects, name, value));
}

function repr(objects: PythonObjects, name: string, value: bigint): PythonLocal[] {
  const shown = objects.repr(value);
  return shown === null ? [] : [{ name, value: shown }];
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
