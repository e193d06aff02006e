/**
 * The Python frames of real CPython 3.11 processes, read from their cores with no debugger and no
 * debug information: a crash in C (ctypes reading address 8) under three frames of the program,
 * dumped by gdb where it faulted, and two threads deadlocked on each other's lock, dumped alive by
 * gcore. Each runs on every 3.11 interpreter here (Debian's stripped one, pyenv's build).
 */
import { describe, expect, it } from "vitest";

import { DumpFile, readElfCore } from "../../src/debuggers/dumpfile/index.js";
import { isCPython, readPythonThreads } from "../../src/runtimes/cpython/index.js";
import { crashCore, deadlockCore, hasGdb, pythonInterpreters } from "../helpers/cpython.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();
const interpreters = pythonInterpreters();

if (interpreters.length === 0) console.warn("no CPython 3.11 here (/usr/bin/python3.11 or ~/.pyenv/versions/3.11.*): its cores are not read");
if (!hasGdb()) console.warn("no gdb here: no core of a Python process can be made");

/** The core's first thread (the one that got the signal) and its process id (its main thread's). */
function coreThreads(core: string): { first: number; pid: number | null } {
  const file = DumpFile.open(core);
  try {
    const facts = readElfCore(file);
    expect(isCPython(facts.modules)).toBe(true);
    return { first: facts.threads[0]!.lwp, pid: facts.pid };
  } finally {
    file.close();
  }
}

const shown = (frames: { function: string | null; file: string | null; line: number | null }[]) => frames.map((f) => `${f.function} ${f.file}:${f.line}`);

describe.skipIf(interpreters.length === 0 || !hasGdb())("CPython 3.11's frames read from a core", () => {
  for (const { name, python } of interpreters) {
    it(`reads the crashing thread's frames under ctypes on ${name}`, async () => {
      const { core, program, sourceLines } = await crashCore(tempDir("cpython-crash-"), python);
      const reading = await readPythonThreads(core);
      expect(reading?.version).toMatch(/^3\.11\.\d+$/);
      expect(reading?.notes).toEqual([]);
      const crashed = reading!.threads.find((thread) => thread.lwp === coreThreads(core).first);
      expect(crashed).toMatchObject({ complete: true, why: null });
      const [ctypes, ...own] = crashed!.frames;
      expect(ctypes).toMatchObject({ function: "string_at", file: expect.stringMatching(/\/ctypes\/__init__\.py$/), entry: false });
      expect(shown(own)).toEqual([`parse_record ${program}:${sourceLines.CULPRIT}`, `handle ${program}:13`, `<module> ${program}:16`]);
      expect(own.map((f) => [f.firstLine, f.entry])).toEqual([
        [7, false],
        [12, false],
        [1, true],
      ]);
    });

    it(`reads both deadlocked threads and the main thread joining them on ${name}`, async () => {
      const { core, program, sourceLines, lwps } = await deadlockCore(tempDir("cpython-deadlock-"), python);
      const reading = await readPythonThreads(core);
      expect(reading?.notes).toEqual([]);
      const threads = reading!.threads;
      expect(threads).toHaveLength(3);
      expect(threads.every((thread) => thread.complete)).toBe(true);
      for (const worker of ["restock", "place_order"]) {
        const thread = threads.find((t) => t.lwp === lwps[worker]);
        expect(thread, `the thread of ${worker}, LWP ${lwps[worker]}`).toBeDefined();
        expect(shown(thread!.frames.slice(0, 1))).toEqual([`${worker} ${program}:${sourceLines[`WAITS ${worker}`]}`]);
        expect(thread!.frames.slice(1).map((f) => f.function)).toEqual(["Thread.run", "Thread._bootstrap_inner", "Thread._bootstrap"]);
        expect(thread!.frames.slice(1).every((f) => f.file?.endsWith("/threading.py") && f.line !== null)).toBe(true);
      }
      const main = threads.find((t) => t.lwp === coreThreads(core).pid);
      expect(main!.frames.map((f) => f.function)).toEqual(["Thread._wait_for_tstate_lock", "Thread.join", "<module>"]);
      expect(shown(main!.frames.slice(-1))).toEqual([`<module> ${program}:${sourceLines["WAITS main"]}`]);
    });
  }
});
