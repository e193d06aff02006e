/**
 * What a user, a batch or a hostile client can point dumpdbg at, through the real CLI and the real
 * MCP client: special files of each kind (a FIFO nobody writes, devices, a socket, a /proc file, a
 * symlink loop), a dump truncated while it is read, signals in every state of a run, a batch tree
 * that loops, a debugger named that cannot run, and hundreds of bad MCP calls at once. Nothing may
 * hang or crash; each gets one honest line; no debugger is left behind.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { execFileSync, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, runCli } from "../helpers/cli.js";
import { buildCore, type BuiltCore } from "../helpers/cores.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-hostile-"));
const fifo = path.join(dir, "upload.dmp");
const socketPath = path.join(dir, "collector.sock");
let socketServer: Server;
let core: BuiltCore;

/** The debugger processes (gdb, lldb's adapter) whose command line names `needle`. */
function debuggersNaming(needle: string): string[] {
  const out = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
  return out.split("\n").filter((line) => line.includes(needle) && /\b(gdb|lldb[\w-]*)\b/.test(line) && !line.includes("ps -eo"));
}

/** Kills a child that outlived its test, so a failure is a red test and never a hung run. */
function deadline(child: ChildProcess, ms: number): NodeJS.Timeout {
  return setTimeout(() => child.kill("SIGKILL"), ms);
}

beforeAll(async () => {
  core = await buildCore("null-deref");
  execFileSync("mkfifo", [fifo]);
  socketServer = createServer();
  await new Promise<void>((done) => socketServer.listen(socketPath, done));
  symlinkSync("loop-b", path.join(dir, "loop-a"));
  symlinkSync("loop-a", path.join(dir, "loop-b"));
  writeFileSync(path.join(dir, "tiny.dmp"), Buffer.from([0x4d, 0x44, 0x4d, 0x50, 0x93, 0xa7]));
});

afterAll(() => {
  socketServer?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("special files given as the dump", () => {
  const cases = [
    { name: "a FIFO nobody writes", path: () => fifo, reason: /upload\.dmp is a FIFO \(named pipe\), not a crash dump$/ },
    { name: "/dev/zero", path: () => "/dev/zero", reason: /\/dev\/zero is a character device, not a crash dump$/ },
    { name: "/dev/null", path: () => "/dev/null", reason: /\/dev\/null is a character device, not a crash dump$/ },
    { name: "/proc/self/mem", path: () => "/proc/self/mem", reason: /\/proc\/self\/mem is a file of the kernel's \/proc filesystem, not a crash dump$/ },
    { name: "a socket", path: () => socketPath, reason: /collector\.sock is a socket, not a crash dump$/ },
    { name: "a folder", path: () => dir, reason: / is a directory, not a crash dump$/ },
    { name: "a symlink loop", path: () => path.join(dir, "loop-a"), reason: /loop-a is a symbolic link that loops, not a crash dump$/ },
    { name: "a file too small to be a dump", path: () => path.join(dir, "tiny.dmp"), reason: /tiny\.dmp is 6 bytes, too small to be a crash dump$/ },
  ];

  it.each(cases)("$name: one line naming what it is, exit 3, at once", async ({ path: target, reason }) => {
    const result = await runCli(["triage", target()], { onSpawn: (child) => deadline(child, 20_000) });
    expect(result.signal).toBeNull();
    expect(result.code).toBe(3);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(reason);
    expect(lines[0]).toMatch(/^dumpdbg: /);
  });

  it("a path with a newline (which would start a second debugger command) is refused, and shown escaped on one line", async () => {
    const crafted = path.join(dir, "core\nshell touch pwned #");
    copyFileSync(core.core, crafted);
    const runs = await Promise.all([runCli(["triage", crafted, "--exe", core.exe]), runCli(["exec", core.core, "--exe", crafted, "-ex", "bt"])]);
    for (const run of runs) {
      expect(run.code).toBe(3);
      expect(run.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^dumpdbg: .*"[^"]*core\\nshell touch pwned #" has a control character \(a newline, a tab\) in its name, which no debugger can be given$/)]);
    }
    expect(existsSync(path.join(process.cwd(), "pwned"))).toBe(false);
  });

  it("a FIFO as the dump of exec and analyze, and as --exe, is refused the same way", async () => {
    const runs = await Promise.all([
      runCli(["exec", fifo, "-c", "bt"], { onSpawn: (child) => deadline(child, 20_000) }),
      runCli(["analyze", fifo, "--provider", "offline", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")], { onSpawn: (child) => deadline(child, 20_000) }),
      runCli(["triage", core.core, "--exe", fifo], { onSpawn: (child) => deadline(child, 20_000) }),
    ]);
    for (const run of runs) {
      expect(run.code).toBe(3);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
    }
    expect(runs[0]?.stderr).toMatch(/is a FIFO \(named pipe\), not a crash dump/);
    expect(runs[2]?.stderr).toMatch(/--exe .*upload\.dmp is a FIFO \(named pipe\), not an executable/);
  });
});

describe("a dump truncated while it is read", () => {
  it("ends every run with a result or one line, never a hang, a stack trace or a debugger left", async () => {
    const delays = [0, 15, 40, 80, 150, 300];
    const runs = await Promise.all(
      delays.map(async (delay) => {
        const copy = path.join(dir, `shrinking-${delay}.core`);
        copyFileSync(core.core, copy);
        const run = runCli(["triage", copy, "--exe", core.exe, "--json"], {
          onSpawn: (child) => {
            deadline(child, 60_000);
            setTimeout(() => truncateSync(copy, 4096), delay);
          },
        });
        return { copy, run: await run };
      }),
    );
    for (const { copy, run } of runs) {
      expect(run.signal).toBeNull();
      expect([0, 3, 4]).toContain(run.code);
      expect(run.stderr).not.toMatch(/^\s+at /m);
      if (run.code !== 0) expect(run.stderr.trim().split("\n").at(-1)).toMatch(/^dumpdbg: .+/);
      expect(debuggersNaming(copy)).toEqual([]);
    }
    // The truncation before anything was read is caught by dumpdbg itself, naming the cut.
    expect(runs[0]?.run.code).toBe(3);
    expect(runs[0]?.run.stderr).toMatch(/truncated/);
  });
});

describe("SIGTERM and SIGINT", () => {
  // The signal lands at a share of how long the command takes here (measured first, unsignalled):
  // while Node starts, the dump is read, the debugger starts and answers, the graph runs and the
  // reports are written; never so near the end that the command may already be leaving.
  const moments = [
    { command: "triage", share: 0.02 },
    { command: "triage", share: 0.2 },
    { command: "triage", share: 0.45 },
    { command: "triage", share: 0.7 },
    { command: "analyze", share: 0.3 },
    { command: "analyze", share: 0.45 },
    { command: "analyze", share: 0.6 },
    { command: "analyze", share: 0.7 },
  ] as const;
  const argsOf = (command: "triage" | "analyze", copy: string) =>
    command === "triage" ? ["triage", copy, "--exe", core.exe] : ["analyze", copy, "--exe", core.exe, "--provider", "offline", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")];
  const took = { triage: 0, analyze: 0 };

  beforeAll(async () => {
    for (const command of ["triage", "analyze"] as const) {
      const copy = path.join(dir, `whole-${command}.core`);
      copyFileSync(core.core, copy);
      // The faster of two runs: the first of a fresh build writes its code cache and gdb's index, and
      // a share of its time could land in the exit of the runs that follow, where no handler runs.
      took[command] = Infinity;
      for (let i = 0; i < 2; i++) {
        const started = performance.now();
        const run = await runCli(argsOf(command, copy));
        took[command] = Math.min(took[command], performance.now() - started);
        expect(run.code, run.stderr).toBe(0);
      }
    }
  }, 60_000);

  it.each(moments)("SIGTERM ends $command within a second when sent $share of the way through, leaving no debugger", async ({ command, share }) => {
    const copy = path.join(dir, `term-${command}-${share}.core`);
    copyFileSync(core.core, copy);
    let sentAt = 0;
    // When this test read the command's result (triage's verdict on stdout, analyze's reports named
    // on stderr): a command that has printed it is leaving.
    let resultAt = 0;
    const run = await runCli(argsOf(command, copy), {
      onSpawn: (child) => {
        deadline(child, 30_000);
        const result = (seen: boolean) => {
          if (seen && resultAt === 0) resultAt = performance.now();
        };
        // stderr as a whole: the line naming the reports may arrive split over two reads.
        let stderr = "";
        if (command === "triage") child.stdout?.on("data", () => result(true));
        else child.stderr?.on("data", (chunk: Buffer) => result(/; report: /.test((stderr += chunk.toString()))));
        setTimeout(() => {
          if (child.exitCode !== null || resultAt > 0) return;
          sentAt = performance.now();
          child.kill("SIGTERM");
        }, Math.round(took[command] * share));
      },
    });
    if (sentAt > 0) expect(performance.now() - sentAt).toBeLessThan(1000);
    // A result read within 50 ms of the signal was printed before the signal landed (it is read here
    // a little later): the command was leaving, and a signal that lands after its last JavaScript ran
    // is not handled (it exits 0). On a loaded machine a run can be that far at the share of another
    // run's time.
    const leaving = sentAt > 0 && resultAt > 0 && resultAt - sentAt < 50;
    // Sent before Node has started dumpdbg, the signal's default action ends it, before any debugger.
    if (run.signal !== null) expect(run.signal).toBe("SIGTERM");
    else if (leaving) expect([0, 143]).toContain(run.code);
    // Else it was ended (143) with one line, or (not sent) it had finished.
    else expect(run.code).toBe(sentAt > 0 ? 143 : 0);
    if (run.code === 143) expect(run.stderr).toMatch(/dumpdbg: terminated\n$/);
    await new Promise((done) => setTimeout(done, 200));
    expect(debuggersNaming(copy)).toEqual([]);
  });

  it("SIGINT ends an analysis in the middle with 130 and no debugger left", async () => {
    const copy = path.join(dir, "int.core");
    copyFileSync(core.core, copy);
    let sentAt = 0;
    const run = await runCli(["analyze", copy, "--exe", core.exe, "--provider", "offline", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")], {
      onSpawn: (child) => {
        deadline(child, 60_000);
        child.stderr?.on("data", function watch(chunk: Buffer) {
          // Once the debugger is up and the graph has started, interrupt it.
          if (/hypothes/i.test(chunk.toString()) && sentAt === 0) {
            sentAt = performance.now();
            child.kill("SIGINT");
          }
        });
      },
    });
    expect(sentAt).toBeGreaterThan(0);
    expect(run.code).toBe(130);
    expect(performance.now() - sentAt).toBeLessThan(1000);
    await new Promise((done) => setTimeout(done, 200));
    expect(debuggersNaming(copy)).toEqual([]);
  });
});

describe("batch over a hostile tree", () => {
  it("walks each real folder once, lists a dump reached by two paths once and says what it skipped and why", async () => {
    const tree = path.join(dir, "tree");
    mkdirSync(path.join(tree, "cores", "nested"), { recursive: true });
    copyFileSync(core.core, path.join(tree, "cores", "one.core"));
    linkSync(path.join(tree, "cores", "one.core"), path.join(tree, "hardlink.core"));
    symlinkSync("../..", path.join(tree, "cores", "nested", "up"));
    symlinkSync(path.join(tree, "cores"), path.join(tree, "cores-again"));
    symlinkSync("/dev/zero", path.join(tree, "zero.dmp"));
    execFileSync("mkfifo", [path.join(tree, "cores", "half-uploaded.dmp")]);
    writeFileSync(path.join(tree, "README.txt"), "crash dumps from the nightly fuzzing run\n");
    const run = await runCli(["batch", tree, "--json", "--jobs", "2", "--out", path.join(dir, "batch-reports"), "--sessions-dir", path.join(dir, "batch-sessions"), "--exe", core.exe], { onSpawn: (child) => deadline(child, 120_000) });
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout) as { groups: { members: string[] }[]; skipped: { path: string; reason: string }[]; errors: unknown[] };
    expect(doc.groups.flatMap((g) => g.members)).toEqual([path.join(tree, "cores", "one.core")]);
    expect(doc.errors).toEqual([]);
    const reasons = Object.fromEntries(doc.skipped.map((s) => [path.relative(tree, s.path), s.reason]));
    expect(reasons).toEqual({
      "README.txt": "not a crash dump",
      "cores/half-uploaded.dmp": "a FIFO (named pipe)",
      "hardlink.core": `the same file as ${path.join(tree, "cores", "one.core")}`,
      "zero.dmp": "a character device",
    });
    expect(run.stderr).toMatch(/skipped .*half-uploaded\.dmp: a FIFO \(named pipe\)/);
    expect(run.stderr).toMatch(/skipped .*zero\.dmp: a character device/);
  });
});

describe("a debugger that cannot run", () => {
  it("named with --gdb or DUMPDBG_GDB is an error (exit 4, one line), not a quiet switch to lldb", async () => {
    for (const run of [await runCli(["triage", core.core, "--exe", core.exe, "--gdb", "/no/such/gdb"]), await runCli(["triage", core.core, "--exe", core.exe], { env: { DUMPDBG_GDB: "/no/such/gdb" } })]) {
      expect(run.code).toBe(4);
      expect(run.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^dumpdbg: .*the gdb you named \(\/no\/such\/gdb\) cannot be run/)]);
    }
  });

  it("chosen automatically and missing, falls back and says which and why", async () => {
    // A PATH with lldb's adapter but no gdb: what a machine without gdb looks like to dumpdbg.
    const bin = path.join(dir, "bin-without-gdb");
    mkdirSync(bin, { recursive: true });
    symlinkSync("/usr/bin/lldb-vscode-16", path.join(bin, "lldb-vscode-16"));
    const run = await runCli(["triage", core.core, "--exe", core.exe, "--json"], { env: { PATH: bin, DUMPDBG_GDB: undefined } });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/gdb is not installed; reading an ELF core with lldb/);
    // lldb read it: the same crash as gdb finds.
    expect(JSON.parse(run.stdout)).toMatchObject({ kind: "null-dereference", culprit: { function: "send_to_client" } });
  });
});

describe("hundreds of hostile MCP calls at once", () => {
  let client: Client;
  let transport: StdioClientTransport;

  beforeAll(async () => {
    transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp", "--sessions-dir", path.join(dir, "mcp-sessions"), "--out", path.join(dir, "mcp-reports")], stderr: "pipe" });
    client = new Client({ name: "dumpdbg-hostile", version: "1.0.0" });
    await client.connect(transport);
  });

  afterAll(async () => {
    await client?.close();
  });

  const call = async (name: string, args: unknown) => {
    try {
      const result = await client.callTool({ name, arguments: args as Record<string, unknown> }, undefined, { timeout: 60_000 });
      return { structured: (result.structuredContent ?? {}) as Record<string, unknown>, isError: result.isError === true, text: JSON.stringify(result.content) };
    } catch (error) {
      // The protocol's own rejection of an unknown tool or a wrong type is an answer too.
      return { structured: {}, isError: true, text: (error as Error).message };
    }
  };

  it("answers each, opens nothing it should not, and the good session still answers afterwards", async () => {
    const opened = await call("open_dump", { path: core.core, exe: core.exe });
    expect(opened.isError).toBe(false);
    const sessionId = opened.structured.sessionId as string;

    const hostile: [string, unknown][] = [];
    for (let i = 0; i < 40; i++) {
      hostile.push(["open_dump", { path: fifo }]);
      hostile.push(["open_dump", { path: "/dev/zero" }]);
      hostile.push(["open_dump", { path: path.join(dir, "loop-a") }]);
      hostile.push(["run_command", { sessionId, command: "shell id" }]);
      hostile.push(["run_command", { sessionId, command: `bt\n!id` }]);
      hostile.push(["run_command", { sessionId, command: "p $_siginfo\u0007" }]);
      hostile.push(["run_command", { sessionId: `nope-${i}`, command: "bt" }]);
      hostile.push(["no_such_tool", {}]);
      hostile.push(["run_command", { sessionId: 42, command: ["bt"] }]);
      hostile.push(["triage", { sessionId: "../../etc" }]);
    }
    const answers = await Promise.all(hostile.map(([name, args]) => call(name, args)));
    expect(answers).toHaveLength(400);
    for (const [i, answer] of answers.entries()) {
      expect(answer.isError, `${hostile[i]?.[0]} ${JSON.stringify(hostile[i]?.[1])}`).toBe(true);
    }
    const byKind = (i: number) => answers.filter((_, j) => j % 10 === i).map((a) => a.structured.errorType);
    expect(new Set(byKind(0))).toEqual(new Set(["bad_input"]));
    expect(answers[0]?.text).toMatch(/is a FIFO \(named pipe\), not a crash dump/);
    expect(new Set(byKind(3))).toEqual(new Set(["not_allowed"]));
    expect(new Set(byKind(4))).toEqual(new Set(["not_allowed"]));
    expect(new Set(byKind(6))).toEqual(new Set(["unknown_session"]));

    const bt = await call("run_command", { sessionId, command: "bt 3" });
    expect(bt.isError).toBe(false);
    expect(bt.text).toMatch(/send_to_client/);
    await call("close_dump", { sessionId });
    expect(debuggersNaming(core.core)).toEqual([]);
  });

  it("leaves no process behind when its client goes away", async () => {
    const pid = transport.pid;
    expect(pid).toBeTypeOf("number");
    await client.close();
    await new Promise((done) => setTimeout(done, 1500));
    expect(() => process.kill(pid as number, 0)).toThrow();
  });
});
