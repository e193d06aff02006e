/**
 * `dumpdbg mcp` driven by the official MCP SDK's client over stdio, on real dumps, as a coding
 * agent drives it: list the tools, open a core, triage it, run commands (one refused, never run),
 * an unknown session, search the evidence, two sessions at once, the whole analysis and its report,
 * and the client going away leaving no debugger behind.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN } from "../helpers/cli.js";
import { buildCore, culpritLine, type BuiltCore } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

let client: Client;
let transport: StdioClientTransport;
let nullDeref: BuiltCore;
let deadlock: BuiltCore;
const dir = tempDir("dumpdbg-mcp-");

type Structured = Record<string, any>;

async function call(name: string, args: Record<string, unknown>): Promise<{ structured: Structured; text: string; isError: boolean }> {
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as { type: string; text: string }[]).map((c) => c.text).join("\n");
  return { structured: result.structuredContent as Structured, text, isError: result.isError === true };
}

function debuggersOf(pid: number | undefined): string[] {
  if (pid === undefined) return [];
  const out = execFileSync("ps", ["-o", "pid=,ppid=,comm=", "-e"], { encoding: "utf8" });
  return out.split("\n").filter((line) => line.trim().split(/\s+/)[1] === String(pid) && /gdb|lldb/.test(line));
}

beforeAll(async () => {
  [nullDeref, deadlock] = await Promise.all([buildCore("null-deref"), buildCore("deadlock")]);
  transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp", "--sessions-dir", path.join(dir, "sessions"), "--out", path.join(dir, "reports")], stderr: "pipe" });
  client = new Client({ name: "dumpdbg-test", version: "1.0.0" });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
});

describe("dumpdbg mcp", () => {
  it("lists its tools, each with an input schema and a description written for a model", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["analyze", "close_dump", "get_report", "open_dump", "run_command", "search_evidence", "triage"]);
    for (const tool of tools) {
      expect(tool.description?.length ?? 0).toBeGreaterThan(60);
      expect(tool.inputSchema.type).toBe("object");
    }
  });

  it("opens a core, triages it, runs commands and searches them, each answer saying where the debugger stands", async () => {
    const opened = await call("open_dump", { path: nullDeref.core, exe: nullDeref.exe });
    expect(opened.isError).toBe(false);
    const id = opened.structured.sessionId as string;
    expect(opened.structured.context).toMatchObject({ sessionId: id, debugger: "gdb", threadCount: 1, selectedThread: { id: 1 }, selectedFrame: { function: "send_to_client", line: culpritLine("null-deref") } });
    expect(Date.parse(opened.structured.context.timestamp)).not.toBeNaN();
    // As an analysis's, the session records the dump it read, for a later chat or resume to check.
    const meta = JSON.parse(readFileSync(path.join(dir, "sessions", id, "session.json"), "utf8")) as { dumpFile?: { size: number; mtimeMs: number } };
    expect(meta.dumpFile).toEqual({ size: statSync(nullDeref.core).size, mtimeMs: statSync(nullDeref.core).mtimeMs });

    const verdict = await call("triage", { sessionId: id });
    expect(verdict.structured.crash).toMatchObject({ kind: "null-dereference", culprit: { function: "send_to_client", line: culpritLine("null-deref") } });
    expect(verdict.text).toMatch(/^null-dereference in send_to_client at .*null-deref\.c:\d+/);

    const bt = await call("run_command", { sessionId: id, command: "bt 3" });
    expect(bt.structured).toMatchObject({ ok: true, command: "bt 3", evidenceId: expect.stringMatching(/^E\d+$/) });
    expect(bt.text).toMatch(/^#0 .*send_to_client/m);

    const frame = await call("run_command", { sessionId: id, command: "frame 1" });
    expect(frame.structured.context.selectedFrame).toMatchObject({ level: 1, function: "broadcast" });

    const refused = await call("run_command", { sessionId: id, command: "shell touch /tmp/dumpdbg-mcp-pwned" });
    expect(refused.isError).toBe(true);
    expect(refused.structured).toMatchObject({ ok: false, errorType: "not_allowed" });

    const found = await call("search_evidence", { sessionId: id, query: "broadcast" });
    expect(found.structured.hits.length).toBeGreaterThan(0);
    expect(found.text).toMatch(/^\[E\d+\] /);

    const closed = await call("close_dump", { sessionId: id });
    expect(closed.isError).toBe(false);
    const gone = await call("run_command", { sessionId: id, command: "bt" });
    expect(gone.structured).toMatchObject({ ok: false, errorType: "unknown_session" });
  });

  it("returns long output as its head and tail, with the evidence id that keeps all of it", async () => {
    const opened = await call("open_dump", { path: nullDeref.core, exe: nullDeref.exe });
    const id = opened.structured.sessionId as string;
    const long = await call("run_command", { sessionId: id, command: "x/3000gx $sp-24000" });
    expect(long.structured).toMatchObject({ ok: true, truncated: true });
    expect(long.text).toMatch(/… \(\d+ characters more in E\d+\) …/);
    expect(long.text.length).toBeLessThan(9_000);
    // The head and the tail are the output's own first and last lines.
    expect(long.text.split("\n")[0]).toMatch(/^0x[0-9a-f]+:\t0x[0-9a-f]{16}\t0x[0-9a-f]{16}$/);
    expect(long.text.trimEnd().split("\n").at(-1)).toMatch(/^0x[0-9a-f]+:\t0x[0-9a-f]{16}\t0x[0-9a-f]{16}$/);
    await call("close_dump", { sessionId: id });
  });

  it("keeps two dumps open at once, each its own session", async () => {
    const first = await call("open_dump", { path: nullDeref.core, exe: nullDeref.exe });
    const second = await call("open_dump", { path: deadlock.core, exe: deadlock.exe });
    const a = first.structured.sessionId as string;
    const b = second.structured.sessionId as string;
    expect(a).not.toBe(b);
    expect((await call("triage", { sessionId: b })).structured.crash.kind).toBe("deadlock");
    expect((await call("triage", { sessionId: a })).structured.crash.kind).toBe("null-dereference");
    expect((await call("run_command", { sessionId: b, command: "info threads" })).structured.context.threadCount).toBe(3);
  });

  it("answers a bad path and an unknown session with a typed error, and goes on serving", async () => {
    const missing = await call("open_dump", { path: path.join(dir, "nope.core") });
    expect(missing.structured).toMatchObject({ ok: false, errorType: "bad_input", error: expect.stringMatching(/dump not found/) });
    const unknown = await call("triage", { sessionId: "20990101-000000-none-0000" });
    expect(unknown.structured).toMatchObject({ ok: false, errorType: "unknown_session" });
    expect((await client.listTools()).tools.length).toBe(7);
  });

  it("runs the whole analysis, sends progress, and serves the report and its evidence by session id", async () => {
    const progress: string[] = [];
    const result = await client.callTool(
      { name: "analyze", arguments: { path: nullDeref.core, exe: nullDeref.exe, issue: "the server dies when a client disconnects" } },
      undefined,
      { onprogress: (p) => progress.push(p.message ?? ""), timeout: 120_000 },
    );
    const structured = result.structuredContent as Structured;
    expect(structured.report.crash.kind).toBe("null-dereference");
    expect(structured.report.conclusion.summary).toMatch(/send_to_client/);
    expect(progress.some((line) => /^\[tester\]/.test(line))).toBe(true);
    const report = await call("get_report", { sessionId: structured.sessionId });
    expect(report.structured.report.conclusion).toEqual(structured.report.conclusion);
    const search = await call("search_evidence", { sessionId: structured.sessionId, query: "client" });
    expect(search.structured.hits.length).toBeGreaterThan(0);
  });

  it("leaves no debugger behind when the client goes away", async () => {
    const opened = await call("open_dump", { path: nullDeref.core, exe: nullDeref.exe });
    expect(opened.isError).toBe(false);
    const debuggers = debuggersOf(transport.pid ?? undefined).map((line) => Number(line.trim().split(/\s+/)[0]));
    expect(debuggers.length).toBeGreaterThan(0);
    await client.close();
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 10_000;
    while (debuggers.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(debuggers.filter(alive)).toEqual([]);
  });
});

describe("dumpdbg mcp's sessions end", () => {
  it("after the idle time, closing their debugger; and on SIGTERM, leaving none", async () => {
    const idle = new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp", "--sessions-dir", path.join(dir, "sessions"), "--idle-minutes", "0.01"], stderr: "pipe" });
    const idleClient = new Client({ name: "dumpdbg-idle-test", version: "1.0.0" });
    await idleClient.connect(idle);
    const open = async () => (await idleClient.callTool({ name: "open_dump", arguments: { path: nullDeref.core, exe: nullDeref.exe } })).structuredContent as Structured;
    const first = await open();
    const before = debuggersOf(idle.pid ?? undefined);
    expect(before.length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const late = (await idleClient.callTool({ name: "triage", arguments: { sessionId: first.sessionId } })).structuredContent as Structured;
    expect(late).toMatchObject({ ok: false, errorType: "unknown_session" });
    expect(debuggersOf(idle.pid ?? undefined)).toEqual([]);

    await open();
    const pid = idle.pid as number;
    const debuggers = debuggersOf(pid).map((line) => Number(line.trim().split(/\s+/)[0]));
    expect(debuggers.length).toBe(1);
    process.kill(pid, "SIGTERM");
    const alive = (p: number) => {
      try {
        process.kill(p, 0);
        return true;
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 10_000;
    while ([pid, ...debuggers].some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect([pid, ...debuggers].filter(alive)).toEqual([]);
    await idleClient.close().catch(() => undefined);
  });
});
