/**
 * What the debugger says while loading a dump is not the user's business line by line: gdb warns
 * about the bus-error fixture's deleted log file (its core maps a file that no longer exists). The
 * terminal gets one line saying how often and the first; the report keeps them all.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ReportSchema } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { buildCore } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

describe("the debugger's load warnings", () => {
  it("are one line on the terminal for triage", async () => {
    const built = await buildCore("bus-error");
    const result = await runCli(["triage", built.core, "--exe", built.exe]);
    expect(result.code, result.stderr).toBe(0);
    const warnings = result.stderr.split("\n").filter((line) => line.startsWith("dumpdbg: warning:"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^dumpdbg: warning: gdb warned (once|\d+ times) while loading the dump \("Can't open file \/tmp\/dumpdbg-log-\S+ \(deleted\)/);
  });

  it("are kept whole in the report of an analysis, and summarised once in its progress", async () => {
    const built = await buildCore("bus-error");
    const dir = tempDir("dumpdbg-warnings-");
    const result = await runCli(["analyze", built.core, "--exe", built.exe, "--provider", "offline", "--json", "--out", "reports", "--sessions-dir", "sessions"], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.split("\n").filter((line) => /^warning:/.test(line)), result.stderr).toHaveLength(1);
    const report = ReportSchema.parse(JSON.parse(result.stdout));
    const markdown = readFileSync(path.join(dir, "reports", `${report.session.id}.md`), "utf8");
    expect(markdown).toMatch(/### Debugger warnings while loading the dump \(\d+\)\n\n```[^\n]*\nCan't open file \/tmp\/dumpdbg-log-\S+ \(deleted\) during file-backed mapping note processing/);
  });
});
