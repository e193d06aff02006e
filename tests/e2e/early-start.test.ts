/**
 * The debugger started early (cli/early-debugger.ts): gdb is started before the CLI's code loads
 * and, once the core and its program pass the session's checks, given them to load; the session
 * then takes that gdb over and awaits the answers. Seen from the user's side through a gdb wrapper
 * that records every gdb started and every line written to it: one gdb per command, each load
 * command written once, the same verdict; never a FIFO given to gdb; an early gdb that loads
 * another dump than the session's is ended, not used; likewise an early LLDB adapter started with
 * another Python bytecode folder than the session's.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Crash } from "../../src/report/schema.js";
import { preloadEarly, startEarly, endEarly } from "../../src/debuggers/early-start.js";
import { gdbArguments, gdbLoadCommands } from "../../src/debuggers/gdb/arguments.js";
import { GdbSession } from "../../src/debuggers/gdb/gdb-session.js";
import { LldbSession } from "../../src/debuggers/lldb/lldb-session.js";
import { pythonCache, pythonCacheEnv } from "../../src/debuggers/lldb/python-cache.js";
import { buildCore, culpritLine, type BuiltCore } from "../helpers/cores.js";
import { runCli } from "../helpers/cli.js";

let dir: string;
let nullDeref: BuiltCore;
let abort: BuiltCore;

/** A gdb that appends "START <pid>" and then every line it is given to LOG. */
function recordingGdb(log: string): string {
  const wrapper = path.join(dir, `gdb-${path.basename(log)}`);
  writeFileSync(wrapper, `#!/bin/sh\necho "START $$" >> '${log}'\ntee -a '${log}' | exec gdb "$@"\n`);
  chmodSync(wrapper, 0o755);
  return wrapper;
}

function logOf(log: string): string[] {
  return existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const state = execFileSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" }).trim();
    return state !== "" && !state.startsWith("Z");
  } catch {
    return false;
  }
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-early-"));
  [nullDeref, abort] = await Promise.all([buildCore("null-deref"), buildCore("abort")]);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a command's early gdb", () => {
  it("loads the core once, in the gdb the session then uses, with the same verdict", async () => {
    const log = path.join(dir, "triage.log");
    const result = await runCli(["triage", nullDeref.core, "--exe", nullDeref.exe, "--json"], { env: { DUMPDBG_GDB: recordingGdb(log) } });
    expect(result.code, result.stderr).toBe(0);
    const crash = JSON.parse(result.stdout) as Crash;
    expect(crash.kind).toBe("null-dereference");
    expect(crash.culprit).toMatchObject({ function: "send_to_client", line: culpritLine("null-deref") });

    const lines = logOf(log);
    expect(lines.filter((line) => line.startsWith("START"))).toHaveLength(1);
    // Tokens 1-3 are the load, written once; the session's own commands follow from token 4.
    expect(lines.slice(1, 4)).toEqual(gdbLoadCommands(nullDeref.core, nullDeref.exe).map((command, i) => `${i + 1}${command}`));
    expect(lines.filter((line) => line.includes("core-file"))).toHaveLength(1);
    expect(lines[4]).toMatch(/^4-interpreter-exec console "set logging file /);
  });

  it("finds the program the core names when no --exe is given, and loads both early", async () => {
    const log = path.join(dir, "no-exe.log");
    const result = await runCli(["triage", nullDeref.core, "--json"], { env: { DUMPDBG_GDB: recordingGdb(log) } });
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as Crash).culprit.function).toBe("send_to_client");
    const lines = logOf(log);
    expect(lines.filter((line) => line.startsWith("START"))).toHaveLength(1);
    expect(lines[2]).toBe(`2-file-exec-and-symbols "${nullDeref.exe}"`);
  });

  it("gives gdb nothing that fails the checks: a FIFO named as the dump is never loaded", async () => {
    const log = path.join(dir, "fifo.log");
    const fifo = path.join(dir, "crash.core");
    execFileSync("mkfifo", [fifo]);
    const result = await runCli(["triage", fifo, "--exe", nullDeref.exe], { env: { DUMPDBG_GDB: recordingGdb(log) } });
    expect(result.code).toBe(3);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    const lines = logOf(log);
    expect(lines.some((line) => /core-file|file-exec-and-symbols/.test(line))).toBe(false);
  });

  it("is ended, not used, when the session loads another dump than it was given", async () => {
    const log = path.join(dir, "other.log");
    const gdb = recordingGdb(log);
    startEarly(gdb, gdbArguments(), "lines");
    await preloadEarly(gdbLoadCommands(abort.core, abort.exe));
    // The early gdb is up and reading the other core before the session asks.
    await expect.poll(() => logOf(log).some((line) => line.includes(`core-file ${abort.core}`))).toBe(true);
    const session = new GdbSession({ dump: nullDeref.core, executable: nullDeref.exe, gdbPath: gdb });
    try {
      await session.open();
      const bt = await session.run("bt 1");
      expect(bt.output).toContain("send_to_client");
      const starts = logOf(log).filter((line) => line.startsWith("START"));
      expect(starts).toHaveLength(2);
      const earlyPid = Number(starts[0]!.split(" ")[1]);
      await expect.poll(() => alive(earlyPid)).toBe(false);
    } finally {
      await session.close();
      await endEarly();
    }
  });

  it("is taken by a session that loads the same dump, which then answers as a fresh one would", async () => {
    const log = path.join(dir, "same.log");
    const gdb = recordingGdb(log);
    startEarly(gdb, gdbArguments(), "lines");
    await preloadEarly(gdbLoadCommands(nullDeref.core, nullDeref.exe));
    const session = new GdbSession({ dump: nullDeref.core, executable: nullDeref.exe, gdbPath: gdb });
    try {
      await session.open();
      expect(session.version()).toMatch(/GNU gdb/);
      expect(session.loadOutput).toMatch(/Core was generated by/);
      const bt = await session.run("bt 1");
      expect(bt.output).toContain(`null-deref.c:${culpritLine("null-deref")}`);
      expect(logOf(log).filter((line) => line.startsWith("START"))).toHaveLength(1);
    } finally {
      await session.close();
    }
  });
});

describe("a command's early LLDB adapter and its Python bytecode folder", () => {
  const saved = process.env.XDG_CACHE_HOME;
  let adapter: string;
  let log: string;
  beforeAll(() => {
    process.env.XDG_CACHE_HOME = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-early-xdg-"));
    log = path.join(dir, "adapter.log");
    // An adapter that appends "START <pid> <its PYTHONPYCACHEPREFIX>" to LOG, then is lldb-vscode.
    adapter = path.join(dir, "recording-adapter");
    writeFileSync(adapter, `#!/bin/sh\necho "START $$ \${PYTHONPYCACHEPREFIX:-none}" >> '${log}'\nexec lldb-vscode-16 "$@"\n`);
    chmodSync(adapter, 0o755);
  });
  afterAll(async () => {
    await endEarly();
    rmSync(process.env.XDG_CACHE_HOME!, { recursive: true, force: true });
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
  });

  /** A session on the null dereference's core through the recording adapter: its crashing frame, then closed. */
  async function backtraceThroughAdapter(): Promise<void> {
    const session = new LldbSession({ dump: nullDeref.core, executable: nullDeref.exe, binary: adapter });
    try {
      await session.open();
      expect((await session.run("bt 1")).output).toContain("send_to_client");
    } finally {
      await session.close();
    }
  }

  it.runIf(existsSync("/usr/bin/lldb-vscode-16"))("is ended, not used, when it was started with other variables than the session's; then taken once both name the filled folder", async () => {
    startEarly(adapter, [], "data", { PYTHONPYCACHEPREFIX: path.join(dir, "not-the-folder") });
    // The early adapter is up (its line is written) before the session asks, so its end is seen.
    await expect.poll(() => logOf(log).some((line) => line.endsWith("not-the-folder"))).toBe(true);
    await backtraceThroughAdapter();
    const starts = logOf(log).filter((line) => line.startsWith("START"));
    expect(starts).toHaveLength(2);
    expect(starts[0]).toMatch(/not-the-folder$/);
    // The session's own adapter had no folder yet, and filled it as it closed.
    expect(starts[1]).toMatch(/ none$/);
    await expect.poll(() => alive(Number(starts[0]!.split(" ")[1]))).toBe(false);
    const env = pythonCacheEnv(adapter);
    expect(env.PYTHONPYCACHEPREFIX).toBe(pythonCache(adapter)!.folder);

    startEarly(adapter, [], "data", env);
    await backtraceThroughAdapter();
    const all = logOf(log).filter((line) => line.startsWith("START"));
    expect(all).toHaveLength(3);
    expect(all[2]).toBe(`START ${all[2]!.split(" ")[1]} ${env.PYTHONPYCACHEPREFIX}`);
  });
});
