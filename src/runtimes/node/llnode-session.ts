/**
 * One lldb session with llnode loaded, asked a question at a time over its standard input: each
 * answer ends where lldb answers a marker command naming a random nonce (a core's strings cannot
 * forge it), bounded in time and in output. Unlike `lldb --batch`, a question may depend on the last
 * answer (an object's address) without loading the core again.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";

import { live } from "../../debuggers/live.js";
import { FILL_TIMEOUT_MS, fillCommand, keepFilled, pythonCacheStart } from "../../debuggers/lldb/python-cache.js";

const MAX_ANSWER = 8 * 1024 * 1024;

export interface LlnodeSession {
  /** The command line that started the session, as the evidence names it. */
  command: string;
  /** The text lldb printed for `question`; rejects past `timeoutMs` or when lldb ends. */
  ask(question: string, timeoutMs: number): Promise<string>;
  /** Ends lldb at once. */
  close(): void;
  /** Ends lldb once it has compiled its Python into the bytecode folder, when it was started without one (lldb/python-cache.ts). */
  finish(): Promise<void>;
}

export function openLlnode(lldb: string, plugin: string, core: string, program: string): LlnodeSession {
  const args = ["-x", "-c", core, program];
  const { env, toFill } = pythonCacheStart(lldb);
  const child = spawn(lldb, args, { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...env } });
  // Tracked as a debugger is: Ctrl+C or dumpdbg's exit ends it too, never an lldb left reading a core.
  const running = { kill: () => child.kill("SIGKILL") };
  live.add(running);
  const nonce = randomBytes(8).toString("hex");
  const marker = `No objects found with type name dumpdbg_${nonce}`;
  let buffer = "";
  let ended: string | null = null;
  let waiting: { resolve: (text: string) => void; reject: (error: Error) => void; timer: NodeJS.Timeout } | null = null;
  const settle = () => {
    if (!waiting) return;
    const at = buffer.indexOf(marker);
    if (at >= 0) {
      const answer = buffer.slice(0, at);
      buffer = buffer.slice(at + marker.length);
      const { resolve, timer } = waiting;
      waiting = null;
      clearTimeout(timer);
      resolve(answer.replace(/^\(lldb\) .*$/gm, "").trim());
    } else if (ended !== null || buffer.length > MAX_ANSWER) {
      const { reject, timer } = waiting;
      waiting = null;
      clearTimeout(timer);
      reject(new Error(ended ?? `lldb printed more than ${MAX_ANSWER} bytes`));
    }
  };
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    settle();
  });
  child.stderr.resume();
  child.on("error", (error) => {
    ended = error.message;
    settle();
  });
  child.on("close", (code) => {
    live.delete(running);
    ended = `lldb ended (exit code ${code})`;
    settle();
  });
  child.stdin.on("error", () => undefined);
  const ask = (question: string, timeoutMs: number) =>
    new Promise<string>((resolve, reject) => {
      if (ended !== null) return reject(new Error(ended));
      const timer = setTimeout(() => {
        waiting = null;
        child.kill("SIGKILL");
        reject(new Error(`no answer to ${question} in ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      waiting = { resolve, reject, timer };
      child.stdin.write(`${question}\nv8 findjsinstances dumpdbg_${nonce}\n`);
    });
  const loaded = ask(`plugin load ${plugin}`, 120_000);
  const close = () => {
    if (ended === null) child.kill("SIGKILL");
  };
  return {
    command: `${lldb.split("/").pop()} -x -c ${core} ${program} (plugin load ${plugin})`,
    ask: (question, timeoutMs) => loaded.then(() => ask(question, timeoutMs)),
    close,
    finish: async () => {
      try {
        if (toFill !== null && !waiting && ended === null) {
          keepFilled(toFill, await ask(fillCommand(toFill.folder), FILL_TIMEOUT_MS));
        }
      } catch {
        // No folder this time: lldb compiles its Python as it always did.
      } finally {
        close();
      }
    },
  };
}
