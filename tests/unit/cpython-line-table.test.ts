/**
 * CPython 3.11's location table decoded as the interpreter decodes it: each code object's table,
 * first line, `co_positions()` and `co_lines()` are taken from the machine's 3.11 interpreters as
 * they compile code written like real code (loops jumping back, a call spread over lines, a body far
 * below its `def`, a line long enough for the long form, and every code
 * unit's line decoded here must be the one Python gives.
 */
import { describe, expect, it } from "vitest";

import { lineAt, lineRanges } from "../../src/runtimes/cpython/index.js";
import { codeLines, pythonInterpreters } from "../helpers/cpython.js";

const FAR = "\n".repeat(140);
const LONG_CALL = `total = combine(${Array.from({ length: 40 }, (_, i) => `value_${i}`).join(", ")})`;

const SOURCE = `"""Inventory reports."""
import json


def summarize(records, *, strict=False):
    totals = {}
    for record in records:
        if not record.get("sku"):
            if strict:
                raise ValueError(f"record without sku: {record!r}")
            continue
        totals[record["sku"]] = totals.get(
            record["sku"],
            0,
        ) + record.get("count", 0)
    return totals


class Report:
    def __init__(self, path):
        self.path = path

    def write(self, totals):
        with open(self.path, "w") as out:
            try:
                json.dump(totals, out)
            except (TypeError, ValueError) as error:
                out.write(str(error))
        return [sku for sku in totals if totals[sku] > 0]


def far_below():${FAR}
    value_0 = 1
    ${LONG_CALL}
    return total
`;

const interpreters = pythonInterpreters();

describe.skipIf(interpreters.length === 0)("CPython 3.11's line table", () => {
  for (const { name, python } of interpreters) {
    it(`gives every code unit the line ${name} gives it`, async () => {
      const codes = await codeLines(python, SOURCE);
      expect(Object.keys(codes)).toEqual(expect.arrayContaining(["<module>", "summarize", "Report.write", "Report.write.<locals>.<listcomp>", "far_below"]));
      for (const [qualname, code] of Object.entries(codes)) {
        const table = Buffer.from(code.table, "hex");
        const decoded = code.unitLines.map((_, unit) => lineAt(table, code.firstLine, unit * 2));
        expect({ qualname, lines: decoded }).toEqual({ qualname, lines: code.unitLines });
        const ranges = lineRanges(table, code.firstLine).map((range) => [range.start, range.end, range.line]);
        expect({ qualname, ranges }).toEqual({ qualname, ranges: code.lines });
      }
    });

    it(`reads the long form, the one-line forms and lines going back in ${name}'s tables`, async () => {
      const codes = await codeLines(python, SOURCE);
      const kinds = new Set(Object.values(codes).flatMap((code) => entryKinds(Buffer.from(code.table, "hex"))));
      expect([...kinds]).toEqual(expect.arrayContaining([14, 10, 11, 0]));
      expect(codes.far_below!.unitLines).toContain(codes.far_below!.firstLine + 141);
      expect(codes.summarize!.unitLines.some((line, i) => i > 0 && line !== null && line < (codes.summarize!.unitLines[i - 1] ?? 0))).toBe(true);
    });
  }
});

describe("a line table that is cut or damaged", () => {
  const FIRST_LINE = 12;
  // Three entries: one code unit on line 12, two on line 13 (a one-line form with columns), then a long form moving 200 lines on, to line 213.
  const table = Buffer.from([0x80 | (13 << 3) | 0, 0, 0x80 | (11 << 3) | 1, 4, 9, 0x80 | (14 << 3) | 0, 0x50, 0x06, 0, 1, 2]);

  it("decodes the entries of a whole table", () => {
    expect(lineRanges(table, FIRST_LINE)).toEqual([
      { start: 0, end: 2, line: 12 },
      { start: 2, end: 6, line: 13 },
      { start: 6, end: 8, line: 213 },
    ]);
  });

  it("stops at an entry whose line runs past the table, keeping the ones before", () => {
    expect(lineRanges(table.subarray(0, 7), FIRST_LINE)).toEqual([
      { start: 0, end: 2, line: 12 },
      { start: 2, end: 6, line: 13 },
    ]);
    expect(lineAt(table.subarray(0, 7), FIRST_LINE, 6)).toBeNull();
  });

  it("gives instructions of no location no line, and lines after them their own", () => {
    const noLine = Buffer.from([0x80 | (15 << 3) | 1, 0x80 | (10 << 3) | 0, 3, 5]);
    expect(lineRanges(noLine, FIRST_LINE)).toEqual([
      { start: 0, end: 4, line: null },
      { start: 4, end: 6, line: FIRST_LINE },
    ]);
  });

  it("stops at a byte that starts no entry", () => {
    expect(lineRanges(Buffer.from([0x05, 0x80]), FIRST_LINE)).toEqual([]);
  });

  it("gives the first line before the first instruction and no line past the last", () => {
    expect(lineAt(table, FIRST_LINE, -2)).toBe(FIRST_LINE);
    expect(lineAt(table, FIRST_LINE, 8)).toBeNull();
  });

  it("does not overflow on a varint that never ends", () => {
    const endless = Buffer.concat([Buffer.from([0x80 | (13 << 3)]), Buffer.alloc(64, 0x7f)]);
    expect(lineRanges(endless, FIRST_LINE)).toEqual([]);
  });
});

function entryKinds(table: Buffer): number[] {
  return [...table].filter((byte) => byte & 0x80).map((byte) => (byte >> 3) & 15);
}
