/**
 * A folder a run will write to, checked before the dump is opened, so that a typo, a read-only
 * mount or a full disk is said at once and not after the analysis it would throw away.
 */
import { closeSync, mkdirSync, openSync, rmSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { asStorageError, StorageError, writing } from "../storage-errors.js";
import { ExitCode, ExitError } from "./exit.js";

/**
 * What a run writes, with room to spare: an offline analysis's session peaks at ~1.5 MB (the
 * evidence store's write-ahead log before it is folded in) and its reports take ~50 KB.
 */
export const NEEDS = { session: 8 * 1024 * 1024, reports: 1024 * 1024 } as const;

/**
 * What a batch of `dumps` writes, with room to spare: its triage cache (~1 KB a dump, rewritten
 * whole beside itself after each dump) and its three reports (~3 KB a dump together).
 */
export function batchNeeds(dumps: number): { cache: number; reports: number } {
  return { cache: 64 * 1024 + dumps * 4 * 1024, reports: 256 * 1024 + dumps * 8 * 1024 };
}

/**
 * The folder, made if need be: it can take a new file (the one test that no permission or mount can
 * fool) and has `needs` bytes free for `what` ("a run", "a batch of 40 dumps").
 */
export function usableFolder(path: string, flag: string, needs: number, what = "a run"): string {
  const elsewhere = `or choose another ${flag === "--out" ? "--out folder" : flag}`;
  try {
    mkdirSync(path, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST" || code === "ENOTDIR") throw new ExitError(ExitCode.badInput, `${flag} ${path} cannot be used: it is a file, not a folder`);
    throw asStorageError(error, path, { verb: "create", elsewhere });
  }
  const probe = join(path, `.dumpdbg-probe-${process.pid}-${randomBytes(4).toString("hex")}`);
  writing(path, () => closeSync(openSync(probe, "wx")), { elsewhere });
  rmSync(probe, { force: true });
  const free = freeBytes(path);
  if (free !== null && free < needs) {
    throw new StorageError(path, `no space left on device (${size(free)} free, ${what} needs about ${size(needs)})`, `free some space there ${elsewhere}`);
  }
  return path;
}

/** The bytes this user may still write there; null where the file system does not say. */
function freeBytes(path: string): number | null {
  try {
    const { bavail, bsize } = statfsSync(path);
    return bavail * bsize;
  } catch {
    return null;
  }
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.floor(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MB`;
}
