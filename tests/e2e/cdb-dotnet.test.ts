/**
 * .NET dumps through the built CLI with `--debugger cdb`, cdb played by its stand-in
 * (tests/helpers/fake-cdb.mjs) with SOS loaded. The dump files are built byte by byte as Windows
 * writes them (tests/helpers/dump-writers.ts): the CLR's exception 0xe0434352 in the exception
 * stream of the crash, none in the hang dump, and the threads and modules the stand-in's listings
 * name. dumpdbg reads the stop from the file and the managed side from SOS's listings.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Crash } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { buildMinidump, type MinidumpSpec } from "../helpers/dump-writers.js";
import { FAKE_CDB, fakeDump, managedCrashScript, managedDeadlockScript, type FakeDump } from "../helpers/fake-cdb.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

/** The process the transcripts show: pid 0x1a2c, its threads in cdb's order, .NET 8's modules. */
function dotnetProcess(threadIds: number[], exception: MinidumpSpec["exception"]): Buffer {
  const guid = (n: number) => Buffer.alloc(16, n);
  const spec: MinidumpSpec = {
    processId: 0x1a2c,
    version: [10, 0, 19045],
    threads: threadIds.map((id, i) => ({ id, registers: { rip: 0x7ffb1345d0e4n, rsp: 0x14f000n + BigInt(i) * 0x100000n }, stackStart: 0x14f000n + BigInt(i) * 0x100000n, stack: Buffer.alloc(256) })),
    ...(exception ? { exception } : {}),
    modules: [
      { path: "C:\\app\\OrderService.dll", base: 0x6f2a0000n, size: 0x12000, pdbGuid: guid(1), pdbAge: 1 },
      { path: "C:\\Program Files\\dotnet\\shared\\Microsoft.NETCore.App\\8.0.0\\coreclr.dll", base: 0x7ffa1a000000n, size: 0x4e6000, pdbGuid: guid(2), pdbAge: 1 },
      { path: "C:\\Windows\\System32\\KERNELBASE.dll", base: 0x7ffb11a90000n, size: 0x2c8000, pdbGuid: guid(3), pdbAge: 1 },
      { path: "C:\\Windows\\System32\\ntdll.dll", base: 0x7ffb13400000n, size: 0x1f8000, pdbGuid: guid(4), pdbAge: 1 },
    ],
    regions: [],
  };
  return buildMinidump(spec).bytes;
}

function dumpFile(bytes: Buffer): string {
  const file = path.join(tempDir("dumpdbg-dotnet-"), "crash.dmp");
  writeFileSync(file, bytes);
  return file;
}

async function triage(fake: FakeDump): Promise<Crash> {
  const result = await runCli(["triage", fake.dump, "--json", "--debugger", "cdb", "--cdb", FAKE_CDB]);
  expect(result.stderr).not.toMatch(/internal error|at .*\.js:\d+/);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Crash;
}

describe(".NET dumps under cdb with SOS, through the CLI", () => {
  let crashed: FakeDump;
  let hung: FakeDump;

  beforeAll(() => {
    const raised = { thread: 0x1b3c, code: 0xe0434352, flags: 1, address: 0x7ffb11aac319n, parameters: [0xffffffff80004003n, 0n, 0n, 0n, 0x7ffa1a000000n], registers: { rip: 0x7ffb11aac319n, rsp: 0x14ee30n } };
    crashed = fakeDump(managedCrashScript(true), dumpFile(dotnetProcess([0x1b3c, 0x1c08, 0x1d44, 0x2a10, 0x2d40], raised)));
    hung = fakeDump(managedDeadlockScript(), dumpFile(dotnetProcess([0x1b3c, 0x1c08, 0x1d44, 0x2a10, 0x2a9c, 0x2d40, 0x3e54], undefined)));
  });

  it("a NullReferenceException is an uncaught exception named by its type and message, its culprit the program's method and line", async () => {
    const crash = await triage(crashed);
    expect(crash).toMatchObject({
      kind: "uncaught-exception",
      signal: "CLR exception (.NET)",
      signalCode: "0xe0434352",
      message: "System.NullReferenceException: Object reference not set to an instance of an object.",
      thread: { id: 0, lwp: 0x1b3c },
    });
    // KERNELBASE, the CLR and JIT-compiled code without symbols are what cdb's own stack shows.
    expect(crash.culprit).toEqual({ function: "OrderService.Pricing.Discount", file: "C:\\app\\src\\Pricing.cs", line: 27, frame: 0, module: "OrderService", language: null });
    expect(crash.signature).toBe("uncaught-exception | OrderService.Pricing.Discount | OrderService.Program.Main");
    // The managed threads and the heap's statistics are read too, as evidence for the analysis and the chat.
    expect(crashed.lines()).toEqual(expect.arrayContaining(["!threads", "!pe", "!clrstack -a", "!dumpheap -stat"]));
    expect(crashed.lines()).not.toContain("!syncblk");
  });

  it("a hang whose two threads each wait in Monitor.Enter for the monitor the other holds is a deadlock over those two objects", async () => {
    const crash = await triage(hung);
    expect(crash.kind).toBe("deadlock");
    expect(crash.signal).toBeNull();
    expect(crash.deadlock?.cycle).toEqual([
      { thread: 5, function: "Bank.Ledger.Transfer", file: "C:\\bank\\Ledger.cs", line: 21, lock: "0x1f2a5001118", lockName: "Bank.Account to", heldByThread: 6 },
      { thread: 6, function: "Bank.Ledger.Transfer", file: "C:\\bank\\Ledger.cs", line: 21, lock: "0x1f2a5001100", lockName: "Bank.Account to", heldByThread: 5 },
    ]);
    expect(crash.thread).toMatchObject({ id: 5, lwp: 0x2d40 });
    expect(crash.culprit).toMatchObject({ function: "Bank.Ledger.Transfer", file: "C:\\bank\\Ledger.cs", line: 21 });
    expect(crash.signature).toBe("deadlock | Bank.Ledger.Transfer | Bank.Ledger.Transfer");
    expect(hung.lines()).toEqual(expect.arrayContaining(["!threads", "!syncblk", "~*e !clrstack -a", "!dumpheap -stat"]));
  });

  it("a native hang dump under cdb asks SOS nothing: without a CLR, the managed side is the module list", async () => {
    const script = managedDeadlockScript();
    script.commands = { ...script.commands, lm: "start             end                 module name\n00007ffb`13400000 00007ffb`135f8000   ntdll      (pdb symbols)          c:\\symbols\\ntdll.pdb\\1EB5D4F2A0B34C82B1E1C9F0A6D7E3F21\\ntdll.pdb" };
    const native = fakeDump(script, dumpFile(dotnetProcess([0x1b3c, 0x1c08, 0x1d44, 0x2a10, 0x2a9c, 0x2d40, 0x3e54], undefined)));
    const crash = await triage(native);
    expect(crash.kind).not.toBe("deadlock");
    expect(native.lines().filter((line) => line.startsWith("!") || /^~\*e/.test(line))).toEqual([]);
  });
});

describe("the offline analysis of a .NET crash under cdb", () => {
  it("concludes from the runtime's exception record and the managed stack, not from C++ throw machinery", async () => {
    const raised = { thread: 0x1b3c, code: 0xe0434352, flags: 1, address: 0x7ffb11aac319n, parameters: [0xffffffff80004003n, 0n, 0n, 0n, 0x7ffa1a000000n], registers: { rip: 0x7ffb11aac319n, rsp: 0x14ee30n } };
    const crashed = fakeDump(managedCrashScript(true), dumpFile(dotnetProcess([0x1b3c, 0x1c08, 0x1d44, 0x2a10, 0x2d40], raised)));
    const out = tempDir("dumpdbg-dotnet-analysis-");
    const run = await runCli(["analyze", crashed.dump, "--debugger", "cdb", "--cdb", FAKE_CDB, "--provider", "offline", "--json", "--out", path.join(out, "reports"), "--sessions-dir", path.join(out, "sessions")]);
    expect(run.stderr).not.toMatch(/internal error/);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.session.debugger).toMatch(/^Microsoft \(R\) Windows Debugger/);
    expect(report.hypotheses).toHaveLength(1);
    expect(report.hypotheses[0]).toMatchObject({ status: "confirmed" });
    expect(report.conclusion.summary).toMatch(/^`OrderService\.Pricing\.Discount` .*threw System\.NullReferenceException \("Object reference not set to an instance of an object\."\) \(E\d+\).*no catch on the thread's managed stack handled it/);
    expect(report.conclusion.summary).not.toMatch(/__cxa_throw|std::terminate/);
    expect(report.conclusion.recommendations[0]).toMatch(/Find the reference that is null/);
  }, 120_000);
});
