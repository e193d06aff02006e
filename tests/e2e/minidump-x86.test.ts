/**
 * A 32-bit Windows minidump whose exception record carries garbage above the 32-bit address and
 * parameters (writers copy a 32-bit ULONG_PTR into a 64-bit field and leave the upper half as it
 * was): the address is the low 32 bits, so a write at 0x45 is a NULL dereference, and a read at
 * 0x41414141 a read through a pointer of text bytes. No 32-bit Wine runs here (Debian's wine64 has
 * no i386 side), so the dumps are written: an x86 CONTEXT, a stack, the program's module; LLDB reads them.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readException } from "../../src/analyzers/windows.js";
import { DumpFile, readMinidump } from "../../src/debuggers/dumpfile/index.js";
import type { Crash } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { buildMinidump } from "../helpers/dump-writers.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const dir = tempDir("dumpdbg-x86-");
const REGISTERS = { rip: 0x401234n, rsp: 0x19ff00n, rbp: 0x19ff40n, rax: 0n, rcx: 0x45n };
const dump = path.join(dir, "billing.dmp");
const textRead = path.join(dir, "billing-text-read.dmp");

/** billing.exe's 32-bit dump, stopped by `exception` with `registers`. */
function billingDump(registers: typeof REGISTERS, exception: { address: bigint; parameters: bigint[] }): Buffer {
  return buildMinidump({
    arch: "x86",
    processId: 3120,
    version: [10, 0, 19045],
    threads: [{ id: 5000, name: "main", registers, stackStart: 0x19fe00n, stack: Buffer.alloc(0x400) }],
    exception: { thread: 5000, code: 0xc0000005, flags: 0, ...exception, registers },
    modules: [{ path: "C:\\app\\billing.exe", base: 0x400000n, size: 0x20000, pdbGuid: Buffer.alloc(16, 7), pdbAge: 1 }],
    regions: [
      { base: 0x400000n, size: 0x1000n, protect: 0x02, state: 0x1000, type: 0x1000000 },
      { base: 0x401000n, size: 0x10000n, protect: 0x20, state: 0x1000, type: 0x1000000 },
      { base: 0x19f000n, size: 0x1000n, protect: 0x04, state: 0x1000, type: 0x20000 },
    ],
  }).bytes;
}
// EXCEPTION_ACCESS_VIOLATION writing 0x45, the upper halves as a writer left them.
writeFileSync(dump, billingDump(REGISTERS, { address: 0xfffffffe00401234n, parameters: [0xdead000000000001n, 0xffffffff00000045n] }));
// Reading through %eax = 0x41414141: "AAAA" where a record's pointer was, input that overwrote it.
writeFileSync(textRead, billingDump({ ...REGISTERS, rax: 0x41414141n, rcx: 0n }, { address: 0xfffffffe00401234n, parameters: [0xdead000000000000n, 0xffffffff41414141n] }));

describe("a 32-bit Windows minidump", () => {
  it("reads the exception's address and parameters as the low 32 bits", () => {
    const file = DumpFile.open(dump);
    try {
      const facts = readMinidump(file);
      expect(facts.platform).toMatchObject({ os: "windows", arch: "x86", pointerSize: 4 });
      expect(facts.stopReason).toMatchObject({ type: "exception", code: "0xc0000005", address: "0x401234", parameters: ["0x1", "0x45"] });
      expect(readException(facts.stopReason as never, { stackExhausted: false, instruction: null })).toMatchObject({ kind: "null-dereference", access: "write", faultAddress: "0x45" });
    } finally {
      file.close();
    }
  });

  it("is a NULL write at 0x45 through LLDB, not an invalid access far away", async () => {
    const run = await runCli(["triage", dump, "--json", "--debugger", "lldb"]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout) as Crash;
    expect(crash).toMatchObject({ kind: "null-dereference", signal: "EXCEPTION_ACCESS_VIOLATION", faultAddress: "0x45", access: "write", origin: { type: "fault" } });
    expect(crash.exploitability?.rating).toBe("probably-exploitable");
  }, 60_000);

  it("rates a read through a pointer of text bytes exploitable: a 32-bit pointer is four bytes", async () => {
    const run = await runCli(["triage", textRead, "--json", "--debugger", "lldb"]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout) as Crash;
    expect(crash).toMatchObject({ kind: "invalid-memory-access", faultAddress: "0x41414141", access: "read", exploitability: { rating: "exploitable" } });
    expect(crash.exploitability?.reasons[0]).toBe('the bad pointer holds the bytes "AAAA": input the program read controls it');
  }, 60_000);
});
