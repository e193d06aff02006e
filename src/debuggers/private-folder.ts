/**
 * A private temporary folder (mkdtemp: mode 0700, a name no one else can guess) for files dumpdbg
 * makes from the user's (a decompressed core), removed when its owner is done and, whatever way
 * the process ends (exit, Ctrl+C, SIGTERM), by the same handlers that end the debuggers.
 */
import { rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { asStorageError } from "../storage-errors.js";
import { live } from "./live.js";

export interface PrivateFolder {
  path: string;
  /** Removes the folder and all it holds; removing twice does nothing. */
  remove(): void;
}

/** Where temporary files go, and the way out when they cannot: the user moves them with TMPDIR. */
export const TEMP_ELSEWHERE = "or set TMPDIR to a folder with room that this user may write";

/** A new private folder under the temporary folder; a full, read-only or forbidden one is a StorageError naming it. */
export async function privateFolder(prefix: string): Promise<PrivateFolder> {
  let path: string;
  try {
    path = await mkdtemp(join(tmpdir(), prefix));
  } catch (error) {
    throw asStorageError(error, tmpdir(), { verb: "create", elsewhere: TEMP_ELSEWHERE });
  }
  const entry = { kill: () => rmSync(path, { recursive: true, force: true }) };
  live.add(entry);
  return {
    path,
    remove: () => {
      live.delete(entry);
      entry.kill();
    },
  };
}
