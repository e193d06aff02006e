/**
 * `--symbols`: debug information where users keep it, matched to the dump's modules by their ids.
 * A fixture shipped as distributions ship programs (stripped of every symbol, its debug information
 * in a build-id tree made with objcopy): without --symbols the culprit has no name or line; with
 * the tree, gdb and LLDB both find it by the build id the core records. A store that holds another
 * build of the program is not used, and says so.
 */
import { copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Crash } from "../../src/report/schema.js";
import { breakpadMinidumpFromCore } from "../helpers/breakpad.js";
import { writeBreakpadSymbols } from "../helpers/breakpad-sym.js";
import { runCli } from "../helpers/cli.js";
import { buildCore, culpritLine } from "../helpers/cores.js";
import { breakpadId } from "../../src/debuggers/symbols.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

async function triage(args: string[]): Promise<{ crash: Crash; stderr: string }> {
  const result = await runCli(["triage", ...args, "--json"]);
  expect(result.code, result.stderr).toBe(0);
  return { crash: JSON.parse(result.stdout) as Crash, stderr: result.stderr };
}

describe("a stripped program's debug information in a build-id tree", () => {
  it.each(["gdb", "lldb"])("is found by the core's build id with %s", async (debuggerName) => {
    const built = await buildCore("null-deref", { splitDebug: true });
    if (!built.symbols) throw new Error("no symbols tree");
    const without = await triage([built.core, "--debugger", debuggerName]);
    expect(without.crash.kind).toBe("null-dereference");
    expect(without.crash.culprit.line).toBeNull();
    expect(without.crash.culprit.function).not.toBe("send_to_client");

    const withSymbols = await triage([built.core, "--debugger", debuggerName, "--symbols", built.symbols]);
    expect(withSymbols.crash.culprit).toMatchObject({ function: "send_to_client", line: culpritLine("null-deref") });
    expect(withSymbols.crash.signature).toBe("null-dereference | send_to_client | broadcast | main");
  }, 120_000);

  it("is also taken from DUMPDBG_SYMBOLS", async () => {
    const built = await buildCore("null-deref", { splitDebug: true });
    const result = await runCli(["triage", built.core, "--json"], { env: { DUMPDBG_SYMBOLS: built.symbols } });
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as Crash).culprit.function).toBe("send_to_client");
  }, 120_000);

  it("is not used for another build of the program, whatever its file is called", async () => {
    const built = await buildCore("null-deref", { splitDebug: true });
    const other = await buildCore("null-deref", { splitDebug: true, variant: "another-build" });
    // The other build's tree, its debug file renamed to this build's id: the name matches, the content does not.
    const fake = tempDir("dumpdbg-wrong-symbols-");
    cpSync(other.symbols ?? "", fake, { recursive: true });
    const mine = readdirSync(path.join(built.symbols ?? "", ".build-id"))[0] ?? "";
    const theirs = readdirSync(path.join(fake, ".build-id"))[0] ?? "";
    const theirFile = readdirSync(path.join(fake, ".build-id", theirs))[0] ?? "";
    const myFile = readdirSync(path.join(built.symbols ?? "", ".build-id", mine))[0] ?? "";
    mkdirSync(path.join(fake, ".build-id", mine), { recursive: true });
    renameSync(path.join(fake, ".build-id", theirs, theirFile), path.join(fake, ".build-id", mine, myFile));
    const { crash } = await triage([built.core, "--symbols", fake]);
    // gdb checks the debug file's build id against the program's: no names from the wrong build.
    expect(crash.culprit.function).not.toBe("send_to_client");
    expect(crash.culprit.line).toBeNull();
  }, 120_000);

  it("refuses a --symbols path that is not a folder, with a warning and the analysis still done", async () => {
    const built = await buildCore("null-deref");
    const result = await runCli(["triage", built.core, "--symbols", "/nonexistent/symbols"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/--symbols \/nonexistent\/symbols is not a folder/);
  }, 120_000);
});

describe("a Breakpad symbol store", () => {
  /**
   * What a Crashpad user holds: a minidump of a stripped program and, apart, the program's .sym files
   * (written here from its DWARF, since Debian has no dump_syms). dumpdbg adds the .sym whose MODULE
   * id is the module's id in the dump to LLDB.
   */
  async function crashpadCase() {
    const built = await buildCore("null-deref");
    const dir = tempDir("dumpdbg-breakpad-store-");
    const store = path.join(dir, "symbols");
    const written = await writeBreakpadSymbols(built.exe, store);
    const stripped = path.join(dir, "null-deref");
    copyFileSync(built.exe, stripped);
    execFileSync("strip", ["--strip-all", stripped]);
    const dump = path.join(dir, "crash.dmp");
    await breakpadMinidumpFromCore(built.core, built.exe, dump);
    return { built, dir, store, written, stripped, dump };
  }

  it("names the stripped program's functions and lines from the .sym filed under the module's id", async () => {
    const { store, stripped, dump, written } = await crashpadCase();
    const without = await triage([dump, "--exe", stripped]);
    expect(without.crash.culprit.line).toBeNull();
    const withStore = await triage([dump, "--exe", stripped, "--symbols", store]);
    expect(withStore.crash.kind).toBe("null-dereference");
    expect(withStore.crash.culprit).toMatchObject({ function: "send_to_client", line: culpritLine("null-deref") });
    expect(withStore.crash.signature).toBe("null-dereference | send_to_client | broadcast | main");
    // The id the store files it under is the one dumpdbg computes from the module's build id in the dump.
    expect(written.id).toMatch(/^[0-9A-F]{33}$/);
  }, 180_000);

  it("names gdb's frames from the .sym by dumpdbg itself, though gdb cannot read one", async () => {
    const { built, store, stripped } = await crashpadCase();
    const without = await triage([built.core, "--exe", stripped, "--debugger", "gdb"]);
    expect(without.crash.culprit.function).toBeNull();
    const named = await triage([built.core, "--exe", stripped, "--debugger", "gdb", "--symbols", store]);
    expect(named.crash.kind).toBe("null-dereference");
    expect(named.crash.culprit).toMatchObject({ function: "send_to_client", line: culpritLine("null-deref") });
    expect(named.crash.culprit.file).toMatch(/null-deref\.c$/);
    expect(named.crash.signature).toBe("null-dereference | send_to_client | broadcast | main");
    expect(named.stderr).toMatch(/gdb cannot read Breakpad \.sym files or PDBs: dumpdbg names frames from the \.sym files itself/);
  }, 180_000);

  it("does not use a .sym of another build filed under this build's id, and says so", async () => {
    const { store, stripped, dump, written } = await crashpadCase();
    // A .sym whose MODULE line names another build, put where this build's would be.
    const other = await buildCore("null-deref", { variant: "another-build" });
    const otherStore = tempDir("dumpdbg-other-store-");
    const otherWritten = await writeBreakpadSymbols(other.exe, otherStore);
    expect(otherWritten.id).not.toBe(written.id);
    writeFileSync(written.file, readFileSync(otherWritten.file));
    const result = await triage([dump, "--exe", stripped, "--symbols", store]);
    expect(result.crash.culprit.line).toBeNull();
    expect(result.stderr).toMatch(/has symbols for null-deref, but not for the build in this dump \(id [0-9A-F]{33}\)/);
  }, 180_000);

  it("computes the Breakpad id of an ELF module from its build id as Breakpad does", () => {
    // GUID fields byte-swapped from the build id's first 16 bytes, then age 0.
    expect(breakpadId({ path: "/usr/bin/prog", start: null, end: null, buildId: "2492a794c85c71d1efee567adb4ce36ca947ed98", debugFile: null, codeId: null, symbolsLoaded: null })).toBe("94A792245CC8D171EFEE567ADB4CE36C0");
    // A PE's id is the dump's CodeView GUID and age as they are.
    expect(breakpadId({ path: "C:\\app\\server.exe", start: null, end: null, buildId: "3E1C0A9B5D2F4E6A8B7C9D0E1F2A3B4C1", debugFile: null, codeId: null, symbolsLoaded: null })).toBe("3E1C0A9B5D2F4E6A8B7C9D0E1F2A3B4C1");
    expect(breakpadId({ path: "/usr/bin/prog", start: null, end: null, buildId: null, debugFile: null, codeId: null, symbolsLoaded: null })).toBeNull();
  });
});
