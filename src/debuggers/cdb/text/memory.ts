/**
 * Readers of cdb's memory, symbol and source listings: `dq` (an address, then 8-byte words,
 * `????????`????????` where memory is missing), `da` (an address, then a quoted piece of a string
 * per line), `ln` (the nearest symbols around an address), `ls` (numbered source lines) and
 * `!address` (the regions of the address space).
 */
import type { Address, SourceLine, SymbolAt } from "../../model.js";
import type { Mapping } from "../../probe.js";
import { bounded, cdbAddress, lines, MAX_TEXT, parseLocation } from "./common.js";

/** Words read from one `dq`. */
const MAX_WORDS = 1 << 16;

/** `dq`: words until the first that could not be read. */
export function parseMemoryWords(output: string): { start: Address | null; words: bigint[] } {
  let start: Address | null = null;
  const words: bigint[] = [];
  for (const line of lines(output)) {
    const row = /^([0-9a-f]{8}`?[0-9a-f]{0,8})\s{2}(.*)$/i.exec(line);
    if (!row) continue;
    start ??= cdbAddress(row[1]);
    for (const word of (row[2] ?? "").trim().split(/\s+/)) {
      if (words.length >= MAX_WORDS) return { start, words };
      const value = cdbAddress(word);
      if (value === null) return { start, words };
      words.push(BigInt(value));
    }
  }
  return { start, words };
}

/** `da`: the string's pieces joined; null when cdb could not read it. */
export function parseMemoryString(output: string): string | null {
  let text: string | null = null;
  for (const line of lines(output)) {
    const row = /^[0-9a-f]{8}`?[0-9a-f]{0,8}\s+"(.*)"\s*$/i.exec(line);
    if (!row) continue;
    text = (text ?? "") + (row[1] ?? "");
    if (text.length >= MAX_TEXT) return text.slice(0, MAX_TEXT);
  }
  return text;
}

/**
 * `ln ADDR`: `(00007ff6`1a2b1000)   prog!listen_port+0x12   |  (00007ff6`1a2b1040)   prog!main`, the
 * symbol at or before the address first; with `-lines`, its source line on a line of its own.
 */
export function parseNearestSymbol(output: string): SymbolAt | null {
  let file: string | null = null;
  let line: number | null = null;
  for (const text of lines(output)) {
    const source = /^\s*\[(.+) @ (\d+)\]\s*$/.exec(text);
    if (source) {
      file = source[1] ?? null;
      line = Number(source[2]);
      continue;
    }
    const row = /^\(([0-9a-f`]+)\)\s+(.+?)\s+(?:\||$)/i.exec(text.trim());
    if (!row) continue;
    const location = parseLocation(row[2] ?? "");
    if (!location.function) continue;
    return { symbol: location.function, offset: location.offset, section: null, module: location.module, file, line };
  }
  return null;
}

/** `ls`: `    12: ...`, the current line marked `>`. */
export function parseSourceListing(output: string, from: number, to: number): SourceLine[] {
  const listing: SourceLine[] = [];
  for (const text of lines(output)) {
    const row = /^[> ]\s*(\d+):\s?(.*)$/.exec(text);
    if (!row) continue;
    const line = Number(row[1]);
    if (line >= from && line <= to) listing.push({ line, text: bounded(row[2] ?? "") });
  }
  return listing;
}

const PROTECTIONS: Record<string, string> = {
  PAGE_NOACCESS: "---",
  PAGE_READONLY: "r--",
  PAGE_READWRITE: "rw-",
  PAGE_WRITECOPY: "rw-",
  PAGE_EXECUTE: "--x",
  PAGE_EXECUTE_READ: "r-x",
  PAGE_EXECUTE_READWRITE: "rwx",
  PAGE_EXECUTE_WRITECOPY: "rwx",
};

/**
 * `!address`: `+  7ff6`1a2b0000  7ff6`1a2b1000  0`00001000 MEM_IMAGE MEM_COMMIT PAGE_READONLY Image
 * [prog; "C:\app\prog.exe"]`. Free memory is no mapping; a region of an image names its file.
 */
export function parseRegions(output: string): Mapping[] {
  const mappings: Mapping[] = [];
  for (const text of lines(output)) {
    const row = /^[+|\s]*([0-9a-f`]+)\s+([0-9a-f`]+)\s+([0-9a-f`]+)\s+(MEM_\w+)?\s*(MEM_\w+)\s+(PAGE_\w+)?(.*)$/i.exec(text);
    if (!row || row[5] === "MEM_FREE") continue;
    const [start, end, size] = [cdbAddress(row[1]), cdbAddress(row[2]), cdbAddress(row[3])];
    if (start === null || end === null || size === null) continue;
    const protection = PROTECTIONS[(row[6] ?? "").toUpperCase()];
    const image = /\[[^;\]]*;\s*"([^"]+)"\]/.exec(row[7] ?? "");
    mappings.push({
      start,
      end,
      size,
      offset: "0x0",
      permissions: protection ? `${protection}p` : null,
      objfile: image ? bounded(image[1] ?? "") : null,
    });
  }
  return mappings;
}

