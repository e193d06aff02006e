/**
 * One line of a Breakpad symbol file to one record: a pure function, so every record's shape is
 * tested on its own. The format: chromium.googlesource.com/breakpad/breakpad/+/HEAD/docs/symbol_files.md.
 * Fields are separated by single spaces; a record's last field (a name or a path) runs to the end
 * of the line. Addresses and sizes are hex without "0x", line, file and origin numbers decimal.
 */

export type SymRecord =
  | { kind: "module"; os: string; arch: string; id: string; name: string }
  | { kind: "code-id"; codeId: string }
  | { kind: "file"; id: number; path: string }
  | { kind: "func"; address: number; size: number; name: string }
  | { kind: "line"; address: number; size: number; line: number; file: number }
  | { kind: "inline-origin"; id: number; name: string }
  /** `ranges` holds address, size pairs, flat. */
  | { kind: "inline"; depth: number; callLine: number; callFile: number; origin: number; ranges: number[] }
  | { kind: "public"; address: number; name: string }
  /** STACK CFI, STACK WIN, other INFO records and records of kinds newer than this reader. */
  | { kind: "ignored" }
  /** `func`: a FUNC's, whose line and INLINE records must then not go to the FUNC before it. */
  | { kind: "malformed"; func: boolean };

const MALFORMED: SymRecord = { kind: "malformed", func: false };
const MALFORMED_FUNC: SymRecord = { kind: "malformed", func: true };
const IGNORED: SymRecord = { kind: "ignored" };

/**
 * Hex of up to 13 digits, so that every address is exact in a double: module-relative addresses
 * stay far below 2^52; a longer one is damage, not a real module.
 */
const HEX = /^[0-9a-fA-F]{1,13}$/;
const DECIMAL = /^[0-9]{1,10}$/;
const MAX_U32 = 0xffffffff;

function hex(field: string | undefined): number | null {
  return field !== undefined && HEX.test(field) ? parseInt(field, 16) : null;
}

function decimal(field: string | undefined): number | null {
  if (field === undefined || !DECIMAL.test(field)) return null;
  const value = Number(field);
  return value <= MAX_U32 ? value : null;
}

/**
 * The first `count - 1` space-separated fields and the rest of the line as the last one (which
 * may hold spaces), or null when the line has fewer fields or an empty last one.
 */
function fields(text: string, from: number, count: number): string[] | null {
  const out: string[] = [];
  let start = from;
  while (out.length < count - 1) {
    const space = text.indexOf(" ", start);
    if (space === -1) return null;
    out.push(text.slice(start, space));
    start = space + 1;
  }
  const rest = text.slice(start);
  if (rest === "") return null;
  out.push(rest);
  return out;
}

/** The offset after a record's keyword and an optional `m` flag (several symbols folded into one). */
function afterMultipleFlag(text: string, keywordLength: number): number {
  return text.startsWith("m ", keywordLength + 1) ? keywordLength + 3 : keywordLength + 1;
}

/**
 * A line's record. Line records, most of any symbol file, are read from the bytes themselves;
 * only the other records' lines are decoded (as UTF-8: names and paths may be any language's).
 */
export function parseSymRecord(line: Buffer): SymRecord {
  if (startsWithHexField(line)) return parseLine(line);
  const text = line.toString("utf8");
  const keyword = text.slice(0, text.indexOf(" ") === -1 ? text.length : text.indexOf(" "));
  switch (keyword) {
    case "MODULE": {
      const f = fields(text, 7, 4);
      return f ? { kind: "module", os: f[0] ?? "", arch: f[1] ?? "", id: f[2] ?? "", name: f[3] ?? "" } : MALFORMED;
    }
    case "INFO": {
      const f = fields(text, 5, 2);
      if (f?.[0] !== "CODE_ID") return IGNORED;
      // `INFO CODE_ID <id> [<file name>]`: the file name is a Windows module's, not needed here.
      const codeId = f[1]?.split(" ")[0] ?? "";
      return /^[0-9a-fA-F]+$/.test(codeId) ? { kind: "code-id", codeId: codeId.toUpperCase() } : MALFORMED;
    }
    case "FILE": {
      const f = fields(text, 5, 2);
      const id = decimal(f?.[0]);
      return f && id !== null ? { kind: "file", id, path: f[1] ?? "" } : MALFORMED;
    }
    case "FUNC": {
      const f = fields(text, afterMultipleFlag(text, 4), 4);
      const address = hex(f?.[0]);
      const size = hex(f?.[1]);
      return f && address !== null && size !== null && hex(f[2]) !== null ? { kind: "func", address, size, name: f[3] ?? "" } : MALFORMED_FUNC;
    }
    case "PUBLIC": {
      const f = fields(text, afterMultipleFlag(text, 6), 3);
      const address = hex(f?.[0]);
      return f && address !== null && hex(f[1]) !== null ? { kind: "public", address, name: f[2] ?? "" } : MALFORMED;
    }
    case "INLINE_ORIGIN": {
      const f = fields(text, 14, 2);
      const id = decimal(f?.[0]);
      return f && id !== null ? { kind: "inline-origin", id, name: f[1] ?? "" } : MALFORMED;
    }
    case "INLINE":
      return parseInline(text.slice(7).split(" "));
    default:
      return IGNORED;
  }
}

/** `INLINE <depth> <call site line> <call site file> <origin> [<address> <size>]+` */
function parseInline(f: string[]): SymRecord {
  if (f.length < 6 || f.length % 2 !== 0) return MALFORMED;
  const [depth, callLine, callFile, origin] = [decimal(f[0]), decimal(f[1]), decimal(f[2]), decimal(f[3])];
  if (depth === null || callLine === null || callFile === null || origin === null) return MALFORMED;
  const ranges: number[] = [];
  for (let i = 4; i < f.length; i++) {
    const value = hex(f[i]);
    if (value === null) return MALFORMED;
    ranges.push(value);
  }
  return { kind: "inline", depth, callLine, callFile, origin, ranges };
}

const SPACE = 0x20;

/** A hex digit's value, or -1. */
function hexDigit(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  return -1;
}

/** Whether the line's first field is all hex digits: a line record's address, not a keyword (FILE, FUNC). */
function startsWithHexField(line: Buffer): boolean {
  let at = 0;
  while (at < line.length && line[at] !== SPACE && hexDigit(line[at] ?? 0) >= 0) at++;
  return at > 0 && (at === line.length || line[at] === SPACE);
}

/** `<address> <size> <line> <file>`, read from the bytes: no string is made for a line record. */
function parseLine(line: Buffer): SymRecord {
  let at = 0;
  /** The field at `at` in base 16 or 10, ending in a space (or, for the last, the line's end). */
  const field = (radix: 16 | 10, last: boolean): number | null => {
    const maxDigits = radix === 16 ? 13 : 10;
    let value = 0;
    let digits = 0;
    for (; at < line.length && line[at] !== SPACE; at++) {
      const digit = hexDigit(line[at] ?? 0);
      if (digit < 0 || digit >= radix || ++digits > maxDigits) return null;
      value = value * radix + digit;
    }
    if (digits === 0 || (last ? at !== line.length : line[at] !== SPACE)) return null;
    at++;
    return radix === 10 && value > MAX_U32 ? null : value;
  };
  const address = field(16, false);
  const size = address === null ? null : field(16, false);
  const number = size === null ? null : field(10, false);
  const file = number === null ? null : field(10, true);
  return address !== null && size !== null && number !== null && file !== null ? { kind: "line", address, size, line: number, file } : MALFORMED;
}
