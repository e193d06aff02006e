/**
 * gdb started at the top of a command that will read a core with it, before the command's code has
 * loaded and the dump has been checked: gdb's own start (about 35 ms) then overlaps Node's. The
 * first session that asks for the same binary and arguments takes it over; one nobody takes is
 * ended with every other debugger when dumpdbg exits. gdb is given no file until a session has
 * checked the dump, so an early start never reads anything of the user's.
 */
import { spawnDebugger, type DebuggerProcess } from "../process.js";

interface EarlyGdb {
  binary: string;
  args: string[];
  started: Promise<DebuggerProcess | null>;
  /** Lines gdb printed before a session took it, then the session's own handlers. */
  lines: string[];
  stderr: string;
  onLine: ((line: string) => void) | null;
  onStderr: ((text: string) => void) | null;
  exited: boolean;
}

let early: EarlyGdb | null = null;

/** Starts gdb now; a failure to start is left for the session to meet and report. */
export function startGdbEarly(binary: string, args: string[]): void {
  if (early) return;
  const pending: EarlyGdb = { binary, args, started: Promise.resolve(null), lines: [], stderr: "", onLine: null, onStderr: null, exited: false };
  pending.started = spawnDebugger(binary, args, {
    onLine: (line) => (pending.onLine ? pending.onLine(line) : pending.lines.push(line)),
    onStderr: (text) => (pending.onStderr ? pending.onStderr(text) : (pending.stderr += text)),
  }).then(
    (proc) => {
      void proc.exited.then(() => (pending.exited = true));
      return proc;
    },
    () => null,
  );
  early = pending;
}

/**
 * The early gdb, when it was started with exactly this binary and these arguments and is still
 * running: its output from now on goes to the handlers, after what it printed before.
 */
export async function takeEarlyGdb(binary: string, args: string[], onLine: (line: string) => void, onStderr: (text: string) => void): Promise<DebuggerProcess | null> {
  const candidate = early;
  if (!candidate || candidate.binary !== binary || candidate.args.length !== args.length || candidate.args.some((a, i) => a !== args[i])) return null;
  early = null;
  const proc = await candidate.started;
  if (!proc || candidate.exited) return null;
  candidate.onLine = onLine;
  candidate.onStderr = onStderr;
  if (candidate.stderr) onStderr(candidate.stderr);
  for (const line of candidate.lines.splice(0)) onLine(line);
  return proc;
}

/** Ends the early gdb if no session took it: the command is over, and an idle child would keep Node waiting. */
export async function endEarlyGdb(): Promise<void> {
  const candidate = early;
  early = null;
  const proc = await candidate?.started;
  proc?.kill();
}
