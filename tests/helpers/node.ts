/**
 * Real Node.js processes for the tests, run on the machine's `node`, each dumped by gdb where it dies:
 * an exception nothing catches under `--abort-on-uncaught-exception`, `process.abort()`, a heap out of
 * memory, a process spinning in JavaScript dumped alive by gcore, and a N-API
 * addon built with gcc against the machine's Node headers that reads through a NULL pointer (the
 * core written where Node's SIGSEGV handler re-raised it, as the kernel would have dumped it).
 */
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { buildOnce } from "./cores.js";

const run = promisify(execFile);

// A change to how cores are made, or another node, must not be served from a cache built the old way.
const RECIPE = createHash("sha256").update(readFileSync(fileURLToPath(import.meta.url))).digest("hex");

/**
 * A core made once per recipe (name, what it runs, this file, the node binary) under
 * os.tmpdir()/dumpdbg-fixtures, in a folder it keeps (the core names its script's path): a Node core
 * is some 700 MB and seconds to write, and several tests read the same one. Safe when several vitest
 * workers ask at once: the first to link its index wins and the others adopt its core.
 */
export function cachedCore<T extends { core: string }>(name: string, recipe: unknown, build: (dir: string) => Promise<T>): Promise<T> {
  const node = existsSync(NODE) ? statSync(NODE) : null;
  const key = createHash("sha256").update(JSON.stringify([RECIPE, name, recipe, node?.size, node?.mtimeMs])).digest("hex").slice(0, 16);
  return buildOnce(`node-${name}-${key}`, build);
}

export const NODE = "/usr/bin/node";

/** The program of the issue: `request.user` is undefined, two calls deep. */
export const SERVER = `function parseUser(request) { return request.user.name; }
function handle(request) { return parseUser(request); }
handle({ body: "{}" });
`;

export const ABORTS = `function shutdown(reason) { process.abort(); }
function main() { shutdown("done"); }
main();
`;

/** Keeps every object it makes: run with a small --max-old-space-size, V8's heap reaches its limit in grow. */
export const GROWS = `const kept = [];
function grow() { for (;;) kept.push({ payload: new Array(1000).fill(kept.length) }); }
grow();
`;

/** A record's length read through the NULL the addon hands itself; `// CULPRIT` marks the line. */
export const ADDON_SOURCE = `#include <node_api.h>
#include <stddef.h>

struct record { int length; const char *name; };

static int record_length(const struct record *record) {
  return record->length; // CULPRIT
}

static napi_value Measure(napi_env env, napi_callback_info info) {
  napi_value result;
  napi_create_int32(env, record_length(NULL), &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value measure;
  napi_create_function(env, "measure", NAPI_AUTO_LENGTH, Measure, NULL, &measure);
  napi_set_named_property(env, exports, "measure", measure);
  return exports;
}
`;

export const ADDON_CALLER = `const addon = require("./addon.node");
function sizeOf(request) { return addon.measure(request); }
function handle(request) { return sizeOf(request); }
handle({});
`;

export function hasNodeAndGdb(): boolean {
  return existsSync(NODE) && ["/usr/bin/gdb", "/usr/local/bin/gdb"].some((file) => existsSync(file));
}

export function hasNodeHeaders(): boolean {
  return existsSync("/usr/include/node/node_api.h") && ["/usr/bin/gcc", "/usr/local/bin/gcc"].some((file) => existsSync(file));
}

/** A core of `source` run by node with `flags`, written by gdb where the process stops (after `continues` signals passed on). */
export async function nodeCore(dir: string, name: string, source: string, flags: string[] = [], continues = 0): Promise<{ core: string; script: string }> {
  const script = path.join(dir, `${name}.js`);
  writeFileSync(script, source);
  const core = path.join(dir, `${name}.core`);
  const passOn = Array.from({ length: continues }, () => ["-ex", "continue"]).flat();
  // Only the pages a kernel core would hold of a 64-bit V8 heap's reservations: the rest is never touched.
  const gdb = await run("gdb", ["-nx", "-batch", "-ex", "handle SIGSEGV stop pass", "-ex", "run", ...passOn, "-ex", `generate-core-file ${core}`, "--args", NODE, ...flags, script], { cwd: dir, timeout: 60_000, encoding: "utf8", maxBuffer: 8 * 1024 * 1024 });
  if (!existsSync(core)) throw new Error(`gdb wrote no core of ${script}:\n${gdb.stdout}${gdb.stderr}`);
  return { core, script };
}

/** `nodeCore` made once per recipe: see `cachedCore`. */
export function sharedNodeCore(name: string, source: string, flags: string[] = [], continues = 0): Promise<{ core: string; script: string }> {
  return cachedCore(name, [source, flags, continues], (dir) => nodeCore(dir, name, source, flags, continues));
}

/** The addon built with gcc and its caller dumped where Node's SIGSEGV handler re-raised the NULL read. */
export function addonCore(): Promise<{ core: string; script: string; source: string }> {
  return cachedCore("addon", [ADDON_SOURCE, ADDON_CALLER], async (dir) => {
    const source = path.join(dir, "addon.c");
    writeFileSync(source, ADDON_SOURCE);
    await run("gcc", ["-shared", "-fPIC", "-g", "-O0", "-I/usr/include/node", source, "-o", path.join(dir, "addon.node")], { timeout: 60_000 });
    return { ...(await nodeCore(dir, "caller", ADDON_CALLER, [], 1)), source };
  });
}

/** Spins in checksum, called from serve, once it has said it started. */
export const SPINS = `function checksum(items) { let sum = 0; for (;;) { for (const item of items) sum = (sum + item) | 0; } }
function serve() { console.log("ready"); return checksum([1, 2, 3]); }
serve();
`;

/** The main thread spins in checksum, a Worker in digest: both run JavaScript when the process is dumped. */
export const WORKERS = `const { Worker, isMainThread } = require("node:worker_threads");
function digest(n) { let h = 0; for (;;) { h = (h * 31 + n) | 0; } }
function checksum(items) { let sum = 0; for (;;) { for (const item of items) sum = (sum + item) | 0; } }
if (isMainThread) {
  const worker = new Worker(__filename);
  worker.on("online", () => { console.log("ready"); checksum([1, 2, 3]); });
} else {
  digest(7);
}
`;

/** SPINS run until it spins, dumped alive by gcore, then killed (made once, see `cachedCore`). */
export function spinningCore(): Promise<{ core: string; script: string }> {
  return cachedCore("spins", SPINS, (dir) => liveCore(dir, "spins", SPINS));
}

/** WORKERS run until both threads spin, dumped alive by gcore (made once, see `cachedCore`). */
export function workersCore(): Promise<{ core: string; script: string }> {
  return cachedCore("workers", WORKERS, (dir) => liveCore(dir, "workers", WORKERS));
}

async function liveCore(dir: string, name: string, source: string): Promise<{ core: string; script: string }> {
  const script = path.join(dir, `${name}.js`);
  writeFileSync(script, source);
  const child = spawn(NODE, [script], { cwd: dir, stdio: ["ignore", "pipe", "ignore"] });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the spinning program never said it started")), 30_000);
      child.stdout.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("ready")) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    // Give it the moment it takes to enter the loop it never leaves.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const prefix = path.join(dir, name);
    await run("gcore", ["-o", prefix, String(child.pid)], { timeout: 60_000 });
    return { core: `${prefix}.${child.pid}`, script };
  } finally {
    child.kill("SIGKILL");
  }
}
