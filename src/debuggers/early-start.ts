/**
 * A debugger started at the top of a command that will read a dump with it, before the command's
 * code has loaded and the dump has been checked: its own start (gdb's about 35 ms, LLDB's adapter's
 * 100 ms and more) then overlaps Node's. The first session that asks for the same binary and
 * arguments takes it over; one nobody takes is ended when the command ends. The debugger is given
 * no file until a session has checked the dump, so an early start never reads anything of the user's.
 */
import { spawnDebugger, type DebuggerProcess } from "./process.js";

/** How the session reads the debugger's stdout: lines (GDB/MI) or raw chunks (DAP). */
export type Output = { onLine: (line: string) => void } | { onData: (chunk: Buffer) => void };

interface EarlyDebugger {
  binary: string;
  args: string[];
  started: Promise<DebuggerProcess | null>;
  /** What it printed before a session took it. */
  lines: string[];
  chunks: Buffer[];
  stderr: string;
  /** The session's handlers, once it took the debugger. */
  output: Output | null;
  onStderr: ((text: string) => void) | null;
  exited: boolean;
}

let early: EarlyDebugger | null = null;

/** Starts the debugger now, its stdout read as lines or as chunks; a failure to start is left for the session to meet. */
export function startEarly(binary: string, args: string[], mode: "lines" | "data"): void {
  if (early) return;
  const pending: EarlyDebugger = { binary, args, started: Promise.resolve(null), lines: [], chunks: [], stderr: "", output: null, onStderr: null, exited: false };
  const onStderr = (text: string) => (pending.onStderr ? pending.onStderr(text) : (pending.stderr += text));
  const output =
    mode === "lines"
      ? { onLine: (line: string) => (pending.output && "onLine" in pending.output ? pending.output.onLine(line) : pending.lines.push(line)) }
      : { onData: (chunk: Buffer) => (pending.output && "onData" in pending.output ? pending.output.onData(chunk) : pending.chunks.push(chunk)) };
  pending.started = spawnDebugger(binary, args, { ...output, onStderr }).then(
    (proc) => {
      void proc.exited.then(() => (pending.exited = true));
      return proc;
    },
    () => null,
  );
  early = pending;
}

/**
 * The early debugger, when it was started with exactly this binary and these arguments and is
 * still running: what it printed so far, then everything after, goes to the session's handlers.
 */
export async function takeEarly(binary: string, args: string[], output: Output, onStderr: (text: string) => void): Promise<DebuggerProcess | null> {
  const candidate = early;
  if (!candidate || candidate.binary !== binary || candidate.args.length !== args.length || candidate.args.some((a, i) => a !== args[i])) return null;
  early = null;
  const proc = await candidate.started;
  if (!proc || candidate.exited) return null;
  if (candidate.stderr) onStderr(candidate.stderr);
  if ("onLine" in output) for (const line of candidate.lines.splice(0)) output.onLine(line);
  else for (const chunk of candidate.chunks.splice(0)) output.onData(chunk);
  candidate.output = output;
  candidate.onStderr = onStderr;
  return proc;
}

/** Ends the early debugger if no session took it: the command is over, and an idle child would keep Node waiting. */
export async function endEarly(): Promise<void> {
  const candidate = early;
  early = null;
  const proc = await candidate?.started;
  proc?.kill();
}
