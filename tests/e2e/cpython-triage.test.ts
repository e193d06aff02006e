/**
 * A CPython program's crash read with its Python frames: the interpreter's thread states and frames
 * read from the core's memory (tests/e2e/cpython-frames.test.ts checks the reader itself) take the
 * place of the evaluation loops that ran them, so a crash in ctypes that the program's call caused is
 * blamed on the program's Python line, on Debian's stripped interpreter and on a 3.11 built from source.
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";

import type { Crash } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { crashCore, hasGdb, pythonInterpreters, RECORD_READER } from "../helpers/cpython.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();
const interpreters = pythonInterpreters();
const CULPRIT = RECORD_READER.split("\n").findIndex((line) => line.includes("# CULPRIT")) + 1;

describe.skipIf(!hasGdb() || interpreters.length === 0)("a Python program whose ctypes.string_at read address 8", () => {
  it.each(interpreters)("on $name: blames parse_record at its line, with handle and the module above it", async ({ python }) => {
    const crash = await crashCore(tempDir("dumpdbg-cpython-"), python);
    const result = await runCli(["triage", crash.core, "--exe", python, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const read = JSON.parse(result.stdout) as Crash;
    expect([read.kind, read.faultAddress, read.access]).toEqual(["null-dereference", "0x8", "read"]);
    expect(read.culprit).toMatchObject({ function: "parse_record", file: crash.program, line: CULPRIT, language: "python" });
    expect(read.signature).toBe("null-dereference | parse_record | handle | <module>");
    expect(read.runtime).toMatchObject({ name: "cpython", version: expect.stringMatching(/^3\.11\.\d+$/) });
    const text = await runCli(["triage", crash.core, "--exe", python]);
    expect(text.stdout).toMatch(new RegExp(`#\\d+ parse_record at ${crash.program.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:${CULPRIT}\\n +#\\d+ handle at .*app\\.py:\\d+\\n +#\\d+ <module> at .*app\\.py:\\d+`));
  });
});

const PYTHON_312 = `${process.env.HOME}/.pyenv/versions/3.12.1/bin/python3.12`;

describe.skipIf(!hasGdb() || !existsSync(PYTHON_312))("the same crash on an interpreter whose layout is not known here (3.12)", () => {
  it("keeps the native verdict and says the Python frames were not read, and why", async () => {
    const crash = await crashCore(tempDir("dumpdbg-cpython-312-"), PYTHON_312);
    const result = await runCli(["triage", crash.core, "--exe", PYTHON_312, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const read = JSON.parse(result.stdout) as Crash;
    expect([read.kind, read.faultAddress, read.runtime]).toEqual(["null-dereference", "0x8", null]);
    // The interpreter's own C code (a 3.12 built from source has its debug information), not a Python line.
    expect(read.culprit.language).not.toBe("python");
    const text = await runCli(["triage", crash.core, "--exe", PYTHON_312]);
    expect(text.stdout).toMatch(/Note: +CPython 3\.12\.1: its structures' layout is not known here \(3\.11 is\).*the Python frames were not read, which would show the Python functions and lines/);
  });
});
