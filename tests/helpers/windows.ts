/**
 * Builds the Windows fixture programs in tests/fixtures/windows with mingw-w64 and crashes them
 * under Wine, where their crash reporter (crash-dump.c: an unhandled-exception filter, a SIGABRT
 * handler and a dump-writing thread started up front, as Breakpad and Crashpad have) writes
 * crash.dmp with dbghelp's MiniDumpWriteDump; a hung program's watchdog writes a dump without an
 * exception. The line of a program's culprit carries a `CULPRIT` comment.
 *
 * Built dumps are cached under os.tmpdir()/dumpdbg-fixtures by the sources' hash. Wine runs one
 * program at a time, in one private prefix (WINEDEBUG=-all; its first start takes seconds), across
 * the test files that vitest runs in parallel: a lock directory orders them.
 */
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { mkdir, open, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);
const SOURCES = fileURLToPath(new URL("../fixtures/windows/", import.meta.url));
/** Where built fixtures are cached, one folder per program and version of its sources. */
export const CACHE_ROOT = path.join(os.tmpdir(), "dumpdbg-fixtures");
const PREFIX = path.join(CACHE_ROOT, "wine-prefix");
const LOCK = path.join(CACHE_ROOT, "wine.lock");
const RUN_TIMEOUT_MS = 120_000;
/** Where Debian's Wine keeps its Windows DLLs: the system modules of these dumps. */
export const WINE_DLLS = "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows";

export interface BuiltMinidump {
  name: string;
  exe: string;
  dump: string;
  dir: string;
  source: string;
  /** What the program printed, including the crash reporter's line. */
  output: string;
}

const TOOLS = ["x86_64-w64-mingw32-gcc", "x86_64-w64-mingw32-g++", "wine", "wineserver"];

/** The tools these fixtures need that this machine lacks (.ci/run installs mingw-w64 and wine). */
export function missingWindowsTools(): string[] {
  return TOOLS.filter(
    (tool) =>
      !(process.env.PATH ?? "").split(path.delimiter).some((dir) => {
        try {
          accessSync(path.join(dir, tool), constants.X_OK);
          return true;
        } catch {
          return false;
        }
      }),
  );
}

export function windowsFixtureSource(name: string): string {
  for (const ext of [".c", ".cpp"]) {
    const file = path.join(SOURCES, name + ext);
    if (existsSync(file)) return file;
  }
  throw new Error(`no Windows fixture named ${name} in ${SOURCES}`);
}

/** The 1-based line of the source that carries the `CULPRIT` comment. */
export function windowsCulpritLine(name: string): number {
  const lines = readFileSync(windowsFixtureSource(name), "utf8").split("\n");
  const marked = lines.flatMap((line, index) => (/\bCULPRIT\b/.test(line) ? [index + 1] : []));
  if (marked.length !== 1 || marked[0] === undefined) throw new Error(`Windows fixture ${name}: expected one CULPRIT marker, found ${marked.length}`);
  return marked[0];
}

const pending = new Map<string, Promise<BuiltMinidump>>();

/** What `make` builds, made once per test run for its key (made again after a failure). */
function once(key: string, make: () => Promise<BuiltMinidump>): Promise<BuiltMinidump> {
  const known = pending.get(key);
  if (known) return known;
  const built = make();
  pending.set(key, built);
  built.catch(() => pending.delete(key));
  return built;
}

/** Builds and crashes tests/fixtures/windows/<name>.(c|cpp) under Wine, once per version of its sources. */
export function buildMinidump(name: string): Promise<BuiltMinidump> {
  return once(name, async () => {
    const source = windowsFixtureSource(name);
    const reporter = path.join(SOURCES, "crash-dump.c");
    // By where the sources are too: the program's debug information names them, and an analysis reads them there.
    const key = sha256([source, ...[source, reporter, path.join(SOURCES, "crash-dump.h"), fileURLToPath(import.meta.url)].map((file) => readFileSync(file, "utf8"))].join("\0")).slice(0, 16);
    const dir = path.join(CACHE_ROOT, `windows-${name}-${key}`);
    if (existsSync(path.join(dir, "output.txt")) && existsSync(path.join(dir, "crash.dmp"))) return builtIn(name, dir, source);
    return buildIn(name, dir, async (scratch) => {
      await compile(name, source, SOURCES, scratch);
      return source;
    });
  });
}

/**
 * Builds and crashes a fixture program from a copy of its sources that is removed before it runs:
 * its debug information names source files this machine does not have, as a dump of another
 * machine's build does. Once per test run, in a folder of its own.
 */
export function buildMinidumpWithoutSources(name: string): Promise<BuiltMinidump> {
  return once(`${name} without sources`, () =>
    buildIn(name, path.join(CACHE_ROOT, `windows-${name}-without-sources-${process.pid}-${Date.now()}`), async (scratch) => {
      const copied = path.join(scratch, "sources");
      await mkdir(copied);
      const original = windowsFixtureSource(name);
      for (const file of [original, path.join(SOURCES, "crash-dump.c"), path.join(SOURCES, "crash-dump.h")]) await writeFile(path.join(copied, path.basename(file)), await readFile(file));
      const source = path.join(copied, path.basename(original));
      await compile(name, source, copied, scratch);
      await rm(copied, { recursive: true, force: true });
      return source;
    }),
  );
}

/**
 * The program `compileIn` builds in a scratch folder (it returns the source it was built from),
 * crashed under Wine and published as `dir`; the scratch folder goes when any of it fails.
 */
async function buildIn(name: string, dir: string, compileIn: (scratch: string) => Promise<string>): Promise<BuiltMinidump> {
  const scratch = `${dir}.${process.pid}.${Date.now()}`;
  await mkdir(scratch, { recursive: true });
  try {
    const source = await compileIn(scratch);
    await crashAndPublish(path.join(scratch, `${name}.exe`), scratch, dir);
    return builtIn(name, dir, source);
  } catch (error) {
    await rm(scratch, { recursive: true, force: true });
    throw error;
  }
}

/** A fixture program built and crashed in `dir`. */
async function builtIn(name: string, dir: string, source: string): Promise<BuiltMinidump> {
  return { name, exe: path.join(dir, `${name}.exe`), dump: path.join(dir, "crash.dmp"), dir, source, output: await readFile(path.join(dir, "output.txt"), "utf8") };
}

/** A fixture program and its crash reporter (`crash-dump.c` in `sources`) compiled into `scratch/<name>.exe`. */
async function compile(name: string, source: string, sources: string, scratch: string): Promise<void> {
  const cpp = source.endsWith(".cpp");
  const flags = ["-g", "-gdwarf-4", "-O0", "-I", sources];
  await execFileAsync("x86_64-w64-mingw32-gcc", [...flags, "-c", "-o", path.join(scratch, "crash-dump.o"), path.join(sources, "crash-dump.c")]);
  // C++ programs carry their runtime (no libstdc++-6.dll to ship next to them).
  await execFileAsync(cpp ? "x86_64-w64-mingw32-g++" : "x86_64-w64-mingw32-gcc", [
    ...flags,
    ...(cpp ? ["-static-libstdc++", "-static-libgcc"] : []),
    "-o",
    path.join(scratch, `${name}.exe`),
    source,
    path.join(scratch, "crash-dump.o"),
    "-ldbghelp",
  ]);
  await rm(path.join(scratch, "crash-dump.o"), { force: true });
}

/**
 * Runs a fixture program built in `scratch` under Wine until its crash reporter has written
 * crash.dmp there (with what it printed in output.txt), then publishes `scratch` as the cache
 * folder `dir`. The caller removes `scratch` when this throws.
 */
export async function crashAndPublish(exe: string, scratch: string, dir: string): Promise<void> {
  // The crash reporter ends the process with exit code 3 once crash.dmp is written.
  const dumped = (run: { code: number | null }) => run.code === 3 && existsSync(path.join(scratch, "crash.dmp"));
  let run = await withWine(() => runUnderWine(exe, scratch));
  // Once in a while, on a busy machine, Wine ends a process whose stack overflowed before its
  // reporter's thread has written the dump (it printed "writing crash.dmp", then exit 0; twice in a
  // row in one CI run): the program gets two more runs before it is called broken.
  for (let again = 0; again < 2 && !dumped(run); again++) {
    await rm(path.join(scratch, "crash.dmp"), { force: true });
    run = await withWine(() => runUnderWine(exe, scratch));
  }
  const { code, output } = run;
  if (!dumped(run)) {
    throw new Error(`${path.basename(exe)} exited with ${code} instead of writing crash.dmp:\n${output}`);
  }
  await writeFile(path.join(scratch, "output.txt"), output);
  try {
    await rename(scratch, dir);
  } catch {
    // Another worker published the same build first: use theirs.
    await rm(scratch, { recursive: true, force: true });
  }
}

function wineEnvironment(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    WINEPREFIX: PREFIX,
    WINEDEBUG: "-all",
    // No prompts to install Mono or Gecko, which these programs do not use.
    WINEDLLOVERRIDES: "mscoree,mshtml=",
  };
}

/** Runs a program until it exits, its output going to a file: Wine's own processes outlive it and would hold a pipe open. */
async function runUnderWine(exe: string, cwd: string): Promise<{ code: number | null; output: string }> {
  const outputFile = path.join(cwd, "wine-output.txt");
  const file = await open(outputFile, "w");
  try {
    const child = spawn("wine", [exe], { cwd, env: wineEnvironment(), stdio: ["ignore", file.fd, file.fd] });
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`wine ${exe} took longer than ${RUN_TIMEOUT_MS} ms`));
      }, RUN_TIMEOUT_MS);
      child.once("error", reject);
      child.once("exit", (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    return { code, output: await readFile(outputFile, "utf8") };
  } finally {
    await file.close();
    await rm(outputFile, { force: true });
  }
}

/** One Wine user at a time across processes: a lock directory, taken over when its holder died. */
async function withWine<T>(work: () => Promise<T>): Promise<T> {
  await mkdir(CACHE_ROOT, { recursive: true });
  for (;;) {
    try {
      await mkdir(LOCK);
      await writeFile(path.join(LOCK, "pid"), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (await staleLock()) await rm(LOCK, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await work();
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

async function staleLock(): Promise<boolean> {
  try {
    const pid = Number(await readFile(path.join(LOCK, "pid"), "utf8"));
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // No pid file yet: its holder is writing it, unless the lock is old.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      const info = await stat(LOCK).catch(() => null);
      return info === null || Date.now() - info.mtimeMs > 10_000;
    }
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
