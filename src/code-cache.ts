/**
 * The CLI's bundle run with V8's code cache: dist/dumpdbg-lean.cjs for the commands that run no
 * agents (`LEAN_COMMANDS`: no LangGraph, LangChain, providers or MCP in it, a quarter of the
 * other's size), dist/dumpdbg.cjs for the rest. The first run of a command keeps
 * the code V8 compiled for it in the user's cache folder, and later runs of that command start from
 * it rather than parse and compile again (an offline analysis is ~3 MB of JavaScript of ours,
 * LangGraph's, LangChain's and zod's; Node 20 keeps no compiled code for ES modules, and its ES
 * module loader is itself a cost: resolving, fetching and linking each chunk).
 *
 * One cache per command (`triage` needs none of the analysis's code, and deserialising code costs
 * time by its size), named by the bundle's build and Node's version, written by a run that ended
 * well (exit code 0). Its first line names what that run used (`noteCodeUse`: the command's own
 * action, a model provider, the chat): a run that used something the cache lacks writes it again,
 * with that code too, so a cache written by `analyze --help` does not stand for an analysis. A
 * cache V8 rejects (another Node, other V8 flags) is written anew; one that cannot be written is
 * simply not kept.
 * With `--debug` the bundle is `require`d instead, so that stack traces go through its source map.
 *
 * Part of dist/early.cjs (early.ts): bin/dumpdbg.cjs loads the CLI through it.
 */
import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Script } from "node:vm";
import { codeCacheDir } from "./cache-dir.js";

/** What the CLI's bundle exports. */
export interface Cli {
  main(argv: string[]): Promise<number>;
}

interface Cache {
  /** What the run that wrote it used (`noteCodeUse`). */
  uses: string[];
  data: Buffer;
}

/** The commands, each with its own cache (main.ts' command table; a unit test keeps the two the same). */
export const COMMANDS: readonly string[] = ["exec", "triage", "symbols", "analyze", "resume", "chat", "report", "batch", "worker", "mcp", "sessions", "config", "doctor", "completion"];

/**
 * The commands dist/dumpdbg-lean.cjs holds, which run no agents; it also answers `--help` and
 * anything that is not a command. A quarter of dist/dumpdbg.cjs' size, it loads in a third of the
 * time, while the debugger, started just before it, needs the CPU to start. The other commands'
 * modules are not in it (build.mjs stands a module that throws in for each).
 */
export const LEAN_COMMANDS: readonly string[] = ["exec", "triage", "symbols", "report", "sessions", "config", "doctor", "completion"];

/** The bundle in dist/ that holds the command `argv` names. */
export function cliBundle(argv: string[]): "dumpdbg-lean.cjs" | "dumpdbg.cjs" {
  const command = commandOf(argv);
  return command === "other" || LEAN_COMMANDS.includes(command) ? "dumpdbg-lean.cjs" : "dumpdbg.cjs";
}

/** The caches of this many builds are kept; older ones are removed. */
const BUILDS_KEPT = 3;
/** The build's id (one for both bundles), which build.mjs appends to each as its last line. */
const BUILD_ID = /\/\/ dumpdbg build ([0-9a-f]{16})\s*$/;

/** What this run used beyond its command's own code. */
const uses = new Set<string>();

/**
 * Notes that this run uses a part of the CLI that not every run of its command does (the command's
 * action itself, a model provider's client, the chat), so that a cache written without its code is
 * written again.
 */
export function noteCodeUse(what: string): void {
  uses.add(what);
}

/** Loads the CLI from the folder `dist` (its bundle that holds the command `argv` names). */
export function loadCli(dist: string, argv: string[], options: { debug?: boolean } = {}): Cli {
  const file = join(dist, cliBundle(argv));
  const require = createRequire(file);
  if (options.debug) return require(file) as Cli;
  // esbuild writes it in ASCII: read as latin1, it is a one-byte string without decoding.
  const source = readFileSync(file, "latin1");
  const cacheFile = cachePath(source, commandOf(argv));
  const cache = cacheFile ? readCache(cacheFile) : undefined;
  // CommonJS's own wrapper: the script evaluates to the module function.
  const wrapped = `(function (exports, require, module, __filename, __dirname) { ${source}\n});`;
  const script = new Script(wrapped, { filename: file, ...(cache ? { cachedData: cache.data } : {}) });
  const module = { exports: {} as Partial<Cli> };
  (script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, require, module, file, dirname(file));
  if (typeof module.exports.main !== "function") throw new Error(`${file} does not export main; rebuild with npm run build`);
  // Written when the command ends, so that the code compiled while it ran is kept too.
  if (cacheFile) {
    process.once("exit", (code) => {
      if (code !== 0) return;
      const held = cache && !script.cachedDataRejected ? cache.uses : null;
      if (held === null || [...uses].some((what) => !held.includes(what))) writeCache(cacheFile, script, [...new Set([...(held ?? []), ...uses])].sort());
    });
  }
  return module.exports as Cli;
}

/**
 * The command's name, for its bundle and its cache: `triage`, `sessions`; `other` for anything else
 * (`--help`, a typo). The program's own options (`--debug`, `--help`) take no value and may come
 * first: the command is the first argument that is not an option.
 */
export function commandOf(argv: string[]): string {
  const command = argv.slice(2).find((arg) => !arg.startsWith("-"));
  return command !== undefined && COMMANDS.includes(command) ? command : "other";
}

/**
 * `$XDG_CACHE_HOME/dumpdbg/v8/cli-<build>-<node>-<arch>-<command>.bin`. The build is the id
 * build.mjs appends (a package's files all carry the same date, and V8 checks cached code only
 * against the source's length).
 */
function cachePath(source: string, command: string): string | null {
  const dir = codeCacheDir("v8");
  const build = BUILD_ID.exec(source.slice(-200))?.[1];
  if (dir === null || build === undefined) return null;
  return join(dir, `cli-${build}-${process.version}-${process.arch}-${command}.bin`);
}

/** The cache, when it is a regular file of a sane size with its header; anything else is ignored. */
function readCache(path: string): Cache | undefined {
  let fd = -1;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size === 0 || stats.size > 64 * 1024 * 1024) return undefined;
    // Code V8 will run: only a file of this user's that no one else may write.
    if ((process.getuid !== undefined && stats.uid !== process.getuid()) || (stats.mode & 0o022) !== 0) return undefined;
    const bytes = Buffer.allocUnsafe(stats.size);
    if (readSync(fd, bytes, 0, bytes.length, 0) !== bytes.length) return undefined;
    const end = bytes.subarray(0, 4096).indexOf(0x0a);
    if (end < 0) return undefined;
    const header = JSON.parse(bytes.subarray(0, end).toString("utf8")) as { uses?: unknown };
    const used = Array.isArray(header.uses) ? header.uses.filter((u): u is string => typeof u === "string") : [];
    return { uses: used, data: bytes.subarray(end + 1) };
  } catch {
    return undefined;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

function writeCache(path: string, script: Script, used: string[]): void {
  const temp = `${path}.${process.pid}.tmp`;
  try {
    // A new file only ("wx"): never through a link someone left at that name.
    writeFileSync(temp, Buffer.concat([Buffer.from(`${JSON.stringify({ uses: used })}\n`), script.createCachedData()]), { mode: 0o600, flag: "wx" });
    renameSync(temp, path);
  } catch {
    // A read-only home or a full disk: the next run compiles again, and no half-written file holds the space.
    rmSync(temp, { force: true });
  }
  forgetOldCaches(dirname(path));
}

/**
 * Keeps the caches of the three builds written last (installs of other versions may share the
 * folder) and removes the rest, the caches of earlier versions of dumpdbg (`vendor-*.bin`), and
 * temporary files a killed run left.
 */
function forgetOldCaches(dir: string): void {
  try {
    const files = readdirSync(dir).map((name) => ({ name, path: join(dir, name) }));
    const lastWritten = new Map<string, number>();
    for (const file of files) {
      const build = /^cli-([0-9a-f]{16})-.*\.bin$/.exec(file.name)?.[1];
      if (build !== undefined) lastWritten.set(build, Math.max(lastWritten.get(build) ?? 0, statSync(file.path).mtimeMs));
    }
    const kept = new Set([...lastWritten].sort((a, b) => b[1] - a[1]).slice(0, BUILDS_KEPT).map(([build]) => build));
    const stale = files.filter((f) => {
      const build = /^cli-([0-9a-f]{16})-.*\.bin$/.exec(f.name)?.[1];
      if (build !== undefined) return !kept.has(build);
      if (/^vendor-.*\.bin$/.test(f.name)) return true;
      return /\.tmp$/.test(f.name) && Date.now() - statSync(f.path).mtimeMs > 60_000;
    });
    for (const file of stale) rmSync(file.path, { force: true });
  } catch {
    // Nothing to tidy, or no right to.
  }
}
