/**
 * Where dumpdbg keeps what it can build again but would rather not on every run: V8's compiled code
 * of the CLI (code-cache.ts), gdb's and LLDB's indexes of each program's debug
 * information (gdb/arguments.ts, lldb/lldb-session.ts), separate debug files kept uncompressed
 * (gdb/debug-files.ts), the bytecode of LLDB's Python
 * (lldb/python-cache.ts). `$XDG_CACHE_HOME/dumpdbg/<what>`, else `~/.cache/dumpdbg/<what>`; none with
 * `DUMPDBG_CODE_CACHE=off`. What is read back from there is run (bytecode) or trusted (an index), so
 * a folder that is not this user's own, or that others may write to, is not used. The folders that
 * keep a manifest of what they hold (LLDB's bytecode, the uncompressed debug files) read and write
 * it through `readManifestJson` and `writeManifestJson`.
 */
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const checked = new Map<string, boolean>();

export function codeCacheDir(what: "v8" | "gdb-index" | "gdb-debug" | "lldb-index" | "lldb-python", env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.DUMPDBG_CODE_CACHE === "off") return null;
  const xdg = env.XDG_CACHE_HOME;
  // The XDG spec says a relative XDG_CACHE_HOME is invalid and is to be ignored.
  const root = join(xdg && xdg.startsWith("/") ? xdg : join(homedir(), ".cache"), "dumpdbg");
  const dir = join(root, what);
  // A debugger takes the folder on its command line, where a newline would start another command.
  if (/[\u0000-\u001f\u007f]/.test(dir)) return null;
  if (!checked.has(dir)) checked.set(dir, isPrivate(root) && isPrivate(dir));
  return checked.get(dir) ? dir : null;
}

/** The folder, made if need be (0700): a real folder of this user's, that no one else may write to. */
function isPrivate(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stats = lstatSync(dir);
    return stats.isDirectory() && (process.getuid === undefined || stats.uid === process.getuid()) && (stats.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/** What a cache folder's manifest may weigh. */
export const MAX_MANIFEST_BYTES = 1 << 20;
/** Files written aside by this process so far: each gets a name of its own. */
let asides = 0;

/** A cache folder's manifest, parsed; undefined when it is missing, unreadable, too large or not JSON. */
export function readManifestJson(path: string): unknown {
  try {
    if (statSync(path).size > MAX_MANIFEST_BYTES) return undefined;
    return JSON.parse(readFileSync(path, "utf8")) as unknown;
  } catch {
    return undefined;
  }
}

/** Writes a cache folder's manifest whole or not at all: aside under a name of its own (0600), then renamed over the old one. */
export function writeManifestJson(path: string, value: unknown): void {
  const aside = `${path}.${process.pid}.${++asides}.tmp`;
  try {
    writeFileSync(aside, JSON.stringify(value), { mode: 0o600 });
    renameSync(aside, path);
  } catch (error) {
    rmSync(aside, { force: true });
    throw error;
  }
}

/** A short, stable tag of a string (FNV-1a), for a manifest's name: one per binary, one per list of folders. */
export function manifestTag(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0");
}
