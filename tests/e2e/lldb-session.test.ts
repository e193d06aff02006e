/** The LLDB session over lldb-vscode's DAP on real cores of real crashes: output, context, timeouts, a dead adapter. */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { resolveAdapter } from "../../src/debuggers/lldb/adapter.js";
import { LldbSession } from "../../src/debuggers/lldb/lldb-session.js";
import { pythonCache, pythonCacheEnv, readManifest, writeManifest } from "../../src/debuggers/lldb/python-cache.js";
import { buildCore, culpritLine } from "../helpers/cores.js";

const sessions: LldbSession[] = [];

async function open(name: string, timeoutMs = 30_000): Promise<LldbSession> {
  const built = await buildCore(name);
  const session = new LldbSession({ dump: built.core, executable: built.exe, timeoutMs });
  sessions.push(session);
  await session.open();
  return session;
}

/** DAP adapters whose parent is this test process. */
function ourAdapters(): number[] {
  const out = execFileSync("ps", ["-o", "pid=,ppid=,comm=", "-e"], { encoding: "utf8" });
  return out
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, ppid, comm]) => Number(ppid) === process.pid && /^lldb-(vscode|dap)/.test(comm ?? ""))
    .map(([pid]) => Number(pid));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function newAdapterOf(open: () => Promise<LldbSession>): Promise<{ session: LldbSession; pid: number }> {
  const before = ourAdapters();
  const session = await open();
  const [pid] = ourAdapters().filter((p) => !before.includes(p));
  expect(pid).toBeDefined();
  return { session, pid: pid! };
}

async function closeAll(): Promise<void> {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
}

afterAll(closeAll);

describe("LldbSession on a null dereference", () => {
  let session: LldbSession;
  beforeAll(async () => {
    session = await open("null-deref");
  });
  afterAll(closeAll);

  it("loads the core with its executable and says where it stands", () => {
    expect(session.version()).toMatch(/^lldb version \d+\.\d+/);
    expect(session.loadWarnings).toEqual([]);
    expect(session.context()).toMatchObject({
      backend: "lldb",
      targetLoaded: true,
      threadCount: 1,
      selectedThread: { id: 1, name: "null-deref" },
      selectedFrame: { level: 0, function: "send_to_client", file: expect.stringMatching(/\/null-deref\.c$/), line: culpritLine("null-deref") },
    });
    expect(session.context().selectedThread?.lwp).toBeGreaterThan(0);
    expect(session.context().selectedFrame?.address).toMatch(/^0x[0-9a-f]+$/);
  });

  it("prints the backtrace, threads and a register as lldb does", async () => {
    const bt = await session.run("bt");
    expect(bt).toMatchObject({ ok: true, command: "bt" });
    // dumpdbg's formats: the tid in a backtrace's header, a source file's full path.
    expect(bt.output).toMatch(/^\* thread #1: tid = \d+, name = 'null-deref', stop reason = signal SIGSEGV\n/);
    expect(bt.output).toMatch(
      new RegExp(`^  \\* frame #0: 0x[0-9a-f]+ null-deref\`send_to_client\\(session=0x[0-9a-f]+, message=.*\\) at \\S*/null-deref\\.c:${culpritLine("null-deref")}:\\d+$`, "m"),
    );
    expect(bt.output).toMatch(/^ {4}frame #1: 0x[0-9a-f]+ null-deref`broadcast\(/m);

    const threads = await session.run("thread list");
    expect(threads.output).toMatch(/^\* thread #1: tid = \d+, /m);
    const lwp = Number(/tid = (\d+)/.exec(threads.output)?.[1]);
    expect(threads.context.selectedThread?.lwp).toBe(lwp);

    const rip = await session.run("register read rip");
    expect(rip.output).toMatch(/^ +rip = 0x[0-9a-f]+ +null-deref`send_to_client \+ \d+ at null-deref\.c:\d+/);
  });

  it("shows a frame's variables after selecting it, and follows the selection", async () => {
    const select = await session.run("frame select 1");
    expect(select.ok).toBe(true);
    expect(select.output).toMatch(/^frame #1: 0x[0-9a-f]+ null-deref`broadcast\(/);
    expect(select.context.selectedFrame).toMatchObject({ level: 1, function: "broadcast", file: expect.stringMatching(/\/null-deref\.c$/), line: 35 });

    const variables = await session.run("frame variable");
    expect(variables.output).toMatch(/^\(int\) count = 3$/m);
    expect(variables.output).toMatch(/^\(int\) i = 1$/m);
    expect(variables.context.selectedFrame?.level).toBe(1);

    expect((await session.run("up")).context.selectedFrame).toMatchObject({ level: 2, function: "main" });
    expect((await session.run("down")).context.selectedFrame).toMatchObject({ level: 1, function: "broadcast" });
    const back = await session.run("f 0");
    expect(back.context.selectedFrame).toMatchObject({ level: 0, function: "send_to_client" });
    expect((await session.run("frame variable session")).output).toMatch(/^\(session \*\) session = 0x[0-9a-f]+$/m);
  });

  it("reports lldb's errors as failed results and stays usable", async () => {
    const missing = await session.run("frame variable no_such_var");
    expect(missing).toMatchObject({ ok: false, errorType: "debugger_error", output: "" });
    expect(missing.error).toBe("no variable named 'no_such_var' found in this frame");

    const unknown = await session.run("frobnicate");
    expect(unknown).toMatchObject({ ok: false, errorType: "debugger_error" });
    expect(unknown.error).toMatch(/'frobnicate' is not a valid command/);

    const memory = await session.run("memory read 0");
    expect(memory).toMatchObject({ ok: false, errorType: "debugger_error" });
    expect(memory.error).toMatch(/core file does not contain 0x0/);

    expect((await session.run("bt 1")).ok).toBe(true);
  });

  it("refuses a command with a newline instead of passing it to lldb", async () => {
    const result = await session.run("bt\nplatform shell true");
    expect(result).toMatchObject({ ok: false, errorType: "debugger_error" });
    expect((await session.run("bt 1")).ok).toBe(true);
  });

  it("runs queued commands one at a time, each with its own output", async () => {
    const [bt, regs, threads] = await Promise.all([session.run("bt 1"), session.run("register read rsp"), session.run("thread list")]);
    expect(bt.output).toMatch(/^\* thread #1/);
    expect(bt.output).not.toMatch(/rsp =|Process \d+ stopped/);
    expect(regs.output).toMatch(/^ +rsp = 0x[0-9a-f]+\n$/);
    expect(threads.output).toMatch(/^Process \d+ stopped\n/);
  });
});

describe("LldbSession on a multi-threaded crash", () => {
  let session: LldbSession;
  beforeAll(async () => {
    session = await open("thread-crash");
  });
  afterAll(closeAll);

  it("lists every thread and lands on the crashing worker", async () => {
    const threads = await session.run("thread list");
    expect(threads.context.threadCount).toBe(5);
    expect(threads.output.split("\n").filter((l) => /^[* ] thread #\d+: tid = \d+/.test(l))).toHaveLength(5);
    expect(threads.output).toMatch(/^\* thread #1: .*stop reason = signal SIGSEGV$/m);

    const bt = await session.run("bt");
    expect(bt.output).toContain(`thread-crash.c:${culpritLine("thread-crash")}`);
    expect(bt.output).not.toMatch(/`main at /);
    expect((await session.run("bt all")).output).toMatch(/thread-crash`main at thread-crash\.c/);
  });

  it("follows thread selection with lldb's index and the OS thread id", async () => {
    const listed = (await session.run("thread list")).output;
    const tid = Number(/^ {2}thread #3: tid = (\d+)/m.exec(listed)?.[1]);
    const select = await session.run("thread select 3");
    expect(select.ok).toBe(true);
    expect(select.context.selectedThread).toEqual({ id: 3, lwp: tid, name: null });
    expect(select.context.selectedFrame?.level).toBe(0);
    expect((await session.run("bt 1")).output).toMatch(/^\* thread #3/);
    expect((await session.run("thread select 1")).context.selectedThread).toMatchObject({ id: 1, name: "thread-crash" });
  });

  it("runs a command placed in another thread and frame, then puts the selection back", async () => {
    const before = (await session.run("frame select 0")).context;
    const listed = (await session.run("thread list")).output;
    const tid = Number(/^ {2}thread #2: tid = (\d+)/m.exec(listed)?.[1]);
    const info = await session.run("[thread 2, frame 1] thread info");
    expect(info.ok).toBe(true);
    expect(info.command).toBe("[thread 2, frame 1] thread info");
    expect(info.output).toMatch(new RegExp(`^thread #2: tid = ${tid}, `));
    const frame = await session.run("[frame 1] frame info");
    expect(frame.output).toMatch(/^frame #1: .*worker_main/);
    // Where lldb stood before: the crashing thread's innermost frame.
    expect(frame.context.selectedThread).toEqual(before.selectedThread);
    expect(frame.context.selectedFrame?.level).toBe(0);
    expect((await session.run("frame info")).output).toMatch(/^frame #0: .*process_job/);
    const missing = await session.run("[thread 99] bt");
    expect(missing).toMatchObject({ ok: false, errorType: "debugger_error" });
    expect(missing.error).toMatch(/thread/i);
    expect((await session.run("thread info")).output).toMatch(/^thread #1: /);
  });
});

describe("LldbSession with commands asked together", () => {
  afterEach(closeAll);

  it("sends the next ones ahead and answers each as one at a time would: output, order, context", async () => {
    // Reads, placed commands and selection moves (nothing is sent past those), an error, and the
    // value history ($0, $1…) that depends on the order.
    const commands = ["bt", "register read rip", "p 1+1", "thread #1 frame #1 frame variable", "frame select 1", "frame info", "p 2+2", "memory read --size 8 --format x --count 4 $sp", "p nosuchsymbol", "up", "frame select 0", "thread info", "image lookup --address $pc"];
    const repeated = Array.from({ length: 3 }, () => commands).flat();
    const together = await open("null-deref");
    const answers = await Promise.all(repeated.map((command) => together.run(command)));
    const alone = await open("null-deref");
    for (const [i, command] of repeated.entries()) {
      const one = await alone.run(command);
      const { ms: _ms, ...answer } = answers[i]!;
      const { ms: _oneMs, ...expected } = one;
      expect(answer, command).toEqual(expected);
    }
    expect(answers.find((a) => a.command === "p 2+2")!.output).toMatch(/= 4/);
  });

  it("a command past its timeout with commands sent ahead: the dump is reopened, and they run in their turn", async () => {
    const session = await open("null-deref");
    // A regex over every symbol's name, glibc's debug information included: well over 30 ms here,
    // and a read the policy allows, so the commands after it were sent ahead.
    const [first, slow, after, frame] = await Promise.all([
      session.run("bt 1"),
      session.run("image lookup -r -n .", { timeoutMs: 30 }),
      session.run("p 1+1"),
      session.run("frame select 1"),
    ]);
    expect(first.ok).toBe(true);
    expect(slow).toMatchObject({ ok: false, errorType: "timeout", reopened: true });
    // Its timeout ran from its turn, not from when it was sent, and not longer.
    expect(slow.ms).toBeGreaterThanOrEqual(25);
    expect(slow.ms).toBeLessThan(5_000);
    expect(after).toMatchObject({ ok: true });
    expect(after.output).toMatch(/= 2/);
    expect(frame.context.selectedFrame).toMatchObject({ level: 1, function: "broadcast" });
  });
});

describe("LldbSession recovery", () => {
  afterEach(closeAll);

  it("kills and reopens lldb when a command runs past its timeout", async () => {
    const { session, pid } = await newAdapterOf(() => open("null-deref"));
    await session.run("frame select 1");
    const slow = await session.run("script import time; time.sleep(60)", { timeoutMs: 500 });
    expect(slow).toMatchObject({ ok: false, errorType: "timeout", reopened: true, output: "" });
    expect(slow.error).toMatch(/timed out after 0.5s; .* killed and the dump reopened/);
    expect(slow.ms).toBeLessThan(10_000);
    expect(alive(pid)).toBe(false);
    expect(ourAdapters()).toHaveLength(1);
    // The reopened dump starts where lldb stands on a fresh load.
    expect(slow.context.selectedFrame).toMatchObject({ level: 0, function: "send_to_client" });

    const bt = await session.run("bt 1");
    expect(bt).toMatchObject({ ok: true });
    expect(bt.reopened).toBeUndefined();
    expect(bt.output).toMatch(/send_to_client/);
  });

  it("notices a killed adapter and reopens the dump on the next command", async () => {
    const { session, pid } = await newAdapterOf(() => open("null-deref"));
    process.kill(pid, "SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 200));

    const first = await session.run("bt 1");
    expect(first).toMatchObject({ ok: true, reopened: true });
    expect(first.output).toMatch(/send_to_client/);
    const [now] = ourAdapters();
    expect(now).toBeDefined();
    expect(now).not.toBe(pid);
  });

  it("reports an adapter that dies in the middle of a command, and again when asked once more, as session_dead, then works again", async () => {
    const { session } = await newAdapterOf(() => open("null-deref"));
    const died = await session.run("script import os, signal; os.kill(os.getpid(), signal.SIGKILL)");
    expect(died).toMatchObject({ ok: false, errorType: "session_dead", reopened: true });
    expect(died.error).toMatch(/killed by SIGKILL, and again when asked once more \([^)]*killed by SIGKILL\): it may crash on this command every time; the dump was reopened$/);
    expect((await session.run("bt 1")).ok).toBe(true);
  });

  it("leaves no adapter behind once closed", async () => {
    const { session, pid } = await newAdapterOf(() => open("null-deref"));
    await session.close();
    expect(alive(pid)).toBe(false);
    expect(ourAdapters()).toEqual([]);
  });

  it("fails to open a file that is not a dump with lldb's reason, and leaves nothing running", async () => {
    const built = await buildCore("null-deref");
    const session = new LldbSession({ dump: built.source, executable: built.exe });
    await expect(session.open()).rejects.toThrow(/lldb could not load .*null-deref\.c: Failed to create the process/);
    expect(ourAdapters()).toEqual([]);
  });
});

describe("the adapter beside lldb's command line", () => {
  it.runIf(existsSync("/usr/bin/lldb-16"))("is Debian's lldb-vscode-16 for /usr/bin/lldb-16, and opens the dump", async () => {
    expect(resolveAdapter("/usr/bin/lldb-16")).toBe("/usr/bin/lldb-vscode-16");
    const built = await buildCore("null-deref");
    const session = new LldbSession({ dump: built.core, executable: built.exe, binary: "lldb-16" });
    sessions.push(session);
    await session.open();
    expect((await session.run("bt 1")).output).toMatch(/send_to_client/);
    await session.close();
  });
});

describe("LLDB's Python, compiled once", () => {
  let home: string;
  const saved = process.env.XDG_CACHE_HOME;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), "dumpdbg-lldb-python-"));
    process.env.XDG_CACHE_HOME = home;
  });
  afterAll(async () => {
    await closeAll();
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
    rmSync(home, { recursive: true, force: true });
  });

  /** What the adapter was started with for Python's bytecode. */
  function prefixOf(pid: number): string | null {
    const variables = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");
    return variables.find((variable) => variable.startsWith("PYTHONPYCACHEPREFIX="))?.slice("PYTHONPYCACHEPREFIX=".length) ?? null;
  }

  it("starts lldb without the folder, fills it as the session closes, starts the next lldb with it, and answers the same", async () => {
    const cache = pythonCache(resolveAdapter(undefined));
    expect(cache).not.toBeNull();
    const { folder, manifest } = cache!;
    expect(existsSync(manifest)).toBe(false);

    const first = await newAdapterOf(() => open("null-deref"));
    expect(prefixOf(first.pid)).toBeNull();
    const before = await first.session.run("bt");
    await first.session.close();
    const modules = readManifest(manifest);
    // lldb's own module, the one compiled at every start without the folder, is among them, with its bytecode in the folder.
    const lldbModule = modules?.find((module) => /\/lldb\/__init__\.py$/.test(module.source));
    expect(lldbModule?.bytecode.startsWith(`${folder}/`)).toBe(true);
    expect(statSync(lldbModule!.bytecode).size).toBeGreaterThan(100_000);
    expect(pythonCacheEnv(resolveAdapter(undefined))).toEqual({ PYTHONPYCACHEPREFIX: folder });

    const second = await newAdapterOf(() => open("null-deref"));
    expect(prefixOf(second.pid)).toBe(folder);
    const after = await second.session.run("bt");
    expect(after.output).toBe(before.output);
    const written = statSync(manifest).mtimeMs;
    await second.session.close();
    // Nothing to fill: the manifest is as it was.
    expect(statSync(manifest).mtimeMs).toBe(written);
  });

  it("closes at once, without filling the folder, while a command is still running", async () => {
    const { manifest } = pythonCache(resolveAdapter(undefined))!;
    rmSync(manifest, { force: true });
    const busy = await newAdapterOf(() => open("null-deref"));
    expect(prefixOf(busy.pid)).toBeNull();
    const running = busy.session.run("script import time; time.sleep(20)");
    await new Promise((resolve) => setTimeout(resolve, 300));
    const closing = performance.now();
    await busy.session.close();
    expect(performance.now() - closing).toBeLessThan(3_000);
    // The command is not answered: its session was closed under it.
    await expect(running).rejects.toThrow(/the session was closed/);
    expect(existsSync(manifest)).toBe(false);
    // The next session fills it.
    const next = await open("null-deref");
    await next.close();
    expect(readManifest(manifest)?.length).toBeGreaterThan(0);
  });

  it("does not use a folder whose manifest no longer matches a source, and fills it again", async () => {
    const { manifest } = pythonCache(resolveAdapter(undefined))!;
    const modules = readManifest(manifest)!;
    expect(modules.length).toBeGreaterThan(0);
    writeManifest(manifest, modules.map((module, i) => (i === 0 ? { ...module, mtimeNs: "1" } : module)));

    const stale = await newAdapterOf(() => open("null-deref"));
    expect(prefixOf(stale.pid)).toBeNull();
    expect((await stale.session.run("bt 1")).output).toMatch(/send_to_client/);
    await stale.session.close();
    expect(readManifest(manifest)![0]!.mtimeNs).toBe(modules[0]!.mtimeNs);
  });
});
