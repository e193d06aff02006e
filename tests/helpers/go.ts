/**
 * Builds the Go fixture services in tests/fixtures/go/<case>/ and makes real core files of their
 * crashes, the way a Go service dumps core in production: GOTRACEBACK=crash and `ulimit -c
 * unlimited`, the runtime printing its panic and then aborting. A case whose main.go starts with
 * `// hangs:` is a service that stops making progress: it prints "ready" and is dumped alive, as
 * gcore does; one whose main.go starts with `// runs under: ulimit -v KIB` runs with that much
 * address space, as a container's memory limit caps a service, so its heap cannot grow past it. Builds are cached under os.tmpdir()/dumpdbg-fixtures by source hash, with the Go
 * build cache beside them, so that no test pays for `go build` twice; nothing is fetched (GOPROXY=off).
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { open, readdir, rename, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildOnce } from "./cores.js";
import { untilReady } from "./ready.js";

export interface BuiltGoCore {
  exe: string;
  core: string;
  dir: string;
  /** absolute path of the case's main.go */
  source: string;
  /** what the service printed before it died (the runtime's panic or fatal error), or "" for a hang */
  output: string;
}

export interface GoBuildOptions {
  /** build as shipped (the compiler's optimisations and inlining) instead of `-gcflags=all=-N -l` */
  optimized?: boolean;
  /** `-buildmode=pie`: loaded at a random base, as distributions build Go programs */
  pie?: boolean;
  /** `-ldflags=-s -w`: no symbol table and no DWARF, as release images ship Go programs */
  stripped?: boolean;
}

const CASES_DIR = fileURLToPath(new URL("../fixtures/go/", import.meta.url));
const CACHE_ROOT = path.join(os.tmpdir(), "dumpdbg-fixtures");
const BUILD_TIMEOUT_MS = 120_000;
const RUN_TIMEOUT_MS = 30_000;
const HANG_TIMEOUT_MS = 15_000;
const RECIPE_HASH = sha256(readFileSync(fileURLToPath(import.meta.url)));

/** The Go fixture cases. */
export function goFixtureNames(): string[] {
  return readdirSync(CASES_DIR).filter((name) => existsSync(path.join(CASES_DIR, name, "main.go"))).sort();
}

/** The 1-based line of the case's `// CULPRIT` marker. */
export function goCulpritLine(name: string): number {
  const lines = readFileSync(path.join(CASES_DIR, name, "main.go"), "utf8").split("\n");
  const marked = lines.flatMap((line, index) => (line.includes("// CULPRIT") ? [index + 1] : []));
  if (marked.length !== 1 || marked[0] === undefined) throw new Error(`Go fixture ${name}: expected one "// CULPRIT" marker, found ${marked.length}`);
  return marked[0];
}

export function buildGoCore(name: string, options: GoBuildOptions = {}): Promise<BuiltGoCore> {
  const caseDir = path.join(CASES_DIR, name);
  const files = readdirSync(caseDir).sort();
  const text = files.map((file) => `${file}\n${readFileSync(path.join(caseDir, file), "utf8")}`).join("\n");
  // By where the sources are too: the program's debug information names them.
  const key = sha256(JSON.stringify([RECIPE_HASH, caseDir, name, sha256(text), options.optimized ?? false, options.pie ?? false, options.stripped ?? false])).slice(0, 16);
  return buildOnce(`go-${name}-${key}`, async (dir) => {
    for (const file of files) await writeFile(path.join(dir, file), readFileSync(path.join(caseDir, file)));
    const exe = await goBuild(dir, options);
    const header = readFileSync(path.join(caseDir, "main.go"), "utf8");
    const dumped = header.startsWith("// hangs:") ? await dumpHungService(exe, dir) : await dumpCrash(exe, dir, limitsOf(header));
    return { exe, core: dumped.core, dir, source: path.join(caseDir, "main.go"), output: dumped.output };
  });
}

async function goBuild(dir: string, options: GoBuildOptions): Promise<string> {
  const exe = path.join(dir, "svc");
  const args = ["build", ...(options.optimized ? [] : ["-gcflags=all=-N -l"]), ...(options.pie ? ["-buildmode=pie"] : []), ...(options.stripped ? ["-ldflags=-s -w"] : []), "-o", exe, "."];
  const result = await run("go", args, dir, BUILD_TIMEOUT_MS);
  if (result.code !== 0) throw new Error(`go ${args.join(" ")} failed in ${dir}:\n${result.stderr}`);
  return exe;
}

/** `ulimit -v KIB` from a case's `// runs under:` first line, as shell words; none for any other case. */
function limitsOf(header: string): string {
  const match = /^\/\/ runs under: ulimit -v (\d+)\b/.exec(header);
  return match ? `ulimit -v ${match[1]} && ` : "";
}

/**
 * The kernel writes the core into the working directory when core_pattern lets it; else gdb runs the
 * service and dumps it. `limits` (shell commands) set the service's resource limits before it starts.
 */
async function dumpCrash(exe: string, dir: string, limits: string): Promise<{ core: string; output: string }> {
  const core = path.join(dir, "core");
  const pattern = readFileSync("/proc/sys/kernel/core_pattern", "utf8").trim();
  if (!pattern.startsWith("|") && !pattern.includes("/")) {
    const before = new Set(await readdir(dir));
    const result = await run("sh", ["-c", `ulimit -c unlimited && ${limits}exec "./$0"`, path.basename(exe)], dir, RUN_TIMEOUT_MS);
    for (const file of await readdir(dir)) {
      if (!before.has(file) && (await isElfCore(path.join(dir, file)))) {
        await rename(path.join(dir, file), core);
        return { core, output: result.stderr };
      }
    }
    if (result.code === 0) throw new Error(`Go fixture ${exe} exited normally instead of crashing`);
  }
  // gdb runs under the same limits as the service it starts: they are inherited, and gdb needs far less.
  const result = await run("sh", ["-c", `${limits}exec gdb "$@"`, "sh", ...GDB_QUIET, "-ex", "run", "-ex", `generate-core-file ${core}`, exe], dir, RUN_TIMEOUT_MS);
  if (!(await isElfCore(core))) throw new Error(`Go fixture ${exe} left no core, even under gdb:\n${result.stdout}${result.stderr}`);
  return { core, output: result.stderr };
}

/** Waits for "ready", lets the goroutines block, then dumps the live process with gdb, as gcore does. */
async function dumpHungService(exe: string, dir: string): Promise<{ core: string; output: string }> {
  const core = path.join(dir, "core");
  const child = spawn(exe, [], { cwd: dir, env: goEnv(dir), stdio: ["ignore", "pipe", "ignore"] });
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  try {
    await untilReady(child, `Go fixture ${exe}`, HANG_TIMEOUT_MS);
    // The goroutines park within microseconds of "ready"; the OS threads sleep in futex or epoll.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const result = await run("gdb", [...GDB_QUIET, "-p", String(child.pid), "-ex", `generate-core-file ${core}`], dir, RUN_TIMEOUT_MS);
    if (!(await isElfCore(core))) throw new Error(`gdb could not dump the hung Go fixture ${exe}:\n${result.stdout}${result.stderr}`);
    return { core, output: "" };
  } finally {
    child.kill("SIGKILL");
    await exited;
  }
}

const GDB_QUIET = ["-nx", "-batch", "-iex", "set debuginfod enabled off"];

async function isElfCore(file: string): Promise<boolean> {
  const handle = await open(file, "r").catch(() => null);
  if (!handle) return false;
  try {
    const head = Buffer.alloc(18);
    const { bytesRead } = await handle.read(head, 0, 18, 0);
    return bytesRead === 18 && head.subarray(0, 4).toString("latin1") === "\x7fELF" && head.readUInt16LE(16) === 4;
  } finally {
    await handle.close();
  }
}

/** A hermetic Go: no module downloads, its caches beside the fixtures, and crashes that dump core. */
function goEnv(dir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    LC_ALL: "C",
    GOTRACEBACK: "crash",
    GOFLAGS: "-mod=mod",
    GOPROXY: "off",
    GOTOOLCHAIN: "local",
    GO111MODULE: "on",
    GOCACHE: path.join(CACHE_ROOT, "go-build-cache"),
    GOPATH: path.join(CACHE_ROOT, "go-path"),
    GOENV: "off",
    DEBUGINFOD_URLS: "",
    PWD: dir,
  };
}

function run(command: string, args: string[], cwd: string, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: goEnv(cwd), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} ${args.join(" ")} took longer than ${timeoutMs} ms`));
    }, timeoutMs);
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
