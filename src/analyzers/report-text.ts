/**
 * What an apport report that kept no core says, read from its text alone: the crash kind its
 * signal gives (less specific than a core's: no fault address, so a SIGSEGV is an invalid memory
 * access, never a null dereference), the program, the package, and the first frame of the stack
 * trace apport's own gdb printed. Pure; no debugger is involved.
 */
import type { ApportFacts } from "../debuggers/dumpfile/apport.js";
import type { CrashKind } from "../report/schema.js";
import { SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP, signalName } from "./signals.js";

export interface TextVerdict {
  kind: CrashKind;
  signal: string | null;
  program: string | null;
  package: string | null;
  /** The innermost function of the stack trace, as apport's gdb named it. */
  function: string | null;
  /** The stack trace as apport kept it (the crashing thread's, else every thread's), at most MAX_TRACE_LINES lines. */
  stackTrace: string | null;
  assertion: string | null;
}

const MAX_TRACE_LINES = 60;

const KIND_OF_SIGNAL: ReadonlyMap<number, CrashKind> = new Map([
  [SIGSEGV, "invalid-memory-access"],
  [SIGABRT, "abort"],
  [SIGFPE, "division-by-zero"],
  [SIGILL, "illegal-instruction"],
  [SIGBUS, "bus-error"],
  [SIGTRAP, "breakpoint"],
]);

export function textVerdict(facts: ApportFacts): TextVerdict {
  const trace = facts.stackTrace ?? facts.threadStackTrace;
  const lines = trace?.split("\n") ?? [];
  const kind = facts.assertion ? "assertion-failure" : (facts.signal !== null ? KIND_OF_SIGNAL.get(facts.signal) : undefined) ?? "unknown";
  return {
    kind,
    signal: facts.signal !== null ? signalName(facts.signal) : null,
    program: facts.executablePath,
    package: facts.package,
    function: firstFunction(lines),
    stackTrace: trace ? lines.slice(0, MAX_TRACE_LINES).join("\n") + (lines.length > MAX_TRACE_LINES ? `\n… ${lines.length - MAX_TRACE_LINES} more lines` : "") : null,
    assertion: facts.assertion,
  };
}

/** gdb's `#0  0x… in name (args) at file:line` or `#0  name (args) at …`: the first frame's function. */
function firstFunction(lines: string[]): string | null {
  for (const line of lines) {
    const frame = /^#\d+\s+(?:0x[0-9a-f]+ in )?([^\s(]+)/.exec(line.trim());
    if (frame) return frame[1]!.slice(0, 200);
  }
  return null;
}
