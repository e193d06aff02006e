/** What triage returns: the `crash` object of the JSON report, and what a report shows next to it. */
import type { Platform } from "../../debuggers/model.js";
import type { SharedLibrary } from "../../debuggers/probe.js";
import type { Crash } from "../../report/schema.js";
import type { PlacedFrame } from "../culprit.js";
import type { FaultExplanation } from "../fault.js";
import type { FaultPlace } from "../address-space.js";
import type { Recursion } from "../recursion.js";
import type { JavaHeap } from "../../runtimes/jvm/index.js";
import type { ThrownError } from "../../runtimes/node/index.js";

export interface ThreadGroup {
  /** The innermost function the threads are in. */
  function: string;
  threads: number[];
}

/** A goroutine as the runtime left it: its id (null where it was found by its frames), what it waits on, its first frame of the program's own. */
export interface GoroutineSummary {
  id: number | null;
  status: string;
  /** "chan receive", "a sync.Mutex"; null for a goroutine that was running. */
  waitsOn: string | null;
  /** The address of the sync.Mutex it waits to lock, when the runtime's semaphore table shows it. */
  lock: string | null;
  function: string | null;
  file: string | null;
  line: number | null;
}

/** Go's runtime as triage read it from the dump. */
export interface GoReading {
  /** The Go release that built the program. */
  version: string;
  /** The goroutine that panicked or threw, or the one a deadlock or hang is blamed on. */
  goroutine: GoroutineSummary | null;
  /** Every goroutine of the program's own that waited (a deadlock, a hang). */
  waiting: GoroutineSummary[];
  /** Whether the debugger unwound the goroutines waiting on locks (Delve does, gdb does not), so the locks their code took could be read; null when none waits on a lock. */
  goroutineFrames: boolean | null;
}

export interface TriageResult {
  crash: Crash;
  /** The operating system the dump comes from (its locks, its calling convention); null when unknown. */
  os: Platform["os"] | null;
  /** The crashing thread's frames from the culprit outwards (as many as were fetched). */
  frames: PlacedFrame[];
  /** Runtime and machinery frames above the culprit that `frames` leaves out. */
  hiddenFrames: number;
  /** Frames on the crashing thread's stack. */
  stackDepth: number;
  recursion: Recursion | null;
  registers: { pc: string | null; sp: string | null; fp: string | null };
  /** The faulting instruction, as the debugger printed it. */
  instruction: string | null;
  /** What the faulting instruction did with memory, read like an engineer reads it (memory faults). */
  fault: FaultExplanation | null;
  /** Where the fault address falls in the address space (memory faults). */
  faultPlace?: FaultPlace | null;
  threads: { count: number; groups: ThreadGroup[] };
  /** A hang without a lock cycle: what every thread is blocked on ("all 4 threads are blocked waiting: 3 on a semaphore (in worker), …"). */
  blocked?: string | null;
  /**
   * No lock cycle was found, but these threads wait for locks whose holders the dump did not show
   * (the locks not in it, their code's sources not here): a cycle through them is not ruled out.
   */
  unreadLockOwners?: number[];
  /**
   * No lock cycle was found, but these threads' stacks could not be read (stopped in a system module
   * without unwind information, the program's module not here): what they wait for is not shown.
   */
  unreadStacks?: number[];
  executable: string | null;
  modules: SharedLibrary[];
  /** Every command triage ran, in order. */
  commands: string[];
  /** What triage could not establish, said plainly. */
  notes: string[];
  /**
   * How a stack buffer overflow without a protector showed: a `ret` faulted on the word it popped,
   * a `ret` returned to an address that maps nothing, or a write ran off the top of the stack.
   */
  smashed?: "faulting-ret" | "returned" | "returned-into-code" | "ran-off-top" | "ran-off-bottom" | null;
  /**
   * The library function a memory fault happened in, called by the culprit (`strlen` in libc), with
   * the argument register that holds the faulting address and which argument it is (1 for the
   * first; a report written before it was recorded has none), or the first's holding a NULL for a fault there.
   */
  faultIn?: { function: string; module: string | null; argument: { register: string; value: string; position?: number } | null } | null;
  /** Libraries of the dumped process that are not here as they were (a core from another machine). */
  foreignLibraries?: { path: string; status: "missing" | "different"; found: string | null }[];
  /** The type of the exception nothing caught, when it could be read (`std::runtime_error`, an NSException's name). */
  thrown?: string | null;
  /** The packages of the crash's modules that have no debug information here: whose debug symbols to get. */
  packages?: { path: string; name: string; version: string }[];
  /** A Go program's runtime (null for any other program). */
  go?: GoReading | null;
  /**
   * A fault a crash handler caught: the debugger's number of the frame it interrupted (whose registers
   * are the fault's), its pc, and where the kernel's record of it was read on the signal frame.
   */
  caught?: { frame: number; pc: string; recordAt: string | null } | null;
  /** A HotSpot JVM as the JDK's jhsdb read it (null for another program, or a JVM it could not read). */
  jvm?: JvmFacts | null;
  /** A CPython process's side: its Python threads, the locks each holds and waits for, who held the GIL; absent for other programs. */
  python?: PythonFacts | null;
  /** A Node.js process's side as llnode read it: the thrown error, each JavaScript thread's frames with their arguments, the heap's limit; absent for other programs. */
  node?: NodeFacts | null;
}

/** The Node.js side of the crash, beyond the frames mixed into the stack: only what llnode read. */
export interface NodeFacts {
  /** `v20.20.2` and V8's `11.3.244.8-node.33`, where the binary here could be asked. */
  version: string | null;
  v8: string | null;
  /** The error an uncaught exception threw (the heap's one error object), where it was read; null where not. */
  error: ThrownError | null;
  /** Each thread whose JavaScript frames llnode read (the crashing one first), innermost first, with the command whose output is the evidence. */
  threads: { id: number | null; lwp: number; frames: { function: string | null; file: string | null; line: number | null; args: string }[]; command: string }[];
  /** V8's heap limit where the process died out of memory; null for another death. */
  heapLimit: HeapLimit | null;
  /** What llnode could not read, said plainly. */
  notes: string[];
}

/** V8's old-generation limit: from --max-old-space-size on the command line the core keeps, V8's default where it sets none, unknown where the line is cut short or missing. */
export interface HeapLimit {
  megabytes: number | null;
  from: "flag" | "default" | "unknown";
}

/** The JVM's side of the crash, beyond the frames mixed into the stack. */
export interface PythonFacts {
  version: string | null;
  /** What read the Python side: the interpreter's structures in the core's memory, or its gdb extension. */
  source: string;
  /** What its reading of the threads is kept as evidence under, to cite it; null where it was not kept. */
  threadsCommand: string | null;
  /** Whether the Python threads' waits decided the verdict (a deadlock between Python functions, a hang said in Python). */
  waitsDecided: boolean;
  /** The thread that held the GIL (the debugger's number, the kernel's id, its Python name); null where none did or it was not read. */
  gil: { thread: number | null; lwp: number; name: string | null } | null;
  /** Each Python thread: its name, the locks it holds and the one it waits for (with the debugger's number of its holder), the exception being raised in it, its frames with their locals. */
  threads: {
    id: number | null;
    lwp: number | null;
    name: string | null;
    holds: string[];
    waitsFor: string | null;
    waitsForHeldBy: number | null;
    exception: { type: string; message: string | null } | null;
    frames: { function: string | null; file: string | null; line: number | null; locals: { name: string; value: string }[] | null }[];
  }[];
}

export interface JvmFacts {
  version: string | null;
  /** What read it: `jhsdb clhsdb (JVM 17.0.15+6-Debian-1deb12u1)`. */
  source: string;
  /** The heap's spaces and what holds it, where the VM ran out of memory. */
  heap: JavaHeap | null;
  /** The command whose answer holds the Java threads, frames and locks, to cite it; null where they came from the error log. */
  threadsCommand: string | null;
  /** The JVM's own error log of the crash and what it records, where it was found or named. */
  errorLog: { path: string; says: string; commandLine: string | null; vmState: string | null } | null;
  /** Each Java thread: the debugger's number of its OS thread, its name and state, the locks it holds and the one it waits for. */
  threads: { id: number | null; lwp: number | null; name: string | null; state: string | null; holds: string[]; waitsFor: string | null; waitKind: "monitor" | "ownable" | "wait" | "park" | null; frames: { function: string | null; file: string | null; line: number | null }[] }[];
}
