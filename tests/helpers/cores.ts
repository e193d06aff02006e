/**
 * Builds the fixture programs in tests/fixtures/programs and makes real core files of their
 * crashes (or of their hangs), so that tests run real gdb on real cores.
 *
 * A program may declare, in comment lines at its top:
 *   // flags: -O2 -D_FORTIFY_SOURCE=2 -g -pthread   replaces its language's default flags
 *   // hangs: ...                                     it deadlocks instead of crashing; it prints
 *                                                     "ready" once its threads are about to block
 * and marks the line that gdb shows for its culprit frame with a trailing `// CULPRIT`.
 *
 * The core of a hung program is a dump of the live process made by attaching gdb, as gcore
 * does: it records SIGSTOP (the attach), not a fault.
 */
import { spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { link, mkdir, open, readFile, readdir, rename, rm, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { untilReady } from "./ready.js";

export interface BuiltCore {
  /** program name, e.g. "null-deref" */
  name: string;
  /** absolute path of the built executable */
  exe: string;
  /** absolute path of the core file */
  core: string;
  /** absolute path of the folder holding both */
  dir: string;
  /** absolute path of the main source file */
  source: string;
  /** who wrote the core */
  how: "kernel" | "gdb";
  /** with splitDebug: the build-id tree holding the executable's debug information */
  symbols?: string;
}

export interface BuildOptions {
  /**
   * extra compiler flags, e.g. ["-O2"] or ["-g0"]; part of the cache key. They go to the program's
   * own compiler (gcc, g++ or rustc) after its default flags, so "-O2" overrides "-O0".
   */
  flags?: string[];
  /** a tag to force a separate build+core (e.g. "second-build"), part of the cache key */
  variant?: string;
  /**
   * ship the program as distributions do: its debug information moved to a build-id tree
   * (`symbols/.build-id/ab/cdef….debug`, made with objcopy) and the executable stripped of all
   * symbols; part of the cache key
   */
  splitDebug?: boolean;
}

export interface BuiltProgram {
  exe: string;
  dir: string;
  source: string;
}

const PROGRAMS_DIR = fileURLToPath(new URL("../fixtures/programs/", import.meta.url));
const CACHE_ROOT = path.join(os.tmpdir(), "dumpdbg-fixtures");
const EXTENSIONS = [".c", ".cpp", ".rs"] as const;
type Language = "c" | "cpp" | "rs";

const DEFAULT_FLAGS: Record<Language, string[]> = {
  c: ["-g", "-O0", "-pthread"],
  cpp: ["-g", "-O0", "-pthread"],
  // A Rust panic unwinds and exits with status 101, leaving no core; aborting leaves one.
  rs: ["-g", "-C", "opt-level=0", "-C", "panic=abort"],
};

const COMPILE_TIMEOUT_MS = 120_000;
const RUN_TIMEOUT_MS = 60_000;
const HANG_TIMEOUT_MS = 15_000;

// A change to how cores are made must not be served from a cache built the old way.
const RECIPE_HASH = sha256(readFileSync(fileURLToPath(import.meta.url)));

/** The names of all fixture programs. */
export function fixtureNames(): string[] {
  return readdirSync(PROGRAMS_DIR)
    .filter((file) => EXTENSIONS.some((ext) => file.endsWith(ext)))
    .map((file) => file.slice(0, file.lastIndexOf(".")))
    .sort();
}

/** The 1-based line of the `// CULPRIT` marker in the program's source. */
export function culpritLine(name: string): number {
  const lines = readFileSync(findSource(name).source, "utf8").split("\n");
  const marked = lines.flatMap((line, index) => (line.includes("// CULPRIT") ? [index + 1] : []));
  if (marked.length !== 1 || marked[0] === undefined) {
    throw new Error(`fixture ${name}: expected one "// CULPRIT" marker, found ${marked.length}`);
  }
  return marked[0];
}

const pending = new Map<string, Promise<unknown>>();

/**
 * Compiles tests/fixtures/programs/<name>.(c|cpp|rs) and makes a core of its crash (or of its
 * hang, for hung programs). Cached per (name, flags, variant, source hash) under
 * os.tmpdir()/dumpdbg-fixtures; safe when several vitest workers ask for the same core at once.
 */
export function buildCore(name: string, options: BuildOptions = {}): Promise<BuiltCore> {
  return cached("core", name, options, async (program, dir) => {
    const exe = await compile(program, dir);
    const symbols = options.splitDebug ? await splitDebugInfo(exe, dir) : undefined;
    const { core, how } = program.hangs ? await dumpHungProcess(exe, dir) : await dumpCrash(exe, dir);
    return { name, exe, core, dir, source: program.source, how, ...(symbols ? { symbols } : {}) };
  });
}

/**
 * Compiles only (no core), for tests that need an executable that does not match a core: its
 * build-id differs from that of every buildCore executable, even with the same name and options.
 */
export function buildProgram(name: string, options: BuildOptions = {}): Promise<BuiltProgram> {
  return cached("program", name, options, async (program, dir) => {
    const exe = await compile(program, dir);
    return { exe, dir, source: program.source };
  });
}

interface Program {
  name: string;
  source: string;
  language: Language;
  flags: string[];
  hangs: boolean;
  /** identifies this exact build; also its build-id, so that a debugger can tell builds apart */
  key: string;
}

function findSource(name: string): { source: string; language: Language } {
  for (const ext of EXTENSIONS) {
    const source = path.join(PROGRAMS_DIR, name + ext);
    if (existsSync(source)) return { source, language: ext.slice(1) as Language };
  }
  throw new Error(`no fixture program named ${name} in ${PROGRAMS_DIR}`);
}

function describeProgram(purpose: string, name: string, options: BuildOptions): Program {
  const { source, language } = findSource(name);
  const text = readFileSync(source, "utf8");
  const header = new Map<string, string>();
  for (const line of text.split("\n")) {
    const directive = /^\/\/ (flags|hangs):\s*(.*)$/.exec(line);
    if (!directive) break;
    header.set(directive[1] ?? "", directive[2] ?? "");
  }
  const declared = header.get("flags");
  const flags = [...(declared ? declared.split(/\s+/) : DEFAULT_FLAGS[language]), ...(options.flags ?? [])];
  const key = sha256(
    JSON.stringify([RECIPE_HASH, purpose, name, source, sha256(text), flags, options.variant ?? "", options.splitDebug ?? false]),
  ).slice(0, 40);
  return { name, source, language, flags, hangs: header.has("hangs"), key };
}

/** Builds once per program key (see buildOnce). */
function cached<T>(
  purpose: string,
  name: string,
  options: BuildOptions,
  build: (program: Program, dir: string) => Promise<T>,
): Promise<T> {
  const program = describeProgram(purpose, name, options);
  return buildOnce(`${name}-${program.key.slice(0, 16)}`, (dir) => build(program, dir));
}

/**
 * A test fixture built once per `stem` (a name and the hash of everything that makes it), under
 * `root` (os.tmpdir()/dumpdbg-fixtures): `<stem>.json` indexes it, `<stem>-<random>/` holds it. Each
 * build runs in a folder of its own that it keeps (a core records its executable's path, so the
 * folder cannot be renamed afterwards); the first build to link the index wins, and the others adopt
 * its result and delete their folder. Safe when several vitest workers ask for the same one at once.
 */
export function buildOnce<T>(stem: string, build: (dir: string) => Promise<T>, root: string = CACHE_ROOT): Promise<T> {
  const at = path.join(root, stem);
  const known = pending.get(at) as Promise<T> | undefined;
  if (known) return known;
  const result = (async () => {
    const index = `${at}.json`;
    const published = await readPublished<T>(index);
    if (published) return published;
    const dir = `${at}-${randomUUID().slice(0, 8)}`;
    await mkdir(dir, { recursive: true });
    try {
      return await publish(index, dir, await build(dir));
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  })();
  pending.set(at, result);
  result.catch(() => pending.delete(at));
  return result;
}

/** Publishes a build under its index, unless another worker got there first: then it is theirs that counts. */
async function publish<T>(index: string, dir: string, built: T): Promise<T> {
  const draft = `${dir}.json`;
  await writeFile(draft, JSON.stringify(built));
  try {
    for (;;) {
      try {
        await link(draft, index);
        return built;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const winner = await readPublished<T>(index);
      if (winner) {
        await rm(dir, { recursive: true, force: true });
        return winner;
      }
    }
  } finally {
    await rm(draft, { force: true });
  }
}

/** A published build, or null when there is none or a tmp cleaner has removed part of it. */
async function readPublished<T>(index: string): Promise<T | null> {
  let built: Record<string, unknown>;
  try {
    built = JSON.parse(await readFile(index, "utf8")) as Record<string, unknown>;
  } catch {
    return null;
  }
  const files = [built.exe, built.core].filter((file): file is string => typeof file === "string");
  if (files.every((file) => existsSync(file))) {
    // Its last use, which the cache's pruning goes by (fixture-cache.ts).
    const now = new Date();
    await utimes(index, now, now).catch(() => undefined);
    return built as T;
  }
  await rm(index, { force: true });
  return null;
}

async function compile(program: Program, dir: string): Promise<string> {
  const exe = path.join(dir, program.name);
  const buildId = `-Wl,--build-id=0x${program.key}`;
  const [command, args] =
    program.language === "rs"
      ? [
          rustc(),
          [
            ...program.flags,
            "--crate-name",
            program.name.replaceAll("-", "_"),
            "-C",
            `link-arg=${buildId}`,
            "-o",
            exe,
            program.source,
          ],
        ]
      : [program.language === "c" ? "gcc" : "g++", [...program.flags, buildId, "-o", exe, program.source]];
  const result = await run(command, args, { cwd: dir, timeoutMs: COMPILE_TIMEOUT_MS });
  if (result.code !== 0) {
    throw new Error(`building fixture ${program.name} failed: ${command} ${args.join(" ")}\n${result.stderr}`);
  }
  return exe;
}

/** Moves the executable's debug information into a build-id tree beside it and strips it, with binutils. */
async function splitDebugInfo(exe: string, dir: string): Promise<string> {
  const buildId = /Build ID: ([0-9a-f]+)/.exec((await run("readelf", ["-n", exe], { cwd: dir, timeoutMs: COMPILE_TIMEOUT_MS })).stdout)?.[1];
  if (!buildId) throw new Error(`${exe} has no build id to file its debug information under`);
  const tree = path.join(dir, "symbols");
  const debug = path.join(tree, ".build-id", buildId.slice(0, 2), `${buildId.slice(2)}.debug`);
  await mkdir(path.dirname(debug), { recursive: true });
  for (const [command, args] of [
    ["objcopy", ["--only-keep-debug", exe, debug]],
    ["strip", ["--strip-all", exe]],
  ] as const) {
    const result = await run(command, [...args], { cwd: dir, timeoutMs: COMPILE_TIMEOUT_MS });
    if (result.code !== 0) throw new Error(`${command} ${args.join(" ")} failed:\n${result.stderr}`);
  }
  return tree;
}

function rustc(): string {
  const onPath = (process.env.PATH ?? "").split(path.delimiter).map((dir) => path.join(dir, "rustc"));
  const candidates = [...onPath, path.join(os.homedir(), ".cargo", "bin", "rustc")];
  const found = candidates.find((file) => existsSync(file));
  if (!found) throw new Error("rustc not found on PATH or in ~/.cargo/bin: the Rust fixtures need it");
  return found;
}

/** Lets the kernel write the core when it writes it into the working directory, else gdb. */
async function dumpCrash(exe: string, dir: string): Promise<{ core: string; how: "kernel" | "gdb" }> {
  const core = path.join(dir, "core");
  const pattern = readFileSync("/proc/sys/kernel/core_pattern", "utf8").trim();
  if (!pattern.startsWith("|") && !pattern.includes("/")) {
    const before = new Set(await readdir(dir));
    const result = await run("sh", ["-c", 'ulimit -c unlimited && exec "./$0"', path.basename(exe)], {
      cwd: dir,
      timeoutMs: RUN_TIMEOUT_MS,
    });
    for (const file of await readdir(dir)) {
      if (!before.has(file) && (await isElfCore(path.join(dir, file)))) {
        await rename(path.join(dir, file), core);
        return { core, how: "kernel" };
      }
    }
    if (result.code === 0) throw new Error(`fixture ${exe} exited normally instead of crashing`);
  }
  const result = await run(
    "gdb",
    [...GDB_QUIET, "-ex", "run", "-ex", `generate-core-file ${core}`, exe],
    { cwd: dir, timeoutMs: RUN_TIMEOUT_MS },
  );
  if (!(await isElfCore(core))) {
    throw new Error(`fixture ${exe} left no core, even under gdb:\n${result.stdout}${result.stderr}`);
  }
  return { core, how: "gdb" };
}

/** Waits until the program has deadlocked, then dumps the live process with gdb, as gcore does. */
async function dumpHungProcess(exe: string, dir: string): Promise<{ core: string; how: "gdb" }> {
  const core = path.join(dir, "core");
  const child = spawn(exe, [], { cwd: dir, env: fixtureEnv(), stdio: ["ignore", "pipe", "ignore"] });
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  try {
    await untilReady(child, `fixture ${exe}`, HANG_TIMEOUT_MS);
    const pid = child.pid;
    if (pid === undefined) throw new Error(`fixture ${exe} did not start`);
    await waitUntilAllThreadsSleep(pid, exe);
    const result = await run(
      "gdb",
      [...GDB_QUIET, "-p", String(pid), "-ex", `generate-core-file ${core}`],
      { cwd: dir, timeoutMs: RUN_TIMEOUT_MS },
    );
    if (!(await isElfCore(core))) {
      throw new Error(`gdb could not dump the hung fixture ${exe}:\n${result.stdout}${result.stderr}`);
    }
    return { core, how: "gdb" };
  } finally {
    child.kill("SIGKILL");
    await exited;
  }
}

/** After "ready" the threads go straight for their locks, so once all of them sleep, they are stuck. */
async function waitUntilAllThreadsSleep(pid: number, exe: string): Promise<void> {
  const deadline = Date.now() + HANG_TIMEOUT_MS;
  const taskDir = `/proc/${pid}/task`;
  for (;;) {
    const states = (await readdir(taskDir)).map((tid) => {
      try {
        const stat = readFileSync(path.join(taskDir, tid, "stat"), "utf8");
        // The state follows the command name, which may itself contain spaces and parentheses.
        return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      } catch {
        return "gone";
      }
    });
    if (states.every((state) => state === "S")) return;
    if (Date.now() > deadline) throw new Error(`fixture ${exe} did not hang: thread states ${states.join(",")}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const GDB_QUIET = ["-nx", "-batch", "-iex", "set debuginfod enabled off"];

async function isElfCore(file: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(file, "r");
  } catch {
    return false;
  }
  try {
    const head = Buffer.alloc(18);
    const { bytesRead } = await handle.read(head, 0, 18, 0);
    const ET_CORE = 4;
    return bytesRead === 18 && head.subarray(0, 4).toString("latin1") === "\x7fELF" && head.readUInt16LE(16) === ET_CORE;
  } finally {
    await handle.close();
  }
}

/** The environment of a fixture run: settings that change what a crash prints or which check fires are cleared. */
function fixtureEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: "C", RUST_BACKTRACE: "0", DEBUGINFOD_URLS: "" };
  for (const name of ["GLIBC_TUNABLES", "MALLOC_CHECK_", "MALLOC_PERTURB_", "LD_PRELOAD"]) delete env[name];
  return env;
}

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; a non-zero exit or a signal is a result here, not an error. */
function run(command: string, args: string[], options: { cwd: string; timeoutMs: number }): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: fixtureEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} ${args.join(" ")} took longer than ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function sha256(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}
