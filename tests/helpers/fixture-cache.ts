/**
 * The fixtures' build caches (os.tmpdir()/dumpdbg-fixtures, and the arm64 one beside it) kept within
 * the disk. An entry's key holds everything that made it, its source file's path included (the
 * program's debug information names that path), so every checkout builds a set of its own: ~10 GB
 * for a clean clone's run, most of it Go services' hang cores. Nothing removed them, and a machine
 * that runs CI from fresh clones filled its disk. `pruneFixtureCache` runs once at the start of each
 * test run (tests/global-setup.ts):
 *
 * - An entry whose index names a source file in the temporary folder that holds the cache (a clone
 *   made there for a CI run), now gone, is removed: its key holds that path, so no checkout can ask
 *   for it again. A source elsewhere may be gone only from this run's view of the files (another
 *   machine's mounts sharing this temporary folder), so those entries wait for the sizes' rule.
 * - Then, while the cache holds more than `maxBytes` or the disk has less than `minFreeBytes` free,
 *   the entry used longest ago is removed (buildOnce touches an entry's index at each use).
 * - Nothing else used or built in the last `spareMs` is touched: another run may be reading it. Nor
 *   is what the helpers share among entries (Wine's prefix, Go's caches, their locks).
 *
 * An entry is removed index first: a run that reads it meanwhile finds no index and builds it again
 * (buildOnce's readPublished also rebuilds an entry whose files are gone).
 */
import { lstatSync, readdirSync, readFileSync, rmSync, statfsSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export const FIXTURE_CACHES = [path.join(os.tmpdir(), "dumpdbg-fixtures"), path.join(os.tmpdir(), "dumpdbg-aarch64-fixtures")];

export interface PruneOptions {
  /** The most the cache may hold. */
  maxBytes?: number;
  /** The free space the disk should keep, for the run about to start to build what it lacks. */
  minFreeBytes?: number;
  /** Entries used within this long are kept whatever the sizes. */
  spareMs?: number;
  /** Free bytes on the cache's disk (tests give their own). */
  freeBytes?: (root: string) => number;
  now?: number;
}

export interface PruneResult {
  removed: string[];
  freedBytes: number;
  keptBytes: number;
}

const GB = 1024 ** 3;

/**
 * An entry's files, by name: `<stem>.json` (its index), `<stem>-<8 hex>` (its folder, one per build
 * that raced for it) and `<stem>-<8 hex>.json` (a build's draft index); a Windows fixture is one
 * folder `windows-<name>-<key>`. The stem ends with the 16 hex digits of the entry's key.
 */
const ENTRY = /^(.+-[0-9a-f]{16})(?:-[0-9a-f]{8})?(?:\.json)?$/;

interface Entry {
  stem: string;
  names: string[];
  lastUsed: number;
  bytes: number;
  dead: boolean;
}

export function pruneFixtureCache(root: string, options: PruneOptions = {}): PruneResult {
  const { maxBytes = 32 * GB, minFreeBytes = 24 * GB, spareMs = 2 * 60 * 60 * 1000, freeBytes = diskFree, now = Date.now() } = options;
  const entries = entriesOf(root);
  const result: PruneResult = { removed: [], freedBytes: 0, keptBytes: 0 };
  const remove = (entry: Entry): void => {
    // The index first: from then on no run takes the entry for built.
    const index = `${entry.stem}.json`;
    for (const name of [index, ...entry.names.filter((name) => name !== index)]) rmSync(path.join(root, name), { recursive: true, force: true });
    result.removed.push(entry.stem);
    result.freedBytes += entry.bytes;
  };
  const spared = (entry: Entry): boolean => now - entry.lastUsed < spareMs;
  let held = entries.reduce((sum, entry) => sum + entry.bytes, 0);
  const left: Entry[] = [];
  for (const entry of entries) {
    if (entry.dead) {
      remove(entry);
      held -= entry.bytes;
    } else left.push(entry);
  }
  let free = freeBytes(root);
  for (const entry of left.filter((e) => !spared(e)).sort((a, b) => a.lastUsed - b.lastUsed)) {
    if (held <= maxBytes && free >= minFreeBytes) break;
    remove(entry);
    held -= entry.bytes;
    free += entry.bytes;
  }
  result.keptBytes = held;
  return result;
}

function entriesOf(root: string): Entry[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const byStem = new Map<string, string[]>();
  for (const name of names) {
    const stem = ENTRY.exec(name)?.[1];
    if (stem !== undefined) byStem.set(stem, [...(byStem.get(stem) ?? []), name]);
  }
  return [...byStem].map(([stem, members]) => {
    let lastUsed = 0;
    let bytes = 0;
    for (const name of members) {
      const stats = lstatSync(path.join(root, name), { throwIfNoEntry: false });
      if (!stats) continue;
      lastUsed = Math.max(lastUsed, stats.mtimeMs);
      bytes += sizeOf(path.join(root, name));
    }
    return { stem, names: members, lastUsed, bytes, dead: members.includes(`${stem}.json`) && namesGoneSource(root, path.join(root, `${stem}.json`)) };
  });
}

/** Whether the index names a source file beside the cache (in the folder that holds it), not in it, that no longer exists. */
function namesGoneSource(root: string, index: string): boolean {
  let source: unknown;
  try {
    source = (JSON.parse(readFileSync(index, "utf8")) as { source?: unknown }).source;
  } catch {
    return false;
  }
  if (typeof source !== "string" || !path.isAbsolute(source)) return false;
  if (isInside(root, source) || !isInside(path.dirname(root), source)) return false;
  return lstatSync(source, { throwIfNoEntry: false }) === undefined;
}

function isInside(folder: string, file: string): boolean {
  const relative = path.relative(folder, file);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
}

/** The bytes a file or folder holds on disk, symlinks not followed. */
function sizeOf(file: string): number {
  const stats = lstatSync(file, { throwIfNoEntry: false });
  if (!stats) return 0;
  if (!stats.isDirectory()) return stats.blocks * 512;
  let bytes = stats.blocks * 512;
  let children: string[] = [];
  try {
    children = readdirSync(file);
  } catch {
    return bytes;
  }
  for (const child of children) bytes += sizeOf(path.join(file, child));
  return bytes;
}

function diskFree(root: string): number {
  try {
    const stats = statfsSync(root);
    return stats.bavail * stats.bsize;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}
