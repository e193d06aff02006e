/**
 * Two of the accuracy bench's held-out cases (bench/accuracy/cases), kept here once they showed the
 * offline analysis concluding nothing: a division of INT_MIN by -1 (SIGFPE like a zero divisor, but
 * the divisor was -1) and a Rust index out of bounds, whose panic goes through `Vec::index` and
 * `slice::index` before `panic_bounds_check` names it. Real programs, real cores written by gdb.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analyzeOffline, crashProgram, type Dumped } from "../helpers/dumped.js";
import { ungroundedValues } from "../helpers/grounding.js";

const CASES = fileURLToPath(new URL("../../bench/accuracy/cases/", import.meta.url));
const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-stories-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const analyze = (built: Dumped) => analyzeOffline(dir, built);

let division: Dumped;
let index: Dumped;
beforeAll(() => {
  division = crashProgram(dir, "int-min", (exe) => execFileSync("gcc", ["-g", "-O0", "-o", exe, path.join(CASES, "int-min.c")]));
  index = crashProgram(dir, "rust-index", (exe) => execFileSync("rustc", ["-g", "-C", "opt-level=0", "-C", "panic=abort", "-o", exe, path.join(CASES, "rust-index.rs")]));
}, 120_000);

describe("INT_MIN / -1", () => {
  it("is an overflow of the division, confirmed from the divisor and the dividend, not a zero divisor", async () => {
    const report = await analyze(division);
    expect(report.crash).toMatchObject({ kind: "division-by-zero", signalCode: "FPE_INTDIV", culprit: { function: "scale_reading", line: 10 } });
    expect(report.hypotheses.map((h: { status: string }) => h.status)).toEqual(["rejected", "confirmed"]);
    expect(report.conclusion.summary).toMatch(/^`scale_reading` \(int-min\.c:10\) divided the most negative integer by -1: `return raw \/ divisor;` overflowed/);
    expect(report.conclusion.rootCause).toMatch(/`divisor` is -1 \(E\d+\) and `raw` is -2147483648 \(E\d+\), the most negative value of its type/);
    expect(report.conclusion.summary).toMatch(/the divisor was not 0/);
    expect(ungroundedValues(`${report.conclusion.summary} ${report.conclusion.rootCause}`, path.join(dir, "sessions"), report.session.id)).toEqual([]);
  }, 120_000);
});

describe("a Rust index out of bounds", () => {
  it("is confirmed from panic_bounds_check under Vec::index, with the panic's message and the index", async () => {
    const report = await analyze(index);
    expect(report.crash).toMatchObject({ kind: "panic", message: "index out of bounds: the len is 2 but the index is 3", culprit: { function: "rust_index::nth_field", line: 6 } });
    expect(report.hypotheses[0]).toMatchObject({ status: "confirmed" });
    expect(report.conclusion.summary).toMatch(/^`rust_index::nth_field` \(rust-index\.rs:6\) indexed out of bounds with the message "index out of bounds: the len is 2 but the index is 3" at `fields\[n\]` \(E\d+\), with row = "e,f", n = 3/);
    expect(report.conclusion.confidence).toBeGreaterThanOrEqual(0.8);
  }, 120_000);
});
