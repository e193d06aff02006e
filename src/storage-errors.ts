/**
 * A file dumpdbg writes or reads that the machine would not let it: a full disk, a quota, a
 * permission, a read-only mount. The fault is the environment's, not dumpdbg's (exit 6, not 1):
 * each becomes one line naming the file, the cause in the words `df` and `ls` use, and what to do.
 * SQLite says the same causes in its own codes (better-sqlite3's `SqliteError.code`).
 */

export type StorageVerb = "write" | "read" | "create";

/** The file and its cause, with what to do; `dumpdbg` prints the message alone and exits 6. */
export class StorageError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
    readonly advice: string,
    readonly verb: StorageVerb = "write",
  ) {
    super(`cannot ${verb} ${path}: ${reason}; ${advice}`);
    this.name = "StorageError";
  }

  /** The same fault with what stays true said after it: where the work is kept, how to go on. */
  followedBy(next: string): StorageError {
    return new StorageError(this.path, this.reason, `${this.advice}; ${next}`, this.verb);
  }
}

const ERRNO_REASONS: Record<string, string> = {
  ENOSPC: "no space left on device",
  EDQUOT: "quota exceeded",
  EFBIG: "file too large",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  EIO: "input/output error",
  EMFILE: "too many open files",
  ENFILE: "too many open files",
};

/** SQLite's own codes for the same causes; the extended I/O codes (`SQLITE_IOERR_WRITE`, …) are one cause. */
function sqliteReason(code: string): string | null {
  if (code === "SQLITE_FULL") return ERRNO_REASONS.ENOSPC!;
  if (code.startsWith("SQLITE_READONLY")) return "read-only (permission denied or a read-only file system)";
  if (code.startsWith("SQLITE_IOERR")) return "input/output error (a full disk or a failing device)";
  if (code.startsWith("SQLITE_CANTOPEN")) return "cannot be opened (permission denied, or its folder is gone)";
  return null;
}

/** The cause of a fault of the machine's, in words; null for any other error (ours, or the user's input). */
export function storageReason(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return null;
  return ERRNO_REASONS[code] ?? (code.startsWith("SQLITE_") ? sqliteReason(code) : null);
}

/** What the user can do about a cause, before the place-specific way out (`or choose another --out folder`). */
function remedy(reason: string): string {
  if (reason === ERRNO_REASONS.ENOSPC || reason === ERRNO_REASONS.EDQUOT || reason === ERRNO_REASONS.EFBIG) return "free some space there";
  if (reason === ERRNO_REASONS.EROFS) return "use a folder on a writable file system";
  if (reason === ERRNO_REASONS.EMFILE) return "raise the open-file limit (ulimit -n)";
  if (reason.startsWith("input/output error")) return "check the disk (df, dmesg)";
  return "make it writable for this user";
}

export interface StorageFaultOptions {
  verb?: StorageVerb;
  /** The way out at this place, after the cause's own: "or choose another --out folder". */
  elsewhere?: string;
}

/** The machine's fault on `path` as a StorageError; any other error is returned as it is. */
export function asStorageError(error: unknown, path: string, options: StorageFaultOptions = {}): unknown {
  if (error instanceof StorageError) return error;
  const reason = storageReason(error);
  if (reason === null) return error;
  return new StorageError(path, reason, [remedy(reason), options.elsewhere].filter(Boolean).join(" "), options.verb);
}

/** Runs `work`, which writes `path`; a fault of the machine's while it does is a StorageError naming `path`. */
export function writing<T>(path: string, work: () => T, options: StorageFaultOptions = {}): T {
  try {
    return work();
  } catch (error) {
    throw asStorageError(error, path, options);
  }
}
