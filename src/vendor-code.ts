/**
 * dist/vendor.cjs (see vendor.ts) loaded with V8's code cache: the first run keeps the code V8
 * compiled in the user's cache folder, and later runs start from it rather than parse 4.6 MB of
 * JavaScript again (about 105 ms to 50 ms for an analysis here). A cache V8 rejects (another Node,
 * another build) is written anew; one that cannot be written is simply not kept.
 */
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { Script } from "node:vm";
import { packageRoot } from "./package-root.js";

type Modules = Record<string, () => unknown>;

let loaded: Modules | null = null;

/** A vendored package's namespace, by the specifier the code imports it with. */
export function vendorModule(specifier: string): unknown {
  const load = vendor()[specifier];
  if (!load) throw new Error(`${specifier} is not among the vendored packages (src/vendor.ts)`);
  return load();
}

function vendor(): Modules {
  if (loaded) return loaded;
  const file = join(packageRoot(), "dist", "vendor.cjs");
  // esbuild writes it in ASCII: read as latin1, it is a one-byte string without decoding.
  const source = readFileSync(file, "latin1");
  const cacheFile = cachePath(file);
  const cachedData = cacheFile ? readCache(cacheFile) : undefined;
  // CommonJS's own wrapper: the script evaluates to the module function.
  const wrapped = `(function (exports, require, module, __filename, __dirname) { ${source}\n});`;
  const script = new Script(wrapped, { filename: file, ...(cachedData ? { cachedData } : {}) });
  const module = { exports: {} as { vendorModules?: Modules } };
  (script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  if (!module.exports.vendorModules) throw new Error(`${file} does not export the vendored packages; rebuild with npm run build`);
  // Written when the command ends, so that the code compiled while it ran is kept too.
  if (cacheFile && (!cachedData || script.cachedDataRejected)) process.once("exit", () => writeCache(cacheFile, script));
  return (loaded = module.exports.vendorModules);
}

/** One cache file per build of vendor.cjs and per Node: `$XDG_CACHE_HOME/dumpdbg/v8/`. */
function cachePath(file: string): string | null {
  if (process.env.DUMPDBG_CODE_CACHE === "off") return null;
  try {
    const stats = statSync(file);
    const xdg = process.env.XDG_CACHE_HOME;
    const base = xdg && xdg.startsWith("/") ? xdg : join(homedir(), ".cache");
    const id = [process.version, process.arch, stats.size, Math.round(stats.mtimeMs)].join("-");
    return join(base, "dumpdbg", "v8", `vendor-${id}.bin`);
  } catch {
    return null;
  }
}

/** The cache, when it is a regular file of a sane size; anything else is ignored. */
function readCache(path: string): Buffer | undefined {
  let fd = -1;
  try {
    fd = openSync(path, "r");
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size === 0 || stats.size > 64 * 1024 * 1024) return undefined;
    const data = Buffer.allocUnsafe(stats.size);
    return readSync(fd, data, 0, data.length, 0) === data.length ? data : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

function writeCache(path: string, script: Script): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const temp = `${path}.${process.pid}.tmp`;
    writeFileSync(temp, script.createCachedData(), { mode: 0o600 });
    renameSync(temp, path);
    // The caches of earlier builds and other Nodes are of no more use.
    for (const name of readdirSync(dirname(path))) {
      if (/^vendor-.*\.bin$/.test(name) && name !== basename(path)) rmSync(join(dirname(path), name), { force: true });
    }
  } catch {
    // A read-only home or a full disk: the next run compiles again.
  }
}
