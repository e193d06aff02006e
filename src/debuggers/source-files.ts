/**
 * A line of a source file on this machine, read by dumpdbg where the debugger cannot list it (LLDB
 * with only a Breakpad symbol file finds "multiple source files" for one path). Bounded: files over
 * a few MiB are not read, and each file is read once.
 */
import { closeSync, fstatSync, readSync } from "node:fs";

import { openRegularFile } from "./dumpfile/index.js";

const MAX_SOURCE_BYTES = 4 * 1024 * 1024;
const read = new Map<string, string[] | null>();

export function sourceLine(file: string, line: number): string | null {
  if (!read.has(file)) read.set(file, sourceLines(file));
  return read.get(file)?.[line - 1] ?? null;
}

/**
 * A source file's lines (1-based: line n is `[n - 1]`), or null when it is missing, too large or
 * not a regular file: the path comes from the dump's debug information, so it may name a FIFO or a
 * device, which must never be read.
 */
export function sourceLines(file: string): string[] | null {
  let fd: number | null = null;
  try {
    fd = openRegularFile(file);
    const size = fstatSync(fd).size;
    if (size > MAX_SOURCE_BYTES) return null;
    const bytes = Buffer.alloc(size);
    let done = 0;
    while (done < size) {
      const got = readSync(fd, bytes, done, size - done, done);
      if (got === 0) break;
      done += got;
    }
    return bytes.subarray(0, done).toString("utf8").split(/\r?\n/);
  } catch {
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
