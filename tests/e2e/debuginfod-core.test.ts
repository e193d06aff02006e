/**
 * A Linux program shipped stripped of its debug information, which a real debuginfod serves:
 * Debian's /usr/bin/debuginfod on 127.0.0.1 indexes the program's debug file (objcopy
 * --only-keep-debug, same build id), and `dumpdbg triage` of the program's core fetches it through
 * DEBUGINFOD_URLS into --symbols-cache, where gdb finds it by build id and names the culprit's
 * file and line. Without the server, or with --offline and an empty cache, there is no line, and
 * --offline asks no server anything.
 *
 * And a core read on another machine, its shared library not here: debuginfod serves the library
 * itself (`/buildid/<id>/executable`), dumpdbg puts it under its own name in the cache where gdb
 * finds it on its solib-search-path, and the crashing frame in the library is named.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
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

/** Starts /usr/bin/debuginfod over `files` and waits until it serves `probe` (a path under the server). */
async function startDebuginfod(files: string, index: string, probe: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const served = `http://127.0.0.1:${port}`;
  // -t 0 -g 0: one scan, no rescans or grooming; no DEBUGINFOD_URLS, so it asks no upstream.
  const child = spawn(DEBUGINFOD, ["-p", String(port), "-F", "-t", "0", "-g", "0", "-d", index, files], { stdio: "ignore", env: { ...process.env, DEBUGINFOD_URLS: "" } });
  const until = Date.now() + 20_000;
  for (;;) {
    const status = await fetch(`${served}${probe}`, { signal: AbortSignal.timeout(2_000) }).then((r) => (r.body?.cancel(), r.status), () => 0);
    if (status === 200) return { child, url: served };
    if (Date.now() > until || child.exitCode !== null) {
      child.kill();
      throw new Error(`debuginfod on ${served} did not serve ${probe} within 20 s (last status ${status})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function stopDebuginfod(child: ChildProcess | null): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill();
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
}

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

    ({ child: debuginfod, url } = await startDebuginfod(files, path.join(root, "index.sqlite"), `/buildid/${buildId}/debuginfo`));
  }, RUN_TIMEOUT_MS);

  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      server.close();
    }
    await stopDebuginfod(debuginfod);
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

const GREET_C = `int greet(const char *name) {
  int n = 0;
  n += name[0]; /* CULPRIT */
  return n;
}
`;
const GREET_LINE = 3;
const PROG_C = `#include <stddef.h>
int greet(const char *name);
int main(void) { return greet(NULL); }
`;

describe.skipIf(!debuginfodInstalled)(`a core whose shared library is not on this machine, the library served by debuginfod${debuginfodInstalled ? "" : " (skipped: no /usr/bin/debuginfod)"}`, () => {
  let dir: string;
  let core: string;
  let prog: string;
  let libId: string;
  let server: ChildProcess | null = null;
  let served: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "dumpdbg-debuginfod-lib-"));
    const lib = path.join(dir, "lib");
    const files = path.join(dir, "files");
    await Promise.all([mkdir(lib), mkdir(files)]);
    await writeFile(path.join(dir, "greet.c"), GREET_C);
    await writeFile(path.join(dir, "prog.c"), PROG_C);
    // gcc's default --build-id; -g, so the library carries its own DWARF.
    await exec("gcc", ["-g", "-O0", "-shared", "-fPIC", "-o", path.join(lib, "libgreet.so"), path.join(dir, "greet.c")], { timeout: 60_000 });
    prog = path.join(dir, "prog");
    await exec("gcc", ["-g", "-O0", "-o", prog, path.join(dir, "prog.c"), `-L${lib}`, "-lgreet", `-Wl,-rpath,${lib}`], { timeout: 60_000 });
    libId = /Build ID: ([0-9a-f]+)/.exec((await exec("readelf", ["-n", path.join(lib, "libgreet.so")], { timeout: 60_000 })).stdout)?.[1] ?? "";
    expect(libId).not.toBe("");
    core = path.join(dir, "core");
    const pattern = readFileSync("/proc/sys/kernel/core_pattern", "utf8").trim();
    if (pattern === "core") {
      // The kernel writes `core` in the crashing program's folder; the shell reports the crash.
      await exec("sh", ["-c", 'ulimit -c unlimited && exec ./prog'], { cwd: dir, timeout: 60_000 }).catch(() => undefined);
    }
    if (!existsSync(core)) {
      await exec("gdb", ["-nx", "-batch", "-ex", "run", "-ex", `generate-core-file ${core}`, prog], { cwd: dir, timeout: 60_000 });
    }
    expect(existsSync(core)).toBe(true);
    // The core's machine had the library at lib/libgreet.so; this one does not.
    await rename(path.join(lib, "libgreet.so"), path.join(files, "libgreet.so"));
    ({ child: server, url: served } = await startDebuginfod(files, path.join(dir, "index.sqlite"), `/buildid/${libId}/executable`));
  }, RUN_TIMEOUT_MS);

  afterAll(async () => {
    await stopDebuginfod(server);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  function libEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
    return { _NT_SYMBOL_PATH: undefined, DEBUGINFOD_URLS: undefined, DUMPDBG_SYMBOLS: undefined, XDG_CACHE_HOME: path.join(dir, "xdg-cache"), ...extra };
  }

  it("without a server the frame in the missing library is not named: the culprit falls back to the program", async () => {
    const result = await runCli(["triage", core, "--exe", prog, "--json"], { env: libEnv() });
    expect(result.code, result.stderr).toBe(0);
    const crash = JSON.parse(result.stdout) as Crash;
    expect(crash.culprit.function).not.toBe("greet");
    expect(crash.culprit.file ?? "").not.toMatch(/greet\.c$/);
  }, RUN_TIMEOUT_MS);

  it("with DEBUGINFOD_URLS fetches the library by its build id, and gdb names the frame in it with its file and line", async () => {
    const cacheDir = path.join(dir, "cache-triage");
    const result = await runCli(["triage", core, "--exe", prog, "--json", "--symbols-cache", cacheDir], { env: libEnv({ DEBUGINFOD_URLS: served }) });
    expect(result.code, result.stderr).toBe(0);
    const crash = JSON.parse(result.stdout) as Crash;
    expect(crash.culprit).toMatchObject({ function: "greet", line: GREET_LINE, frame: 0 });
    expect(crash.culprit.file).toMatch(/greet\.c$/);
    // Under its own name, so the frame's module is the library, not debuginfod's `executable`.
    const linked = path.join(cacheDir, "modules", libId, "libgreet.so");
    expect(crash.culprit.module).toBe(linked);
    expect(existsSync(path.join(cacheDir, "buildid", libId, "executable"))).toBe(true);
    expect(statSync(linked).ino).toBe(statSync(path.join(cacheDir, "buildid", libId, "executable")).ino);
    expect(symbolLines(result.stderr)).toEqual([expect.stringMatching(new RegExp(`; 1 module image from ${served.replaceAll(".", "\\.")}$`))]);
  }, RUN_TIMEOUT_MS);

  it("`dumpdbg symbols` shows the library's image from debuginfod, and a second run finds it in the cache", async () => {
    const cacheDir = path.join(dir, "cache-list");
    for (const from of [served, cacheDir]) {
      const result = await runCli(["symbols", core, "--exe", prog, "--json", "--symbols-cache", cacheDir], { env: libEnv({ DEBUGINFOD_URLS: served }) });
      expect(result.code, result.stderr).toBe(0);
      const listed = JSON.parse(result.stdout) as { modules: { module: string; path: string; image?: string; ids: { buildId: string | null } }[] };
      expect(listed.modules.find((m) => m.module === "libgreet.so")).toMatchObject({ path: path.join(dir, "lib", "libgreet.so"), ids: { buildId: libId }, image: `${path.join(cacheDir, "buildid", libId, "executable")} (from ${from})` });
      // Libraries that are here are not fetched; nor is the program.
      expect(listed.modules.filter((m) => m.image !== undefined).map((m) => m.module)).toEqual(["libgreet.so"]);
    }
  }, RUN_TIMEOUT_MS);
});
