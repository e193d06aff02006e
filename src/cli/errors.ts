/** Maps any error to one line on stderr and an exit code of the design's contract. */
import { QueueAddressError, QueueError } from "../batch/queue.js";
import { DumpError } from "../debuggers/dump.js";
import { DebuggerError } from "../debuggers/errors.js";
import { SessionError } from "../evidence/sessions.js";
import { ProviderError } from "../llm/errors.js";
import { ReportConflictError } from "../report/index.js";
import { StorageError, storageReason } from "../storage-errors.js";
import { ExitCode, ExitError } from "./exit.js";

export function reportError(error: unknown, debug: boolean): number {
  const { code, message } = classify(error);
  process.stderr.write(`dumpdbg: ${message}\n`);
  if (debug && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  return code;
}

function classify(error: unknown): { code: number; message: string } {
  if (error instanceof ExitError) return { code: error.code, message: error.message };
  if (error instanceof DumpError) return { code: ExitCode.badInput, message: error.message };
  if (error instanceof ProviderError) return { code: ExitCode.provider, message: error.message };
  if (error instanceof ReportConflictError) return { code: ExitCode.badInput, message: error.message };
  if (error instanceof SessionError) return { code: ExitCode.badInput, message: error.message };
  if (error instanceof DebuggerError) return { code: ExitCode.debugger, message: error.message };
  if (error instanceof QueueAddressError) return { code: ExitCode.usage, message: error.message };
  if (error instanceof QueueError) return { code: ExitCode.badInput, message: error.message };
  if (error instanceof StorageError) return { code: ExitCode.storage, message: error.message };
  const damaged = damagedDatabase(error);
  if (damaged) return { code: ExitCode.badInput, message: damaged };
  const storage = storageProblem(error);
  if (storage) return { code: ExitCode.storage, message: storage };
  const fsProblem = fileSystemProblem(error);
  if (fsProblem) return { code: ExitCode.badInput, message: fsProblem };
  const text = error instanceof Error ? error.message : String(error);
  return { code: 1, message: `internal error: ${oneLine(text)} (run with --debug for details)` };
}

function oneLine(text: string): string {
  return text.split("\n")[0] ?? text;
}

/**
 * A fault of the machine's that no place of ours named a file for: still the environment's (exit 6),
 * said with the file when the error holds one.
 */
function storageProblem(error: unknown): string | null {
  const reason = storageReason(error);
  if (reason === null) return null;
  const { path } = (error ?? {}) as NodeJS.ErrnoException;
  return `${path ? `cannot use ${path}` : "a file could not be written or read"}: ${reason}; free some space or fix the folder's permissions, then run the command again`;
}

/** SQLite's word that a session's evidence store is damaged where no check before named the session. */
function damagedDatabase(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== "SQLITE_CORRUPT" && code !== "SQLITE_NOTADB") return null;
  return `a session's evidence store is damaged (${oneLine((error as Error).message)}); "dumpdbg sessions list" shows which, "dumpdbg sessions rm ID" removes it`;
}

const FS_REASONS: Record<string, string> = {
  ENOTDIR: "a part of the path is a file, not a folder",
  EISDIR: "it is a folder",
  EEXIST: "something else already exists there",
  ENAMETOOLONG: "the name is too long",
};

/** A path the user gave (an --out or --sessions-dir) that is no folder: their input, exit 3. */
function fileSystemProblem(error: unknown): string | null {
  const { code, path } = (error ?? {}) as NodeJS.ErrnoException;
  if (!code || !path || !(code in FS_REASONS)) return null;
  return `cannot use ${path}: ${FS_REASONS[code]}; choose another folder`;
}
