/**
 * A line of a source file on this machine, read by dumpdbg where the debugger cannot list it (LLDB
 * with only a Breakpad symbol file finds "multiple source files" for one path). Bounded: files over
 * a few MiB are not read, and each file is read once.
 */
import { readFileSync, statSync } from "node:fs";

const MAX_SOURCE_BYTES = 4 * 1024 * 1024;
const read = new Map<string, string[] | null>();

export function sourceLine(file: string, line: number): string | null {
  if (!read.has(file)) read.set(file, linesOf(file));
  return read.get(file)?.[line - 1] ?? null;
}

function linesOf(file: string): string[] | null {
  try {
    if (statSync(file).size > MAX_SOURCE_BYTES) return null;
    return readFileSync(file, "utf8").split("\n");
  } catch {
    return null;
  }
}
