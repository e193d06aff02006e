/**
 * CPython 3.11's location table (`co_linetable`, PEP 626 and 657; Objects/locations.md): a run of
 * entries, each starting with a byte whose top bit is set, whose bits 3–6 are its kind and bits
 * 0–2 the code units it covers less one. Only lines are read; columns are skipped with the rest of
 * an entry. Pure and bounded by the table.
 */

/** A stretch of instructions and the line they are of; null for instructions of no line. */
export interface LineRange {
  /** Byte offsets into the code, `end` excluded (a code unit is 2 bytes). */
  start: number;
  end: number;
  line: number | null;
}

const NO_LOCATION = 15;
const LONG_FORM = 14;
const NO_COLUMNS = 13;
const ONE_LINE_0 = 10;
const CODE_UNIT_BYTES = 2;

/** The table's ranges, in order, each entry one range; an entry cut short by the table's end ends them. */
export function lineRanges(table: Buffer, firstLine: number): LineRange[] {
  const ranges: LineRange[] = [];
  let line = firstLine;
  let address = 0;
  let at = 0;
  while (at < table.length) {
    const head = table[at] as number;
    if ((head & 0x80) === 0) break;
    const kind = (head >> 3) & 15;
    const end = entryEnd(table, at);
    const delta = lineDelta(kind, table, at + 1, end);
    if (delta === null) break;
    line += delta;
    const size = ((head & 7) + 1) * CODE_UNIT_BYTES;
    ranges.push({ start: address, end: address + size, line: kind === NO_LOCATION ? null : line });
    address += size;
    at = end;
  }
  return ranges;
}

/**
 * The line of the instruction at byte `offset` of the code, as CPython's PyCode_Addr2Line gives
 * it: the first line of the code before its first instruction (a negative offset), null for an
 * instruction of no line or past the table.
 */
export function lineAt(table: Buffer, firstLine: number, offset: number): number | null {
  if (offset < 0) return firstLine;
  return lineRanges(table, firstLine).find((range) => range.start <= offset && offset < range.end)?.line ?? null;
}

/** Where the entry starting at `at` ends: at the next byte with its top bit set, or the table's end. */
function entryEnd(table: Buffer, at: number): number {
  let end = at + 1;
  while (end < table.length && ((table[end] as number) & 0x80) === 0) end++;
  return end;
}

/** How far an entry of `kind` moves the line; null when its varint runs past the entry. */
function lineDelta(kind: number, table: Buffer, from: number, end: number): number | null {
  if (kind === LONG_FORM || kind === NO_COLUMNS) return signedVarint(table, from, end);
  if (kind >= ONE_LINE_0 && kind < NO_COLUMNS) return kind - ONE_LINE_0;
  return 0;
}

/** A varint of 6-bit chunks, least significant first, bit 6 saying another follows; then its lowest bit is the sign. */
function signedVarint(table: Buffer, from: number, end: number): number | null {
  let value = 0;
  let shift = 0;
  for (let at = from; at < end && shift <= 30; at++) {
    const byte = table[at] as number;
    value += (byte & 63) * 2 ** shift;
    shift += 6;
    if ((byte & 64) === 0) return value % 2 === 1 ? -Math.floor(value / 2) : value / 2;
  }
  return null;
}
