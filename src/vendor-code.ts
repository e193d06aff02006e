/**
 * dist/vendor.cjs (see vendor.ts) loaded with V8's code cache: the first run keeps the code V8
 * compiled in the user's cache folder, and later runs start from it rather than parse 4.6 MB of
 * JavaScript again (about 105 ms to 50 ms for an analysis here). The cache names the packages whose
 * code it holds: a run that used others (an analysis after a command that needed only zod) writes
 * it again with theirs too. A cache V8 rejects (another Node, another build) is written anew; one
 * that cannot be written is simply not kept.
 *
 * The file: one line of JSON (`{"packages":[…]}`), then V8's data.
 */
import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Script } from "node:vm";
import { codeCacheDir } from "./cache-dir.js";
import { packageRoot } from "./package-root.js";

type Modules = Record<string, () => unknown>;

interface Cache {
  /** The packages whose compiled code it holds. */
  packages: string[];
  data: Buffer;
}

let loaded: Modules | null = null;
/** The packages this run asked for. */
const used = new Set<string>();

/** A vendored package's namespace, by the specifier the code imports it with. */
export function vendorModule(specifier: string): unknown {
  const load = vendor()[specifier];
  if (!load) throw new Error(`${specifier} is not among the vendored packages (src/vendor.ts)`);
  used.add(specifier);
  return load();
}

function vendor(): Modules {
  if (loaded) return loaded;
  const file = join(packageRoot(), "dist", "vendor.cjs");
  // esbuild writes it in ASCII: read as latin1, it is a one-byte string without decoding.
  const source = readFileSync(file, "latin1");
  const cacheFile = cachePath(source);
  const cache = cacheFile ? readCache(cacheFile) : undefined;
  // CommonJS's own wrapper: the script evaluates to the module function.
  const wrapped = `(function (exports, require, module, __filename, __dirname) { ${source}\n});`;
  const script = new Script(wrapped, { filename: file, ...(cache ? { cachedData: cache.data } : {}) });
  const module = { exports: {} as { vendorModules?: Modules } };
  (script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  if (!module.exports.vendorModules) throw new Error(`${file} does not export the vendored packages; rebuild with npm run build`);
  // Written when the command ends, so that the code compiled while it ran is kept too.
  if (cacheFile) {
    process.once("exit", () => {
      const held = cache && !script.cachedDataRejected ? cache.packages : [];
      if (held.length === 0 || [...used].some((specifier) => !held.includes(specifier))) writeCache(cacheFile, script, [...new Set([...held, ...used])].sort());
    });
  }
  return (loaded = module.exports.vendorModules);
}

/**
 * One cache file per build of vendor.cjs (the content hash build.mjs writes on its first line: a
 * package's files all carry the same date, and V8 checks cached code only against the source's
 * length) and per Node: `$XDG_CACHE_HOME/dumpdbg/v8/`.
 */
function cachePath(source: string): string | null {
  const dir = codeCacheDir("v8");
  const build = /^\/\/ dumpdbg vendor ([0-9a-f]{16})\n/.exec(source)?.[1];
  if (dir === null || build === undefined) return null;
  return join(dir, `vendor-${process.version}-${process.arch}-${build}.bin`);
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
    const header = JSON.parse(bytes.subarray(0, end).toString("utf8")) as { packages?: unknown };
    const packages = Array.isArray(header.packages) ? header.packages.filter((p): p is string => typeof p === "string") : [];
    return { packages, data: bytes.subarray(end + 1) };
  } catch {
    return undefined;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

function writeCache(path: string, script: Script, packages: string[]): void {
  try {
    const temp = `${path}.${process.pid}.tmp`;
    // A new file only ("wx"): never through a link someone left at that name.
    writeFileSync(temp, Buffer.concat([Buffer.from(`${JSON.stringify({ packages })}\n`), script.createCachedData()]), { mode: 0o600, flag: "wx" });
    renameSync(temp, path);
  } catch {
    // A read-only home or a full disk: the next run compiles again.
  }
  forgetOldCaches(dirname(path));
}

/**
 * Keeps the three caches written last (installs of other versions may share the folder) and removes
 * the rest, and temporary files a killed run left.
 */
function forgetOldCaches(dir: string): void {
  try {
    const files = readdirSync(dir).map((name) => ({ name, path: join(dir, name) }));
    const caches = files.filter((f) => /^vendor-.*\.bin$/.test(f.name)).map((f) => ({ ...f, used: statSync(f.path).mtimeMs })).sort((a, b) => b.used - a.used);
    const stale = [...caches.slice(3), ...files.filter((f) => /\.tmp$/.test(f.name) && Date.now() - statSync(f.path).mtimeMs > 60_000)];
    for (const file of stale) rmSync(file.path, { force: true });
  } catch {
    // Nothing to tidy, or no right to.
  }
}
