/** The GDB/MI session on real cores of real crashes: output, context, timeouts, a dead gdb. */
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { GdbSession } from "../../src/debuggers/gdb/gdb-session.js";
import { endKeptGdbs } from "../../src/debuggers/gdb/kept-gdb.js";
import { buildCore, culpritLine } from "../helpers/cores.js";

const sessions: GdbSession[] = [];

async function open(name: string, timeoutMs = 30_000): Promise<GdbSession> {
  const built = await buildCore(name);
  const session = new GdbSession({ dump: built.core, executable: built.exe, timeoutMs });
  sessions.push(session);
  await session.open();
  return session;
}

/** gdb processes whose parent is this test process. */
function ourGdbs(): number[] {
  const out = execFileSync("ps", ["-o", "pid=,ppid=,comm=", "-e"], { encoding: "utf8" });
  return out
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, ppid, comm]) => Number(ppid) === process.pid && comm === "gdb")
    .map(([pid]) => Number(pid));
}

afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});

describe("GdbSession on a null dereference", () => {
  it("prints the backtrace, threads, registers and siginfo as gdb would", async () => {
    const session = await open("null-deref");
    expect(session.version()).toMatch(/GNU gdb/);

    const bt = await session.run("bt");
    expect(bt.ok).toBe(true);
    expect(bt.output).toMatch(/^#0 +(0x[0-9a-f]+ in )?send_to_client \(session=0x[0-9a-f]+, message=.*\) at .*null-deref\.c:\d+/m);
    expect(bt.output).toContain(`null-deref.c:${culpritLine("null-deref")}`);
    expect(bt.output).toMatch(/^#1 .* in broadcast /m);

    const threads = await session.run("info threads");
    expect(threads.output).toMatch(/^\* 1 +(Thread|LWP)/m);

    const regs = await session.run("info registers rip");
    expect(regs.output).toMatch(/^rip +0x[0-9a-f]+ +0x[0-9a-f]+ <send_to_client\+\d+>/m);

    const signo = await session.run("p $_siginfo.si_signo");
    expect(signo.output.trim()).toBe("$1 = 11");
    const addr = await session.run("p $_siginfo._sifields._sigfault.si_addr");
    expect(addr.output).toMatch(/= \(void \*\) 0x[0-9a-f]{1,4}\n/);

    expect(bt.context).toMatchObject({ backend: "gdb", targetLoaded: true, threadCount: 1 });
    expect(bt.context.selectedThread?.id).toBe(1);
    expect(bt.context.selectedThread?.lwp).toBeGreaterThan(0);
    expect(bt.context.selectedFrame).toMatchObject({ level: 0, function: "send_to_client", line: culpritLine("null-deref") });
  });

  it("follows frame selection in the context it reports", async () => {
    const session = await open("null-deref");
    const up = await session.run("up");
    expect(up.ok).toBe(true);
    expect(up.context.selectedFrame).toMatchObject({ level: 1, function: "broadcast" });
    const frame0 = await session.run("frame 0");
    expect(frame0.context.selectedFrame).toMatchObject({ level: 0, function: "send_to_client" });
    // `thread 1` on the selected thread goes back to frame 0 without gdb announcing it; the next
    // `frame 0` changes nothing gdb would announce either: the context must follow both.
    await session.run("frame 1");
    expect((await session.run("thread 1")).context.selectedFrame).toMatchObject({ level: 0 });
    await session.run("frame 1");
    await session.run("thread 1");
    expect((await session.run("frame 0")).context.selectedFrame).toMatchObject({ level: 0, function: "send_to_client" });
    expect((await session.run("p 1")).context.selectedFrame?.level).toBe(0);
  });

  it("reports a gdb error as a failed result and stays usable", async () => {
    const session = await open("null-deref");
    const bad = await session.run("frobnicate");
    expect(bad).toMatchObject({ ok: false, errorType: "debugger_error" });
    expect(bad.error).toMatch(/Undefined command: "frobnicate"/);
    const noMemory = await session.run("x/4xg 0");
    expect(noMemory).toMatchObject({ ok: false, errorType: "debugger_error" });
    expect(noMemory.error).toMatch(/Cannot access memory at address 0x0/);
    expect((await session.run("bt 1")).ok).toBe(true);
  });

  it("refuses a command with a newline instead of passing it to gdb", async () => {
    const session = await open("null-deref");
    const result = await session.run("bt\n-gdb-exit");
    expect(result).toMatchObject({ ok: false, errorType: "debugger_error" });
    expect((await session.run("bt 1")).ok).toBe(true);
  });
});

describe("GdbSession on other crashes", () => {
  it("shows the abort's signal and its frames", async () => {
    const session = await open("abort");
    expect((await session.run("p $_siginfo.si_signo")).output.trim()).toBe("$1 = 6");
    const bt = await session.run("bt");
    expect(bt.output).toMatch(/\babort\b/);
    expect(bt.output).toContain(`abort.c:${culpritLine("abort")}`);
  });

  it("lands on the crashing worker thread of a multi-threaded program", async () => {
    const session = await open("thread-crash");
    const threads = await session.run("info threads");
    expect(threads.context.threadCount).toBeGreaterThanOrEqual(5);
    expect(threads.output.split("\n").filter((l) => /^\*? +\d+ +Thread/.test(l)).length).toBe(threads.context.threadCount);
    // gdb selects the thread that took the signal: its stack is the worker's, not main's.
    const bt = await session.run("bt");
    expect(bt.output).toContain(`thread-crash.c:${culpritLine("thread-crash")}`);
    expect(bt.output).not.toMatch(/ in main \(/);
    const all = await session.run("thread apply all bt");
    expect(all.output).toMatch(/ in main \(/);
    expect((await session.run("p $_siginfo.si_signo")).output.trim()).toBe("$1 = 11");
  });
});

describe("GdbSession reading ahead", () => {
  it("answers commands read ahead once, in their turn, and ends the reading ahead at any other", async () => {
    const session = await open("null-deref");
    const count = async (command = "p ++$reads") => Number(/= (\d+)/.exec((await session.run(command)).output)?.[1]);
    await session.run("set $reads = 0");
    session.readAhead(["p ++$reads", "p ++$reads"]);
    // Each taken in its turn, not run again: the third is a command of its own.
    expect([await count(), await count(), await count()]).toEqual([1, 2, 3]);

    session.readAhead(["p ++$reads", "p ++$reads"]);
    // A command not read ahead ends it: what was read ahead ran, and is not handed to a later ask.
    expect((await session.run("info threads")).ok).toBe(true);
    expect(await count()).toBe(6);

    session.readAhead(["p ++$reads", "p ++$reads"], { among: ["p $reads"] });
    // One that may come among them runs in its turn, after those already read ahead, which go on.
    expect(await count("p $reads")).toBe(8);
    expect([await count(), await count(), await count()]).toEqual([7, 8, 9]);
  });
});

describe("gdb reading the source file names ahead", () => {
  it("reads them without expanding anything, and the listing after it is the same", async () => {
    const reference = await open("null-deref");
    const line = culpritLine("null-deref");
    const file = /at (\S+null-deref\.c):\d+/.exec((await reference.run("bt 1")).output)?.[1];
    expect(file).toBeDefined();
    const listing = await reference.run(`list ${file}:${line},${line}`);

    const session = await open("null-deref");
    await session.run("bt 1");
    const expanded = (await session.run("maint info symtabs")).output;
    const command = session.vocabulary.readSourceNames;
    expect(command).toBeDefined();
    const read = await session.run(command as string);
    expect(read).toMatchObject({ ok: true, output: "" });
    // No compilation unit was expanded by it: gdb's expanded symbol tables are the ones before.
    expect((await session.run("maint info symtabs")).output).toBe(expanded);
    expect(await session.run(`list ${file}:${line},${line}`)).toMatchObject({ ok: true, output: listing.output });
  });
});

describe("a batch's gdb, kept from one dump to the next", () => {
  async function openKept(name: string): Promise<GdbSession> {
    const built = await buildCore(name);
    const session = new GdbSession({ dump: built.core, executable: built.exe, keep: true });
    sessions.push(session);
    await session.open();
    return session;
  }
  afterEach(() => endKeptGdbs());

  it("loads the next dump for the next session, which reads that dump alone, as a gdb of its own would", async () => {
    const first = await openKept("null-deref");
    expect((await first.run("bt 1")).output).toMatch(/send_to_client/);
    await first.close();
    const kept = ourGdbs();
    expect(kept).toHaveLength(1);

    const second = await openKept("div-zero");
    expect(ourGdbs()).toEqual(kept);
    const alone = await open("div-zero");
    for (const command of ["bt", "info threads", "info sharedlibrary", "info files", "info registers rip", "x/2i $pc"]) {
      const [reused, fresh] = [await second.run(command), await alone.run(command)];
      expect(reused.ok, command).toBe(true);
      expect(reused.output, command).toBe(fresh.output);
    }
    expect(second.context()).toEqual(alone.context());
    expect(second.loadWarnings).toEqual(alone.loadWarnings);
    await second.close();
    await alone.close();
    // The batch is over: the kept gdb is ended, and nothing of ours runs.
    expect(ourGdbs()).toEqual(kept);
    await endKeptGdbs();
    expect(ourGdbs()).toEqual([]);
  });

  it("is ended, not kept, once a command the safety policy refuses has run in it", async () => {
    const session = await openKept("null-deref");
    await session.run("set var $dumpdbg_seen = 1");
    await session.close();
    expect(ourGdbs()).toEqual([]);
    const next = await openKept("null-deref");
    expect((await next.run("p $dumpdbg_seen")).output.trim()).toBe("$1 = void");
  });
});

describe("GdbSession recovery", () => {
  it("interrupts a command past its timeout and stays usable", async () => {
    const session = await open("null-deref");
    const slow = await session.run("python import time; time.sleep(60)", { timeoutMs: 500 });
    expect(slow).toMatchObject({ ok: false, errorType: "timeout" });
    expect(slow.error).toMatch(/timed out after 0.5s and was interrupted/);
    expect(slow.reopened).toBeUndefined();
    expect(slow.ms).toBeLessThan(5_000);
    const bt = await session.run("bt 1");
    expect(bt.ok).toBe(true);
    expect(bt.output).toMatch(/send_to_client/);
  });

  it("kills and reopens gdb when an interrupt does not bring it back", async () => {
    const session = await open("null-deref");
    const before = ourGdbs();
    // gdb waits for its shell child and ignores the interrupt meanwhile.
    const stuck = await session.run("shell sleep 60", { timeoutMs: 500 });
    expect(stuck).toMatchObject({ ok: false, errorType: "timeout", reopened: true });
    expect(stuck.error).toMatch(/killed and the dump reopened/);
    const after = ourGdbs();
    expect(after).toHaveLength(before.length);
    expect(after).not.toEqual(before);
    const bt = await session.run("bt 1");
    expect(bt.ok).toBe(true);
    expect(bt.output).toMatch(/send_to_client/);
    expect(bt.context.selectedFrame?.function).toBe("send_to_client");
  });

  it("notices a killed gdb and reopens the dump", async () => {
    const before = ourGdbs();
    const session = await open("null-deref");
    const [gdbPid] = ourGdbs().filter((pid) => !before.includes(pid));
    expect(gdbPid).toBeDefined();
    process.kill(gdbPid!, "SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 200));

    const first = await session.run("bt 1");
    expect(first.reopened).toBe(true);
    expect(first.ok).toBe(true);
    expect(first.output).toMatch(/send_to_client/);
    expect(ourGdbs().filter((pid) => !before.includes(pid))).toHaveLength(1);
  });

  it("reports a gdb that dies in the middle of a command, and again when asked once more, as session_dead, then works again", async () => {
    const session = await open("null-deref");
    const died = await session.run("python import os, signal; os.kill(os.getpid(), signal.SIGKILL)");
    expect(died).toMatchObject({ ok: false, errorType: "session_dead", reopened: true });
    expect(died.error).toBe("gdb killed by SIGKILL, and again when asked once more (gdb killed by SIGKILL): it may crash on this command every time; the dump was reopened");
    expect((await session.run("bt 1")).ok).toBe(true);
  });
});
