/**
 * A CPython program's crash as the written reports show it, from the user's side: `dumpdbg analyze`
 * offline on the ctypes crash, and the Markdown and HTML reports' stack, where each Python frame
 * reads as Python (its function, its file and line, run by CPython), with no address and no module.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

import type { Report } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { crashCore, hasGdb, pythonInterpreters, type PythonCore } from "../helpers/cpython.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();
// One interpreter is enough here: tests/e2e/cpython-triage.test.ts reads the frames on each.
const interpreter = pythonInterpreters()[0];
const PYTHON_FRAMES = ["parse_record", "handle", "<module>"];

/** The RegExp source of a literal text. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

describe.skipIf(!hasGdb() || !interpreter)("the reports of a Python program whose ctypes.string_at read address 8", () => {
  let crash: PythonCore;
  let markdown = "";
  let html = "";

  beforeAll(async () => {
    const dir = tempDir("dumpdbg-cpython-report-");
    crash = await crashCore(dir, interpreter!.python);
    const out = path.join(dir, "reports");
    const result = await runCli(["analyze", crash.core, "--exe", crash.python, "--provider", "offline", "--offline", "--out", out, "--sessions-dir", path.join(dir, "sessions"), "--json"], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    expect(report.crash.culprit).toMatchObject({ function: "parse_record", file: crash.program, line: crash.sourceLines.CULPRIT, language: "python", module: null });
    const written = readdirSync(out);
    markdown = readFileSync(path.join(out, written.find((f) => f.endsWith(".md"))!), "utf8");
    html = readFileSync(path.join(out, written.find((f) => f.endsWith(".html"))!), "utf8");
  }, 120_000);

  it("shows each Python frame in the Markdown stack with its file and line, run by CPython", () => {
    const at = (fn: string, line: string) => new RegExp(`^\\| (\\*\\*)?\\d+(\\*\\*)? \\| \`${literal(fn)}\`[^|]* \\| \`${literal(crash.program)}:${line}\` \\| Python code \\(run by CPython\\) \\|$`, "m");
    expect(markdown).toMatch(at("parse_record", `${crash.sourceLines.CULPRIT}`));
    expect(markdown).toMatch(/^\| \*\*\d+\*\* \| `parse_record` ← culprit \|/m);
    expect(markdown).toMatch(at("handle", "\\d+"));
    expect(markdown).toMatch(at("<module>", "\\d+"));
    const rows = markdown.split("\n").filter((row) => PYTHON_FRAMES.some((fn) => row.includes(`\`${fn}\``)) && row.includes(crash.program));
    expect(rows.length).toBeGreaterThanOrEqual(PYTHON_FRAMES.length);
    for (const row of rows) expect(row).not.toMatch(/0x0\b|\?\?|python3\.11`/);
    // The interpreter's C frames below them keep their module.
    expect(markdown).toMatch(/^\| \d+ \| `_PyEval_Vector` \| `[^`]+` \| `python3\.11` \|$/m);
  });

  it("shows the same in the HTML stack", () => {
    const at = (fn: string, line: string) =>
      new RegExp(`<td><code>${literal(fn)}</code>[^<]*</td>\\n<td><code>${literal(crash.program)}:${line}</code></td>\\n<td>Python code \\(run by CPython\\)</td>`);
    expect(html).toMatch(at("parse_record", `${crash.sourceLines.CULPRIT}`));
    expect(html).toMatch(at("handle", "\\d+"));
    expect(html).toMatch(at("&lt;module&gt;", "\\d+"));
    expect(html).not.toMatch(/python code/);
  });
});
