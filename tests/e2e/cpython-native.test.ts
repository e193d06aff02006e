/**
 * Python programs that die in native code, read with their Python frames: a C extension's NULL
 * read, failed assert and Py_FatalError, os.abort(), and a recursion that runs the C stack out, each
 * blamed on the program's own code (its C function at its line, or its Python line), on every 3.11
 * interpreter here. Run with -X faulthandler, whose handler catches the fault, prints the Python
 * traceback and raises the signal again, the verdict is the same: a fault caught by a handler is the fault.
 */
import { describe, expect, it } from "vitest";

import type { Crash } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { hasGdb, pythonInterpreters, RECORD_READER } from "../helpers/cpython.js";
import { CATEGORY_DEPTH, extensionCore, hasGcc, JOB_WORKER, LEDGER_CHECK, LEDGER_DESCRIBE, LEDGER_IMPORT, LEDGER_SETUP, pythonCore } from "../helpers/cpython-native.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();
const interpreters = pythonInterpreters();

if (interpreters.length === 0) console.warn("no CPython 3.11 here (/usr/bin/python3.11 or ~/.pyenv/versions/3.11.*): no Python process crashes in native code");

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** `dumpdbg triage` of a core as JSON and as text, both succeeding. */
async function triaged(core: string, python: string, extra: string[] = []): Promise<{ crash: Crash; text: string }> {
  const json = await runCli(["triage", core, "--exe", python, "--json", ...extra]);
  expect(json.code, json.stderr).toBe(0);
  const text = await runCli(["triage", core, "--exe", python, ...extra]);
  expect(text.code, text.stderr).toBe(0);
  return { crash: JSON.parse(json.stdout) as Crash, text: text.stdout };
}

describe.skipIf(!hasGdb() || !hasGcc() || interpreters.length === 0)("a C extension called from Python", () => {
  it.each(interpreters)("on $name: a NULL read blames the extension's C function at its line, with the Python callers above it", async ({ python }) => {
    const dumped = await extensionCore(tempDir("dumpdbg-pynative-"), python, LEDGER_IMPORT);
    const { crash, text } = await triaged(dumped.core, python);
    expect([crash.kind, crash.access]).toEqual(["null-dereference", "read"]);
    expect(crash.culprit).toMatchObject({ function: "record_width", file: dumped.extension, line: dumped.extensionLines["CULPRIT width"], language: "c" });
    expect(crash.signature).toBe("null-dereference | record_width | records_width | record_size");
    expect(crash.runtime).toMatchObject({ name: "cpython" });
    const [app, ext] = [escaped(dumped.program), escaped(dumped.extension)];
    expect(text).toMatch(
      new RegExp(
        `#\\d+ record_width at ${ext}:${dumped.extensionLines["CULPRIT width"]}\\n +#\\d+ records_width at ${ext}:\\d+\\n(?: +#\\d+ .*\\n)*? +#\\d+ record_size at ${app}:${dumped.sourceLines["CULPRIT record_size"]}\\n +#\\d+ import_ledger at ${app}:${dumped.sourceLines["CULPRIT import_ledger"]}\\n +#\\d+ <module> at ${app}:\\d+`,
      ),
    );
  });

  it.each(interpreters)("on $name: a NULL read after the extension set an error says the Python exception it was raising", async ({ python }) => {
    const dumped = await extensionCore(tempDir("dumpdbg-pynative-"), python, LEDGER_DESCRIBE);
    const { crash } = await triaged(dumped.core, python);
    expect(crash.kind).toBe("null-dereference");
    expect(crash.culprit).toMatchObject({ function: "records_describe", file: dumped.extension, line: dumped.extensionLines["CULPRIT describe"], language: "c" });
    expect(crash.message).toBe("while raising the Python exception LookupError: no layout for record kind 'refund'");
  });

  it.each(interpreters)("on $name: a failed assert is an assertion failure at the assert's line, its text the message, the Python callers in the stack", async ({ python }) => {
    const dumped = await extensionCore(tempDir("dumpdbg-pynative-"), python, LEDGER_CHECK);
    const { crash, text } = await triaged(dumped.core, python);
    expect(crash.kind).toBe("assertion-failure");
    expect(crash.message).toContain("Assertion `layout != NULL && \"every record kind has a layout\"' failed");
    expect(crash.culprit).toMatchObject({ function: "checked_width", file: dumped.extension, line: dumped.extensionLines["CULPRIT validate"], language: "c" });
    expect(crash.signature).toBe("assertion-failure | checked_width | records_validate | check_kind");
    const app = escaped(dumped.program);
    expect(text).toMatch(new RegExp(`#\\d+ check_kind at ${app}:${dumped.sourceLines["CULPRIT check_kind"]}\\n +#\\d+ check_export at ${app}:${dumped.sourceLines["CULPRIT check_export"]}`));
  });

  it.each(interpreters)("on $name: Py_FatalError is an abort at the extension's call, its message Python's own", async ({ python }) => {
    const dumped = await extensionCore(tempDir("dumpdbg-pynative-"), python, LEDGER_SETUP);
    const { crash } = await triaged(dumped.core, python);
    expect(crash.kind).toBe("abort");
    expect(crash.message).toBe("Fatal Python error: records_define: record table full");
    expect(crash.culprit).toMatchObject({ function: "records_define", file: dumped.extension, line: dumped.extensionLines["CULPRIT define"], language: "c" });
    expect(crash.signature).toBe("abort | records_define | register | <module>");
  });
});

describe.skipIf(!hasGdb() || !hasGcc() || !interpreters.some(({ python }) => python === "/usr/bin/python3.11"))("Py_FatalError without the interpreter's debug information", () => {
  it("reads the message from the extension's code that passed it, where gdb cannot read the interpreter's arguments", async () => {
    const python = "/usr/bin/python3.11";
    const dumped = await extensionCore(tempDir("dumpdbg-pynative-"), python, LEDGER_SETUP);
    // Debian's interpreter is stripped: with its python3.11-dbg out of gdb's sight, no frame of it has arguments.
    const { crash } = await triaged(dumped.core, python, ["--debug-file-directory", tempDir("dumpdbg-no-debug-")]);
    expect(crash.kind).toBe("abort");
    expect(crash.message).toBe("Fatal Python error: records_define: record table full");
    expect(crash.culprit).toMatchObject({ function: "records_define", line: dumped.extensionLines["CULPRIT define"], language: "c" });
  });
});

describe.skipIf(!hasGdb() || interpreters.length === 0)("Python code that aborts or runs the C stack out", () => {
  it.each(interpreters)("on $name: os.abort() blames the Python line that called it", async ({ python }) => {
    const dumped = await pythonCore(tempDir("dumpdbg-pynative-"), python, JOB_WORKER);
    const { crash } = await triaged(dumped.core, python);
    expect(crash.kind).toBe("abort");
    expect(crash.culprit).toMatchObject({ function: "take_job", file: dumped.program, line: dumped.sourceLines["CULPRIT take_job"], language: "python" });
    expect(crash.signature).toBe("abort | take_job | work | <module>");
  });

  it.each(interpreters)("on $name: a recursion through lru_cache's C code is a stack overflow in the recursing function, its stack bounded", async ({ python }) => {
    const dumped = await pythonCore(tempDir("dumpdbg-pynative-"), python, CATEGORY_DEPTH);
    const { crash, text } = await triaged(dumped.core, python);
    expect(crash.kind).toBe("stack-overflow");
    expect(crash.culprit).toMatchObject({ function: "depth", file: dumped.program, line: dumped.sourceLines["CULPRIT depth"], language: "python" });
    expect(crash.signature).toBe("stack-overflow | depth | depth | depth");
    expect(text).toMatch(/Recursion: .* repeats about \d+ times/);
    const shown = Number(/Stack \((\d+) frames/.exec(text)?.[1]);
    expect(shown).toBeGreaterThan(0);
    expect(shown).toBeLessThanOrEqual(100);
  });
});

describe.skipIf(!hasGdb() || interpreters.length === 0)("the same crashes under -X faulthandler, whose handler catches the fault and raises it again", () => {
  it.each(interpreters)("on $name: ctypes' NULL read keeps its verdict and its Python culprit", async ({ python }) => {
    const plain = await pythonCore(tempDir("dumpdbg-pynative-"), python, RECORD_READER);
    const handled = await pythonCore(tempDir("dumpdbg-pynative-fh-"), python, RECORD_READER, { faulthandler: true });
    const [before, after] = [(await triaged(plain.core, python)).crash, (await triaged(handled.core, python)).crash];
    expect(after.origin?.type).toBe("fault");
    expect([after.kind, after.access, after.signature]).toEqual([before.kind, before.access, before.signature]);
    expect(after.culprit).toMatchObject({ function: "parse_record", file: handled.program, line: handled.sourceLines.CULPRIT, language: "python" });
  });

  it.each(interpreters)("on $name: the recursion is still a stack overflow in the recursing function", async ({ python }) => {
    const dumped = await pythonCore(tempDir("dumpdbg-pynative-fh-"), python, CATEGORY_DEPTH, { faulthandler: true });
    const { crash } = await triaged(dumped.core, python);
    expect(crash.origin?.type).toBe("fault");
    expect(crash.kind).toBe("stack-overflow");
    expect(crash.culprit).toMatchObject({ function: "depth", file: dumped.program, line: dumped.sourceLines["CULPRIT depth"], language: "python" });
    expect(crash.signature).toBe("stack-overflow | depth | depth | depth");
  });
});
