/**
 * A Node.js process in a core: its `node` program or `libnode.so` among the core's modules, the Node
 * and V8 versions of that build (asked of the binary here when its build id is the core's), and its
 * JavaScript frames read by llnode, the Node.js project's LLDB plugin, run in an lldb of its own
 * (`v8 bt` on the thread the core stopped on). Without llnode, or with another build here, nothing is
 * run and the notes say why.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

import type { Module } from "../../debuggers/model.js";
import { errorObjects, errorTypes, inspectedSource, inspectedString, lineAndColumn } from "./heap.js";
import { openLlnode, type LlnodeSession } from "./llnode-session.js";
import { readThreadList, readV8Backtrace, type V8Frame } from "./v8-bt.js";

export { MAX_V8_FRAMES, readV8Backtrace, type V8Frame } from "./v8-bt.js";

/** A core of a Node.js process, with the binary holding V8 as the core maps it. */
export interface NodeCore {
  core: string;
  /** The program the process ran (`--exe`, else the core's notes); null when unknown. */
  program: string | null;
  /** `node` or `libnode.so.N`, with the build id its copy in the core holds. */
  runtime: Module;
  buildIdOf: (file: string) => string | null;
  /** The command line the kernel recorded (its first 80 bytes); null where the core has none. */
  commandLine: string | null;
}

export interface NodeReading {
  /** `v20.20.2`, where the binary here could be asked. */
  node: string | null;
  /** `11.3.244.8-node.33`, likewise. */
  v8: string | null;
  /** The crashing thread's frames as `v8 bt` printed them; empty where llnode did not run. */
  frames: V8Frame[];
  /** The error an uncaught exception threw, read from the heap; null where it was not asked for or not known. */
  error: ThrownError | null;
  /** The command that read the frames, and what it printed, kept as evidence; null where none ran. */
  command: string | null;
  output: string | null;
  /** The other threads asked for that run JavaScript (a Worker's), each with its frames and the command that read them. */
  threads: NodeThread[];
  notes: string[];
}

export interface NodeThread {
  /** The kernel's thread id. */
  lwp: number;
  frames: V8Frame[];
  command: string;
  output: string;
}

export interface ThrownError {
  /** `TypeError`. */
  type: string;
  /** `Cannot read properties of undefined (reading 'name')`; null where it was not read. */
  message: string | null;
  address: string;
  /**
   * Where it was thrown, 1-based line and column in the throwing function's script, where V8 kept the
   * position on the error and the script's text was read; null where not.
   */
  at: { file: string; line: number; column: number } | null;
}

const NODE_FILE = /^(node|nodejs|libnode\.so(\.\d+)*)$/;

/** What llnode's frames would show, said where they could not be read. */
export const WOULD_SHOW = "the JavaScript functions the thread ran, with their scripts and arguments, and the program's own among them as the culprit";

/** The Node.js binary among a core's modules (`node`, `libnode.so.115`); null for another program's core. */
export function nodeOf(modules: readonly Module[]): Module | null {
  return modules.find((module) => NODE_FILE.test(path.basename(module.path))) ?? null;
}

/**
 * llnode's plugin: `$DUMPDBG_LLNODE`, else the `llnode` npm package installed globally beside the
 * node that runs dumpdbg or under /usr/local and /usr; null where there is none.
 */
export function llnodePlugin(): string | null {
  if (process.env.DUMPDBG_LLNODE) return existsSync(process.env.DUMPDBG_LLNODE) ? process.env.DUMPDBG_LLNODE : null;
  const roots = [path.join(path.dirname(path.dirname(process.execPath)), "lib", "node_modules"), "/usr/local/lib/node_modules", "/usr/lib/node_modules"];
  return roots.map((root) => path.join(root, "llnode", "llnode.so")).find((file) => existsSync(file)) ?? null;
}

/** The lldb whose command line loads llnode: the first of `lldb`, `lldb-20` … `lldb-14` on the PATH. */
export function lldbProgram(): string | null {
  const names = ["lldb", ...Array.from({ length: 7 }, (_, i) => `lldb-${20 - i}`)];
  const dirs = (process.env.PATH ?? "").split(path.delimiter).filter((dir) => dir !== "");
  for (const name of names) {
    const found = dirs.map((dir) => path.join(dir, name)).find((file) => existsSync(file));
    if (found) return found;
  }
  return null;
}

const BACKTRACE_DEPTH = 200;
/** Loading a large core and V8's symbols takes lldb most of this; a heap scan the rest. */
const QUESTION_TIMEOUT_MS = 120_000;
/** Other threads read at most, and the time all their frames may take together. */
export const MAX_OTHER_THREADS = 16;
const OTHER_THREADS_MS = 30_000;

/** A reading of a Node.js core begun as triage starts: llnode loads the core while the debugger reads the native side. */
export interface NodeStart {
  /** The reading, with the frames of the other threads (kernel ids) whose native stacks show V8's code; ends the session. */
  finish(threads: number[]): Promise<NodeReading>;
  close(): void;
}

/** The frame V8 aborts from where an exception nothing catches is thrown under `--abort-on-uncaught-exception`. */
export const ABORT_ON_UNCAUGHT = /^v8::internal::Isolate::CreateMessageOrAbort\b/;

/**
 * Begins reading the core's Node and V8 versions and, where llnode is installed, its crashing
 * thread's frames and, where those show V8 aborting on an uncaught exception, the heap's error object:
 * none of it waits for the debugger's verdict.
 */
export function startNode(node: NodeCore): NodeStart {
  const notes: string[] = [];
  const local = node.buildIdOf(node.runtime.path);
  const sameBuild = local !== null && (node.runtime.buildId === null || local === node.runtime.buildId);
  if (local === null) notes.push(`${node.runtime.path} is not on this machine: the Node.js build that wrote the core is needed to name its versions and read its JavaScript frames`);
  else if (!sameBuild) notes.push(`${node.runtime.path} here is another build (build id ${local}) than the core's (${node.runtime.buildId}): its versions and JavaScript frames are not read from it`);
  const program = node.program ?? node.runtime.path;
  const versions = sameBuild && !path.basename(node.runtime.path).startsWith("libnode") ? versionsOf(node.runtime.path) : Promise.resolve({ node: null, v8: null });
  const unread = async (why: string): Promise<NodeReading> => ({ ...(await versions), frames: [], error: null, command: null, output: null, threads: [], notes: [...notes, `${why}; llnode would show ${WOULD_SHOW}`] });
  const without = (why: string): NodeStart => ({ finish: () => unread(why), close: () => undefined });
  if (!sameBuild) return without("the JavaScript frames were not read");
  const plugin = llnodePlugin();
  if (plugin === null) return without("the JavaScript frames need llnode, the Node.js project's LLDB plugin, which is not installed (see `dumpdbg doctor`)");
  const lldb = lldbProgram();
  if (lldb === null) return without("the JavaScript frames need lldb to run llnode in, and none is on the PATH");
  const session = openLlnode(lldb, plugin, node.core, program);
  const crashing = (async () => {
    const output = await session.ask(`v8 bt ${BACKTRACE_DEPTH}`, QUESTION_TIMEOUT_MS);
    const frames = readV8Backtrace(output);
    const thrown = frames.some((frame) => frame.kind === "native" && ABORT_ON_UNCAUGHT.test(frame.function ?? ""));
    return { output, frames, error: thrown ? await thrownError(session, frames, notes) : null };
  })();
  // Read later or never (a triage that fails first): its failure is said where it is awaited.
  crashing.catch(() => undefined);
  return {
    finish: async (threads) => {
      try {
        const { output, frames, error } = await crashing;
        if (!frames.some((frame) => frame.kind === "js")) notes.push(`llnode found no JavaScript frame on the crashing thread (${session.command}: v8 bt)`);
        const others = threads.length > 0 ? await otherThreads(session, threads, notes) : [];
        return { ...(await versions), frames, error, command: `${session.command}: v8 bt ${BACKTRACE_DEPTH}`, output, threads: others, notes };
      } catch (error) {
        return unread(`llnode could not read the JavaScript frames (${session.command}: ${(error as Error).message})`);
      } finally {
        await session.finish();
      }
    },
    close: () => session.close(),
  };
}

/**
 * The error an uncaught exception threw, read from the heap: the one object of a type named `…Error`
 * there (V8 keeps no record of the thrown value llnode can read); where there are several, which was
 * thrown is not known and none is named.
 */
async function thrownError(session: LlnodeSession, frames: V8Frame[], notes: string[]): Promise<ThrownError | null> {
  const types = errorTypes(await session.ask("v8 findjsobjects", QUESTION_TIMEOUT_MS));
  const count = types.reduce((sum, type) => sum + type.count, 0);
  if (count !== 1) {
    notes.push(count === 0 ? "no error object was found in the heap: the thrown value's class and message are not known (it may not be an Error)" : `the heap holds ${count} error objects (${types.map((type) => `${type.count} ${type.type}`).join(", ")}): which one was thrown is not known (llnode reads no record of the value being thrown), so none is named`);
    return null;
  }
  notes.push(`the thrown error is taken to be the heap's one error object (${types[0]!.type}): llnode reads no record of the value V8 was throwing`);
  const [object] = errorObjects(await session.ask(`v8 findjsinstances -d ${types[0]!.type}`, QUESTION_TIMEOUT_MS));
  if (!object) return null;
  const message = object.messageAddress === null ? null : inspectedString(await session.ask(`v8 inspect -F ${object.messageAddress}`, QUESTION_TIMEOUT_MS));
  return { type: object.type, message: message ?? object.messageShown, address: object.address, at: object.position ? await throwingPlace(session, frames, object.position.start) : null };
}

/**
 * The line and column of a position in the script of the innermost JavaScript frame, counted in
 * that script's text as its top-level function (anonymous, at 1:0, on the same thread's stack) holds it.
 */
async function throwingPlace(session: LlnodeSession, frames: V8Frame[], position: number): Promise<ThrownError["at"]> {
  const thrower = frames.find((frame) => frame.kind === "js");
  const script = frames.find((frame) => frame.kind === "js" && frame.function === null && frame.file === thrower?.file && frame.line === 1 && frame.column === 0 && frame.fn !== null);
  if (!thrower?.file || !script) return null;
  const source = inspectedSource(await session.ask(`v8 inspect -s ${script.fn}`, QUESTION_TIMEOUT_MS));
  const place = source === null ? null : lineAndColumn(source, position);
  // The position is inside the throwing function, which begins where V8 says it does.
  return place && thrower.line !== null && place.line >= thrower.line ? { file: thrower.file, ...place } : null;
}

/** The JavaScript frames of other threads, each selected by its kernel id in lldb's thread list; bounded in number and time. */
async function otherThreads(session: LlnodeSession, lwps: number[], notes: string[]): Promise<NodeThread[]> {
  const threads: NodeThread[] = [];
  const asked = lwps.slice(0, MAX_OTHER_THREADS);
  if (lwps.length > MAX_OTHER_THREADS) notes.push(`${lwps.length} other threads ran V8's code: the JavaScript frames of the first ${MAX_OTHER_THREADS} were read`);
  const until = Date.now() + OTHER_THREADS_MS;
  try {
    const numbers = readThreadList(await session.ask("thread list", QUESTION_TIMEOUT_MS));
    for (const [done, lwp] of asked.entries()) {
      const number = numbers.get(lwp);
      if (number === undefined) continue;
      if (Date.now() >= until) {
        notes.push(`the JavaScript frames of ${asked.length - done} more threads were not read: reading the others took over ${OTHER_THREADS_MS / 1000} s`);
        break;
      }
      await session.ask(`thread select ${number}`, QUESTION_TIMEOUT_MS);
      const output = await session.ask(`v8 bt ${BACKTRACE_DEPTH}`, QUESTION_TIMEOUT_MS);
      const frames = readV8Backtrace(output);
      if (frames.some((frame) => frame.kind === "js")) threads.push({ lwp, frames, command: `${session.command}: thread select ${number}; v8 bt ${BACKTRACE_DEPTH}`, output });
    }
  } catch (error) {
    notes.push(`llnode could not read the other threads' JavaScript frames (${(error as Error).message})`);
  }
  return threads;
}

/** The binary's own answer to its versions, run with no script and no options from the environment. */
async function versionsOf(binary: string): Promise<{ node: string | null; v8: string | null }> {
  const run = await runTool(binary, ["-p", "process.version + ' ' + process.versions.v8"], 10_000, { PATH: process.env.PATH ?? "" });
  const match = run.ok ? /^(v\d+\.\d+\.\d+\S*) (\d+\.\d+\.\d+\S*)\s*$/.exec(run.output) : null;
  return match ? { node: match[1]!, v8: match[2]! } : { node: null, v8: null };
}

const MAX_OUTPUT = 64 * 1024;

function runTool(file: string, args: string[], timeout: number, env?: NodeJS.ProcessEnv): Promise<{ ok: true; output: string } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout, maxBuffer: MAX_OUTPUT, encoding: "utf8", ...(env ? { env } : {}) }, (error, stdout, stderr) => {
      if (error && stdout === "") resolve({ ok: false, error: (stderr.trim().split("\n").at(-1) ?? "") || error.message });
      else resolve({ ok: true, output: stdout });
    });
  });
}
