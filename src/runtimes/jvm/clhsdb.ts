/**
 * The JDK's Serviceability Agent as a process: one `jhsdb clhsdb` session over a core, asked one
 * command at a time, bounded in time and in the output kept. The JVM's structures are read by the
 * JDK's own tool, as debuggers/ runs a debugger; one session answers every question (its start, which
 * reads the core's VM structures, is most of what a question costs).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";

import { live } from "../../debuggers/live.js";

/** Attaching to a core takes the SA a second or two; a VM it cannot read can make it spin. */
const SESSION_TIMEOUT_MS = 60_000;
/** A core of thousands of threads prints a few megabytes; more is not a thread dump. */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

export interface Clhsdb {
  /** `jhsdb clhsdb --core CORE --exe JAVA`, for the report's record. */
  command: string;
  /**
   * What the command printed; rejects with one line saying what went wrong. A question given
   * `timeoutMs` that takes longer ends the session: the SA cannot be interrupted in a command.
   */
  ask(command: string, timeoutMs?: number): Promise<string>;
  close(): void;
}

/**
 * Opens a session. The end of each answer is found by a marker only this session knows: after each
 * command, `print` of a name made of a random nonce, which the SA answers with an error naming it.
 * The core's text (thread names, strings) cannot forge it.
 */
export function openClhsdb(jhsdb: string, core: string, java: string): Clhsdb {
  const args = ["clhsdb", "--core", core, "--exe", java];
  const command = `jhsdb ${args.join(" ")}`;
  const nonce = randomBytes(8).toString("hex");
  const child = spawn(jhsdb, args, { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, LC_ALL: "C" } });
  // Tracked as a debugger is: Ctrl+C or dumpdbg's exit ends it too, never a JVM left reading a core.
  const running = { kill: () => child.kill("SIGKILL") };
  live.add(running);
  let stdout = "";
  let stderr = "";
  let failure: string | null = null;
  let waiting: (() => void) | null = null;
  const wake = () => {
    const next = waiting;
    waiting = null;
    next?.();
  };
  const timer = setTimeout(() => {
    failure = `it did not finish in ${SESSION_TIMEOUT_MS / 1000} s`;
    child.kill("SIGKILL");
    wake();
  }, SESSION_TIMEOUT_MS);
  timer.unref();
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    if (stdout.length > MAX_OUTPUT_BYTES) {
      failure = `it printed more than ${MAX_OUTPUT_BYTES / 1024 / 1024} MB`;
      child.kill("SIGKILL");
    }
    wake();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    if (stderr.length < 64 * 1024) stderr += chunk;
  });
  child.on("error", (error: NodeJS.ErrnoException) => {
    failure = error.code === "ENOENT" ? `${jhsdb} is not there` : error.message;
    wake();
  });
  child.on("close", (code, signal) => {
    live.delete(running);
    clearTimeout(timer);
    failure ??= `it ended (${signal ?? `exit ${code}`}): ${firstLine(stderr) ?? firstLine(stdout) ?? "no reason given"}`;
    wake();
  });
  child.stdin.on("error", () => {
    // A session that ended says why on close; its stdin closing first is not the reason.
  });
  let asked = 0;
  let queue: Promise<unknown> = Promise.resolve();

  const answer = async (question: string, timeoutMs?: number): Promise<string> => {
    const marker = `Error: java.lang.NumberFormatException: end_${nonce}_${++asked}`;
    const from = stdout.length;
    child.stdin.write(`${question}\nprint end_${nonce}_${asked}\n`);
    const limit = timeoutMs === undefined ? null : setTimeout(() => {
      failure = `it did not answer \`${question.split(" ")[0]}\` in ${Math.round(timeoutMs / 1000)} s`;
      child.kill("SIGKILL");
      wake();
    }, timeoutMs);
    try {
      return await answered(marker, from);
    } finally {
      if (limit) clearTimeout(limit);
    }
  };
  const answered = async (marker: string, from: number): Promise<string> => {
    for (;;) {
      const at = stdout.indexOf(marker, from);
      if (at >= 0) {
        const text = stdout.slice(from, at);
        stdout = stdout.slice(at + marker.length);
        return text.replace(/^(hsdb> )+/gm, "");
      }
      if (failure !== null) throw new Error(failure);
      await new Promise<void>((resolve) => (waiting = resolve));
    }
  };

  return {
    command,
    ask(question, timeoutMs) {
      const next = queue.then(() => answer(question, timeoutMs));
      queue = next.catch(() => undefined);
      return next;
    },
    close() {
      child.stdin.end();
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}

function firstLine(text: string): string | null {
  const line = text.split("\n").find((l) => l.trim() !== "" && !/^Opening core file|^hsdb> *$/.test(l));
  return line ? line.replace(/^(hsdb> )+/, "").trim().slice(0, 200) : null;
}
