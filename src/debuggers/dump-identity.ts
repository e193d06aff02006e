/**
 * The dump file as it was when the debugger opened it (device, inode, size, modification time), so
 * that a dump deleted, replaced or cut short while a run reads it ends the run with one line instead
 * of a verdict that mixes what was read from two files. Checked before and after each command.
 */
import { statSync } from "node:fs";
import { DumpError } from "./dump.js";

interface Identity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** A check that throws a DumpError once `path` is no longer the file it is now. */
export function unchangedCheck(path: string): () => void {
  const was = identityOf(path);
  return () => {
    const change = changeOf(path, was);
    if (change) throw new DumpError(`${path} ${change} while dumpdbg read it: the run stops rather than mix two dumps in one verdict; run it again on a dump that stays as it is (a copy)`);
  };
}

/** A file's size and modification time, kept with a session; null when it cannot be read. */
export function fileStamp(path: string): { size: number; mtimeMs: number } | null {
  const identity = identityOf(path);
  return identity && { size: identity.size, mtimeMs: identity.mtimeMs };
}

/** The dump's stamp as a new session records it (`SessionMeta.dumpFile`), for a later chat or resume to check. */
export function sessionStamp(path: string): { dumpFile?: { size: number; mtimeMs: number } } {
  const stamp = fileStamp(path);
  return stamp ? { dumpFile: stamp } : {};
}

/**
 * Refuses to reopen a session's dump that changed since the session read it (`stamp`): its
 * evidence is of the dump as it was then. A copy with the same size and time (`cp -p`) is the same dump.
 */
export function checkSessionDump(path: string, id: string, stamp: { size: number; mtimeMs: number } | undefined): void {
  const now = fileStamp(path);
  if (!stamp || !now) return;
  const change = now.size !== stamp.size ? `${stamp.size} bytes then, ${now.size} now` : now.mtimeMs !== stamp.mtimeMs ? "written to since" : null;
  if (change) throw new DumpError(`${path} has changed since session ${id} read it (${change}): its evidence is of the dump as it was; "dumpdbg analyze ${path}" reads it as it is now`);
}

function identityOf(path: string): Identity | null {
  try {
    const { dev, ino, size, mtimeMs } = statSync(path);
    return { dev, ino, size, mtimeMs };
  } catch {
    return null;
  }
}

/** What happened to the file, in words; null when it is the same. */
function changeOf(path: string, was: Identity | null): string | null {
  const now = identityOf(path);
  if (was === null) return null;
  if (now === null) return "was deleted";
  if (now.dev !== was.dev || now.ino !== was.ino) return "was replaced by another file";
  if (now.size < was.size) return `was cut short (${was.size} bytes, now ${now.size})`;
  if (now.size !== was.size) return `changed size (${was.size} bytes, now ${now.size})`;
  if (now.mtimeMs !== was.mtimeMs) return "was written to";
  return null;
}
