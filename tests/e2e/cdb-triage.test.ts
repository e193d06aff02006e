/**
 * `--debugger cdb` through the built CLI, on a real Windows minidump (config-null, built with
 * mingw-w64 and crashed under Wine; its crash reporter wrote crash.dmp with MiniDumpWriteDump). The
 * dump's exception stream is read by dumpdbg itself; the debugger's side is the cdb stand-in
 * (tests/helpers/fake-cdb.mjs), scripted with what cdb would print for this very dump: its threads,
 * modules and registers taken from the file, the stack of the program as its source says it runs.
 * The verdict must match LLDB's on the same dump. tests/e2e/cdb-windows.test.ts runs the real cdb.
 */
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { inspectDump } from "../../src/debuggers/dump.js";
import type { MinidumpFacts } from "../../src/debuggers/dumpfile/minidump.js";
import type { ExceptionStop } from "../../src/debuggers/model.js";
import type { Crash } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { FAKE_CDB, type FakeCdbScript } from "../helpers/fake-cdb.js";
import { buildMinidump, missingWindowsTools, windowsCulpritLine } from "../helpers/windows.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const missing = missingWindowsTools();
const skipReason = missing.length > 0 ? ` (skipped: ${missing.join(", ")} not installed; .ci/run installs mingw-w64 and wine)` : "";

/** An address as cdb prints a 64-bit one: `00000001`40001722`. */
function cdbHex(value: bigint): string {
  const hex = value.toString(16).padStart(16, "0");
  return `${hex.slice(0, 8)}\`${hex.slice(8)}`;
}

/** cdb's name of a module: the file's base name without its extension, `-` made `_`. */
function moduleName(file: string): string {
  return (file.split(/[\\/]/).at(-1) ?? file).replace(/\.[^.]*$/, "").replace(/[^A-Za-z0-9_]/g, "_");
}

/** What cdb prints for this dump, from the dump's own streams and the program's source. */
function scriptFor(dump: string, source: string, culpritLine: number): FakeCdbScript {
  const facts = inspectDump(dump).facts as MinidumpFacts;
  const exception = facts.stopReason as ExceptionStop;
  const registers = facts.exceptionRegisters ?? {};
  const rip = BigInt(registers.rip ?? exception.address);
  const rsp = BigInt(registers.rsp ?? "0x0");
  const module = (pattern: RegExp) => {
    const found = facts.modules.find((m) => pattern.test(m.path));
    if (!found?.start) throw new Error(`the dump has no module ${pattern}`);
    return { name: moduleName(found.path), start: BigInt(found.start), end: BigInt(found.end ?? found.start), path: found.path };
  };
  const [program, crt, kernel32, ntdll] = [module(/config-null\.exe$/i), module(/msvcrt\.dll$/i), module(/kernel32\.dll$/i), module(/ntdll\.dll$/i)];
  const file = `Z:${source.replace(/\//g, "\\")}`;
  const row = (level: number, sp: bigint, ret: bigint, site: string) => `${level.toString(16).padStart(2, "0")} ${cdbHex(sp)} ${cdbHex(ret)}     ${site}`;
  const stack = [
    " # Child-SP          RetAddr               Call Site",
    row(0, rsp, program.start + 0x1722n, `${crt.name}!atoi+0x14`),
    row(1, rsp + 0x40n, program.start + 0x17a1n, `${program.name}!listen_port+0x22 [${file} @ ${culpritLine}]`),
    row(2, rsp + 0x80n, kernel32.start + 0x27e49n, `${program.name}!main+0x81 [${file} @ ${culpritLine + 10}]`),
    row(3, rsp + 0xc0n, ntdll.start + 0x5dca8n, `${kernel32.name}!BaseThreadInitThunk+0x19`),
    row(4, rsp + 0xf0n, 0n, `${ntdll.name}!RtlUserThreadStart+0x28`),
  ].join("\n");
  const names = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rip", "rsp", "rbp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"];
  const value = (name: string) => BigInt(registers[name] ?? "0x0").toString(16).padStart(16, "0");
  const pairs = names.map((name) => `${name.padStart(3)}=${value(name)}`);
  const instruction = `${crt.name}!atoi+0x14:\n${cdbHex(rip)} 0fb60b          movzx   ecx,byte ptr [rbx]`;
  const r = [0, 3, 6, 9, 12, 15].map((i) => pairs.slice(i, i + 3).join(" ")).join("\n") + `\niopl=0         nv up ei pl nz na po nc\ncs=0033  ss=002b  ds=002b  es=0000  fs=0000  gs=0000             efl=00010206\n${instruction}`;
  const pid = (facts.processId ?? 0).toString(16);
  const header = (index: number, tid: number, current: boolean) => `${current ? "." : " "}  ${index}  Id: ${pid}.${tid.toString(16)} Suspend: 0 Teb: ${cdbHex(0x7ffde000n + BigInt(index) * 0x2000n)} Unfrozen`;
  const event = facts.threads.findIndex((t) => t.id === exception.thread);
  const threads = facts.threads.map((t, index) => header(index, t.id, index === event));
  const waiting = " # Child-SP          RetAddr               Call Site\n" + row(0, rsp - 0x800n, ntdll.start + 0x1000n, `${ntdll.name}!NtWaitForSingleObject+0x14`);
  const lm = facts.modules.filter((m) => m.start && m.end).map((m) => `${cdbHex(BigInt(m.start!))} ${cdbHex(BigInt(m.end!))}   ${moduleName(m.path)} ${m === facts.modules.find((x) => /config-null/.test(x.path)) ? "C (private pdb symbols)  config-null.pdb" : "  (deferred)"}`);
  const lmf = facts.modules.filter((m) => m.start && m.end).map((m) => `${cdbHex(BigInt(m.start!))} ${cdbHex(BigInt(m.end!))}   ${moduleName(m.path)} ${m.path}`);
  return {
    banner: `This dump file has an exception of interest stored in it.\nThe stored exception information can be accessed via .ecxr.\n(${pid}.${(exception.thread ?? 0).toString(16)}): Access violation - code c0000005 (first/second chance not available)`,
    eventThread: event,
    threadIds: facts.threads.map((_, index) => index),
    ecxr: r,
    ecxrFrames: stack.split("\n").slice(1),
    exception: { "kn 0x29": stack, r, "u @$scopeip L0x1": instruction },
    commands: {
      "~": threads.join("\n"),
      "~*kn 1": threads.map((t) => `${t}\n${waiting}`).join("\n\n"),
      lm: `start             end                 module name\n${lm.join("\n")}`,
      lmf: `start             end                 module name\n${lmf.join("\n")}`,
      ".exr -1": `ExceptionAddress: ${rip.toString(16).padStart(16, "0")} (${crt.name}!atoi+0x0000000000000014)\n   ExceptionCode: c0000005 (Access violation)\n  ExceptionFlags: 00000000\nNumberParameters: 2\n   Parameter[0]: 0000000000000000\n   Parameter[1]: 0000000000000020\nAttempt to read from address 0000000000000020`,
    },
  };
}

describe.skipIf(missing.length > 0)(`--debugger cdb on a real minidump, cdb played by its stand-in${skipReason}`, () => {
  let dump = "";
  let env: Record<string, string> = {};
  let line = 0;

  beforeAll(async () => {
    const built = await buildMinidump("config-null");
    line = windowsCulpritLine("config-null");
    const dir = tempDir("dumpdbg-cdb-triage-");
    dump = path.join(dir, "crash.dmp");
    copyFileSync(built.dump, dump);
    // LLDB, which the verdict is checked against, looks for the program beside the dump.
    copyFileSync(built.exe, path.join(dir, path.basename(built.exe)));
    const script = path.join(dir, "cdb.json");
    writeFileSync(script, JSON.stringify({ ...scriptFor(dump, built.source, line), log: path.join(dir, "cdb.log") }));
    env = { FAKE_CDB_SCRIPT: script };
  });

  it("triages it: the kind from the dump's exception record, the culprit from cdb's stack, as LLDB does", async () => {
    const result = await runCli(["triage", dump, "--json", "--debugger", "cdb", "--cdb", FAKE_CDB], { env });
    expect(result.stderr).not.toMatch(/internal error|at .*\.js:\d+/);
    expect(result.code, result.stderr).toBe(0);
    const crash = JSON.parse(result.stdout) as Crash;
    expect(crash).toMatchObject({ kind: "null-dereference", signal: "EXCEPTION_ACCESS_VIOLATION", signalCode: "0xc0000005", faultAddress: "0x20", access: "read" });
    expect(crash.culprit).toMatchObject({ function: "listen_port", line, frame: 1 });
    expect(crash.culprit.module).toMatch(/config-null\.exe$/);
    expect(crash.signature.startsWith("null-dereference | listen_port | main")).toBe(true);

    const lldb = await runCli(["triage", dump, "--json", "--debugger", "lldb"]);
    expect(lldb.code, lldb.stderr).toBe(0);
    const other = JSON.parse(lldb.stdout) as Crash;
    expect([other.kind, other.culprit.function, other.culprit.line, other.faultAddress, other.access]).toEqual([crash.kind, crash.culprit.function, crash.culprit.line, crash.faultAddress, crash.access]);
  });

  it("runs exec's commands in cdb's language, refuses .shell without reaching cdb, and says cdb ran them", async () => {
    const result = await runCli(["exec", dump, "--debugger", "cdb", "--cdb", FAKE_CDB, "-c", "kn 0x29", "-c", ".shell dir", "--json"], { env });
    expect(result.code, result.stderr).toBe(1);
    const [kn, shell] = JSON.parse(result.stdout) as { ok: boolean; output: string; errorType: string | null; error: string | null; context: { backend: string } }[];
    expect(kn?.ok).toBe(true);
    expect(kn?.output).toMatch(/config_null!listen_port\+0x22 \[Z:.*config-null\.c @ \d+\]/);
    expect(kn?.context.backend).toBe("cdb");
    expect(shell).toMatchObject({ ok: false, errorType: "not_allowed" });
    expect(shell?.error).toMatch(/^"\.shell" runs a shell command; refused by the safety policy/);
    const log = readFileSync(JSON.parse(readFileSync(env.FAKE_CDB_SCRIPT!, "utf8")).log, "utf8");
    expect(log).not.toMatch(/^\.shell/m);
  });

  it("gives cdb the symbol path the user names, and no symbol server otherwise", async () => {
    const server = "srv*C:\\symbols*https://msdl.microsoft.com/download/symbols";
    const named = await runCli(["exec", dump, "--debugger", "cdb", "--cdb", FAKE_CDB, "--symbol-path", server, "-c", "~"], { env });
    expect(named.code, named.stderr).toBe(0);
    const unnamed = await runCli(["exec", dump, "--debugger", "cdb", "--cdb", FAKE_CDB, "-c", "~"], { env: { ...env, _NT_SYMBOL_PATH: undefined } });
    expect(unnamed.code, unnamed.stderr).toBe(0);
    const starts = readFileSync(JSON.parse(readFileSync(env.FAKE_CDB_SCRIPT!, "utf8")).log, "utf8").split("\n").filter((line) => line.startsWith("pid "));
    expect(starts.at(-2)).toContain(` -lines -noshell -y ${server} -i `);
    expect(starts.at(-1)).toContain(` -lines -noshell -y ${path.dirname(dump)} -i `);
    expect(starts.at(-1)).not.toMatch(/srv\*|https?:/);
  });

  it("writes an analysis report that names cdb as the debugger that ran", async () => {
    const out = tempDir("dumpdbg-cdb-report-");
    const result = await runCli(["analyze", dump, "--debugger", "cdb", "--cdb", FAKE_CDB, "--provider", "offline", "--json", "--out", out, "--sessions-dir", path.join(out, ".sessions")], { env });
    expect(result.stderr).not.toMatch(/internal error|at .*\.js:\d+/);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(readFileSync(path.join(out, readdirSync(out).find((f) => f.endsWith(".json"))!), "utf8"));
    expect(report.session.debugger).toMatch(/^Microsoft \(R\) Windows Debugger Version 10\.0\.\d+\.\d+ AMD64 \(.*fake-cdb\.mjs\)$/);
    expect(report.crash).toMatchObject({ kind: "null-dereference", culprit: { function: "listen_port", line } });
  });
});

describe("--debugger cdb off Windows", () => {
  it("is refused in one line that says how to name a cdb, when none is named", async () => {
    const dir = tempDir("dumpdbg-cdb-host-");
    const dump = path.join(dir, "crash.dmp");
    // A minidump header with no streams: recognised as a minidump, which is all the choice needs.
    const header = Buffer.alloc(32);
    header.write("MDMP", 0, "latin1");
    header.writeUInt32LE(0xa793, 4);
    writeFileSync(dump, header);
    const result = await runCli(["triage", dump, "--debugger", "cdb"], { env: { DUMPDBG_CDB: undefined } });
    expect(result.code).toBe(4);
    expect(result.stderr.trim()).toBe(`dumpdbg: ${dump}: cdb runs only on win32; name a binary that speaks its protocol with --cdb to use it here`);
  });

  it("doctor says which debuggers there are, cdb among them when it is named", async () => {
    const result = await runCli(["doctor", "--json", "--cdb", FAKE_CDB]);
    const findings = JSON.parse(result.stdout) as { name: string; ok: boolean; detail: string }[];
    expect(findings.find((f) => f.name === "cdb")).toEqual({ name: "cdb", ok: true, detail: `cdb version 10.0.22621.2428 (stand-in) (${FAKE_CDB}); --debugger cdb only (auto chooses it on win32)` });
    const unnamed = JSON.parse((await runCli(["doctor", "--json"], { env: { DUMPDBG_CDB: undefined, PATH: path.dirname(process.execPath) } })).stdout) as { name: string; ok: boolean; detail: string }[];
    expect(unnamed.find((f) => f.name === "cdb")).toEqual({ name: "cdb", ok: false, detail: "cdb: not found; auto chooses it only on win32" });
    expect(findings.map((f) => f.name)).toEqual(expect.arrayContaining(["gdb", "lldb", "cdb"]));
  });
});
