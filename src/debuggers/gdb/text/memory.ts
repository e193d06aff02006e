/** Parsers for memory reads: `x/Ngx` words and `x/s` strings. */
import { lines, unquoteGdbString } from "./common.js";

/** The 8-byte words of an `x/Ngx ADDR` dump, in address order. */
export function parseMemoryWords(output: string): { start: bigint | null; words: bigint[] } {
  let start: bigint | null = null;
  const words: bigint[] = [];
  for (const line of lines(output)) {
    const row = /^(0x[0-9a-f]+)(?: <[^>]*>)?:\s+(.*)$/.exec(line);
    if (!row) continue;
    start ??= BigInt(row[1] ?? "0");
    for (const word of (row[2] ?? "").trim().split(/\s+/)) {
      if (/^0x[0-9a-f]+$/.test(word)) words.push(BigInt(word));
    }
  }
  return { start, words };
}

/** The string of an `x/s ADDR` read, decoded from gdb's escapes; null when it was unreadable. */
export function parseMemoryString(output: string): string | null {
  for (const line of lines(output)) {
    const row = /^0x[0-9a-f]+(?: <[^>]*>)?:\s+(".*)$/.exec(line);
    if (row) return unquoteGdbString(row[1] ?? "");
  }
  return null;
}
