/**
 * The cdb session's protocol, against a stand-in process that speaks cdb's (tests/helpers/
 * fake-cdb.mjs): the banner and prompts, `.echo` markers, `.ecxr` on a crash dump, placed commands
 * that put the selection and the exception context back, errors, a hang past the timeout (a break,
 * then a kill and a reopen), a debugger that dies mid-command, SOS on .NET dumps; then triage
 * through it. cdb itself does not run here; tests/e2e/cdb-windows.test.ts runs the real one.
 */
import { execFileSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { triage } from "../../src/analyzers/triage/index.js";
import { CdbSession } from "../../src/debuggers/cdb/cdb-session.js";
import { parseExceptionRecord } from "../../src/debuggers/cdb/text/exception.js";
import { monitorCycles } from "../../src/analyzers/managed.js";
import { parseClrStacks, parsePrintException, parseSyncBlocks } from "../../src/debuggers/cdb/text/sos.js";
import { DebuggerError } from "../../src/debuggers/errors.js";
import { askSession } from "../../src/debuggers/inspector.js";
import { MANAGED_CRASH, NATIVE } from "../helpers/cdb-transcripts.js";
import { FAKE_CDB, fakeDump, managedCrashScript, managedDeadlockScript, nativeCrashScript, type FakeCdbScript } from "../helpers/fake-cdb.js";

const sessions: CdbSession[] = [];

async function open(script: FakeCdbScript, options: { timeoutMs?: number; symbolPath?: string } = {}) {
  const fake = fakeDump(script);
  const session = new CdbSession({ dump: fake.dump, executable: null, binary: FAKE_CDB, ...options });
  sessions.push(session);
  await session.open();
  return { session, fake };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The stand-ins started for a dump, by pid, in order. */
function pids(lines: string[]): number[] {
  return lines.filter((line) => line.startsWith("pid ")).map((line) => Number(line.split(" ")[1]));
}

afterAll(async () => {
  await Promise.all(sessions.map((s) => s.close()));
});

describe("CdbSession on a native crash dump", () => {
  it("starts cdb on the dump with source lines, no .shell, and an offline symbol path, then sets the exception context", async () => {
    const { session, fake } = await open(nativeCrashScript());
    const [start, ...commands] = fake.lines();
    expect(start).toBe(`pid ${pids(fake.lines())[0]} -z ${fake.dump} -lines -noshell -y ${fake.dir} -i ${fake.dir}`);
    expect(commands[1]).toBe(".ecxr");
    expect(commands.filter((c) => !c.startsWith(".echo "))).toEqual([".ecxr", "~", "lm", ".frame"]);
    // Every command is followed by its marker, counting up.
    const markers = commands.filter((c) => c.startsWith(".echo ")).map((c) => Number(c.split("-").at(-1)));
    expect(markers).toEqual([1, 2, 3, 4, 5]);
    expect(session.version()).toBe("Microsoft (R) Windows Debugger Version 10.0.22621.2428 AMD64");
    expect(session.loadWarnings).toEqual(["*** WARNING: Unable to verify checksum for config_null.exe"]);
    expect(session.context()).toEqual({
      backend: "cdb",
      targetLoaded: true,
      threadCount: 3,
      selectedThread: { id: 0, lwp: 0x1b3c, name: "main" },
      selectedFrame: { level: 0, function: "listen_port", file: "C:\\src\\service\\config-null.c", line: 44, address: null },
    });
    expect(session.managed).toBeNull();
  });

  it("passes the symbol path the user named, and leaves _NT_SYMBOL_PATH to cdb when none is named", () => {
    const named = new CdbSession({ dump: "C:\\dumps\\crash.dmp", executable: null, symbolPath: "srv*C:\\symbols*https://msdl.microsoft.com/download/symbols", modulesPath: ["C:\\dlls"] });
    expect(named.arguments({})).toEqual(["-z", "C:\\dumps\\crash.dmp", "-lines", "-noshell", "-y", "srv*C:\\symbols*https://msdl.microsoft.com/download/symbols", "-i", "C:\\dlls;."]);
    const environment = new CdbSession({ dump: "/d/crash.dmp", executable: "/app/prog.exe" });
    expect(environment.arguments({ _NT_SYMBOL_PATH: "C:\\symbols" })).toEqual(["-z", "/d/crash.dmp", "-lines", "-noshell", "-i", "/d;/app"]);
    expect(environment.arguments({})).toEqual(["-z", "/d/crash.dmp", "-lines", "-noshell", "-y", "/d;/app", "-i", "/d;/app"]);
  });

  it("returns a command's output without cdb's prompts, and a dump's text that looks like a marker stays output", async () => {
    const script = nativeCrashScript();
    script.commands = { ...script.commands, "da 0x1000": '00000000`00001000  "dumpdbg-0123456789abcdef-12"\n0:000> dumpdbg-0123456789abcdef-12' };
    const { session } = await open(script);
    const stack = await session.run("kn 0x29");
    expect(stack).toMatchObject({ ok: true, output: NATIVE.stack });
    expect(stack.context.selectedThread?.id).toBe(0);
    const forged = await session.run("da 0x1000");
    expect(forged.output).toBe('00000000`00001000  "dumpdbg-0123456789abcdef-12"\ndumpdbg-0123456789abcdef-12');
    expect((await session.run("r")).output).toBe(NATIVE.registers);
  });

  it("takes a long output whole, arriving in many pieces", async () => {
    const script = nativeCrashScript();
    const rows = Array.from({ length: 60_000 }, (_, i) => `000001f2\`a5${i.toString(16).padStart(6, "0")} 00007ffa1b2c5b20       ${24 + (i % 7) * 8}`);
    script.commands = { ...script.commands, "!dumpheap": rows.join("\n") };
    const { session } = await open(script);
    const heap = await session.run("!dumpheap");
    expect(heap.output.split("\n")).toEqual(rows);
    expect((await session.run("r")).output).toBe(NATIVE.registers);
  });

  it("reports cdb's errors as failed commands, with cdb's own line", async () => {
    const { session } = await open(nativeCrashScript());
    expect(await session.run("frobnicate")).toMatchObject({ ok: false, errorType: "debugger_error", error: "^ Syntax error in 'frobnicate'" });
    expect(await session.run("?? nosuch")).toMatchObject({ ok: false, errorType: "debugger_error", error: "Couldn't resolve error at 'nosuch'" });
    expect(await session.run("kb\n.shell dir")).toMatchObject({ ok: false, errorType: "debugger_error" });
    // A placed command aimed at a thread the dump does not have fails with cdb's line, not an empty success.
    expect(await session.run("[thread 9] kn 0x29")).toMatchObject({ ok: false, errorType: "debugger_error", error: "^ Illegal thread error in '~9s'" });
  });

  it("runs a placed command in its thread and frame and puts the selection and the exception context back", async () => {
    const { session, fake } = await open(nativeCrashScript());
    const before = fake.lines().length;
    const other = await session.run("[thread 2] kn 0x29");
    expect(other.output).toMatch(/ntdll!NtWaitForSingleObject\+0x14$/);
    const sent = fake.lines().slice(before).filter((c) => !c.startsWith(".echo "));
    expect(sent).toEqual(["~2s", ".frame 0x0", "kn 0x29", "~0s", ".ecxr", ".frame 0x0"]);
    // Back in the exception context: the crashing thread's stack again.
    expect((await session.run("kn 0x29")).output).toBe(NATIVE.stack);
    expect(session.context().selectedThread?.id).toBe(0);
  });

  it("follows a command that moves the selection", async () => {
    const { session } = await open(nativeCrashScript());
    const moved = await session.run("~1s");
    expect(moved.context.selectedThread).toEqual({ id: 1, lwp: 0x2d40, name: null });
    expect(moved.context.selectedFrame?.function).toBe("NtWaitForWorkViaWorkerFactory");
    expect((await session.run(".frame 0x2")).context.selectedFrame).toBeNull();
  });

  it("reads a source file's lines through the source prefix", async () => {
    const { session, fake } = await open(nativeCrashScript());
    const listed = await session.run('[source "C:\\src\\service\\config-null.c"] ls 0n43, 0n3');
    expect(listed).toMatchObject({ ok: true, output: NATIVE.source });
    expect(fake.lines().filter((c) => c.startsWith("ls")).length).toBe(2);
  });

  it("triages the dump through the session: the exception record's kind, the culprit, the faulting instruction", async () => {
    const { session } = await open(nativeCrashScript());
    const result = await triage(askSession(session), { stopReason: parseExceptionRecord(NATIVE.exceptionRecord), platform: { os: "windows", arch: "x86_64", pointerSize: 8 } });
    expect(result.crash).toMatchObject({ kind: "null-dereference", signal: "EXCEPTION_ACCESS_VIOLATION", faultAddress: "0x20", access: "read" });
    expect(result.crash.culprit).toEqual({ function: "listen_port", file: "C:\\src\\service\\config-null.c", line: 44, column: null, frame: 0, module: "C:\\Program Files\\Service\\config_null.exe", language: "c" });
    expect(result.crash.signature).toBe("null-dereference | listen_port | start_listener | main");
    expect(result.instruction).toBe("mov 0x20(%rax),%eax");
    expect(result.threads.count).toBe(3);
    expect(result.commands).toContain("kn 0x29");
  });
});

describe("CdbSession when cdb misbehaves", () => {
  it("breaks a command past its timeout and keeps the session when cdb comes back; late output is not the next command's", async () => {
    const script = nativeCrashScript();
    script.hang = ["!analyze -v"];
    script.hangOutput = "*** analysing, please wait\n";
    const { session, fake } = await open(script, { timeoutMs: 400 });
    const hung = await session.run("!analyze -v");
    expect(hung).toMatchObject({ ok: false, errorType: "timeout", error: "command timed out after 0.4s and was interrupted" });
    expect(hung.reopened).toBeUndefined();
    expect(fake.lines()).toContain("break");
    expect(pids(fake.lines())).toHaveLength(1);
    const next = await session.run("r");
    expect(next).toMatchObject({ ok: true, output: NATIVE.registers });
  });

  it("kills cdb that ignores the break and reopens the dump, leaving no process behind", async () => {
    const script = nativeCrashScript();
    script.hang = ["!analyze -v"];
    script.stuck = true;
    const { session, fake } = await open(script, { timeoutMs: 300 });
    const [first] = pids(fake.lines());
    const hung = await session.run("!analyze -v");
    expect(hung).toMatchObject({ ok: false, errorType: "timeout", reopened: true });
    expect(hung.error).toMatch(/killed and the dump reopened$/);
    expect(alive(first!)).toBe(false);
    expect(pids(fake.lines())).toHaveLength(2);
    expect(await session.run("kn 0x29")).toMatchObject({ ok: true, output: NATIVE.stack });
    expect(session.context().selectedThread?.id).toBe(0);
  });

  it("reopens the dump after cdb dies in the middle of a command, asks it once more, and says so", async () => {
    const script = nativeCrashScript();
    script.die = ["!heap -s"];
    script.dieOutput = "Heap Address      NT/Segment Heap\n";
    const { session, fake } = await open(script);
    const died = await session.run("!heap -s");
    expect(died).toMatchObject({ ok: false, errorType: "session_dead", reopened: true, output: "" });
    expect(died.error).toBe(
      "cdb exited with code 3 (Heap Address      NT/Segment Heap), and again when asked once more (cdb exited with code 3 (Heap Address      NT/Segment Heap)): it may crash on this command every time; the dump was reopened",
    );
    expect(pids(fake.lines())).toHaveLength(3);
    expect((await session.run("r")).ok).toBe(true);
  });

  it("refuses to open a dump cdb cannot load, in one line, with no process left", async () => {
    const script = nativeCrashScript();
    const fake = fakeDump({ ...script, exitAtStart: "Could not open dump file [crash.dmp], HRESULT 0x80004005\n" });
    const session = new CdbSession({ dump: fake.dump, executable: null, binary: FAKE_CDB });
    await expect(session.open()).rejects.toThrow(DebuggerError);
    await expect(session.open()).rejects.toThrow(/^cdb exited with code 1 \(Could not open dump file \[crash\.dmp\], HRESULT 0x80004005\)$/);
    expect(pids(fake.lines()).filter(alive)).toEqual([]);
  });

  it("says a binary that is not there is missing", async () => {
    const fake = fakeDump(nativeCrashScript());
    const session = new CdbSession({ dump: fake.dump, executable: null, binary: `${fake.dir}/no-such-cdb` });
    await expect(session.open()).rejects.toThrow(/cannot start .*no-such-cdb: not found/);
  });

  it("closes with q, and the process is gone", async () => {
    const { session, fake } = await open(nativeCrashScript());
    const [pid] = pids(fake.lines());
    await session.close();
    expect(fake.lines().at(-1)).toBe("q");
    expect(alive(pid!)).toBe(false);
  });
});

describe("CdbSession on .NET dumps", () => {
  it("loads SOS beside the CLR the process ran, and reads the managed exception", async () => {
    const { session, fake } = await open(managedCrashScript(true));
    expect(fake.lines()).toContain(".loadby sos coreclr");
    expect(session.managed).toBe(true);
    expect(session.loadWarnings).toEqual([]);
    const exception = await session.run("!pe");
    expect(parsePrintException(exception.output)).toMatchObject({ type: "System.NullReferenceException", message: "Object reference not set to an instance of an object." });
  });

  it("triages a .NET crash: an uncaught exception, what the runtime died with from !pe, the culprit the program's managed method", async () => {
    const { session } = await open(managedCrashScript(true));
    const exception = parseExceptionRecord(MANAGED_CRASH.analyze);
    const result = await triage(askSession(session), { stopReason: exception, platform: { os: "windows", arch: "x86_64", pointerSize: 8 } });
    expect(result.crash).toMatchObject({ kind: "uncaught-exception", signal: "CLR exception (.NET)", signalCode: "0xe0434352", message: "System.NullReferenceException: Object reference not set to an instance of an object." });
    // JIT-compiled code has no symbols for cdb: SOS's !clrstack names it; the CLR's own frames are never the culprit.
    expect(result.crash.culprit).toEqual({ function: "OrderService.Pricing.Discount", file: "C:\\app\\src\\Pricing.cs", line: 27, frame: 0, module: "OrderService", language: null });
    expect(result.commands).toEqual(expect.arrayContaining(["!threads", "!pe", "!clrstack -a", "!dumpheap -stat"]));
  });

  it("names a .NET crash by its HRESULT when SOS is missing", async () => {
    const { session } = await open(managedCrashScript(false));
    const result = await triage(askSession(session), { stopReason: parseExceptionRecord(MANAGED_CRASH.analyze), platform: { os: "windows", arch: "x86_64", pointerSize: 8 } });
    expect(result.crash).toMatchObject({ kind: "uncaught-exception", message: "unhandled .NET exception (HRESULT 0x80004003)" });
    expect(result.commands).toContain(".lastevent");
  });

  it("says so when SOS cannot be loaded, after trying the extension path too", async () => {
    const { session, fake } = await open(managedCrashScript(false));
    expect(fake.lines().filter((c) => c.startsWith(".load"))).toEqual([".loadby sos coreclr", ".load sos"]);
    expect(session.managed).toBe(false);
    expect(session.loadWarnings).toEqual(["the process ran .NET (coreclr.dll) but cdb could not load SOS: managed threads, stacks and exceptions are not readable (install it with dotnet-sos)"]);
  });

  it("finds a managed deadlock from !syncblk and every thread's !clrstack -a", async () => {
    const { session } = await open(managedDeadlockScript());
    const blocks = parseSyncBlocks((await session.run("!syncblk")).output);
    const stacks = parseClrStacks((await session.run("~*e !clrstack -a")).output);
    const cycles = monitorCycles(stacks, blocks);
    expect(cycles.map((cycle) => cycle.map((wait) => [wait.thread, wait.heldByThread, wait.line]))).toEqual([[[5, 6, 21], [6, 5, 21]]]);
  });
});

describe("the stand-in itself", () => {
  it("answers -version as doctor asks", () => {
    expect(execFileSync(FAKE_CDB, ["-version"], { encoding: "utf8" })).toMatch(/^cdb version 10\.0/);
  });
});
