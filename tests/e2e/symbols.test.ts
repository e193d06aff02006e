/**
 * `--symbols`: debug information where users keep it, matched to the dump's modules by their ids.
 * A fixture shipped as distributions ship programs (stripped of every symbol, its debug information
 * in a build-id tree made with objcopy): without --symbols the culprit has no name or line; with
 * the tree, gdb and LLDB both find it by the build id the core records. A store that holds another
 * build of the program is not used, and says so.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, renameSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Crash } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { buildCore, culpritLine } from "../helpers/cores.js";

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
    const fake = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-wrong-symbols-"));
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
