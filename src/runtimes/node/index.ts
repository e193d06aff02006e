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
import { errorObjects, errorTypes, inspectedString } from "./heap.js";
import { openLlnode, type LlnodeSession } from "./llnode-session.js";
import { readV8Backtrace, type V8Frame } from "./v8-bt.js";

export { MAX_V8_FRAMES, readV8Backtrace, type V8Frame } from "./v8-bt.js";

/** A core of a Node.js process, with the binary holding V8 as the core maps it. */
export interface NodeCore {
  core: string;
  /** The program the process ran (`--exe`, else the core's notes); null when unknown. */
  program: string | null;
  /** `node` or `libnode.so.N`, with the build id its copy in the core holds. */
  runtime: Module;
  buildIdOf: (file: string) => string | null;
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
  notes: string[];
}

export interface ThrownError {
  /** `TypeError`. */
  type: string;
  /** `Cannot read properties of undefined (reading 'name')`; null where it was not read. */
  message: string | null;
  address: string;
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

/**
 * The Node and V8 versions of the core's build, and where llnode is installed its crashing thread's
 * frames, and with `thrown` the error objects of the heap (an uncaught exception's).
 */
export async function readNode(node: NodeCore, thrown: boolean): Promise<NodeReading> {
  const notes: string[] = [];
  const local = node.buildIdOf(node.runtime.path);
  const sameBuild = local !== null && (node.runtime.buildId === null || local === node.runtime.buildId);
  if (local === null) notes.push(`${node.runtime.path} is not on this machine: the Node.js build that wrote the core is needed to name its versions and read its JavaScript frames`);
  else if (!sameBuild) notes.push(`${node.runtime.path} here is another build (build id ${local}) than the core's (${node.runtime.buildId}): its versions and JavaScript frames are not read from it`);
  const program = node.program ?? node.runtime.path;
  const versions = sameBuild && !path.basename(node.runtime.path).startsWith("libnode") ? await versionsOf(node.runtime.path) : { node: null, v8: null };
  const unread = (why: string): NodeReading => ({ ...versions, frames: [], error: null, command: null, output: null, notes: [...notes, `${why}; llnode would show ${WOULD_SHOW}`] });
  if (!sameBuild) return unread("the JavaScript frames were not read");
  const plugin = llnodePlugin();
  if (plugin === null) return unread("the JavaScript frames need llnode, the Node.js project's LLDB plugin, which is not installed (see `dumpdbg doctor`)");
  const lldb = lldbProgram();
  if (lldb === null) return unread("the JavaScript frames need lldb to run llnode in, and none is on the PATH");
  const session = openLlnode(lldb, plugin, node.core, program);
  try {
    const backtrace = await session.ask(`v8 bt ${BACKTRACE_DEPTH}`, QUESTION_TIMEOUT_MS);
    const frames = readV8Backtrace(backtrace);
    if (!frames.some((frame) => frame.kind === "js")) notes.push(`llnode found no JavaScript frame on the crashing thread (${session.command}: v8 bt)`);
    const error = thrown ? await thrownError(session, notes) : null;
    return { ...versions, frames, error, command: `${session.command}: v8 bt ${BACKTRACE_DEPTH}`, output: backtrace, notes };
  } catch (error) {
    return unread(`llnode could not read the JavaScript frames (${session.command}: ${(error as Error).message})`);
  } finally {
    session.close();
  }
}

/**
 * The error an uncaught exception threw, read from the heap: the one object of a type named `…Error`
 * there (V8 keeps no record of the thrown value llnode can read); where there are several, which was
 * thrown is not known and none is named.
 */
async function thrownError(session: LlnodeSession, notes: string[]): Promise<ThrownError | null> {
  const types = errorTypes(await session.ask("v8 findjsobjects", QUESTION_TIMEOUT_MS));
  const count = types.reduce((sum, type) => sum + type.count, 0);
  if (count !== 1) {
    notes.push(count === 0 ? "no error object was found in the heap: the thrown value's class and message are not known (it may not be an Error)" : `the heap holds ${count} error objects (${types.map((type) => `${type.count} ${type.type}`).join(", ")}): which one was thrown is not known, so none is named`);
    return null;
  }
  const [object] = errorObjects(await session.ask(`v8 findjsinstances -d ${types[0]!.type}`, QUESTION_TIMEOUT_MS));
  if (!object) return null;
  const message = object.messageAddress === null ? null : inspectedString(await session.ask(`v8 inspect -F ${object.messageAddress}`, QUESTION_TIMEOUT_MS));
  return { type: object.type, message: message ?? object.messageShown, address: object.address };
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
