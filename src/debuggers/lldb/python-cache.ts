/**
 * Compiled Python for LLDB's start. LLDB starts its embedded Python and imports its `lldb` module
 * (600 KB of generated source) every time it starts, with bytecode writing turned off, and LLVM's
 * packages install that module without compiled bytecode: each start compiles it again, about
 * 110 ms of the ~200 ms it takes LLDB (or its adapter) to be ready. Python reads bytecode from a
 * folder of ours when `PYTHONPYCACHEPREFIX` names it, for every module it imports; so once the
 * folder holds all the modules LLDB imports as it starts, LLDB is started with it.
 *
 * The folder is filled by the lldb that needs it, once: at the end of a session started without it,
 * one `script` command compiles what that Python has imported (`fillCommand`), and the list of
 * sources with their size and time is kept as a manifest. A later start uses the folder only when
 * the sources it checks are as they were and their bytecode is there (`pythonCacheEnv`); anything
 * else (a Python or LLDB upgrade, a deleted folder, an unreadable manifest) starts LLDB as before
 * and fills the folder again.
 */
import { statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { codeCacheDir, manifestTag, MAX_MANIFEST_BYTES, readManifestJson, writeManifestJson } from "../../cache-dir.js";

/** How long the fill may take (about 150 ms) before the session closes without it. */
export const FILL_TIMEOUT_MS = 5_000;
/** The line the fill command prints its list on. */
const FILLED = "dumpdbg-python-cache ";
/** Paths the fill command may name in its Python text: nothing to escape, nothing lldb would expand. */
const PLAIN_PATH = /^[\w./ +-]+$/;

/** One compiled module: its source as it was compiled, and where its bytecode went. */
export interface CompiledModule {
  source: string;
  /** The source's modification time in ns, as a decimal string (beyond a double's precision). */
  mtimeNs: string;
  size: number;
  bytecode: string;
}

/** Where one lldb's bytecode goes, and the manifest of what is there. */
export interface PythonCache {
  folder: string;
  manifest: string;
}

/** The folder and the manifest for the lldb program `binary` (a name on PATH or a path), or null without a cache. */
export function pythonCache(binary: string, env: NodeJS.ProcessEnv = process.env): PythonCache | null {
  const folder = codeCacheDir("lldb-python", env);
  if (folder === null || !PLAIN_PATH.test(folder)) return null;
  return { folder, manifest: join(folder, `manifest-${basename(binary).replace(/[^\w.-]/g, "_")}-${manifestTag(binary)}.json`) };
}

/**
 * How to start `binary`: with `PYTHONPYCACHEPREFIX` when its manifest says the folder holds the
 * modules it imports as it starts, as compiled from the sources here now; else with no variable,
 * and the folder its session is to fill as it closes (`toFill`; null without a cache).
 * An upgrade of Python or LLDB rewrites a folder of sources at once, so the first module of each
 * folder is checked (with its bytecode): about 20 files rather than 160, on the path of every
 * start. Python itself checks each module's bytecode against its source as it imports it, and
 * compiles a changed one from its source, as it would without the folder.
 */
export function pythonCacheStart(binary: string, env: NodeJS.ProcessEnv = process.env): { env: Record<string, string>; toFill: PythonCache | null } {
  const cache = pythonCache(binary, env);
  if (cache === null) return { env: {}, toFill: null };
  const modules = readManifest(cache.manifest);
  const current = modules !== null && modules.length > 0 && firstOfEachFolder(modules).every(isCurrent);
  return current ? { env: { PYTHONPYCACHEPREFIX: cache.folder }, toFill: null } : { env: {}, toFill: cache };
}

/** The variables alone of `pythonCacheStart`: for a debugger started before its session. */
export function pythonCacheEnv(binary: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return pythonCacheStart(binary, env).env;
}

/** The first module listed in each folder of sources. */
function firstOfEachFolder(modules: CompiledModule[]): CompiledModule[] {
  const first = new Map<string, CompiledModule>();
  for (const module of modules) {
    const folder = dirname(module.source);
    if (!first.has(folder)) first.set(folder, module);
  }
  return [...first.values()];
}

/** The manifest's modules, or null when it is missing, too large or not one of ours. */
export function readManifest(path: string): CompiledModule[] | null {
  const parsed = readManifestJson(path);
  return Array.isArray(parsed) && parsed.every(isCompiledModule) ? parsed : null;
}

/** Whether a module's source is as it was compiled and its bytecode is still there: a file that cannot be read is not. */
function isCurrent(module: CompiledModule): boolean {
  try {
    const source = statSync(module.source, { bigint: true });
    return source.mtimeNs.toString() === module.mtimeNs && Number(source.size) === module.size && statSync(module.bytecode).isFile();
  } catch {
    return false;
  }
}

/**
 * The lldb command that compiles, into the folder, every Python source the running lldb has
 * imported, and prints what it compiled on one line (read by `manifestOf`). Timestamp-checked
 * bytecode, as Python's own: a source that changes is compiled again on import.
 */
export function fillCommand(folder: string): string {
  const python = [
    "import sys, os, json, py_compile",
    `sys.pycache_prefix = ${JSON.stringify(folder)}`,
    "done = []",
    "files = sorted({f for f in (getattr(m, '__file__', None) for m in list(sys.modules.values())) if isinstance(f, str) and f.endswith('.py') and os.path.isabs(f) and os.path.isfile(f)})",
    "[done.append([f, str(s.st_mtime_ns), s.st_size, c]) for f in files for s in [os.stat(f)] for c in [py_compile.compile(f, doraise=False, quiet=2, invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)] if c]",
    "sys.pycache_prefix = None",
    `print(${JSON.stringify(FILLED)} + json.dumps(done))`,
  ];
  return `script ${python.join("; ")}`;
}

/** The modules the fill command printed, or null when its line is missing or malformed (a failed fill is not a manifest). */
export function manifestOf(output: string, folder: string): CompiledModule[] | null {
  const line = output.split("\n").find((text) => text.startsWith(FILLED));
  if (line === undefined || line.length > MAX_MANIFEST_BYTES) return null;
  try {
    const rows: unknown = JSON.parse(line.slice(FILLED.length));
    if (!Array.isArray(rows)) return null;
    const modules = rows.map(([source, mtimeNs, size, bytecode]: unknown[]) => ({ source, mtimeNs, size, bytecode }));
    // Bytecode outside the folder is none of ours to trust.
    return modules.length > 0 && modules.every((module) => isCompiledModule(module) && module.bytecode.startsWith(`${folder}/`)) ? (modules as CompiledModule[]) : null;
  } catch {
    return null;
  }
}

/** Keeps what a fill printed as the folder's manifest; a fill that failed keeps nothing. */
export function keepFilled(cache: PythonCache, output: string): void {
  const modules = manifestOf(output, cache.folder);
  if (modules !== null) writeManifest(cache.manifest, modules);
}

/** Keeps the manifest, whole or not at all. */
export function writeManifest(path: string, modules: CompiledModule[]): void {
  writeManifestJson(path, modules);
}

function isCompiledModule(value: unknown): value is CompiledModule {
  const module = value as CompiledModule;
  return (
    typeof module === "object" &&
    module !== null &&
    typeof module.source === "string" &&
    typeof module.mtimeNs === "string" &&
    /^\d{1,25}$/.test(module.mtimeNs) &&
    Number.isSafeInteger(module.size) &&
    typeof module.bytecode === "string"
  );
}
