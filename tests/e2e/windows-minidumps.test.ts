/**
 * Windows minidumps, end to end through the CLI: programs of our own (C and C++, several threads,
 * several crash kinds and a hang), built with mingw-w64 and crashed under Wine, where their crash
 * reporter writes crash.dmp with dbghelp's MiniDumpWriteDump. `dumpdbg` reads each with LLDB twice:
 * with the dump's system DLLs (`--modules-path`: Wine's own, a full unwind), and without them, as a
 * minidump usually arrives (frame 0 only in ntdll or msvcrt: the stack is scanned). The verdict must
 * be the same: kind, culprit function and line, access, message, the deadlock's cycle. Then the
 * offline analysis and the chat run on them as on cores.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { ReportSchema, type Crash, type CrashKind } from "../../src/report/schema.js";
import { pipeChat, runCli } from "../helpers/cli.js";
import { buildMinidump, buildMinidumpWithoutSources, missingWindowsTools, WINE_DLLS, windowsCulpritLine } from "../helpers/windows.js";

interface Expected {
  kind: CrashKind;
  culprit: string;
  signal: string;
  access?: "read" | "write" | "execute";
  faultAddress?: string;
  message?: RegExp;
  /** The message comes from a system DLL's frame (msvcrt's `_wassert`): only with --modules-path. */
  messageNeedsModules?: boolean;
  /** What the offline analysis's conclusion must say. */
  says: RegExp[];
}

const EXPECTED: Record<string, Expected> = {
  "config-null": { kind: "null-dereference", culprit: "listen_port", signal: "EXCEPTION_ACCESS_VIOLATION", access: "read", faultAddress: "0x20", says: [/listen_port/] },
  "session-close": { kind: "null-dereference", culprit: "session_close", signal: "EXCEPTION_ACCESS_VIOLATION", access: "write", faultAddress: "0x10", says: [/session_close/] },
  "message-check": { kind: "uncaught-exception", culprit: "check_message", signal: "exception", message: /^unhandled exception 0xe04d5347 raised by the program/, says: [/check_message/] },
  "div-zero": { kind: "division-by-zero", culprit: "average_latency", signal: "EXCEPTION_INT_DIVIDE_BY_ZERO", says: [/average_latency/] },
  "stack-overflow": { kind: "stack-overflow", culprit: "parse_list", signal: "EXCEPTION_STACK_OVERFLOW", says: [/parse_list/] },
  "bad-jump": { kind: "bad-jump", culprit: "dispatch", signal: "EXCEPTION_ACCESS_VIOLATION", access: "execute", says: [/dispatch/] },
  uncaught: { kind: "uncaught-exception", culprit: "read_field", signal: "STATUS_FATAL_APP_EXIT", message: /instance of 'std::runtime_error'$/, says: [/read_field/, /std::runtime_error/] },
  deadlock: { kind: "deadlock", culprit: "transfer_funds", signal: "", says: [/each hold a critical section the next one waits for/, /`transfer_funds` holds `from->lock`/, /lock-order inversion/] },
  // Written after the analyzers, and first run against them as they were (see the closing note).
  "null-method": { kind: "null-dereference", culprit: "Connection::queued", signal: "EXCEPTION_ACCESS_VIOLATION", access: "read", faultAddress: "0x20", says: [/queued/] },
  histogram: { kind: "invalid-memory-access", culprit: "record_latency", signal: "EXCEPTION_ACCESS_VIOLATION", access: "read", says: [/record_latency/] },
  "mutual-recursion": { kind: "stack-overflow", culprit: "expression", signal: "EXCEPTION_STACK_OVERFLOW", says: [/expression/] },
  // A lean dump (MiniDumpNormal: no data segments): the global critical sections are not in it, so who
  // holds each is read from the code of the waiting functions.
  "deadlock-globals": {
    kind: "deadlock",
    culprit: "reload_config",
    signal: "",
    says: [/Thread 3 in `reload_config` holds `config_lock`/, /Thread 4 in `evict_cache` holds `cache_lock`/, /lock-order inversion/],
  },
  // Written from the SIGABRT handler with no exception record: the aborting thread's stack says why.
  "terminate-dump": { kind: "uncaught-exception", culprit: "setting", signal: "", message: /instance of 'std::out_of_range'$/, says: [/setting/, /std::out_of_range/] },
  "format-check": {
    kind: "assertion-failure",
    culprit: "report_status",
    signal: "STATUS_INVALID_PARAMETER",
    message: /^invalid parameter: `format != NULL` failed in log_line \(.*format-check\.c:23\)$/,
    // With wine's DLLs LLDB's unwind goes astray past RaiseException and the scan that repairs it
    // finds no frame the debugger can evaluate in: the operands stay unread there.
    says: [/report_status/],
  },
  "assert-failure": {
    kind: "assertion-failure",
    culprit: "ring_write",
    signal: "STATUS_FATAL_APP_EXIT",
    message: /^Assertion failed: ring->used \+ length <= sizeof ring->data, file .*assert-failure\.c, line 16$/,
    messageNeedsModules: true,
    says: [/ring_write/],
  },
};

const missing = missingWindowsTools();
const skipReason = missing.length > 0 ? ` (skipped: ${missing.join(", ")} not installed; .ci/run installs mingw-w64 and wine)` : "";

async function triageJson(dump: string, modules: boolean): Promise<Crash> {
  const result = await runCli(["triage", dump, "--json", "--debugger", "lldb", ...(modules ? ["--modules-path", WINE_DLLS] : [])]);
  expect(result.stderr).not.toMatch(/internal error|at .*\.js:\d+/);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Crash;
}

function checkVerdict(name: string, crash: Crash, modules: boolean): void {
  const expected = EXPECTED[name] as Expected;
  expect(crash.kind).toBe(expected.kind);
  expect(crash.culprit.function).toBe(expected.culprit);
  expect(path.basename(crash.culprit.file ?? "")).toMatch(new RegExp(`^${name}\\.(c|cpp)$`));
  expect(crash.culprit.line).toBe(windowsCulpritLine(name));
  expect(crash.signal ?? "").toBe(expected.signal);
  if (expected.access) expect(crash.access).toBe(expected.access);
  if (expected.faultAddress) expect(crash.faultAddress).toBe(expected.faultAddress);
  if (expected.message && (modules || !expected.messageNeedsModules)) expect(crash.message ?? "").toMatch(expected.message);
  // A deadlock's signature names its threads' functions sorted, whichever thread is the crash's.
  if (expected.kind === "deadlock") expect(crash.signature.split(" | ")).toContain(expected.culprit);
  else expect(crash.signature.startsWith(`${expected.kind} | ${expected.culprit}`)).toBe(true);
  if (expected.kind === "deadlock" && name === "deadlock") {
    const cycle = crash.deadlock?.cycle ?? [];
    expect(cycle).toHaveLength(2);
    // Each waits for a lock the other holds, both at the culprit line.
    expect(cycle[0]?.heldByThread).toBe(cycle[1]?.thread);
    expect(cycle[1]?.heldByThread).toBe(cycle[0]?.thread);
    for (const edge of cycle) expect(edge).toMatchObject({ function: "transfer_funds", line: windowsCulpritLine(name) });
    expect(new Set(cycle.map((edge) => edge.lock)).size).toBe(2);
  }
}

describe.skipIf(missing.length > 0)(`Windows minidumps through LLDB${skipReason}`, () => {
  describe.each(Object.keys(EXPECTED))("%s", (name) => {
    it("is read the same with and without the dump's system modules", async () => {
      const built = await buildMinidump(name);
      const full = await triageJson(built.dump, true);
      checkVerdict(name, full, true);
      const scanned = await triageJson(built.dump, false);
      checkVerdict(name, scanned, false);
      // The locks are not in the lean dump: both reads name them from the code, with modules or from the stack.
      if (name === "deadlock-globals") for (const read of [full, scanned]) expect(read.deadlock?.cycle.map((edge) => edge.lockName)).toEqual(["cache_lock", "config_lock"]);
      // The thread is the one the exception record names (the hang: the first waiter), whichever way it was read.
      expect(scanned.thread.lwp).toBe(full.thread.lwp);
      // The same three frames of the program's own, unwound or scanned.
      expect(scanned.signature).toBe(full.signature);
      if (name !== "deadlock") expect(full.thread.lwp).toBeGreaterThan(0);
    }, 180_000);

    it("gets the offline analysis, its reports and the chat", async () => {
      const built = await buildMinidump(name);
      const dir = mkdtempSync(path.join(os.tmpdir(), `dumpdbg-windows-${name}-`));
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
      const flags = ["--modules-path", WINE_DLLS, "--sessions-dir", "sessions", "--out", "reports", "--provider", "offline"];
      const result = await runCli(["analyze", built.dump, "--issue", `the ${name} service died`, "--json", ...flags], { cwd: dir });
      expect(result.stderr).not.toMatch(/internal error/);
      expect(result.code, result.stderr).toBe(0);
      const report = ReportSchema.parse(JSON.parse(result.stdout));
      checkVerdict(name, report.crash, true);
      expect(report.session.debugger).toMatch(/lldb/);
      const expected = EXPECTED[name] as Expected;
      const text = `${report.conclusion.summary} ${report.conclusion.rootCause}`;
      for (const pattern of expected.says) expect(text).toMatch(pattern);
      const cited = text.match(/\bE\d+\b/g) ?? [];
      expect(cited.length).toBeGreaterThan(0);
      const evidence = new Set(report.evidence.map((e) => e.id));
      for (const id of cited) expect(evidence.has(id), `the conclusion cites ${id}`).toBe(true);

      const chat = await pipeChat(["chat", report.session.id, ...flags], dir, "why did it crash?\nlist the threads\n");
      expect(chat.code, chat.stderr).toBe(0);
      const answers = chat.stdout.trim().split("\n\n");
      expect(answers).toHaveLength(2);
      expect(answers[0]).toContain(expected.culprit);
      for (const answer of answers) expect(answer, answer).toMatch(/\[E\d+/);
    }, 180_000);
  });

  // The lean dump's locks are not in it, and without the program's sources on this machine who holds
  // each cannot be inferred either: the hang is not called lock-free, the unknown is said.
  it("does not rule out a deadlock whose lock holders neither the dump nor the sources show", async () => {
    const built = await buildMinidumpWithoutSources("deadlock-globals");
    onTestFinished(() => rmSync(built.dir, { recursive: true, force: true }));
    const triage = await runCli(["triage", built.dump, "--debugger", "lldb", "--modules-path", WINE_DLLS]);
    expect(triage.code, triage.stderr).toBe(0);
    expect(triage.stdout).not.toMatch(/no lock cycle was found/);
    expect(triage.stdout).toMatch(/threads \d+ and \d+ wait for locks whose holders it does not show .*whether the process deadlocked cannot be told/);

    const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-windows-unread-locks-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const result = await runCli(["analyze", built.dump, "--json", "--modules-path", WINE_DLLS, "--sessions-dir", "sessions", "--out", "reports", "--provider", "offline"], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    const report = ReportSchema.parse(JSON.parse(result.stdout));
    expect(report.crash.kind).not.toBe("deadlock");
    // Which thread is to blame is not shown either: no other thread's frame stands for the culprit.
    expect(report.crash.culprit?.function ?? null).toBeNull();
    const text = `${report.conclusion.summary} ${report.conclusion.rootCause}`;
    expect(text).not.toMatch(/no lock cycle was found/);
    expect(report.conclusion.summary).toMatch(/wait for locks whose holders the dump does not show, so whether the process deadlocked cannot be told/);
  }, 180_000);

  // A lean hang dump read with neither the program's executable nor the system modules: no frame is
  // named, the stacks cannot be scanned for the program's code. The locks are members of the accounts.
  it.each([
    // The accounts are main's locals: their critical sections are on main's stack, which the dump holds.
    ["deadlock-lean", true],
    // The accounts are in the heap, which a lean dump does not hold: the waits cannot be seen.
    ["deadlock-lean-heap", false],
  ] as const)("%s, read without the program's executable: the cycle where the dump holds the locks, else that it cannot be told", async (name, cycleShown) => {
    const built = await buildMinidump(name);
    const alone = mkdtempSync(path.join(os.tmpdir(), `dumpdbg-${name}-`));
    onTestFinished(() => rmSync(alone, { recursive: true, force: true }));
    const dump = path.join(alone, "crash.dmp");
    copyFileSync(built.dump, dump);
    const json = await runCli(["triage", dump, "--json", "--debugger", "lldb"]);
    expect(json.code, json.stderr).toBe(0);
    const crash = JSON.parse(json.stdout) as Crash;
    const text = await runCli(["triage", dump, "--debugger", "lldb"]);
    expect(text.stdout).not.toMatch(/no lock cycle was found/);
    if (cycleShown) {
      expect(crash.kind).toBe("deadlock");
      const cycle = crash.deadlock?.cycle ?? [];
      expect(cycle).toHaveLength(2);
      expect(cycle[0]?.heldByThread).toBe(cycle[1]?.thread);
      expect(cycle[1]?.heldByThread).toBe(cycle[0]?.thread);
      expect(new Set(cycle.map((edge) => edge.lock)).size).toBe(2);
    } else {
      expect(crash.kind).toBe("unknown");
      expect(crash.culprit?.function ?? null).toBeNull();
      expect(text.stdout).toMatch(/with no frame of the program's own found on their stacks and no held lock there: what they wait for, and so whether the process deadlocked, cannot be told/);
    }
  }, 180_000);

  // Without the system modules LLDB still unwinds this stack, but triage's scan numbers it from the
  // frames it found on the stack: the analysis' probes must land in the debugger's frame of the culprit.
  it("places the analysis' probes in the culprit's own frame when the stack was scanned", async () => {
    const built = await buildMinidump("format-check");
    const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-windows-scanned-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const result = await runCli(["analyze", built.dump, "--json", "--sessions-dir", "sessions", "--out", "reports", "--provider", "offline"], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    const report = ReportSchema.parse(JSON.parse(result.stdout));
    checkVerdict("format-check", report.crash, false);
    const text = `${report.conclusion.summary} ${report.conclusion.rootCause}`;
    // The check is log_line's; the bad value is what report_status passed it.
    for (const pattern of [/report_status/, /log_line was called with `format` = 0x0+\b/, /`status_templates\[state\]` for `format`/, /`state` = 2/]) expect(text).toMatch(pattern);
    // `state` = 2 is report_status's argument: read in its frame, whatever number the scan gave it.
    expect(report.conclusion.confidence).toBeGreaterThanOrEqual(0.7);
  }, 180_000);
});

