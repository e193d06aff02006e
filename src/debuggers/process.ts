/**
 * Spawning a debugger behind a small interface, so session logic does not care which binary or
 * platform it talks to. Every live debugger is tracked so the CLI can end them all on exit.
 * Node's own spawn: this is on the path of every command, and a process library cost more to load
 * than the few lines it would save here.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import { DebuggerMissing } from "./errors.js";
import { live } from "./live.js";

export interface DebuggerProcess {
  readonly pid: number | undefined;
  /** Writes one line (the newline is added). Returns false when the pipe is closed. */
  writeLine(line: string): boolean;
  /** Writes bytes as they are, for framed protocols. Returns false when the pipe is closed. */
  write(data: string | Uint8Array): boolean;
  /** Asks the debugger to stop what it is doing, as Ctrl+C at its prompt would. */
  interrupt(): void;
  /** Ends the debugger and anything it started. */
  kill(): void;
  /**
   * Ends it as kill() does, and stops waiting for it: its pipes are closed and it no longer keeps
   * this process alive (`exited` may then never resolve). For a command that is about to leave.
   */
  release(): void;
  /** Resolves with a description once the process has exited. */
  readonly exited: Promise<string>;
}

/** How stdout is read: line by line (GDB/MI), or as raw chunks for a framed protocol (DAP). */
export type SpawnOptions = ({ onLine: (line: string) => void } | { onData: (chunk: Buffer) => void }) & {
  onStderr?: (text: string) => void;
  /** Variables set for the debugger on top of ours (LLDB's Python bytecode folder). */
  env?: Record<string, string>;
};


export async function spawnDebugger(
  binary: string,
  args: string[],
  options: SpawnOptions,
): Promise<DebuggerProcess> {
  let child: ChildProcessWithoutNullStreams;
  try {
    child = spawn(binary, args, {
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group: Ctrl+C in the user's terminal reaches us, not the debugger,
      // and a kill takes anything the debugger started (a shell under --unsafe) with it.
      detached: true,
      env: { ...process.env, ...options.env, LC_ALL: "C.UTF-8", TERM: "dumb", COLUMNS: "1000" },
    });
  } catch (error) {
    throw new DebuggerMissing(`cannot start ${binary}: ${(error as Error).message}`);
  }

  const pid = child.pid;
  let alive = pid !== undefined;
  const exited = new Promise<string>((resolve) => {
    child.once("close", (code, signal) => resolve(signal ? `killed by ${signal}` : `exited with code ${code}`));
    // A binary that could not be started never closes.
    child.once("error", (error) => {
      if (child.pid === undefined) resolve(error.message);
    });
  });
  const proc: DebuggerProcess = {
    pid,
    exited,
    writeLine(line) {
      return proc.write(`${line}\n`);
    },
    write(data) {
      if (!alive || child.stdin.destroyed) return false;
      child.stdin.write(data);
      return true;
    },
    interrupt() {
      if (alive && pid !== undefined) signal(pid, "SIGINT");
    },
    kill() {
      if (!alive || pid === undefined) return;
      signal(-pid, "SIGKILL");
      signal(pid, "SIGKILL");
    },
    release() {
      proc.kill();
      alive = false;
      live.delete(proc);
      child.unref();
      for (const stream of [child.stdin, child.stdout, child.stderr]) stream.destroy();
    },
  };
  // Tracked from the moment it exists, so an interrupt during start-up still ends it.
  live.add(proc);
  void proc.exited.then(() => {
    alive = false;
    live.delete(proc);
  });

  try {
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", (error) => reject(error));
    });
  } catch (error) {
    live.delete(proc);
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "not found" : (error as Error).message;
    throw new DebuggerMissing(`cannot start ${binary}: ${why}`);
  }

  if ("onLine" in options) {
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on("line", options.onLine);
  } else {
    child.stdout.on("data", options.onData);
  }
  child.stderr.on("data", (chunk: Buffer) => options.onStderr?.(chunk.toString("utf8")));
  // A write to a dead debugger must surface as a dead session, not an unhandled EPIPE.
  child.stdin.on("error", () => undefined);
  return proc;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone: nothing to do.
  }
}

/** Waits for a debugger that was asked to quit, and kills it if it has not left within `graceMs`. */
export async function leaveWithin(proc: DebuggerProcess, graceMs: number): Promise<void> {
  const grace = new Promise<false>((resolve) => setTimeout(() => resolve(false), graceMs).unref());
  if (!(await Promise.race([proc.exited.then(() => true), grace]))) proc.kill();
  await proc.exited;
}
