/**
 * The second route to a CPython process's Python frames: CPython's own gdb extension (Debian's
 * python3.11-dbg installs it with the interpreter's debug information), run in dumpdbg's gdb session.
 * Read by itself on real cores, it gives the frames the direct reader gives, with their locals; in
 * triage it reads them where the direct reader refuses: a core written without the ELF files' first
 * pages (coredump_filter bit 4 clear) does not say which build of the interpreter ran, and the direct
 * reader reads only that build, where gdb takes the interpreter it is given and its debug information.
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";

import { DumpFile, readElfCore } from "../../src/debuggers/dumpfile/index.js";
import { GdbSession } from "../../src/debuggers/gdb/gdb-session.js";
import type { Crash } from "../../src/report/schema.js";
import { extensionCommand, extensionFor, readExtensionOutput, readPythonThreads, type ExtensionReading } from "../../src/runtimes/cpython/index.js";
import { runCli } from "../helpers/cli.js";
import { crashCore, deadlockCore, hasGdb, pythonInterpreters } from "../helpers/cpython.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();
const DEBIAN_PYTHON = "/usr/bin/python3.11";
const EXTENSION = "/usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py";
const withExtension = hasGdb() && existsSync(DEBIAN_PYTHON) && existsSync(EXTENSION);
const pyenv = pythonInterpreters().find(({ python }) => python !== DEBIAN_PYTHON);

if (!withExtension) console.warn(`no ${EXTENSION} here (Debian's python3.11-dbg): the gdb extension's route is not tested`);

function modulesOf(core: string): string[] {
  const file = DumpFile.open(core);
  try {
    return readElfCore(file).modules.map((module) => module.path);
  } finally {
    file.close();
  }
}

/** The extension's reading of a core, through a gdb session of dumpdbg's, as triage runs it. */
async function readThroughGdb(core: string, python: string): Promise<ExtensionReading> {
  const extension = extensionFor(modulesOf(core));
  if ("why" in extension) throw new Error(extension.why);
  expect(extension).toEqual({ file: EXTENSION, interpreter: python });
  const session = new GdbSession({ dump: core, executable: python });
  try {
    await session.open();
    const result = await session.run(extensionCommand(extension.file));
    expect(result.ok, result.error ?? "").toBe(true);
    return readExtensionOutput(result.output);
  } finally {
    await session.close();
  }
}

const shown = (frames: { function: string | null; file: string | null; line: number | null }[]) => frames.map((f) => `${f.function} ${f.file}:${f.line}`);
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

describe.skipIf(!withExtension)("CPython's gdb extension, read by itself", () => {
  it("reads the crashing thread's frames as the direct reader does, and parse_record's locals (address = 8)", async () => {
    const crash = await crashCore(tempDir("dumpdbg-pygdb-crash-"), DEBIAN_PYTHON);
    const reading = await readThroughGdb(crash.core, DEBIAN_PYTHON);
    if ("why" in reading) throw new Error(reading.why);
    expect(reading.version).toMatch(/^3\.11\.\d+$/);
    const direct = await readPythonThreads(crash.core);
    const [thread] = reading.threads;
    expect(reading.threads).toHaveLength(1);
    expect(thread).toMatchObject({ lwp: direct!.threads[0]!.lwp, complete: true, why: null });
    expect(thread!.frames.map(({ locals: _, ...frame }) => frame)).toEqual(direct!.threads[0]!.frames.map(({ locals: _, holds: __, ...frame }) => frame));
    // The two routes read the same values for the simple locals (the direct reader shows a dict by its size only).
    expect(direct!.threads[0]!.frames.slice(0, 2).map((frame) => frame.locals)).toEqual(thread!.frames.slice(0, 2).map((frame) => frame.locals));
    expect(shown(thread!.frames.slice(1))).toEqual([`parse_record ${crash.program}:${crash.sourceLines.CULPRIT}`, `handle ${crash.program}:13`, `<module> ${crash.program}:16`]);
    const [stringAt, parseRecord, handle] = thread!.frames;
    expect(stringAt!.locals).toEqual([
      { name: "ptr", value: "8" },
      { name: "size", value: "16" },
    ]);
    expect(parseRecord!.locals).toContainEqual({ name: "address", value: "8" });
    expect(handle!.locals).toEqual([{ name: "request", value: "{'buffer': 8}" }]);
  });

  it("reads both deadlocked workers' frames with their lines, each thread by its LWP", async () => {
    const { core, program, sourceLines, lwps } = await deadlockCore(tempDir("dumpdbg-pygdb-deadlock-"), DEBIAN_PYTHON);
    const reading = await readThroughGdb(core, DEBIAN_PYTHON);
    if ("why" in reading) throw new Error(reading.why);
    expect(reading.notes).toEqual([]);
    for (const worker of ["restock", "place_order"]) {
      const thread = reading.threads.find((t) => t.lwp === lwps[worker]);
      expect(thread, worker).toMatchObject({ complete: true, why: null });
      expect(shown(thread!.frames)[0]).toBe(`${worker} ${program}:${sourceLines[`WAITS ${worker}`]}`);
      expect(thread!.frames.at(-1)).toMatchObject({ function: "Thread._bootstrap", entry: true });
      expect(thread!.frames.every((frame) => frame.line !== null)).toBe(true);
    }
    const main = reading.threads.find((t) => t.lwp !== lwps.restock && t.lwp !== lwps.place_order);
    expect(main?.frames.at(-1)).toMatchObject({ function: "<module>", file: program, line: sourceLines["WAITS main"], entry: true });
  });
});

describe.skipIf(!withExtension)("triage of a core that does not say which interpreter build ran", () => {
  it("reads the Python frames through the gdb extension: parse_record at its line, the runtime naming the extension", async () => {
    const crash = await crashCore(tempDir("dumpdbg-pygdb-triage-"), DEBIAN_PYTHON, { elfHeaders: false });
    const direct = await readPythonThreads(crash.core);
    expect(direct?.threads).toEqual([]);
    expect(direct?.notes.join("\n")).toMatch(/is not the build the process ran \(build id \w+ here, unknown in the core\)/);
    const result = await runCli(["triage", crash.core, "--exe", DEBIAN_PYTHON, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const read = JSON.parse(result.stdout) as Crash;
    expect([read.kind, read.faultAddress]).toEqual(["null-dereference", "0x8"]);
    expect(read.culprit).toMatchObject({ function: "parse_record", file: crash.program, line: crash.sourceLines.CULPRIT, language: "python" });
    expect(read.signature).toBe("null-dereference | parse_record | handle | <module>");
    expect(read.runtime).toEqual({ name: "cpython", version: expect.stringMatching(/^3\.11\.\d+$/), source: expect.stringMatching(/^CPython's gdb extension \(python3\.11-gdb\.py\) over the interpreter's debug information \(CPython 3\.11\.\d+\)$/) });
    const text = await runCli(["triage", crash.core, "--exe", DEBIAN_PYTHON]);
    expect(text.stdout).toMatch(new RegExp(`#\\d+ parse_record at ${escaped(crash.program)}:${crash.sourceLines.CULPRIT}\\n +#\\d+ handle at .*app\\.py:13\\n +#\\d+ <module> at .*app\\.py:16`));
    expect(text.stdout).toContain(`read by CPython's gdb extension (${EXTENSION})`);
  });
});

describe.skipIf(!hasGdb() || !pyenv)("an interpreter with no gdb extension here (pyenv's build)", () => {
  it("is read from memory where the core says its build, the extension not needed", async () => {
    const crash = await crashCore(tempDir("dumpdbg-pygdb-pyenv-"), pyenv!.python);
    expect(extensionFor(modulesOf(crash.core))).toEqual({ why: expect.stringMatching(/^no CPython gdb extension for the interpreter is here \(looked for .*\.pyenv\/versions\/3\.11\.\d+\/.*python3\.11.*-gdb\.py/) });
    const result = await runCli(["triage", crash.core, "--exe", pyenv!.python, "--json"]);
    const read = JSON.parse(result.stdout) as Crash;
    expect(read.culprit).toMatchObject({ function: "parse_record", line: crash.sourceLines.CULPRIT, language: "python" });
    expect(read.runtime?.source).toMatch(/^CPython's thread states and frames, read from the core's memory/);
  });

  it("says why neither route read the frames where the core does not say its build, and keeps the native verdict", async () => {
    const crash = await crashCore(tempDir("dumpdbg-pygdb-pyenv-unsaid-"), pyenv!.python, { elfHeaders: false });
    const result = await runCli(["triage", crash.core, "--exe", pyenv!.python, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const read = JSON.parse(result.stdout) as Crash;
    expect([read.kind, read.faultAddress, read.runtime]).toEqual(["null-dereference", "0x8", null]);
    expect(read.culprit.language).not.toBe("python");
    const text = await runCli(["triage", crash.core, "--exe", pyenv!.python]);
    const notes = text.stdout.replace(/\n\s+/g, " ");
    expect(notes).toMatch(/unknown in the core\).*the route through gdb did not read them either: no CPython gdb extension for the interpreter is here \(looked for .*\); the Python frames were not read, which would show the Python functions and lines/);
  });
});
