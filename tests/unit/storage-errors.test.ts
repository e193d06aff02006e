/** The machine's faults, by errno and by SQLite's code, said as one line with the file and what to do; others left alone. */
import { describe, expect, it } from "vitest";
import { asStorageError, StorageError, storageReason } from "../../src/storage-errors.js";

const errno = (code: string) => Object.assign(new Error(`${code}: write`), { code });

describe("storage errors", () => {
  it.each([
    ["ENOSPC", "no space left on device"],
    ["EDQUOT", "quota exceeded"],
    ["EACCES", "permission denied"],
    ["EROFS", "read-only file system"],
    ["SQLITE_FULL", "no space left on device"],
    ["SQLITE_READONLY_DBMOVED", "read-only (permission denied or a read-only file system)"],
    ["SQLITE_IOERR_WRITE", "input/output error (a full disk or a failing device)"],
  ])("%s is %s", (code, reason) => {
    expect(storageReason(errno(code))).toBe(reason);
  });

  it("names the file, the cause, and what to do, with the place's own way out", () => {
    const error = asStorageError(errno("ENOSPC"), "/r/x.md", { elsewhere: "or choose another --out folder" });
    expect(error).toBeInstanceOf(StorageError);
    expect((error as Error).message).toBe("cannot write /r/x.md: no space left on device; free some space there or choose another --out folder");
    expect((error as StorageError).followedBy("the analysis is saved").message).toBe("cannot write /r/x.md: no space left on device; free some space there or choose another --out folder; the analysis is saved");
  });

  it("leaves our own errors and the user's input alone", () => {
    const bug = new TypeError("x is undefined");
    expect(asStorageError(bug, "/r/x.md")).toBe(bug);
    const notDir = errno("ENOTDIR");
    expect(asStorageError(notDir, "/r/x.md")).toBe(notDir);
    expect(storageReason(Object.assign(new Error("corrupt"), { code: "SQLITE_CORRUPT" }))).toBeNull();
  });
});
