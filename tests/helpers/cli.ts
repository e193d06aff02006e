/** Runs the built CLI as a user would: a real process, real exit code, real stdout and stderr. */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../bin/dumpdbg.cjs", import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface CliOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Called once the process has started, e.g. to send it a signal later. */
  onSpawn?: (child: ChildProcess) => void;
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr, ms: performance.now() - started }));
    options.onSpawn?.(child);
  });
}

/** The chat with its questions piped in, in the folder the analysis ran in. */
export async function pipeChat(args: string[], cwd: string, input: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  child.stdin.end(input);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, stdout, stderr };
}

/** A long-running command (a worker): its output so far, a wait for a line, and a way to stop it. */
export interface Running {
  child: ChildProcess;
  stderr(): string;
  /** Resolves when stderr has matched, or rejects after `ms`. */
  waitFor(pattern: RegExp, ms?: number): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startCli(args: string[], options: { env?: Record<string, string | undefined> } = {}): Running {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...options.env }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
    for (const waiter of waiters.filter((w) => w.pattern.test(stderr))) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  });
  child.stdout.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  return {
    child,
    stderr: () => stderr,
    exited,
    waitFor: (pattern, ms = 30_000) =>
      new Promise((resolve, reject) => {
        if (pattern.test(stderr)) return resolve();
        const timer = setTimeout(() => reject(new Error(`no ${pattern} in ${ms} ms; stderr: ${stderr}`)), ms);
        waiters.push({ pattern, resolve: () => (clearTimeout(timer), resolve()) });
      }),
  };
}
