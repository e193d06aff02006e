/**
 * The dumps under the paths a batch is given. Folders are walked once per real folder (device and
 * inode), so a symlink back up the tree or two names for one folder never loop or list a dump twice;
 * a file reached by two paths is taken once. What is not taken says why: a FIFO or a device is
 * never opened (it could block the batch), a file that is not a dump is listed, and a dump that
 * cannot be read is an error row.
 */
import type { Stats } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";

import { DumpError, inspectDump } from "../debuggers/dump.js";
import { isPackedDump } from "../debuggers/dump-source.js";
import { checkInputFile, MIN_DUMP_BYTES } from "../debuggers/input-files.js";
import { oneLine } from "./work.js";

/** Folders are walked this deep; files this many at most. */
const MAX_DEPTH = 8;
const MAX_FILES = 100_000;

export interface SkippedFile {
  path: string;
  /** Why it was not triaged: "not a crash dump", "a FIFO (named pipe)", "the same file as …". */
  reason: string;
}

export interface FoundDumps {
  dumps: string[];
  skipped: SkippedFile[];
  /** Files that are dumps but cannot be read. */
  errors: { dump: string; error: string }[];
}

export async function findDumps(paths: string[]): Promise<FoundDumps> {
  const found: FoundDumps = { dumps: [], skipped: [], errors: [] };
  const seenFolders = new Set<string>();
  const seenFiles = new Map<string, string>();
  let files = 0;
  const walk = async (path: string, depth: number): Promise<void> => {
    if (files >= MAX_FILES) return;
    const checked = await checkInputFile(path, { minBytes: MIN_DUMP_BYTES });
    if (!checked.ok) {
      if (checked.reason === "is a directory") await walkFolder(path, depth);
      // A path the user named that is not there is a mistake to show, not a file to pass over.
      else if (depth === 0 && checked.reason === "does not exist") found.errors.push({ dump: path, error: `${path} does not exist` });
      else found.skipped.push({ path, reason: checked.reason.replace(/^is /, "") });
      return;
    }
    files += 1;
    const first = seenFiles.get(identity(checked.stats));
    if (first !== undefined) {
      found.skipped.push({ path, reason: `the same file as ${first}` });
      return;
    }
    seenFiles.set(identity(checked.stats), path);
    classify(path, found);
  };
  const walkFolder = async (path: string, depth: number): Promise<void> => {
    let key: string;
    try {
      key = identity(await stat(path));
    } catch {
      return;
    }
    // A folder met again (through a symlink, a bind mount) has been walked already.
    if (seenFolders.has(key) || depth >= MAX_DEPTH) return;
    seenFolders.add(key);
    let names: string[];
    try {
      names = (await readdir(path)).sort();
    } catch (error) {
      found.skipped.push({ path, reason: `a folder that cannot be listed (${(error as NodeJS.ErrnoException).code ?? "error"})` });
      return;
    }
    for (const name of names) await walk(join(path, name), depth + 1);
  };
  for (const path of paths) await walk(resolve(path), 0);
  return found;
}

function identity(stats: Stats): string {
  return `${stats.dev}:${stats.ino}`;
}

/**
 * A regular file: a dump to triage, a file that is no dump (skipped), or a broken dump (an error row).
 * A compressed dump or an apport report is taken by its first bytes, and unpacked when triaged.
 */
function classify(path: string, found: FoundDumps): void {
  if (isPackedDump(path)) {
    found.dumps.push(path);
    return;
  }
  try {
    inspectDump(path);
    found.dumps.push(path);
  } catch (error) {
    if (error instanceof DumpError && /not a crash dump|is an ELF program/.test(error.message)) found.skipped.push({ path, reason: "not a crash dump" });
    else found.errors.push({ dump: path, error: oneLine(error) });
  }
}
