/**
 * Triage on real cores: every fixture program is built, crashed (or hung and dumped), opened in a
 * real gdb, and triaged; the verdict must name the kind, the culprit function and line, and the
 * message where there is one. The hard cases (optimised builds without debug info, no glibc
 * debug info, deep recursion, many threads, a worker thread's crash) hold too.
 */
import { describe, expect, it } from "vitest";
import { formatTriage } from "../../src/analyzers/format.js";
import { openingProbes, triage, type TriageResult } from "../../src/analyzers/triage/index.js";
import { inspectDump } from "../../src/debuggers/dump.js";
import { askSession, type Ask } from "../../src/debuggers/inspector.js";
import type { Probe, SignalRecord } from "../../src/debuggers/probe.js";
import { GdbSession, type GdbSessionOptions } from "../../src/debuggers/gdb/gdb-session.js";
import { CrashSchema, type CrashKind, type OriginType } from "../../src/report/schema.js";
import { buildCore, culpritLine, fixtureNames, type BuildOptions } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

interface Expected {
  kind: CrashKind;
  culprit: string;
  /** Where the stop came from, when it is not what the kind says (a fault; an abort the program raised; a dump of a hung process on request). */
  origin?: OriginType;
  /** What `crash.message` must contain; absent when the crash has no message. */
  message?: RegExp;
  access?: "read" | "write" | "execute";
}

const EXPECTED: Record<string, Expected> = {
  "null-deref": { kind: "null-dereference", culprit: "send_to_client", access: "read" },
  "null-arg": { kind: "null-dereference", culprit: "log_line_length", access: "read" },
  "null-write": { kind: "null-dereference", culprit: "cache_store", access: "write" },
  "bad-jump": { kind: "bad-jump", culprit: "dispatch_command", access: "execute" },
  "dangling-callback": { kind: "bad-jump", culprit: "publish", access: "execute" },
  "wild-pointer": { kind: "invalid-memory-access", culprit: "buffer_length", access: "read" },
  "bit-flip": { kind: "invalid-memory-access", culprit: "total_traffic", access: "read" },
  "index-out-of-bounds": { kind: "invalid-memory-access", culprit: "claim_slot", access: "write" },
  "write-rodata": { kind: "invalid-memory-access", culprit: "normalize_header_name", access: "write" },
  "stack-overflow": { kind: "stack-overflow", culprit: "parse_value", access: "write" },
  "huge-frame": { kind: "stack-overflow", culprit: "render_scanline" },
  "stack-smash": { kind: "stack-buffer-overflow", culprit: "parse_login", message: /stack smashing detected/ },
  "double-free": { kind: "double-free", culprit: "connection_destroy", message: /double free detected/ },
  "heap-corruption": { kind: "heap-corruption", culprit: "copy_request_body", message: /^malloc\(\): corrupted top size$/ },
  "off-by-one-free": { kind: "heap-corruption", culprit: "message_free", message: /^double free or corruption \(!prev\)$/ },
  assert: { kind: "assertion-failure", culprit: "ring_buffer_write", message: /Assertion `ring->write_index \+ length <= sizeof ring->data' failed/ },
  abort: { kind: "abort", culprit: "validate_config" },
  "abort-msg": { kind: "heap-corruption", culprit: "release_token", message: /^free\(\): invalid pointer$/ },
  "div-zero": { kind: "division-by-zero", culprit: "average_latency" },
  "illegal-instruction": { kind: "illegal-instruction", culprit: "decode_message" },
  "bus-error": { kind: "bus-error", culprit: "count_lines", access: "read" },
  fortify: { kind: "fortify-failure", culprit: "set_greeting", message: /buffer overflow detected/ },
  "thread-crash": { kind: "null-dereference", culprit: "process_job", access: "read" },
  "many-threads": { kind: "null-dereference", culprit: "count_request", access: "read" },
  deadlock: { kind: "deadlock", culprit: "transfer_funds" },
  "deadlock-3": { kind: "deadlock", culprit: "hand_over_item" },
  "lost-wakeup": { kind: "hang", culprit: "pool_shutdown", message: /^hung: all 4 threads are blocked waiting: 3 on a condition variable \(in worker_main\), 1 for another thread to finish \(in pool_shutdown\); no wait records an owner/ },
  "debug-break": { kind: "breakpoint", culprit: "texture_bytes" },
  "uncaught-exception": { kind: "uncaught-exception", culprit: "read_field", message: /instance of 'std::runtime_error'$/ },
  "out-of-range": { kind: "uncaught-exception", culprit: "score_at_rank", message: /instance of 'std::out_of_range'$/ },
  "pure-virtual": { kind: "pure-virtual-call", culprit: "OutputStream::close", message: /pure virtual method called/ },
  "cpp-null-deref": { kind: "null-dereference", culprit: "Session::idle_seconds", access: "read" },
  "rust-panic": { kind: "panic", culprit: "rust_panic::price_of", message: /^every SKU in an order has a price in the catalog$/ },
  "rust-null": { kind: "null-dereference", culprit: "rust_null::nth_value", access: "read" },
  "rust-stack-overflow": { kind: "stack-overflow", culprit: "rust_stack_overflow::load", origin: "raised", message: /Rust's handler aborted the process \("has overflowed its stack"\)/ },
};

/** Kinds the program reaches by aborting (abort, raise, a runtime's check), and those of a process dumped alive. */
const RAISED = new Set<CrashKind>(["stack-buffer-overflow", "double-free", "heap-corruption", "assertion-failure", "abort", "fortify-failure", "uncaught-exception", "pure-virtual-call", "panic"]);
const REQUESTED = new Set<CrashKind>(["deadlock", "hang"]);

function expectedOrigin(expected: Expected): OriginType {
  return expected.origin ?? (RAISED.has(expected.kind) ? "raised" : REQUESTED.has(expected.kind) ? "requested" : "fault");
}

const noDebugFiles = tempDir("dumpdbg-no-debug-");

/**
 * Builds (cached) and triages one core in its own gdb session, with the core's own record of the
 * signal as the product passes it; `tamper` rewrites what gdb answers.
 */
async function triageCore(
  name: string,
  build: BuildOptions = {},
  session: Partial<GdbSessionOptions> = {},
  tamper: (ask: Ask) => Ask = (ask) => ask,
): Promise<TriageResult> {
  const built = await buildCore(name, build);
  const gdb = new GdbSession({ dump: built.core, executable: built.exe, ...session });
  await gdb.open();
  try {
    return await triage(tamper(askSession(gdb)), { stopReason: inspectDump(built.core).facts.stopReason });
  } finally {
    await gdb.close();
  }
}

describe("what triage asks first", () => {
  // The command line has the debugger read these ahead while it sets up (readAheadTriage): a
  // triage that asked otherwise would be answered all the same, only later.
  it.concurrent.each([
    ["a crash, whose signal's record is read among them", "null-deref", ["signal-info"]],
    ["a hung process's dump, which has no signal to read", "deadlock", []],
  ])("is the opening, in its order, on %s", async (_, name, among) => {
    const asked: Probe[] = [];
    await triageCore(name, {}, {}, (ask) => async (probe) => {
      asked.push(probe);
      return ask(probe);
    });
    const opening = openingProbes();
    const isAmong = (probe: Probe) => opening.among.some((other) => JSON.stringify(other) === JSON.stringify(probe));
    const first = asked.slice(0, opening.asked.length + among.length);
    expect(first.filter((probe) => !isAmong(probe))).toEqual(opening.asked);
    expect(first.filter(isAmong).map((probe) => probe.kind)).toEqual(among);
  });
});

describe("triage of every fixture", () => {
  it("has an expectation for every fixture program and covers every crash kind", () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(fixtureNames());
    const kinds = new Set(Object.values(EXPECTED).map((e) => e.kind));
    // A runtime's deaths are its own programs', built by their own tests: tests/e2e/jvm.test.ts's JVM under CrashOnOutOfMemoryError.
    const elsewhere = new Set(["unknown", "out-of-memory"]);
    const untested = CrashSchema.shape.kind.options.filter((kind) => !kinds.has(kind) && !elsewhere.has(kind));
    expect(untested).toEqual([]);
  });

  it.concurrent.each(Object.keys(EXPECTED))("%s", async (name) => {
    const expected = EXPECTED[name];
    if (!expected) throw new Error(`no expectation for ${name}`);
    const result = await triageCore(name);
    const { crash } = result;

    expect(CrashSchema.parse(crash)).toEqual(crash);
    expect(crash.kind).toBe(expected.kind);
    expect(crash.origin?.type).toBe(expectedOrigin(expected));
    expect(crash.culprit.function).toBe(expected.culprit);
    expect(crash.culprit.line).toBe(culpritLine(name));
    expect(crash.culprit.file).toMatch(new RegExp(`/${name}\\.(c|cpp|rs)$`));
    if (expected.message) expect(crash.message).toMatch(expected.message);
    else expect(crash.message).toBeNull();
    if (expected.access) expect(crash.access).toBe(expected.access);
    expect(crash.signature.startsWith(`${expected.kind} | ${expected.culprit}`)).toBe(true);
    expect(result.frames[0]?.function && result.frames[0].function.includes(expected.culprit.split("::").pop() ?? "")).toBe(true);
    expect(formatTriage(result)).toContain(`Signature: ${crash.signature}`);
    // gdb's $_siginfo and dumpdbg's own reading of the core's NT_SIGINFO agree.
    expect(result.notes.filter((note) => /dump's notes/.test(note))).toEqual([]);
  });

  it.concurrent.each(Object.keys(EXPECTED))("%s: the signature is the same for a second build and run", async (name) => {
    const [first, second] = await Promise.all([triageCore(name), triageCore(name, { variant: "second-build" })]);
    expect(second.crash.signature).toBe(first.crash.signature);
  });
});

/** As CASR and `!exploitable` rate these classes: the evidence decides, the kind alone does not. */
const RATINGS: Record<string, { rating: string; reason: RegExp }> = {
  "null-deref": { rating: "probably-not-exploitable", reason: /a read near NULL \(0x20\)/ },
  "null-write": { rating: "probably-exploitable", reason: /a write near NULL/ },
  "bad-jump": { rating: "probably-exploitable", reason: /jumped to the NULL page/ },
  "dangling-callback": { rating: "exploitable", reason: /a call or jump through a bad pointer/ },
  "wild-pointer": { rating: "unknown", reason: /a read from 0xdeadbeef\w*, far from NULL/ },
  "index-out-of-bounds": { rating: "exploitable", reason: /a write to 0x[0-9a-f]+, unmapped or read-only memory far from NULL/ },
  "write-rodata": { rating: "exploitable", reason: /a write to 0x[0-9a-f]+/ },
  "stack-smash": { rating: "exploitable", reason: /a buffer on the stack was overrun/ },
  "double-free": { rating: "probably-exploitable", reason: /freed twice/ },
  "heap-corruption": { rating: "probably-exploitable", reason: /metadata overwritten/ },
  fortify: { rating: "probably-not-exploitable", reason: /_FORTIFY_SOURCE stopped the copy/ },
  "div-zero": { rating: "not-exploitable", reason: /division by zero/ },
  "stack-overflow": { rating: "not-exploitable", reason: /guard page/ },
  assert: { rating: "not-exploitable", reason: /a check it made/ },
  "illegal-instruction": { rating: "not-exploitable", reason: /deliberate trap \(`ud2`\)/ },
  deadlock: { rating: "not-exploitable", reason: /no fault: the dump was taken on request/ },
};

describe("exploitability, rated from the evidence as CASR and !exploitable rate it", () => {
  it.concurrent.each(Object.keys(RATINGS))("%s", async (name) => {
    const { crash } = await triageCore(name);
    const expected = RATINGS[name] as { rating: string; reason: RegExp };
    expect(crash.exploitability?.rating).toBe(expected.rating);
    expect(crash.exploitability?.reasons.join("; ")).toMatch(expected.reason);
  });
});

describe("the faulting instruction, read like an engineer reads it", () => {
  it("names the operand, the size, the base register and its value: NULL plus a member's offset", async () => {
    const { fault, crash } = await triageCore("null-write");
    expect(fault).toMatchObject({ access: "write", size: 8, base: { value: "0x0" }, bitFlip: null });
    expect(fault?.displacement).toBe(crash.faultAddress);
    expect(fault?.text).toMatch(/^writing 8 bytes at 0x[0-9a-f]+ through `0x[0-9a-f]+\(%r\w+\)` = %r\w+ \(0x0\) \+ 0x[0-9a-f]+: %r\w+ was NULL, and 0x[0-9a-f]+ is the offset of the member accessed$/);
  });

  it("says a pointer one bit away from live memory may be a flipped bit, and names the live address", async () => {
    const result = await triageCore("bit-flip");
    const flip = result.fault?.bitFlip;
    expect(flip?.bit).toBe(41);
    expect(BigInt(flip?.pointer ?? "0") ^ BigInt(flip?.candidate ?? "0")).toBe(1n << 41n);
    expect(BigInt(result.crash.faultAddress ?? "0") - BigInt(flip?.pointer ?? "0")).toBe(8n);
    expect(formatTriage(result)).toMatch(/one bit \(bit 41\) away from mapped memory at 0x[0-9a-f]+: it may be a flipped bit/);
  });

  it("does not call a wild pointer a flipped bit", async () => {
    for (const name of ["wild-pointer", "index-out-of-bounds", "dangling-callback"]) expect((await triageCore(name)).fault?.bitFlip ?? null, name).toBeNull();
  });
});

describe("the core's own notes are the ground truth for the signal", () => {
  it("keeps the core's si_code and fault address when the debugger reports others, and says so", async () => {
    const honest = await triageCore("null-write");
    const lied = await triageCore("null-write", {}, {}, (ask) => (async (probe: Probe) => {
      const answer = await ask(probe);
      if (probe.kind !== "signal-info" || answer.reading === null) return answer;
      // A debugger that misreads the record: another code, another address.
      return { ...answer, reading: { ...(answer.reading as SignalRecord), code: 2, address: "0xdead" } };
    }) as Ask);
    expect(honest.crash.signalCode).toBe("SEGV_MAPERR");
    expect(lied.crash.signalCode).toBe(honest.crash.signalCode);
    expect(lied.crash.faultAddress).toBe(honest.crash.faultAddress);
    expect(lied.notes.some((note) => /signal record \(code 2, address 0xdead\) differs from the dump's notes \(code 1, address 0x[0-9a-f]+\); the notes are used/.test(note))).toBe(true);
  });
});

describe("hard cases", () => {
  it("signals and fault addresses come from $_siginfo", async () => {
    const { crash } = await triageCore("null-write");
    expect(crash).toMatchObject({ signal: "SIGSEGV", signalCode: "SEGV_MAPERR", access: "write" });
    expect(BigInt(crash.faultAddress ?? "0x10000")).toBeLessThan(0x10000n);
    const fpe = await triageCore("div-zero");
    expect(fpe.crash).toMatchObject({ signal: "SIGFPE", signalCode: "FPE_INTDIV", access: null });
    expect(fpe.instruction).toMatch(/^idiv/);
  });

  it("names the crashing worker thread, not the main thread, and summarises the idle ones", async () => {
    const result = await triageCore("thread-crash");
    const built = await buildCore("thread-crash");
    const gdb = new GdbSession({ dump: built.core, executable: built.exe });
    await gdb.open();
    const threads = (await gdb.run("info threads")).output;
    await gdb.close();
    // The main thread's LWP is the process id, the smallest of them: the worker's is larger.
    const lwps = [...threads.matchAll(/LWP (\d+)/g)].map((m) => Number(m[1]));
    expect(result.crash.thread.lwp).not.toBe(Math.min(...lwps));
    expect(result.threads.count).toBe(lwps.length);
    expect(result.threads.groups.find((g) => g.function === "process_job")?.threads).toEqual([result.crash.thread.id]);
  });

  it("holds with hundreds of threads", async () => {
    const result = await triageCore("many-threads");
    expect(result.threads.count).toBe(201);
    // 199 idle connections wait on a condition variable, and so does the main thread in pthread_join.
    expect(result.threads.groups[0]?.threads.length).toBeGreaterThanOrEqual(199);
    expect(result.commands.some((c) => c.startsWith("thread apply all"))).toBe(false);
  });

  it("summarises a stack overflow's recursion without unwinding the whole stack", async () => {
    const result = await triageCore("stack-overflow");
    expect(result.recursion).toMatchObject({ cycle: ["parse_value"], estimated: true });
    expect(result.recursion?.depth).toBeGreaterThan(10_000);
    expect(result.commands.some((c) => /^bt -/.test(c))).toBe(false);
    expect(formatTriage(result)).toMatch(/Recursion: parse_value repeats about \d+ times/);
  });

  it("names functions but no file or line in an optimised build without debug info", async () => {
    const { crash } = await triageCore("null-deref", { flags: ["-O2", "-g0"] });
    expect(crash.kind).toBe("null-dereference");
    expect(crash.culprit).toMatchObject({ function: "broadcast", file: null, line: null });
    expect(crash.signature).toBe("null-dereference | broadcast | main");
  });

  it("finds the thrown type in an optimised C++ build without debug info", async () => {
    const { crash } = await triageCore("uncaught-exception", { flags: ["-O2", "-g0"] });
    expect(crash.kind).toBe("uncaught-exception");
    expect(crash.message).toMatch(/'std::runtime_error'$/);
    expect(crash.culprit.function).toBe("load_plugin");
  });

  it("finds a Rust panic's message in an optimised build without debug info", async () => {
    const { crash } = await triageCore("rust-panic", { flags: ["-C", "opt-level=2", "-C", "debuginfo=0"] });
    expect(crash.kind).toBe("panic");
    expect(crash.message).toBe("every SKU in an order has a price in the catalog");
    expect(crash.culprit.function).toMatch(/^rust_panic::/);
  });

  it("reports the whole ABBA cycle with its locks and owners", async () => {
    const { crash } = await triageCore("deadlock");
    const cycle = crash.deadlock?.cycle ?? [];
    expect(cycle).toHaveLength(2);
    const [a, b] = cycle;
    expect(a?.heldByThread).toBe(b?.thread);
    expect(b?.heldByThread).toBe(a?.thread);
    expect(a?.lock).not.toBe(b?.lock);
    for (const edge of cycle) {
      expect(edge).toMatchObject({ function: "transfer_funds", line: culpritLine("deadlock") });
      expect(edge.lock).toMatch(/^0x[0-9a-f]+$/);
      // Named as the waiting call names it, checked against the lock's address in that frame.
      expect(edge.lockName).toBe("to->lock");
    }
    expect(crash.thread.id).toBe(a?.thread);
    // The signature covers every thread of the cycle.
    expect(crash.signature).toBe("deadlock | transfer_funds | transfer_funds");
  });

  it.concurrent.each(["deadlock", "deadlock-3"])("finds the %s cycle without glibc's debug info", async (name) => {
    const withDebug = await triageCore(name);
    const without = await triageCore(name, {}, { debugFileDirectory: noDebugFiles });
    expect(without.crash.kind).toBe("deadlock");
    expect(without.crash.deadlock).toEqual(withDebug.crash.deadlock);
    expect(without.crash.deadlock?.cycle).toHaveLength(name === "deadlock" ? 2 : 3);
  });

  it("reads glibc's abort message without glibc's debug info", async () => {
    const { crash } = await triageCore("assert", {}, { debugFileDirectory: noDebugFiles });
    expect(crash.kind).toBe("assertion-failure");
    expect(crash.message).toMatch(/ring_buffer_write: Assertion/);
  });

  it("prints a few human lines: kind, where, why, the stack from the culprit", async () => {
    const text = formatTriage(await triageCore("null-deref"));
    const lines = text.trimEnd().split("\n");
    expect(lines[0]).toBe("Crash:     null pointer dereference (SIGSEGV, SEGV_MAPERR)");
    expect(lines[1]).toMatch(/^Where:     send_to_client at .*null-deref\.c:27, thread 1 \(LWP \d+\)$/);
    expect(lines[2]).toMatch(/^Why:       reading 4 bytes at 0x20 through `0x20\(%rax\)` = %rax \(0x0\) \+ 0x20: %rax was NULL, and 0x20 is the offset of the member accessed \(mov 0x20\(%rax\),%eax\)$/);
    expect(text).toMatch(/\n {2}#0 send_to_client at .*null-deref\.c:27\n {2}#1 broadcast at /);
    expect(lines.length).toBeLessThan(12);
  });
});
