/**
 * The report document: the JSON contract (schema.ts) and the details the renderers show beside it.
 * The agents build it, every renderer reads it, and a session keeps it as report.json.
 */
import type { Report } from "./schema.js";

/** What a deadlock's cycle runs through: Delve (the session's debugger says so by name) numbers a Go program's goroutines as its threads. */
export function waiterWord(report: Report): "goroutine" | "thread" {
  return /\bDelve\b/.test(report.session.debugger) ? "goroutine" : "thread";
}

/** What the renderers take: the JSON contract plus what a reader needs that the contract omits. */
export interface ReportDocument {
  report: Report;
  details: ReportDetails;
}

/** Everything optional: a section without its details is left out, never guessed. */
export interface ReportDetails {
  /** The crashing thread's backtrace, innermost first; the caller trims it. */
  frames?: StackFrame[];
  /** Set when the stack is one cycle of calls repeated (a stack overflow). */
  recursion?: Recursion | null;
  /** Where a memory fault's address falls: in a stretch of the address space, or between two. */
  faultPlace?: FaultPlace | null;
  /** A deadlock's threads' stacks, innermost first, for showing side by side. */
  cycleStacks?: { thread: number; frames: StackFrame[] }[];
  /** The crashing thread's registers, in the debugger's order. */
  registers?: Register[];
  threads?: ThreadSummary[];
  modules?: LoadedModule[];
  /** The culprit's source around its line, when the file is on disk (see `sourceExcerpt`). */
  sourceExcerpt?: SourceExcerpt | null;
  /** The lines of each evidence output worth showing, by evidence id. */
  evidenceExcerpts?: Record<string, string>;
  /** What was redacted from evidence before it reached a model. */
  redactions?: Redactions | null;
  /** What the debugger warned about while loading the dump, as it said it. */
  debuggerWarnings?: string[];
  /** The dump as it was found: the file it was decompressed from, what systemd-coredump or apport recorded. */
  dumpSource?: string[];
  /** Where each module's symbols came from, when the user named places to look (`--symbols`, symbol servers). */
  symbols?: ModuleSymbolsRow[];
  chat?: ChatExchange[];
}

export interface ModuleSymbolsRow {
  module: string;
  /** found, fetched, missing, refused, unidentified (no id in the dump). */
  status: string;
  /** The file the debugger was given, or what was tried, or why it was refused. */
  detail: string | null;
}

export interface StackFrame {
  level: number;
  function: string | null;
  file: string | null;
  line: number | null;
  /** The 1-based column in `line`, where a runtime read one (a JavaScript error's throw). */
  column?: number;
  module: string | null;
  /** The functions this one was inlined into at this pc, innermost first, each at its call's line (from a Breakpad symbol file). */
  inlinedInto?: { function: string; file: string | null; line: number | null }[];
  /** The language of a frame a runtime's own tools read (`java`: a Java method the JVM ran), which runs in no module. */
  runtimeLanguage?: string;
}

/** A stretch of the address space around a fault, as a person names it. */
export interface Stretch {
  label: string;
  start: string;
  end: string;
}

/** Where a fault address falls: in a stretch (the null page, a stack, a file's section), or in the gap between two. */
export interface FaultPlace {
  address: string;
  /** The stretch that holds the address; null when it falls in a gap. */
  within: Stretch | null;
  /** The nearest stretches below and above, when the address is in a gap. */
  below: Stretch | null;
  above: Stretch | null;
}

export interface Recursion {
  /** How many frames deep the recursion went. */
  frames: number;
  /** The functions of one turn of the cycle, outermost first. */
  cycle: string[];
}

export interface Register {
  name: string;
  value: string;
}

export interface ThreadSummary {
  /** gdb's thread number. */
  id: number;
  name: string | null;
  /** The function the thread's innermost frame is in. */
  function: string | null;
  /** What it was doing, e.g. "waiting on mutex 0x5555…" or "running". */
  state: string | null;
}

export interface LoadedModule {
  path: string;
  /** Start and end of its text, as the debugger prints them. */
  from: string;
  to: string;
}

export interface SourceExcerpt {
  file: string;
  /** The culprit's line, marked in the excerpt. */
  line: number;
  lines: { n: number; text: string }[];
}

export interface Redactions {
  count: number;
  /** How many of each kind, e.g. { "api-key": 2, "email": 1 }. */
  kinds: Record<string, number>;
}

export interface ChatExchange {
  question: string;
  answer: string;
  evidenceIds: string[];
}
