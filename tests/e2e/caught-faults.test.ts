/**
 * A fault caught by a crash handler is the fault: a program's own SIGSEGV handler that writes a
 * report and aborts, and the JVM's, which writes hs_err and aborts. The dump's signal is the
 * handler's SIGABRT; the crash is the SIGSEGV under `<signal handler called>`, with its code and
 * address from the record the kernel handed the handler, and the origin says who caught it.
 * Real programs, run under gdb with their SIGSEGV passed to them, the core written at the abort.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

import type { Crash } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { coreAtAbort, hasJava } from "../helpers/jvm.js";
import { headerReaderCrash } from "../helpers/jvm-programs.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

/** The job runner whose crash handler aborts: the same program the arm64 tests build for aarch64. */
const JOB_RUNNER = readFileSync(new URL("../fixtures/aarch64/caught-segv.c", import.meta.url), "utf8");

async function triage(args: string[]): Promise<Crash> {
  const result = await runCli(["triage", ...args, "--json"]);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Crash;
}

describe("a program's own crash handler that aborts on the SIGSEGV it caught", () => {
  let exe = "";
  let core = "";
  beforeAll(() => {
    const dir = tempDir("dumpdbg-caught-");
    const source = path.join(dir, "job-runner.c");
    writeFileSync(source, JOB_RUNNER);
    exe = path.join(dir, "job-runner");
    execFileSync("gcc", ["-g", "-O0", "-o", exe, source]);
    core = coreAtAbort(path.join(dir, "job-runner.core"), [exe]);
  });

  it("is the SIGSEGV it caught: its kind, code, address, access and culprit, caught by the handler that aborted", async () => {
    const crash = await triage([core, "--exe", exe]);
    expect([crash.kind, crash.signal, crash.signalCode, crash.faultAddress, crash.access]).toEqual(["null-dereference", "SIGSEGV", "SEGV_MAPERR", "0x8", "read"]);
    expect([crash.culprit.function, crash.culprit.line]).toEqual(["owner_name_length", JOB_RUNNER.split("\n").findIndex((line) => line.includes("// CULPRIT")) + 1]);
    expect(crash.origin?.type).toBe("fault");
    expect(crash.origin?.evidence).toMatch(/raised from inside a signal handler \(crash_handler in job-runner\), which then aborted: .* says SIGSEGV SEGV_MAPERR at 0x8$/);
    expect(crash.message).toMatch(/^crash_handler \(job-runner\) caught it in its signal handler and then aborted, as a crash handler does; the SIGSEGV it was handling arrived in owner_name_length: reading 8 bytes at 0x8 /);
    expect(crash.exploitability?.rating).toBe("probably-not-exploitable");
  });

  it("reads the same through LLDB, whose signal frame is glibc's __restore_rt", async () => {
    const crash = await triage([core, "--exe", exe, "--debugger", "lldb"]);
    expect([crash.kind, crash.signal, crash.signalCode, crash.faultAddress, crash.access, crash.culprit.function]).toEqual(["null-dereference", "SIGSEGV", "SEGV_MAPERR", "0x8", "read", "owner_name_length"]);
    expect(crash.origin?.evidence).toMatch(/\(crash_handler in job-runner\), which then aborted/);
  });
});

describe.skipIf(!hasJava)("the JVM's handler, which writes hs_err and aborts on the SIGSEGV it caught", () => {
  let core = "";
  let java = "";
  beforeAll(() => {
    const crash = headerReaderCrash(tempDir("dumpdbg-caught-jvm-"), { core: true });
    ({ java } = crash);
    core = crash.core!;
  });

  it("is the SIGSEGV reading 0x8 in Unsafe_GetLong, caught by JVM_handle_linux_signal, not the VM's abort", async () => {
    const crash = await triage([core, "--exe", java]);
    expect([crash.kind, crash.signal, crash.signalCode, crash.faultAddress, crash.access]).toEqual(["null-dereference", "SIGSEGV", "SEGV_MAPERR", "0x8", "read"]);
    expect(crash.origin?.type).toBe("fault");
    expect(crash.origin?.evidence).toMatch(/raised from inside a signal handler \(JVM_handle_linux_signal in libjvm\.so\), which then aborted/);
    expect(crash.message).toMatch(/the SIGSEGV it was handling arrived in Unsafe_GetLong: reading 8 bytes at 0x8/);
    expect(crash.signature).not.toMatch(/os::abort|VMError/);
  });
});
