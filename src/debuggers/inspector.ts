/**
 * The one interface to ask a dump for the model: threads, a thread's frames, registers, memory,
 * strings, variables, values, code, symbols, a frame's CFA, and .NET's managed side. Every question is a probe that the
 * backend renders in its own syntax; whoever supplies `ask` decides where the output goes (the
 * analysis's executor keeps it as evidence; `dumpdbg triage` only reads it).
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
import type { Place, Probe, Reading, SharedLibrary, SignalRecord, TargetFiles, Vocabulary } from "./probe.js";
import type { CommandErrorType, DebuggerSession } from "./session.js";

export interface Answer<P extends Probe> {
  ok: boolean;
  /** The output read into the model; null when the command failed. */
  reading: Reading<P> | null;
  errorType: CommandErrorType | null;
  error: string | null;
  /** The command the probe became. */
  command: string;
}

export type Ask = <P extends Probe>(probe: P) => Promise<Answer<P>>;

/** Probes asked straight of a session, for callers that keep no evidence. */
export function askSession(session: DebuggerSession): Ask {
  return async (probe) => {
    const command = session.vocabulary.render(probe);
    const result = await session.run(command);
    return answerOf(session.vocabulary, probe, command, result);
  };
}

export function answerOf<P extends Probe>(
  vocabulary: Vocabulary,
  probe: P,
  command: string,
  result: { ok: boolean; output: string; errorType?: CommandErrorType | null; error?: string | null },
): Answer<P> {
  // A memory read that runs into unmapped memory fails after printing what it could read; a
  // backtrace that timed out keeps the frames printed before the one the debugger could not unwind.
  const partial = (probe.kind === "memory" || (probe.kind === "backtrace" && result.errorType === "timeout")) && result.output !== "";
  return {
    ok: result.ok,
    reading: result.ok || partial ? vocabulary.read(probe, result.output) : null,
    errorType: result.errorType ?? null,
    error: result.error ?? null,
    command,
  };
}

/** Named questions over `ask`; each returns null (or an empty list) when the debugger could not answer. */
export class Inspector {
  /** Failures worth telling the user (timeouts, a dead debugger), as "command: why". */
  readonly problems: string[] = [];

  constructor(readonly ask: Ask) {}

  async read<P extends Probe>(probe: P): Promise<Reading<P> | null> {
    const answer = await this.ask(probe);
    if (!answer.ok && answer.errorType && answer.errorType !== "debugger_error") this.problems.push(`${answer.command}: ${answer.error ?? answer.errorType}`);
    return answer.reading;
  }

  async threads(): Promise<ThreadSummary[]> {
    return (await this.read({ kind: "threads" })) ?? [];
  }
  async backtrace(limit: number, place: Place = {}, outermost = false): Promise<Backtrace> {
    return (await this.read({ kind: "backtrace", limit, ...(outermost ? { outermost } : {}), ...place })) ?? { frames: [], truncated: false };
  }
  async threadBacktraces(threads: number[] | "all", limit?: number): Promise<ThreadBacktrace[]> {
    return (await this.read({ kind: "thread-backtraces", threads, ...(limit ? { limit } : {}) })) ?? [];
  }
  async registers(place: Place = {}): Promise<Register[]> {
    return (await this.read({ kind: "registers", ...place })) ?? [];
  }
  async register(register: string, place: Place = {}): Promise<Address | null> {
    return (await this.read({ kind: "register", register, ...place })) ?? null;
  }
  async evaluate(expression: string, place: Place = {}): Promise<string | null> {
    return (await this.read({ kind: "evaluate", expression, ...place })) ?? null;
  }
  async variables(which: "locals" | "arguments", place: Place = {}): Promise<Variable[]> {
    return (await this.read({ kind: which, ...place })) ?? [];
  }
  async frameCfa(frame: number, thread: number | null = null): Promise<Address | null> {
    return (await this.read({ kind: "frame-info", frame, thread })) ?? null;
  }
  async instructions(count: number, address?: Address): Promise<Disassembly | null> {
    return this.read({ kind: "instructions", count, ...(address ? { address } : {}) });
  }
  async disassemble(address?: Address, before?: number): Promise<Disassembly | null> {
    return this.read({ kind: "disassemble", ...(address ? { address } : {}), ...(before ? { before } : {}) });
  }
  /** `words` 8-byte words at `address`, an address or an expression of one evaluated in `place`. */
  async readMemory(address: string, words: number, place: Place = {}): Promise<bigint[]> {
    return (await this.read({ kind: "memory", address, count: words, ...place }))?.words ?? [];
  }
  async readString(address: string): Promise<string | null> {
    return (await this.read({ kind: "string", address })) ?? null;
  }
  async sourceLine(address: Address): Promise<{ file: string; line: number } | null> {
    return (await this.read({ kind: "source-line", address })) ?? null;
  }
  async symbolAt(address: Address, indirect = false): Promise<SymbolAt | null> {
    return (await this.read({ kind: "symbol", address, ...(indirect ? { indirect } : {}) })) ?? null;
  }
  /** Where the global `name` lies; null when no symbol of the program names it. */
  async symbolAddress(name: string): Promise<Address | null> {
    return (await this.read({ kind: "symbol-address", name })) ?? null;
  }
  async exitSignal(): Promise<number | null> {
    return (await this.read({ kind: "exit-signal" })) ?? null;
  }
  async signalInfo(): Promise<SignalRecord | null> {
    return (await this.read({ kind: "signal-info" })) ?? null;
  }
  async sharedLibraries(): Promise<SharedLibrary[]> {
    return (await this.read({ kind: "shared-libraries" })) ?? [];
  }
  async sections(): Promise<TargetFiles> {
    return (await this.read({ kind: "sections" })) ?? { executable: null, core: null, sections: [] };
  }
  async source(file: string, from: number, to = from): Promise<SourceLine[]> {
    return (await this.read({ kind: "source", file, from, to })) ?? [];
  }
  async abortMessage(): Promise<string | null> {
    return (await this.read({ kind: "abort-message" })) ?? null;
  }
  /** The managed threads; null when the debugger reads no .NET runtime in this dump. */
  async managedThreads(): Promise<ManagedThread[] | null> {
    return (await this.read({ kind: "managed-threads" })) ?? null;
  }
  /** One thread's managed frames (null: the selected thread's). */
  async managedStack(thread: number | null = null): Promise<ManagedStack | null> {
    return (await this.read({ kind: "managed-stack", ...(thread === null ? {} : { thread }) })) ?? null;
  }
  async managedStacks(): Promise<ManagedStack[]> {
    return (await this.read({ kind: "managed-stacks" })) ?? [];
  }
  async managedException(): Promise<ManagedException | null> {
    return (await this.read({ kind: "managed-exception" })) ?? null;
  }
  async monitorLocks(): Promise<MonitorLock[]> {
    return (await this.read({ kind: "managed-locks" })) ?? [];
  }
  async managedHeap(): Promise<HeapTypeStat[]> {
    return (await this.read({ kind: "managed-heap" })) ?? [];
  }
}
