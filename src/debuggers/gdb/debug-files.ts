/**
 * Separate debug files kept uncompressed, for gdb. Distributions ship debug information compressed
 * (Debian's and Ubuntu's -dbg and -dbgsym packages: SHF_COMPRESSED sections), and gdb inflates a
 * section whole the first time it reads it. gdb's index cache (arguments.ts) spares it indexing
 * libc, not this: the first time a session reads libc's debug information (a backtrace reaches the
 * frame above `main`), inflating its 2.3 MB of .debug_info costs ~45 ms, in every session.
 *
 * A separate debug file a session's gdb read is copied here decompressed (`objcopy
 * --decompress-debug-sections`), under its build id, as the session ends; later sessions start gdb
 * with this folder first among the directories it searches (`set debug-file-directory
 * <folder>:<theirs>`), so that gdb finds the same debug information, by the same build id, already
 * inflated. A manifest per list of directories keeps each copy's source with its size and time:
 * gdb is given the folder only when every source is as it was copied, so that a package removed
 * or changed since is never read from here; the next session's end brings the folder up to date
 * (debug-files-keep.ts). This module is the reading side, part of every gdb's start.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { codeCacheDir, manifestTag, readManifestJson } from "../../cache-dir.js";

/** A path gdb takes in a list of directories (`:` separates them) on one command line. */
const PLAIN_PATH = /^[\w./+-]+$/;
export const CONTROL = /[\u0000-\u001f\u007f]/;

/** One copy: the build id it is kept under, and its source as it was copied. */
export interface DebugFileCopy {
  buildId: string;
  source: string;
  /** The source's modification time in ns, as a decimal string. */
  mtimeNs: string;
  size: number;
}

/** What one list of directories has copied: the list (gdb's own when no other was asked for), and the copies. */
export interface DebugFileManifest {
  dirs: string;
  copies: DebugFileCopy[];
}

/** The folder and the manifest for the directories a session was asked to search (`asked`), or gdb's own. */
export interface DebugFileCache {
  folder: string;
  manifest: string;
}

export function debugFileCache(asked: string | undefined, env: NodeJS.ProcessEnv = process.env): DebugFileCache | null {
  const folder = codeCacheDir("gdb-debug", env);
  if (folder === null || !PLAIN_PATH.test(folder)) return null;
  return { folder, manifest: join(folder, asked === undefined ? "manifest-gdb.json" : `manifest-${manifestTag(asked)}.json`) };
}

/**
 * The `debug-file-directory` to start gdb with: the folder, then the directories its copies came
 * from, when it holds copies and each copy's source is as it was copied; null otherwise (gdb
 * searches as it would without us). `asked`: the directories the session was asked to search.
 */
export function debugFileDirectory(asked: string | undefined, env: NodeJS.ProcessEnv = process.env): string | null {
  const cache = debugFileCache(asked, env);
  if (cache === null) return null;
  const manifest = readManifest(cache.manifest);
  if (manifest === null || manifest.copies.length === 0 || (asked !== undefined && manifest.dirs !== asked)) return null;
  return manifest.copies.every((copy) => isCurrent(copy) && isFile(copyPath(cache.folder, copy.buildId))) ? `${cache.folder}:${manifest.dirs}` : null;
}

export function copyPath(folder: string, buildId: string): string {
  return join(folder, ".build-id", buildId.slice(0, 2), `${buildId.slice(2)}.debug`);
}

/** The manifest, or null when it is missing, too large or not one of ours. */
export function readManifest(path: string): DebugFileManifest | null {
  const parsed = readManifestJson(path) as DebugFileManifest | undefined;
  // Its directories go on gdb's command line: one line, no control character.
  const valid = typeof parsed === "object" && parsed !== null && typeof parsed.dirs === "string" && !CONTROL.test(parsed.dirs) && Array.isArray(parsed.copies) && parsed.copies.every(isCopy);
  return valid ? parsed : null;
}

export /** Whether a copy's source is still as it was copied: one that cannot be read is not. */
function isCurrent(copy: DebugFileCopy): boolean {
  try {
    const source = statSync(copy.source, { bigint: true });
    return source.mtimeNs.toString() === copy.mtimeNs && Number(source.size) === copy.size;
  } catch {
    return false;
  }
}

export function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isCopy(value: unknown): value is DebugFileCopy {
  const copy = value as DebugFileCopy;
  return (
    typeof copy === "object" &&
    copy !== null &&
    typeof copy.buildId === "string" &&
    /^[0-9a-f]{8,128}$/.test(copy.buildId) &&
    typeof copy.source === "string" &&
    typeof copy.mtimeNs === "string" &&
    /^\d{1,25}$/.test(copy.mtimeNs) &&
    Number.isSafeInteger(copy.size)
  );
}
