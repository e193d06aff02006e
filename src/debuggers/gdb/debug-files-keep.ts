/**
 * The writing side of the folder of uncompressed debug files (debug-files.ts says why): at the
 * end of a session, gdb says which separate debug files it read (`LIST_DEBUG_FILES`), and each
 * compressed one is copied there decompressed, under its build id.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import { DumpFile, elfSections } from "../dumpfile/index.js";
import { fileBuildId } from "../dump.js";
import { isAlive } from "../../process-alive.js";
import { live } from "../live.js";
import { MAX_MANIFEST_BYTES, writeManifestJson } from "../../cache-dir.js";
import { CONTROL, copyPath, isCurrent, isFile, readManifest, type DebugFileCache, type DebugFileCopy, type DebugFileManifest } from "./debug-files.js";

const run = promisify(execFile);

/** The lines `LIST_DEBUG_FILES` prints: the directories gdb searches, then each debug file it read. */
const DIRS = "dumpdbg-debug-dirs ";
const FILE = "dumpdbg-debug-file ";
/** Copies kept per list of directories, what they may weigh together, and the largest debug file copied (a browser's is ~1 GB inflated). */
const MAX_COPIES = 64;
const MAX_COPIES_BYTES = 2 * 1024 * 1024 * 1024;
const MAX_SOURCE_BYTES = 256 * 1024 * 1024;
/** How long a session's end may spend copying: what is left is copied at the next end. */
const COPYING_MS = 5_000;
/** A half-written copy older than this was abandoned, whatever process has its pid now (a copy takes at most COPYING_MS). */
const ABANDONED_AFTER_MS = 10 * 60_000;
const SHF_COMPRESSED = 0x800n;

/**
 * The gdb command (Python) that prints the directories gdb searches, then each separate debug file
 * it read, one per line. Plain lines, not JSON: importing Python's json in gdb costs ~3 ms, and
 * this runs at the end of every session.
 */
export const LIST_DEBUG_FILES = `python print("\\n".join([${JSON.stringify(DIRS)} + gdb.parameter("debug-file-directory")] + [${JSON.stringify(FILE)} + o.filename for o in gdb.objfiles() if o.owner is not None]))`;

/** What `LIST_DEBUG_FILES` printed: the directories (without our folder) and the debug files; null when its first line is missing or odd. */
export function listedDebugFiles(output: string, folder: string): { dirs: string; files: string[] } | null {
  if (output.length > MAX_MANIFEST_BYTES) return null;
  const lines = output.split("\n");
  const dirs = lines.find((line) => line.startsWith(DIRS))?.slice(DIRS.length);
  if (dirs === undefined || dirs === "" || CONTROL.test(dirs)) return null;
  const files = lines.filter((line) => line.startsWith(FILE)).map((line) => line.slice(FILE.length));
  return { dirs: dirs.startsWith(`${folder}:`) ? dirs.slice(folder.length + 1) : dirs, files };
}

/**
 * The files gdb read that are worth a copy: found by build id under one of `dirs`
 * (`<dir>/.build-id/ab/cdef….debug`), not copied yet (or copied from a source that changed since).
 */
export function toCopy(files: string[], dirs: string, manifest: DebugFileManifest | null): { buildId: string; source: string }[] {
  const roots = dirs.split(":").filter((dir) => dir.startsWith("/"));
  const copied = new Set((manifest?.copies ?? []).filter((copy) => manifest?.dirs === dirs && isCurrent(copy)).map((copy) => copy.source));
  const wanted = new Map<string, { buildId: string; source: string }>();
  for (const file of files) {
    const match = /^(.*)\/\.build-id\/([0-9a-f]{2})\/([0-9a-f]{6,126})\.debug$/.exec(file);
    if (!match || !roots.includes(match[1]!) || copied.has(file)) continue;
    wanted.set(file, { buildId: `${match[2]}${match[3]}`, source: file });
  }
  return [...wanted.values()];
}

/**
 * Brings the folder up to date with what a session's gdb printed for `LIST_DEBUG_FILES`: copies
 * whose source changed or went are removed, and each compressed debug file gdb read is copied
 * decompressed; a file that cannot be copied is left to gdb as it is. `asked`: the directories the
 * session was asked to search; gdb naming others (it rewrote the list) keeps nothing, as a start
 * would never find their manifest.
 */
export async function keepDebugFiles(cache: DebugFileCache, asked: string | undefined, output: string, objcopy = "objcopy"): Promise<void> {
  const listed = listedDebugFiles(output, cache.folder);
  if (listed === null || (asked !== undefined && listed.dirs !== asked)) return;
  const before = readManifest(cache.manifest);
  // A copy is kept while its source is as it was copied and it is still there (a list of other
  // directories may have removed a copy of the same build); any other is made again.
  const kept = before !== null && before.dirs === listed.dirs ? before.copies.filter((copy) => isCurrent(copy) && isFile(copyPath(cache.folder, copy.buildId))) : [];
  for (const copy of before?.copies ?? []) {
    if (!kept.includes(copy)) rmSync(copyPath(cache.folder, copy.buildId), { force: true });
  }
  const added: DebugFileCopy[] = [];
  const wanted = toCopy(listed.files, listed.dirs, { dirs: listed.dirs, copies: kept });
  let bytes = wanted.length > 0 ? kept.reduce((sum, copy) => sum + sizeOf(copyPath(cache.folder, copy.buildId)), 0) : 0;
  const deadline = performance.now() + COPYING_MS;
  for (const { buildId, source } of wanted) {
    const left = Math.round(deadline - performance.now());
    if (kept.length + added.length >= MAX_COPIES || bytes >= MAX_COPIES_BYTES || left <= 0) break;
    const copy = await copyDecompressed(cache.folder, buildId, source, objcopy, left).catch(() => null);
    if (copy === null) continue;
    added.push(copy);
    bytes += sizeOf(copyPath(cache.folder, buildId));
  }
  const changed = added.length > 0 || kept.length !== (before?.copies.length ?? 0) || before?.dirs !== listed.dirs;
  if (changed && kept.length + added.length > 0) writeManifestJson(cache.manifest, { dirs: listed.dirs, copies: [...kept, ...added] });
  else if (changed) rmSync(cache.manifest, { force: true });
}

/** A copy of `source` with its debug sections inflated, when it has compressed ones and the copy carries its build id. */
async function copyDecompressed(folder: string, buildId: string, source: string, objcopy: string, timeoutMs: number): Promise<DebugFileCopy | null> {
  const stats = statSync(source, { bigint: true });
  if (!stats.isFile() || stats.size > BigInt(MAX_SOURCE_BYTES) || !worthInflating(source)) return null;
  const target = copyPath(folder, buildId);
  mkdirSync(join(target, ".."), { recursive: true, mode: 0o700 });
  forgetAbandonedCopies(target);
  // Its own name: two sessions of one process (a batch) may copy the same file at once.
  const aside = `${target}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  // A signal that ends dumpdbg meanwhile ends objcopy and takes its half-written file.
  let copying: ReturnType<typeof execFile> | undefined;
  const cleanup = {
    kill: () => {
      copying?.kill("SIGKILL");
      rmSync(aside, { force: true });
    },
  };
  live.add(cleanup);
  try {
    const running = run(objcopy, ["--decompress-debug-sections", source, aside], { timeout: timeoutMs, killSignal: "SIGKILL" });
    copying = running.child;
    await running;
    // What gdb will find under this build id must be that build's.
    if (fileBuildId(aside) !== buildId || worthInflating(aside)) throw new Error(`the copy of ${source} is not what it should be`);
    renameSync(aside, target);
  } finally {
    live.delete(cleanup);
    rmSync(aside, { force: true });
  }
  return { buildId, source, mtimeNs: stats.mtimeNs.toString(), size: Number(stats.size) };
}

/**
 * Removes the half-written copies of `target` that a dumpdbg killed outright (SIGKILL, a power
 * cut) left beside it: those whose process is gone, or that are older than any copy takes. One
 * that another dumpdbg is writing now (a batch's worker) is left to it.
 */
export function forgetAbandonedCopies(target: string): void {
  const prefix = `${basename(target)}.`;
  let names: string[];
  try {
    names = readdirSync(dirname(target));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = name.startsWith(prefix) ? /^(\d{1,10})\.[0-9a-f]{8}\.tmp$/.exec(name.slice(prefix.length))?.[1] : undefined;
    if (pid === undefined) continue;
    const path = join(dirname(target), name);
    try {
      if (!isAlive(Number(pid)) || Date.now() - statSync(path).mtimeMs > ABANDONED_AFTER_MS) rmSync(path, { force: true });
    } catch {
      // Gone already (its writer renamed or removed it), or not ours to remove.
    }
  }
}

/**
 * Whether a debug file has compressed debug sections, and none that names another file beside it
 * (`.gnu_debugaltlink`, a dwz file gdb may look for next to this one, which a copy elsewhere would lose).
 */
function worthInflating(path: string): boolean {
  const file = DumpFile.open(path);
  try {
    const sections = elfSections(file);
    if (sections.some((section) => section.name === ".gnu_debugaltlink")) return false;
    return sections.some((section) => section.name.startsWith(".debug_") && (section.flags & SHF_COMPRESSED) !== 0n);
  } finally {
    file.close();
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
