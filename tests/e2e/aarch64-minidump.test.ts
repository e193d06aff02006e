/**
 * arm64 minidumps, as Breakpad's Linux client writes them on an ARM machine: made at test time
 * from a real aarch64 core (a fixture program crashed under qemu-user; tests/helpers/arm64-minidump.ts)
 * with the signal qemu delivered, and triaged as a user would, with LLDB (the minidump reader
 * off Windows) and the program given for its symbols. Then the same dump with its exception
 * stream, or its memory, taken away: less said, never something else.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";

import type { Crash } from "../../src/report/schema.js";
import { canBuildAarch64 } from "../helpers/aarch64-cores.js";
import { arm64Minidump } from "../helpers/arm64-minidump.js";
import { runCli } from "../helpers/cli.js";
import { culpritLine } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

async function triage(args: string[]): Promise<{ crash: Crash; stdout: string }> {
  const result = await runCli(["triage", ...args, "--json"]);
  expect(result.code, result.stderr).toBe(0);
  return { crash: JSON.parse(result.stdout) as Crash, stdout: result.stdout };
}

describe.skipIf(!canBuildAarch64())("arm64 minidumps written as Breakpad writes them on Linux", () => {
  it("a null struct read is a null dereference at the record's address, in send_to_client at its line", async () => {
    const out = path.join(tempDir("dumpdbg-arm64-md-"), "null-deref.dmp");
    const { exe, signal } = await arm64Minidump("null-deref", out);
    expect(signal).toEqual({ signo: 11, code: 1, address: 0x20n });
    const { crash } = await triage([out, "--exe", exe]);
    expect([crash.kind, crash.signal, crash.signalCode, crash.faultAddress, crash.access]).toEqual(["null-dereference", "SIGSEGV", "SEGV_MAPERR", "0x20", "read"]);
    expect([crash.culprit.function, crash.culprit.line]).toEqual(["send_to_client", culpritLine("null-deref")]);
    expect(crash.signature).toBe("null-dereference | send_to_client | broadcast | main");
  }, 120_000);

  it("a write through NULL: the same from a store", async () => {
    const out = path.join(tempDir("dumpdbg-arm64-md-"), "null-write.dmp");
    const { exe } = await arm64Minidump("null-write", out);
    const { crash } = await triage([out, "--exe", exe]);
    expect([crash.kind, crash.faultAddress, crash.access, crash.culprit.function]).toEqual(["null-dereference", "0x18", "write", "cache_store"]);
  }, 120_000);

  it("without its exception stream: no fault is made up (a dump with no exception is read as taken on request)", async () => {
    const out = path.join(tempDir("dumpdbg-arm64-md-"), "no-exception.dmp");
    const { exe } = await arm64Minidump("null-deref", out, { withoutException: true });
    const { crash } = await triage([out, "--exe", exe]);
    expect(crash.kind).not.toBe("null-dereference");
    expect(crash.faultAddress).toBeNull();
    expect(crash.signal).toBeNull();
  }, 120_000);

  it("without its memory: the signal and address from the exception record, the instruction from the executable, the culprit the one frame left", async () => {
    const out = path.join(tempDir("dumpdbg-arm64-md-"), "no-memory.dmp");
    const { exe } = await arm64Minidump("null-deref", out, { withoutMemory: true });
    const { crash } = await triage([out, "--exe", exe]);
    // The code is read from the executable given; the registers from the thread's context; no stack memory, so one frame.
    expect([crash.kind, crash.signal, crash.faultAddress, crash.culprit.function]).toEqual(["null-dereference", "SIGSEGV", "0x20", "send_to_client"]);
  }, 120_000);
});
