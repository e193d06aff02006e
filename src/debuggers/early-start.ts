/**
 * A debugger started at the top of a command that will read a dump with it, before the command's
 * code has loaded and the dump has been checked: its own start (gdb's about 35 ms, LLDB's adapter's
 * 100 ms and more) then overlaps Node's. The first session that asks for the same binary and
 * arguments takes it over; one nobody takes is ended when the command ends.
 *
 * Once the command's dump has passed the same checks a session makes (a regular file, an ELF core,
 * its program found), the commands that load it may be written too (`preloadEarly`): gdb then loads
 * the core while the rest of the command's code loads. A session whose own load commands differ
 * does not take that debugger; it is ended at once.
 */
import { spawnDebugger, type DebuggerProcess } from "./process.js";

/** How the session reads the debugger's stdout: lines (GDB/MI) or raw chunks (DAP). */
export type Output = { onLine: (line: string) => void } | { onData: (chunk: Buffer) => void };

interface EarlyDebugger {
  binary: string;
  args: string[];
  /** Variables it was started with on top of ours. */
  env: Record<string, string>;
  started: Promise<DebuggerProcess | null>;
  /** What it printed before a session took it. */
  lines: string[];
  chunks: Buffer[];
  stderr: string;
  /** The session's handlers, once it took the debugger. */
  output: Output | null;
  onStderr: ((text: string) => void) | null;
  exited: boolean;
  /** The load commands written to it, as tokens 1, 2, … (see preloadEarly). */
  preload: string[];
}

/** The early debugger, as a session takes it over. */
export interface TakenDebugger {
  proc: DebuggerProcess;
  /** How many of the session's load commands were already written (tokens 1…n): their answers are still to come. */
  preloaded: number;
  /**
   * Hands what the debugger printed so far, then everything after, to the session's handlers; called
   * once the session is ready for the answers of the preloaded commands.
   */
  connect(output: Output, onStderr: (text: string) => void): void;
}

let early: EarlyDebugger | null = null;

/** Starts the debugger now, its stdout read as lines or as chunks; a failure to start is left for the session to meet. */
export function startEarly(binary: string, args: string[], mode: "lines" | "data", env: Record<string, string> = {}): void {
  if (early) return;
  const pending: EarlyDebugger = { binary, args, env, started: Promise.resolve(null), lines: [], chunks: [], stderr: "", output: null, onStderr: null, exited: false, preload: [] };
  const onStderr = (text: string) => (pending.onStderr ? pending.onStderr(text) : (pending.stderr += text));
  const output =
    mode === "lines"
      ? { onLine: (line: string) => (pending.output && "onLine" in pending.output ? pending.output.onLine(line) : pending.lines.push(line)) }
      : { onData: (chunk: Buffer) => (pending.output && "onData" in pending.output ? pending.output.onData(chunk) : pending.chunks.push(chunk)) };
  pending.started = spawnDebugger(binary, args, { ...output, onStderr, env }).then(
    (proc) => {
      void proc.exited.then(() => (pending.exited = true));
      return proc;
    },
    () => null,
  );
  early = pending;
}

/**
 * Writes the commands that load the dump to the early debugger (tokens 1, 2, …), unless a session
 * took it or it already has some. The caller has checked the dump as a session would.
 */
export async function preloadEarly(commands: string[]): Promise<void> {
  const candidate = early;
  if (!candidate || candidate.preload.length > 0) return;
  const proc = await candidate.started;
  if (!proc || candidate !== early || candidate.exited) return;
  candidate.preload = commands;
  commands.forEach((command, i) => proc.writeLine(`${i + 1}${command}`));
}

/**
 * The early debugger, when it was started with exactly this binary, these arguments and these
 * variables, is still running, and was given no load commands or exactly the session's `load`. Any
 * other is ended here, rather than run (or load a dump) beside the session's own.
 */
export async function takeEarly(binary: string, args: string[], load: string[] = [], env: Record<string, string> = {}): Promise<TakenDebugger | null> {
  const candidate = early;
  if (!candidate) return null;
  early = null;
  const proc = await candidate.started;
  if (!proc || candidate.exited) return null;
  const preloaded = candidate.preload;
  const sameEnv = sameList(Object.entries(candidate.env).flat(), Object.entries(env).flat());
  if (candidate.binary !== binary || !sameList(candidate.args, args) || !sameEnv || (preloaded.length > 0 && !sameList(preloaded, load))) {
    // A session with other settings, or another debugger, opens the dump: this one is of no use.
    proc.kill();
    return null;
  }
  return {
    proc,
    preloaded: preloaded.length,
    connect(output, onStderr) {
      if (candidate.stderr) onStderr(candidate.stderr);
      if ("onLine" in output) for (const line of candidate.lines.splice(0)) output.onLine(line);
      else for (const chunk of candidate.chunks.splice(0)) output.onData(chunk);
      candidate.output = output;
      candidate.onStderr = onStderr;
    },
  };
}

/** Ends the early debugger if no session took it: the command is over, and an idle child would keep Node waiting. */
export async function endEarly(): Promise<void> {
  const candidate = early;
  early = null;
  const proc = await candidate?.started;
  proc?.release();
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
