/**
 * .NET's side of a crash or a hang, over the model's managed readings (SOS under cdb). JIT-compiled
 * code has no symbols for a native debugger: the culprit of a managed exception is the program's
 * own first frame on the managed stack of the thread that threw, and a hang's lock cycles are the
 * monitors' owners (`!syncblk`) against the one each thread waits for in `Monitor.Enter`.
 */
import type { Inspector } from "../debuggers/inspector.js";
import type { HeapTypeStat, ManagedException, ManagedFrame, ManagedStack, ManagedThread, MonitorLock } from "../debuggers/model.js";
import type { Crash } from "../report/schema.js";
import type { PlacedFrame } from "./culprit.js";
import type { DeadlockEdge } from "./deadlock.js";

/** What SOS says of a .NET dump. */
export interface ManagedFindings {
  threads: ManagedThread[];
  /** The exception the runtime died with; null for a hang, or a thread that holds none. */
  exception: ManagedException | null;
  /** The managed stack of the thread that threw, or of the first thread of the first cycle. */
  stack: ManagedFrame[];
  /** Index in `stack` of the program's own first frame. */
  culprit: number | null;
  cycles: DeadlockEdge[][];
  heap: HeapTypeStat[];
}

/** The runtime's and the framework's code: never the culprit. */
const FRAMEWORK = /^(?:System|Microsoft|Internal|Interop|Windows)\./;
/** Assemblies of the framework, when a listing names the assembly. */
const FRAMEWORK_ASSEMBLY = /^(?:System|Microsoft|mscorlib|netstandard|WindowsBase|PresentationCore|PresentationFramework)(?:\.|$)/i;
/** Waiting to enter a monitor: `lock (x)`, `Monitor.Enter(x)`, `Monitor.TryEnter(x, timeout)`. */
const MONITOR_ENTER = /^System\.Threading\.Monitor\.(?:Reliable)?(?:Try)?Enter\b/;
/** Program frames a signature names, as for native stacks. */
const SIGNATURE_FRAMES = 3;

/**
 * Reads the managed side of a dump: null when the debugger reads no .NET runtime in it (a native
 * program, or no SOS). Of a .NET dump, the threads and the heap's statistics are always read, as
 * evidence.
 */
export async function readManaged(q: Inspector, stop: "exception" | "hang"): Promise<ManagedFindings | null> {
  const threads = await q.managedThreads();
  if (threads === null) return null;
  let exception: ManagedException | null = null;
  let stack: ManagedFrame[] = [];
  let cycles: DeadlockEdge[][] = [];
  if (stop === "exception") {
    exception = await q.managedException();
    // Older SOS names no assembly in `!clrstack`; `!pe` does, for the frames the exception went through.
    const assemblies = new Map((exception?.stack ?? []).map((frame) => [frame.function, frame.module]));
    stack = ((await q.managedStack())?.frames ?? []).map((frame) => ({ ...frame, module: frame.module ?? assemblies.get(frame.function) ?? null }));
    // `!clrstack` of a thread the runtime already unwound shows nothing; `!pe` kept the frames it was thrown through.
    if (programFrame(stack) === null && exception) stack = exception.stack;
  } else {
    const locks = await q.monitorLocks();
    // Only a held monitor can be waited for: without one, no thread's stack needs reading.
    if (locks.some((lock) => lock.ownerThread !== null)) {
      const stacks = await q.managedStacks();
      cycles = monitorCycles(stacks, locks);
      const first = cycles[0]?.[0]?.thread;
      stack = stacks.find((s) => s.thread === first)?.frames ?? [];
    }
  }
  const heap = await q.managedHeap();
  const culprit = cycles.length > 0 ? waitingFrame(stack) : programFrame(stack);
  return { threads, exception, stack, culprit, cycles, heap };
}

/** What the runtime died with: `System.NullReferenceException: Object reference not set…`. */
export function exceptionText(exception: ManagedException | null): string | null {
  if (!exception) return null;
  return exception.message ? `${exception.type}: ${exception.message}` : exception.type;
}

/** The index of the program's own first frame: not the runtime's transitions, not the framework's methods. */
export function programFrame(frames: ManagedFrame[]): number | null {
  const index = frames.findIndex(isProgramFrame);
  return index < 0 ? null : index;
}

function isProgramFrame(frame: ManagedFrame): boolean {
  return !frame.runtime && frame.function !== null && !FRAMEWORK.test(frame.function) && !(frame.module !== null && FRAMEWORK_ASSEMBLY.test(frame.module));
}

/** Whether a thread waits to enter a monitor. */
export function waitsForMonitor(stack: ManagedStack): boolean {
  return stack.frames.some((frame) => MONITOR_ENTER.test(frame.function ?? ""));
}

/** A deadlocked thread's own frame: the program's first frame below its wait to enter a monitor. */
function waitingFrame(frames: ManagedFrame[]): number | null {
  const enter = frames.findIndex((frame) => MONITOR_ENTER.test(frame.function ?? ""));
  const below = programFrame(frames.slice(enter + 1));
  return below === null ? null : enter + 1 + below;
}

/** A method as people name it: `OrderService.Pricing.Discount`, without its parameter types. */
export function methodName(signature: string): string {
  const open = signature.indexOf("(");
  return (open < 0 ? signature : signature.slice(0, open)).trim();
}

/**
 * The cycles of threads each waiting for a monitor the next one holds. A thread waits in
 * `Monitor.Enter`/`ReliableEnter`; the object is that frame's parameter when SOS shows it, else,
 * in the program's first frame below it, the one monitor among its parameters and locals that
 * another thread owns (the caller of `lock (to)` while holding `from` has both at hand). Each cycle
 * starts at its lowest thread number.
 */
export function monitorCycles(stacks: ManagedStack[], locks: MonitorLock[]): DeadlockEdge[][] {
  const owned = new Map(locks.filter((lock) => lock.ownerThread !== null).map((lock) => [lock.object, lock]));
  const waits = new Map<number, DeadlockEdge>();
  for (const stack of stacks) {
    const thread = stack.thread;
    if (thread === null) continue;
    const enter = stack.frames.findIndex((frame) => MONITOR_ENTER.test(frame.function ?? ""));
    if (enter < 0) continue;
    const own = waitingFrame(stack.frames);
    const caller = own === null ? null : (stack.frames[own] ?? null);
    const awaited = (values: ManagedFrame["parameters"]) =>
      values.map((value) => ({ name: value.name, lock: owned.get(value.value) })).find((found) => found.lock !== undefined && found.lock.ownerThread !== thread);
    const found = awaited(stack.frames[enter]?.parameters ?? []) ?? awaited([...(caller?.parameters ?? []), ...(caller?.locals ?? [])]);
    if (!found?.lock || found.lock.ownerThread === null) continue;
    // Said as C# declares it, `Bank.Account to`; a local SOS cannot name is listed by its stack slot.
    const named = /^[A-Za-z_]\w*$/.test(found.name);
    waits.set(thread, {
      thread,
      function: caller?.function ? methodName(caller.function) : null,
      file: caller?.file ?? null,
      line: caller?.line ?? null,
      lock: found.lock.object,
      lockName: named ? `${found.lock.type} ${found.name}` : found.lock.type,
      heldByThread: found.lock.ownerThread,
    });
  }
  const cycles: DeadlockEdge[][] = [];
  const seen = new Set<number>();
  for (const start of [...waits.keys()].sort((a, b) => a - b)) {
    const path: number[] = [];
    let at: number | null | undefined = start;
    while (at !== undefined && at !== null && !path.includes(at) && !seen.has(at)) {
      path.push(at);
      at = waits.get(at)?.heldByThread;
    }
    for (const thread of path) seen.add(thread);
    if (at === undefined || at === null || !path.includes(at)) continue;
    const members = path.slice(path.indexOf(at));
    const lowest = members.indexOf(Math.min(...members));
    cycles.push([...members.slice(lowest), ...members.slice(0, lowest)].map((thread) => waits.get(thread) as DeadlockEdge));
  }
  return cycles;
}

/**
 * Triage's result with the managed side in it: the culprit, the signature and the frames are the
 * program's managed ones (the native stack shows the runtime and JIT-compiled code it cannot name).
 */
export function withManaged<R extends { crash: Crash; frames: PlacedFrame[]; hiddenFrames: number; stackDepth: number }>(result: R, managed: ManagedFindings | null): R {
  if (managed === null || managed.culprit === null) return result;
  const frames = managed.stack.map(placedFrame);
  const culprit = managed.stack[managed.culprit] as ManagedFrame;
  const own = managed.stack.slice(managed.culprit).filter(isProgramFrame).slice(0, SIGNATURE_FRAMES);
  const { crash } = result;
  return {
    ...result,
    crash: {
      ...crash,
      culprit: { function: culprit.function ? methodName(culprit.function) : null, file: culprit.file, line: culprit.line, frame: managed.culprit, module: culprit.module, language: null },
      signature: crash.kind === "deadlock" ? crash.signature : [crash.kind, ...own.map((frame) => methodName(frame.function ?? "??"))].join(" | "),
    },
    frames: frames.slice(managed.culprit),
    hiddenFrames: managed.culprit,
    stackDepth: frames.length,
  };
}

/** A managed frame in the shape the report's frames take (no pc: SOS's IP is JIT-compiled code). */
function placedFrame(frame: ManagedFrame, level: number): PlacedFrame {
  return {
    level,
    address: null,
    function: frame.function ? methodName(frame.function) : null,
    args: frame.parameters.map((p) => `${p.name}=${p.value}`).join(", "),
    file: frame.file,
    line: frame.line,
    from: frame.module,
    module: frame.module,
  };
}
