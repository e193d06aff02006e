/**
 * Typed probes: what the layers above `debuggers/` ask of a dump ("the crashing thread's backtrace,
 * 40 frames", "print `expr` in frame 3", "registers of frame 1"), instead of command strings. Each
 * backend renders a probe in its own syntax and reads its output back into the model, so a playbook
 * is written once for every debugger, and the evidence of a probe is the real output of the command
 * it became.
 *
 * Probes are plain data: they are kept in the graph's checkpointed state (a hypothesis' plan) and
 * a resumed run renders them again to find their evidence.
 */
import type {
  Address,
  Backtrace,
  Disassembly,
  HeapTypeStat,
  ManagedException,
  ManagedStack,
  ManagedThread,
  MonitorLock,
  Register,
  SourceLine,
  SymbolAt,
  ThreadBacktrace,
  ThreadSummary,
  Variable,
} from "./model.js";

/** Where a probe runs: a thread (null: the thread the debugger selected on opening the dump) and a frame. */
export interface Place {
  thread?: number | null;
  frame?: number;
}

/** A value of one of the program's variables or expressions, in the program's language. */
export interface EvaluateProbe extends Place {
  kind: "evaluate";
  /** An expression in the program's source language (C, C++, Rust): `session->client`, `*node`. */
  expression: string;
  /** `hex` prints integers in hexadecimal. */
  format?: "hex";
}

export type Probe =
  /** Every thread with its innermost frame, and which one the debugger selected. */
  | { kind: "threads" }
  /** A thread's stack: its `limit` innermost frames, or outermost with `outermost`. */
  | ({ kind: "backtrace"; limit: number; outermost?: boolean } & Place)
  /** Every thread's stack, or the listed threads', `limit` frames each (all frames when absent). */
  | { kind: "thread-backtraces"; threads: number[] | "all"; limit?: number }
  /** A frame's registers, or only the named ones. */
  | ({ kind: "registers"; names?: string[] } & Place)
  /** One register of the selected frame by its role (`sp`, `pc`) or by its name (`rdi`). */
  | ({ kind: "register"; register: string } & Place)
  | EvaluateProbe
  /** A frame's own description; its canonical frame address (CFA) is what the model reads. */
  | { kind: "frame-info"; frame: number; thread?: number | null }
  | ({ kind: "locals" } & Place)
  | ({ kind: "arguments" } & Place)
  /** The function around a frame's pc; or the code around `address` (`before` bytes before it). */
  | ({ kind: "disassemble"; address?: Address; before?: number } & Place)
  /** `count` instructions from the selected frame's pc (no address) or from `address`. */
  | ({ kind: "instructions"; count: number; address?: Address } & Place)
  /** `count` 8-byte words of memory from `address` (an address or an expression of one). */
  | ({ kind: "memory"; address: string; count: number } & Place)
  /** The NUL-terminated string at `address` (an address or an expression of one). */
  | { kind: "string"; address: string }
  /** `count` consecutive NUL-terminated strings from `address`, each read whole (no length cut). */
  | { kind: "strings"; address: string; count: number }
  /** The symbol at `address`; with `indirect`, at the address stored there. */
  | { kind: "symbol"; address: Address; indirect?: boolean }
  /** The address of a global the program's symbol table names (`runtime.allgs`), for runtimes read from memory. */
  | { kind: "symbol-address"; name: string }
  /** The source file and line of the code at `address`. */
  | { kind: "source-line"; address: Address }
  /** Lines `from`..`to` of a source file. */
  | { kind: "source"; file: string; from: number; to: number }
  /** The signal that ended the process (none for a dump of a live process). */
  | { kind: "exit-signal" }
  /** The signal's full record: code, fault address, sender. */
  | { kind: "signal-info" }
  /** The loaded shared libraries. */
  | { kind: "shared-libraries" }
  /** The program's and libraries' sections and the dump's memory segments. */
  | { kind: "sections" }
  /** The process's memory mappings. */
  | { kind: "mappings" }
  /** The C library's abort message, when abort was called with one (assert, malloc's checks). */
  | { kind: "abort-message" }
  /**
   * .NET's side of the process, read through the runtime's debugger extension (SOS). A backend
   * that has none here renders these harmlessly and reads nothing: the managed threads' null says
   * "no managed runtime to read", which is how the layers above tell a .NET dump.
   */
  | { kind: "managed-threads" }
  /** One thread's managed frames with their parameters and locals (null: the selected thread). */
  | { kind: "managed-stack"; thread?: number | null }
  /** Every thread's managed frames. */
  | { kind: "managed-stacks" }
  /** The managed exception the selected thread holds: what the runtime died with. */
  | { kind: "managed-exception" }
  /** The monitors held, by whom, and how many wait for them. */
  | { kind: "managed-locks" }
  /** Objects on the managed heap, per type. */
  | { kind: "managed-heap" }
  /** Moves the debugger's selection to a thread, or to a frame of the selected thread. */
  | { kind: "select"; thread: number }
  | { kind: "select"; frame: number }
  /** A command in the debugger's own language: what a model, the chat or a user proposed. */
  | { kind: "command"; text: string };

export type ProbeKind = Probe["kind"];
export type ProbeOf<K extends ProbeKind> = Extract<Probe, { kind: K }>;

/** What a backend reads out of a probe's output, per kind. */
export interface Readings {
  threads: ThreadSummary[];
  backtrace: Backtrace;
  "thread-backtraces": ThreadBacktrace[];
  registers: Register[];
  /** The register's value as an address, null when the debugger printed none. */
  register: Address | null;
  /** The printed value, null when the expression could not be evaluated. */
  evaluate: string | null;
  /** The frame's canonical frame address. */
  "frame-info": Address | null;
  locals: Variable[];
  arguments: Variable[];
  disassemble: Disassembly;
  instructions: Disassembly;
  memory: { start: Address | null; words: bigint[] };
  string: string | null;
  strings: (string | null)[];
  symbol: SymbolAt | null;
  "symbol-address": Address | null;
  source: SourceLine[];
  "source-line": { file: string; line: number } | null;
  "exit-signal": number | null;
  "signal-info": SignalRecord | null;
  "shared-libraries": SharedLibrary[];
  sections: TargetFiles;
  mappings: Mapping[];
  "abort-message": string | null;
  /** Null when there is no managed runtime the debugger can read. */
  "managed-threads": ManagedThread[] | null;
  "managed-stack": ManagedStack | null;
  "managed-stacks": ManagedStack[];
  "managed-exception": ManagedException | null;
  "managed-locks": MonitorLock[];
  "managed-heap": HeapTypeStat[];
  select: string;
  command: string;
}

export type Reading<P extends Probe> = Readings[P["kind"]];

/** The signal record a debugger shows (`$_siginfo` in gdb). */
export interface SignalRecord {
  signo: number;
  errno: number;
  code: number;
  address: Address | null;
  /** The sender of a signal sent by a process (SI_USER, SI_QUEUE, SI_TKILL). */
  pid: number | null;
  uid?: number | null;
}

export interface SharedLibrary {
  /** Start and end of the library's code; null when it is not loaded. */
  from: Address | null;
  to: Address | null;
  symbolsRead: boolean;
  /** The debugger says the library has no debugging information. */
  missingDebugInfo: boolean;
  path: string;
}

export interface Mapping {
  start: Address;
  end: Address;
  size: Address;
  offset: Address;
  permissions: string | null;
  objfile: string | null;
}

export interface TargetSection {
  start: Address;
  end: Address;
  /** `load3` for a dump segment, `.text` and the like for a file's sections. */
  name: string;
  /** Which file provides it: "core", "exec", or the path of a shared library. */
  source: string;
  /**
   * False when the debugger does not have the module's file, only its extent from the dump (a
   * minidump's system DLL on another machine): no symbols, no unwind tables.
   */
  loaded?: boolean;
}

export interface TargetFiles {
  executable: string | null;
  core: string | null;
  sections: TargetSection[];
}

/** A backend's language for probes: how it says each, and how it reads what came back. */
export interface Vocabulary {
  /** The debugger's name as a user knows it (`gdb`), for sentences about what it printed. */
  readonly debugger: string;
  render(probe: Probe): string;
  read<P extends Probe>(probe: P, output: string): Reading<P>;
  /** The probe a command of this debugger is, when it is one (so a model's `bt 40` counts as the backtrace). */
  recognise(command: string): Probe | null;
  /** Whether a command of this debugger moves its selected thread or frame. */
  movesSelection(command: string): boolean;
  /** A few lines of this debugger's syntax for a prompt: how to ask for the common things. */
  readonly syntax: string;
  /**
   * A command that has the debugger read the names of every compilation unit's source files, as
   * its first lookup of a source file by name would, and changes nothing any other command
   * answers. Absent where that first lookup costs nothing worth moving.
   */
  readonly readSourceNames?: string;
}

/** A backend's commands that are probes: each a pattern, and the probe a command matching it is. */
export type CommandPatterns = readonly (readonly [RegExp, (match: RegExpExecArray) => Probe])[];

/** The probe of the first pattern `command` matches, for a vocabulary's `recognise`; null when none does. */
export function probeOfCommand(patterns: CommandPatterns, command: string): Probe | null {
  for (const [pattern, probe] of patterns) {
    const match = pattern.exec(command);
    if (match) return probe(match);
  }
  return null;
}

/** Probe constructors, for the common asks. */
export const probes = {
  backtrace: (limit: number, place: Place = {}): ProbeOf<"backtrace"> => ({ kind: "backtrace", limit, ...place }),
  evaluate: (expression: string, place: Place = {}, format?: "hex"): EvaluateProbe => ({ kind: "evaluate", expression, ...place, ...(format ? { format } : {}) }),
  frameInfo: (frame: number): ProbeOf<"frame-info"> => ({ kind: "frame-info", frame }),
  locals: (place: Place = {}): ProbeOf<"locals"> => ({ kind: "locals", ...place }),
  arguments: (place: Place = {}): ProbeOf<"arguments"> => ({ kind: "arguments", ...place }),
  registers: (place: Place = {}): ProbeOf<"registers"> => ({ kind: "registers", ...place }),
  register: (register: string, place: Place = {}): ProbeOf<"register"> => ({ kind: "register", register, ...place }),
  memory: (address: string, count: number, place: Place = {}): ProbeOf<"memory"> => ({ kind: "memory", address, count, ...place }),
  string: (address: string): ProbeOf<"string"> => ({ kind: "string", address }),
  source: (file: string, from: number, to = from): ProbeOf<"source"> => ({ kind: "source", file, from, to }),
  symbol: (address: Address, indirect = false): ProbeOf<"symbol"> => ({ kind: "symbol", address, ...(indirect ? { indirect } : {}) }),
  disassemble: (place: Place = {}): ProbeOf<"disassemble"> => ({ kind: "disassemble", ...place }),
  command: (text: string): ProbeOf<"command"> => ({ kind: "command", text }),
} as const;

/** The same probe addressed to a thread and frame (null/0 leave it where the debugger stands). */
export function placed<P extends Probe>(probe: P, place: Place): P {
  if (!PLACEABLE.has(probe.kind)) return probe;
  const next: Record<string, unknown> = { ...probe };
  if (place.thread !== undefined && place.thread !== null) next.thread = place.thread;
  // A frame-info probe names its frame itself.
  if (probe.kind !== "frame-info" && place.frame !== undefined && place.frame !== 0) next.frame = place.frame;
  return next as P;
}

const PLACEABLE = new Set<ProbeKind>(["backtrace", "registers", "register", "evaluate", "frame-info", "locals", "arguments", "disassemble", "instructions", "memory"]);

/**
 * A canonical text for a probe: equal probes have equal keys, whatever the order of their fields.
 * Fields in code-point order, not `localeCompare`'s: its first call builds ICU's collator, ~5 ms of
 * every triage, for field names that are plain ASCII (the key never leaves the process).
 */
export function probeKey(probe: Probe): string {
  const entries = Object.entries(probe)
    .filter(([, value]) => value !== undefined && value !== null)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(Object.fromEntries(entries));
}
