/**
 * arm64 cores read on this x86-64 machine, as a user would: the fixture programs built for aarch64,
 * crashed under qemu-user, and triaged by the CLI with the debugger it chooses (gdb-multiarch, as
 * the plain gdb reads no aarch64 registers) and with LLDB. Kind, culprit and line are the x86-64
 * tests' where the architecture does not change what happened; `__builtin_trap` is `brk #0x3e8` on
 * arm64, a breakpoint trap, where x86-64's `ud2` is an illegal instruction. qemu's cores carry no
 * NT_SIGINFO and no NT_FILE: the fault address comes from the decoded instruction, and without the
 * target's libraries (`--sysroot`) the culprit from the stack scan.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

import type { Crash, CrashKind } from "../../src/report/schema.js";
import { AARCH64_SYSROOT, buildAarch64Core, canBuildAarch64 } from "../helpers/aarch64-cores.js";
import { runCli } from "../helpers/cli.js";
import { culpritLine } from "../helpers/cores.js";

interface Expected {
  kind: CrashKind;
  culprit: string;
  /** Without the target's libraries the abort family reads as an abort: less specific, never different. */
  bare?: CrashKind;
  access?: "read" | "write" | "execute";
  faultAddress?: string;
  message?: RegExp;
  /** The line where it is not the `// CULPRIT` marker's (the stack protector's check runs at the function's end). */
  line?: number;
}

const EXPECTED: Record<string, Expected> = {
  "null-deref": { kind: "null-dereference", culprit: "send_to_client", access: "read", faultAddress: "0x20" },
  "null-write": { kind: "null-dereference", culprit: "cache_store", access: "write", faultAddress: "0x18" },
  "wild-pointer": { kind: "invalid-memory-access", culprit: "buffer_length", access: "read" },
  "bad-jump": { kind: "bad-jump", culprit: "dispatch_command" },
  abort: { kind: "abort", culprit: "validate_config" },
  assert: { kind: "assertion-failure", culprit: "ring_buffer_write", message: /Assertion `ring->write_index \+ length <= sizeof ring->data' failed/ },
  "double-free": { kind: "double-free", bare: "abort", culprit: "connection_destroy", message: /double free detected/ },
  "heap-corruption": { kind: "heap-corruption", bare: "abort", culprit: "copy_request_body", message: /^malloc\(\): corrupted top size$/ },
  "stack-smash": { kind: "stack-buffer-overflow", bare: "abort", culprit: "parse_login", message: /stack smashing detected/, line: 19 },
  fortify: { kind: "fortify-failure", bare: "abort", culprit: "set_greeting", message: /buffer overflow detected/ },
  "uncaught-exception": { kind: "uncaught-exception", culprit: "read_field" },
  // __builtin_trap: `brk #0x3e8` on arm64.
  "illegal-instruction": { kind: "breakpoint", culprit: "decode_message" },
};

async function triageJson(args: string[]): Promise<{ crash: Crash; stderr: string }> {
  const result = await runCli(["triage", ...args, "--json"]);
  expect(result.code, result.stderr).toBe(0);
  return { crash: JSON.parse(result.stdout) as Crash, stderr: result.stderr };
}

describe.skipIf(!canBuildAarch64())("arm64 cores under qemu", () => {
  for (const [name, expected] of Object.entries(EXPECTED)) {
    const line = expected.line ?? culpritLine(name);
    for (const debuggerChoice of ["auto", "lldb"] as const) {
      it(`${name} with ${debuggerChoice === "auto" ? "the debugger chosen" : "LLDB"} and the target's libraries: ${expected.kind} in ${expected.culprit}:${line}`, async () => {
        const { exe, core } = await buildAarch64Core(name);
        const { crash } = await triageJson([core, "--exe", exe, "--sysroot", AARCH64_SYSROOT, "--debugger", debuggerChoice]);
        expect(crash.kind).toBe(expected.kind);
        expect(crash.culprit.function).toBe(expected.culprit);
        expect(crash.culprit.line).toBe(line);
        if (expected.access) expect(crash.access).toBe(expected.access);
        if (expected.faultAddress) expect(crash.faultAddress).toBe(expected.faultAddress);
        if (expected.message) expect(crash.message ?? "").toMatch(expected.message);
      }, 120_000);
    }
    it(`${name} without the target's libraries: the culprit from the program's own frames`, async () => {
      const { exe, core } = await buildAarch64Core(name);
      const { crash } = await triageJson([core, "--exe", exe]);
      expect(crash.kind).toBe(expected.bare ?? expected.kind);
      expect(crash.culprit.function).toBe(expected.culprit);
    }, 120_000);
  }

  it("chooses gdb-multiarch over the host's gdb, and the null struct read is a null dereference through x0", async () => {
    const { exe, core } = await buildAarch64Core("null-deref");
    const result = await runCli(["triage", core, "--exe", exe]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/null pointer dereference/);
    expect(result.stdout).toMatch(/reading 4 bytes at 0x20 through `\[x0, #0x20\]` = x0 \(0x0\) \+ 0x20: x0 was NULL/);
    expect(result.stdout).toMatch(/could not load 2 libraries the process had: \/lib\/libc\.so\.6/);
  }, 120_000);

  it("without debug information, the offline analysis names the register the faulting load read through and its 0", async () => {
    const { exe, core } = await buildAarch64Core("stripped-lookup");
    const work = path.dirname(core);
    const result = await runCli(["analyze", core, "--exe", exe, "--sysroot", AARCH64_SYSROOT, "--issue", "it crashed", "--provider", "offline", "--json", "--out", path.join(work, "reports"), "--sessions-dir", path.join(work, "sessions")]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { crash: Crash; hypotheses: { statement: string; status: string }[]; conclusion: { summary: string } };
    expect(report.crash).toMatchObject({ kind: "null-dereference", culprit: { function: "route_priority" }, faultAddress: "0xc" });
    // The load is `ldr w0, [x0, #12]` at -O1: the register, the operand and the zero, in arm64's own syntax.
    const held = report.hypotheses.find((h) => /NULL pointer held in x\d+/.test(h.statement));
    expect(held, JSON.stringify(report.hypotheses)).toMatchObject({ status: "confirmed" });
    expect(report.conclusion.summary).toMatch(/read \[x0, #12\] with x0 = 0/);
  }, 180_000);

  it("an uncaught C++ exception names its thrown type, read from __cxa_throw's argument in its caller's code", async () => {
    const { exe, core } = await buildAarch64Core("uncaught-exception");
    const { crash } = await triageJson([core, "--exe", exe, "--sysroot", AARCH64_SYSROOT]);
    expect(crash.kind).toBe("uncaught-exception");
    expect(crash.message).toBe("terminate called after throwing an instance of 'std::runtime_error'");
  }, 120_000);

  // gdb-multiarch does not come back from unwinding qemu's signal trampoline (its backtrace is cut
  // at the time limit, keeping the frames it printed) and LLDB stops at the handler: the fault is
  // read from the kernel's rt_sigframe in stack memory.
  for (const [how, args] of [
    // gdb's backtrace waits out the command's time limit: 10 s here rather than the default 30.
    ["the debugger chosen and the target's libraries", ["--sysroot", AARCH64_SYSROOT, "--timeout", "10"]],
    ["LLDB and the target's libraries", ["--sysroot", AARCH64_SYSROOT, "--debugger", "lldb"]],
    ["the debugger chosen, without the target's libraries", []],
    ["LLDB, without the target's libraries", ["--debugger", "lldb"]],
  ] as const) {
    it(`a crash handler that aborts on the SIGSEGV it caught, with ${how}: the null dereference it caught, from the signal frame in memory`, async () => {
      const { exe, core, source } = await buildAarch64Core("caught-segv");
      const { crash } = await triageJson([core, "--exe", exe, ...args]);
      const line = readFileSync(source, "utf8").split("\n").findIndex((text) => text.includes("// CULPRIT")) + 1;
      expect([crash.kind, crash.signal, crash.signalCode, crash.faultAddress, crash.access]).toEqual(["null-dereference", "SIGSEGV", "SEGV_MAPERR", "0x8", "read"]);
      expect([crash.culprit.function, crash.culprit.line]).toEqual(["owner_name_length", line]);
      expect(crash.origin?.type).toBe("fault");
      expect(crash.message).toMatch(/^crash_handler \(caught-segv\) caught it in its signal handler and then aborted, as a crash handler does; the SIGSEGV it was handling arrived in owner_name_length: reading 8 bytes at 0x8 through `\[x0, #0x8\]` = x0 \(0x0\) \+ 0x8: x0 was NULL/);
    }, 180_000);
  }

  it("behind a handler with gdb-multiarch and the target's libraries: the frames gdb printed before its unwind stuck are kept, and the fault is read from memory", async () => {
    const { exe, core } = await buildAarch64Core("caught-segv");
    const result = await runCli(["triage", core, "--exe", exe, "--sysroot", AARCH64_SYSROOT, "--timeout", "10"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/bt 40: command timed out after 10s and was interrupted/);
    expect(result.stdout).toMatch(/Stack \(9 frames, 4 runtime frames above hidden\)/);
    expect(result.stdout).toMatch(/the debugger did not unwind past the handler, so the fault it caught is read from the signal frame the kernel built on the stack, found in memory at 0x[0-9a-f]+/);
  }, 180_000);

  // The signal frame with its evidence taken away: the crash stays the handler's abort, never another fault.
  for (const [what, edit] of [
    ["its stack memory left out of the core", (core: Buffer, _frame: number, stack: { header: number }) => core.writeBigUInt64LE(0n, stack.header + 32)],
    ["a garbage saved pc", (core: Buffer, frame: number) => core.writeBigUInt64LE(0x4141414141414141n, frame + 568)],
    ["a signal number no fault has", (core: Buffer, frame: number) => core.writeUInt32LE(6, frame)],
    ["a fault address the load at the saved pc does not touch", (core: Buffer, frame: number) => (core.writeBigUInt64LE(0x30n, frame + 16), core.writeBigUInt64LE(0x30n, frame + 304))],
  ] as const) {
    it(`behind a handler, the signal frame with ${what}: the handler's abort, not a fault made up`, async () => {
      const { exe, core } = await buildAarch64Core("caught-segv");
      const bytes = readFileSync(core);
      const { frame, stack } = signalFrameIn(bytes);
      edit(bytes, frame, stack);
      const edited = path.join(path.dirname(core), `edited-${what.replace(/\W+/g, "-")}.core`);
      writeFileSync(edited, bytes);
      const { crash } = await triageJson([edited, "--exe", exe, "--sysroot", AARCH64_SYSROOT, "--debugger", "lldb"]);
      expect(crash.kind).toBe("abort");
      expect(crash.faultAddress).toBeNull();
      expect(crash.signal).toBe("SIGABRT");
    }, 120_000);
  }

  // sdiv by zero gives 0 on arm64 and raises nothing: the crash is the NULL it led to, and a note names the division.
  for (const debuggerChoice of ["auto", "lldb"] as const) {
    it(`a division by zero that does not trap, with ${debuggerChoice === "auto" ? "the debugger chosen" : "LLDB"}: the null dereference it led to, and a note naming the sdiv whose divisor is still 0`, async () => {
      const { exe, core, source } = await buildAarch64Core("div-zero-index");
      const result = await runCli(["triage", core, "--exe", exe, "--sysroot", AARCH64_SYSROOT, "--debugger", debuggerChoice]);
      expect(result.code, result.stderr).toBe(0);
      const line = readFileSync(source, "utf8").split("\n").findIndex((text) => text.includes("// CULPRIT")) + 1;
      expect(result.stdout).toMatch(new RegExp(`Where: +rows_of_share at \\S+div-zero-index\\.c:${line}`));
      expect(result.stdout).toMatch(/null pointer dereference/);
      expect(result.stdout).toMatch(/sdiv x2, x0, x1 at 0x[0-9a-f]+ in rows_of_share divided by x1 = 0 on the way to the faulting instruction .*does not trap on a zero divisor but gives 0.*may follow from that zero/);
    }, 120_000);
  }

  it("no division note where the faulting function divides by nothing", async () => {
    const { exe, core } = await buildAarch64Core("null-deref");
    const result = await runCli(["triage", core, "--exe", exe, "--sysroot", AARCH64_SYSROOT]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toMatch(/divided by/);
  }, 120_000);

  it("a gdb named by hand that reads no aarch64 registers gives an unreadable stop, never a dump on request", async () => {
    const { exe, core } = await buildAarch64Core("abort");
    // Only the signal the core records is known: no registers, so no stack and no culprit.
    const { crash } = await triageJson([core, "--exe", exe, "--gdb", "/usr/bin/gdb"]);
    expect(crash.origin?.type).not.toBe("requested");
    expect(crash.signal).toBe("SIGABRT");
  }, 120_000);
});

/**
 * Where in a qemu core the SIGSEGV's signal frame lies (its file offset: si_signo 11, si_code 1,
 * si_addr 0x8 at a 16-byte aligned address of a PT_LOAD), and that segment's program header.
 */
function signalFrameIn(core: Buffer): { frame: number; stack: { header: number } } {
  const phoff = Number(core.readBigUInt64LE(0x20));
  const count = core.readUInt16LE(0x38);
  for (let i = 0; i < count; i++) {
    const header = phoff + i * 56;
    if (core.readUInt32LE(header) !== 1) continue;
    const offset = Number(core.readBigUInt64LE(header + 8));
    const vaddr = core.readBigUInt64LE(header + 16);
    const size = Number(core.readBigUInt64LE(header + 32));
    for (let at = offset + Number((16n - (vaddr % 16n)) % 16n); at + 584 <= offset + size; at += 16) {
      if (core.readUInt32LE(at) === 11 && core.readUInt32LE(at + 8) === 1 && core.readBigUInt64LE(at + 16) === 8n && core.readBigUInt64LE(at + 304) === 8n) return { frame: at, stack: { header } };
    }
  }
  throw new Error("no signal frame in the core");
}
