/**
 * A Linux program shipped stripped of its debug information, which a real debuginfod serves:
 * Debian's /usr/bin/debuginfod on 127.0.0.1 indexes the program's debug file (objcopy
 * --only-keep-debug, same build id), and `dumpdbg triage` of the program's core fetches it through
 * DEBUGINFOD_URLS into --symbols-cache, where gdb finds it by build id and names the culprit's
 * file and line. Without the server, or with --offline and an empty cache, there is no line, and
 * --offline asks no server anything.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { existsSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import type { Crash } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { buildCore, culpritLine, type BuiltCore } from "../helpers/cores.js";

const exec = promisify(execFile);
const DEBUGINFOD = "/usr/bin/debuginfod";
const RUN_TIMEOUT_MS = 120_000;

let root: string;
let built: BuiltCore;
/** The program as shipped: no DWARF, its symbol table and build id kept. */
let stripped: string;
let buildId: string;
let debuginfod: ChildProcess | null = null;
let url: string;
const servers: Server[] = [];

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** No symbols settings from the environment, the default cache in a temp folder. */
function env(extra: Record<string, string> = {}): Record<string, string | undefined> {
  return { _NT_SYMBOL_PATH: undefined, DEBUGINFOD_URLS: undefined, DUMPDBG_SYMBOLS: undefined, XDG_CACHE_HOME: path.join(root, "xdg-cache"), ...extra };
}

async function cache(name: string): Promise<string> {
  const dir = path.join(root, "caches", name);
  await mkdir(dir, { recursive: true });
  return dir;
}

async function triage(args: string[], extra: Record<string, string> = {}): Promise<{ crash: Crash; stderr: string; ms: number }> {
  const result = await runCli(["triage", built.core, "--exe", stripped, "--json", ...args], { env: env(extra) });
  expect(result.code, result.stderr).toBe(0);
  return { crash: JSON.parse(result.stdout) as Crash, stderr: result.stderr, ms: result.ms };
}

function symbolLines(stderr: string): string[] {
  return stderr.split("\n").filter((line) => line.startsWith("dumpdbg: symbols:"));
}

const debuginfodInstalled = existsSync(DEBUGINFOD);

describe.skipIf(!debuginfodInstalled)(`a stripped program's core, its debug file served by debuginfod${debuginfodInstalled ? "" : " (skipped: no /usr/bin/debuginfod)"}`, () => {
  beforeAll(async () => {
    built = await buildCore("null-deref");
    root = await mkdtemp(path.join(os.tmpdir(), "dumpdbg-debuginfod-core-"));
    const files = path.join(root, "files");
    await mkdir(files);
    stripped = path.join(root, "null-deref");
    await copyFile(built.exe, stripped);
    await exec("objcopy", ["--only-keep-debug", built.exe, path.join(files, "null-deref.debug")], { timeout: 60_000 });
    await exec("strip", ["--strip-debug", stripped], { timeout: 60_000 });
    const notes = (await exec("readelf", ["-n", stripped], { timeout: 60_000 })).stdout;
    buildId = /Build ID: ([0-9a-f]+)/.exec(notes)?.[1] ?? "";
    expect(buildId).not.toBe("");
    expect((await exec("readelf", ["-S", stripped], { timeout: 60_000 })).stdout).not.toMatch(/\.debug_info/);

    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    // -t 0 -g 0: one scan, no rescans or grooming; no DEBUGINFOD_URLS, so it asks no upstream.
    debuginfod = spawn(DEBUGINFOD, ["-p", String(port), "-F", "-t", "0", "-g", "0", "-d", path.join(root, "index.sqlite"), files], { stdio: "ignore", env: { ...process.env, DEBUGINFOD_URLS: "" } });
    const until = Date.now() + 20_000;
    for (;;) {
      const status = await fetch(`${url}/buildid/${buildId}/debuginfo`, { signal: AbortSignal.timeout(2_000) }).then((r) => (r.body?.cancel(), r.status), () => 0);
      if (status === 200) break;
      if (Date.now() > until || debuginfod.exitCode !== null) throw new Error(`debuginfod on ${url} did not serve ${buildId} within 20 s (last status ${status})`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, RUN_TIMEOUT_MS);

  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      server.close();
    }
    if (debuginfod && debuginfod.exitCode === null) {
      const exited = new Promise((resolve) => debuginfod?.once("exit", resolve));
      debuginfod.kill();
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    }
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("without debuginfod names the culprit function from the symbol table, but no file or line", async () => {
    const { crash, stderr } = await triage([]);
    expect(crash.kind).toBe("null-dereference");
    expect(crash.culprit.line).toBeNull();
    expect(symbolLines(stderr)).toEqual([]);
  }, RUN_TIMEOUT_MS);

  it("with DEBUGINFOD_URLS fetches the debug file into --symbols-cache, and gdb names the culprit's file and line", async () => {
    const dir = await cache("fetch");
    const { crash, stderr } = await triage(["--symbols-cache", dir], { DEBUGINFOD_URLS: url });
    expect(crash.culprit).toMatchObject({ function: "send_to_client", line: culpritLine("null-deref") });
    expect(crash.culprit.file).toMatch(/null-deref\.c$/);
    // The program's debug file from debuginfod; the C library's (not indexed there) a 404.
    expect(symbolLines(stderr)).toEqual([expect.stringMatching(new RegExp(`^dumpdbg: symbols: 1 module from ${url.replaceAll(".", "\\.")}(, |$)`))]);
    expect(existsSync(path.join(dir, "buildid", buildId, "debuginfo"))).toBe(true);
    expect(readdirSync(path.join(dir, "debug-tree", ".build-id", buildId.slice(0, 2)))).toEqual([`${buildId.slice(2)}.debug`]);
  }, RUN_TIMEOUT_MS);

  it("`dumpdbg symbols` lists the program's module as fetched from debuginfod", async () => {
    const dir = await cache("list");
    const result = await runCli(["symbols", built.core, "--exe", stripped, "--json", "--symbols-cache", dir], { env: env({ DEBUGINFOD_URLS: url }) });
    expect(result.code, result.stderr).toBe(0);
    const listed = JSON.parse(result.stdout) as { debugger: string; modules: { module: string; status: string; from: string | null; file: string | null; ids: { buildId: string | null } }[] };
    expect(listed.debugger).toBe("gdb");
    expect(listed.modules.find((m) => m.module === "null-deref")).toMatchObject({ status: "fetched", from: url, file: path.join(dir, "buildid", buildId, "debuginfo"), ids: { buildId } });
  }, RUN_TIMEOUT_MS);

  it("with --offline and an empty cache asks no server, quickly, and has no line", async () => {
    const requests: string[] = [];
    const watcher = createHttpServer((req, res) => {
      requests.push(req.url ?? "");
      res.writeHead(404).end();
    });
    servers.push(watcher);
    await new Promise<void>((resolve) => watcher.listen(0, "127.0.0.1", resolve));
    const watched = `http://127.0.0.1:${(watcher.address() as AddressInfo).port}`;
    const { crash, stderr, ms } = await triage(["--symbols-cache", await cache("offline"), "--offline"], { DEBUGINFOD_URLS: `${watched} ${url}` });
    expect(crash.culprit.line).toBeNull();
    expect(requests).toEqual([]);
    expect(symbolLines(stderr)).toEqual([expect.stringMatching(/^dumpdbg: symbols: \d+ modules? missing: .*null-deref \(offline\)/)]);
    expect(ms).toBeLessThan(20_000);
  }, RUN_TIMEOUT_MS);
});
