/**
 * Small helpers shared by the readers of cdb's text: its numbers (`00007ff6`1a2b1012`, `0n42`,
 * `20h`), its `module!symbol+0xoffset [file @ line]` locations, and bounds on untrusted output.
 */
import { normalizeAddress, type Address } from "../../model.js";

/** Lines read from one command's output: a dump can make a debugger print without end. */
const MAX_LINES = 200_000;
/** Characters kept of a name or a value printed by the debugger. */
export const MAX_TEXT = 4096;

export function lines(output: string): string[] {
  return output.split(/\r?\n/, MAX_LINES);
}

export function bounded(text: string): string {
  return text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
}

/** A hex number as cdb prints an address: `00007ff6`1a2b1012`, `0x1f`, `7ffe0000`; null when it is none. */
export function cdbAddress(text: string | undefined): Address | null {
  if (text === undefined) return null;
  const hex = text.trim().replace(/^0x/i, "").replace(/`/g, "");
  if (!/^[0-9a-f]{1,16}$/i.test(hex)) return null;
  return normalizeAddress(`0x${hex}`);
}

/** A number in cdb's notations: `0n42` decimal, `0x2a` or `2ah` or bare hex (cdb's default radix is 16). */
export function cdbNumber(text: string): bigint | null {
  const value = text.trim().replace(/`/g, "");
  const negative = value.startsWith("-");
  const digits = negative ? value.slice(1) : value;
  let parsed: bigint | null = null;
  if (/^0n\d{1,20}$/i.test(digits)) parsed = BigInt(digits.slice(2));
  else if (/^0x[0-9a-f]{1,16}$/i.test(digits)) parsed = BigInt(digits);
  else if (/^[0-9a-f]{1,16}h?$/i.test(digits)) parsed = BigInt(`0x${digits.replace(/h$/i, "")}`);
  if (parsed === null) return null;
  return negative ? -parsed : parsed;
}

/** Where cdb says code is: `config_null!listen_port+0x12 [C:\src\config-null.c @ 12]`. */
export interface CodeLocation {
  module: string | null;
  /** The symbol without its offset; null for `module+0x1234` or a bare address. */
  function: string | null;
  offset: number;
  file: string | null;
  line: number | null;
}

/**
 * Reads a location as `kn`, `ln`, `u` and `.frame` print it. A name with spaces (C++ templates,
 * `operator delete`) is kept whole; only the trailing `+0x..` and ` [file @ line]` are split off.
 */
export function parseLocation(text: string): CodeLocation {
  let rest = bounded(text.trim());
  let file: string | null = null;
  let line: number | null = null;
  const source = /\s*\[([^[\]]+) @ (\d+)\]\s*$/.exec(rest);
  if (source) {
    file = source[1] ?? null;
    line = Number(source[2]);
    rest = rest.slice(0, source.index);
  }
  let offset = 0;
  const plus = /\+0x([0-9a-f]+)$/i.exec(rest);
  if (plus) {
    offset = Number.parseInt(plus[1] ?? "0", 16);
    rest = rest.slice(0, plus.index);
  }
  const bang = rest.indexOf("!");
  if (bang < 0) {
    // `ntdll+0x9f4e4` (no symbols), or a bare address.
    const bare = cdbAddress(rest) !== null && !plus;
    return { module: bare || rest === "" ? null : rest, function: null, offset, file, line };
  }
  return { module: rest.slice(0, bang), function: rest.slice(bang + 1) || null, offset, file, line };
}
