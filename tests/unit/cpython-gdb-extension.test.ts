/**
 * The gdb extension route's pure parts: where the extension of a core's interpreter is looked for,
 * and its script's output read back, bounded, whatever gdb printed around it or the core made of it.
 * (tests/e2e/cpython-gdb-extension.test.ts runs the script in gdb on real cores.)
 */
import { describe, expect, it } from "vitest";

import { extensionCommand, extensionFor, readExtensionOutput } from "../../src/runtimes/cpython/index.js";

const BEGIN = "<<dumpdbg python threads>>";
const END = "<</dumpdbg python threads>>";
const printed = (reading: unknown, around = { before: "", after: "" }) => `${around.before}${BEGIN}\n${JSON.stringify(reading)}\n${END}\n${around.after}`;

const frame = (over: Record<string, unknown> = {}) => ({ function: "parse_record", file: "/srv/app.py", line: 8, firstLine: 7, entry: false, locals: [{ name: "address", value: "8" }], ...over });

describe("readExtensionOutput", () => {
  it("reads the threads between the markers, whatever gdb printed around them", () => {
    const output = printed(
      { version: 0x30b02f0, threads: [{ lwp: 4242, frames: [frame(), frame({ function: "<module>", line: 16, firstLine: 1, entry: true, locals: [] })], complete: true, why: null }], notes: [] },
      { before: "warning: Unable to find libthread_db\n", after: "(gdb) \n" },
    );
    expect(readExtensionOutput(output)).toEqual({
      version: "3.11.2",
      threads: [
        {
          lwp: 4242,
          frames: [
            { function: "parse_record", file: "/srv/app.py", line: 8, firstLine: 7, entry: false, locals: [{ name: "address", value: "8" }] },
            { function: "<module>", file: "/srv/app.py", line: 16, firstLine: 1, entry: true, locals: [] },
          ],
          complete: true,
          why: null,
        },
      ],
      notes: [],
    });
  });

  it("says why where the reading is missing, cut short, not JSON or refused", () => {
    expect(readExtensionOutput("Python Exception <class 'NameError'>: name 'Frame' is not defined\n")).toEqual({ why: "the extension's script printed no reading (gdb said: Python Exception <class 'NameError'>: name 'Frame' is not defined)" });
    expect(readExtensionOutput("")).toEqual({ why: "the extension's script printed no reading" });
    expect(readExtensionOutput(`${BEGIN}\n{"version": 1, "threads": [{"lwp": 1, "fra`)).toEqual({ why: "the extension's reading was cut short" });
    expect(readExtensionOutput(`${BEGIN}\n{"threads": [}\n${END}\n`)).toEqual({ why: "the extension's reading is not JSON" });
    expect(readExtensionOutput(printed([1, 2]))).toEqual({ why: "the extension's reading is not an object" });
    expect(readExtensionOutput(printed({ version: 1 }))).toEqual({ why: "the extension's reading has no threads" });
    expect(readExtensionOutput(printed({ refused: "gdb has no debug information for the interpreter (it knows no type PyObject)" }))).toEqual({ why: "gdb has no debug information for the interpreter (it knows no type PyObject)" });
  });

  it("takes the last reading where gdb printed the markers more than once (an earlier run's echo)", () => {
    const first = printed({ threads: [{ lwp: 1, frames: [], complete: true, why: null }] });
    const second = printed({ threads: [{ lwp: 2, frames: [], complete: true, why: null }] });
    const read = readExtensionOutput(first + second);
    expect("threads" in read && read.threads.map((t) => t.lwp)).toEqual([2]);
  });

  it("bounds what a core's garbage can claim: counts, lengths, and values of the wrong kind", () => {
    const long = "x".repeat(5000);
    const read = readExtensionOutput(
      printed({
        version: "3.11",
        threads: [
          { lwp: "4242", frames: [frame({ function: long, line: -3, firstLine: 1.5, locals: Array.from({ length: 50 }, (_, i) => ({ name: `v${i}`, value: long })) })], complete: true, why: null },
          { lwp: 7, frames: [{ function: "f" }], complete: true, why: null },
          { lwp: 8, frames: [frame({ locals: "many" })], complete: false, why: 7 },
          ...Array.from({ length: 1500 }, (_, i) => ({ lwp: 100 + i, frames: [], complete: true, why: null })),
        ],
        notes: [long, 3],
      }),
    );
    if ("why" in read) throw new Error(read.why);
    expect(read.version).toBeNull();
    expect(read.threads).toHaveLength(999);
    const [garbled, unexplained] = read.threads;
    expect(garbled).toMatchObject({ lwp: null, complete: true, why: null });
    expect(garbled!.frames[0]).toMatchObject({ line: null, firstLine: null });
    expect(garbled!.frames[0]!.function).toHaveLength(1000);
    expect(garbled!.frames[0]!.locals).toHaveLength(20);
    expect(garbled!.frames[0]!.locals!.every((local) => local.value.length === 200)).toBe(true);
    // A frame with no `entry` cannot be placed: its thread is left out, and that is said.
    expect(read.threads.some((thread) => thread.lwp === 7)).toBe(false);
    expect(unexplained).toMatchObject({ lwp: 8, complete: false, why: "not every frame was read" });
    expect(unexplained!.frames[0]!.locals).toBeNull();
    expect(read.notes).toEqual(["x".repeat(1000), "some of the extension's threads were not readable and were left out"]);
  });
});

describe("extensionFor", () => {
  const here = (files: string[]) => (file: string) => files.includes(file);

  it("finds the extension where gdb's auto-load would, for the interpreter or its library", () => {
    const modules = ["/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/python3.11", "/usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so"];
    expect(extensionFor(modules, ["/usr/share/gdb/auto-load", "/usr/lib/debug"], here(["/usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py"]))).toEqual({
      file: "/usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py",
      interpreter: "/usr/bin/python3.11",
    });
    const library = "/usr/lib/debug/opt/py/lib/libpython3.11.so.1.0-gdb.py";
    expect(extensionFor(["/opt/py/bin/python3", "/opt/py/lib/libpython3.11.so.1.0"], ["/usr/share/gdb/auto-load", "/usr/lib/debug"], here([library]))).toEqual({ file: library, interpreter: "/opt/py/lib/libpython3.11.so.1.0" });
  });

  it("says where it looked when the extension is not there, and when no file is an interpreter", () => {
    expect(extensionFor(["/home/u/.pyenv/versions/3.11.7/bin/python3.11"], ["/usr/share/gdb/auto-load"], here([]))).toEqual({
      why: "no CPython gdb extension for the interpreter is here (looked for /usr/share/gdb/auto-load/home/u/.pyenv/versions/3.11.7/bin/python3.11-gdb.py; Debian's python3.X-dbg installs it with the interpreter's debug information)",
    });
    // libstdc++ has an auto-load script of its own: it is not CPython's.
    expect(extensionFor(["/usr/bin/redis-server", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30"], ["/usr/share/gdb/auto-load"], () => true)).toEqual({
      why: "none of the process's files is a CPython interpreter whose gdb extension could be looked for",
    });
  });
});

describe("extensionCommand", () => {
  it("is one short line of gdb's python, running the script with the extension's path as a Python string", () => {
    const command = extensionCommand('/usr/share/gdb/auto-load/opt/my "py"/bin/python3.11-gdb.py', "/opt/dumpdbg/dist/gdb-python-threads.py");
    expect(command).toBe(String.raw`python import runpy; runpy.run_path("/opt/dumpdbg/dist/gdb-python-threads.py", {"extension": "/usr/share/gdb/auto-load/opt/my \"py\"/bin/python3.11-gdb.py"})`);
  });
});
