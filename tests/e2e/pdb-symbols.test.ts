/**
 * A Windows build's PDB wherever users keep it, from the user's side: `dumpdbg triage` of the
 * Wine dump of config-null.exe (clang-16 + lld-16, its debug information only in the PDB; see
 * tests/helpers/windows-pdb.ts) names the culprit function and line from the PDB beside the
 * program, in a Microsoft store, a two-tier store, a flat folder, or a store served over HTTP on
 * 127.0.0.1 (then from dumpdbg's cache with --offline). Without the PDB the culprit has no line;
 * a PDB of another build is refused; a dead or failing server costs a few seconds and one line.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { DumpFile } from "../../src/debuggers/dumpfile/index.js";
import { readPeIdentity } from "../../src/debuggers/dumpfile/pe.js";
import { readPdbIdentity } from "../../src/debuggers/symbols/pdb.js";
import type { Crash } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { buildPdbMinidump, missingPdbTools, type BuiltPdbMinidump } from "../helpers/windows-pdb.js";
import { WINE_DLLS, windowsCulpritLine } from "../helpers/windows.js";

const BUILD_TIMEOUT_MS = 300_000;
const RUN_TIMEOUT_MS = 60_000;
const PDB = "config-null.pdb";

const missing = missingPdbTools();
const skipReason = missing.length > 0 ? ` (skipped: ${missing.join(", ")} not installed)` : "";

let built: BuiltPdbMinidump;
let root: string;
/** The GUID and age the program's CodeView record gives: the store's folder name. */
let id: string;
const servers: Server[] = [];

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  if (root) await rm(root, { recursive: true, force: true });
});

/** A new folder under this file's temp root. */
async function folder(name: string): Promise<string> {
  const dir = path.join(root, name);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** The program and its dump copied where no PDB lies, as a user receives them. */
async function withoutPdb(name: string): Promise<{ exe: string; dump: string }> {
  const dir = await folder(name);
  const exe = path.join(dir, "config-null.exe");
  const dump = path.join(dir, "crash.dmp");
  await copyFile(built.exe, exe);
  await copyFile(built.dump, dump);
  return { exe, dump };
}

async function put(file: string, content: Buffer | string): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
  return file;
}

interface Triage {
  crash: Crash;
  stderr: string;
  ms: number;
}

/** `dumpdbg triage DUMP --exe EXE --json` with Wine's DLLs, no symbols settings from the environment, the default cache in a temp folder. */
async function triage(exe: string, dump: string, args: string[], env: Record<string, string> = {}): Promise<Triage> {
  const result = await runCli(["triage", dump, "--exe", exe, "--json", "--modules-path", WINE_DLLS, ...args], {
    env: { _NT_SYMBOL_PATH: undefined, DEBUGINFOD_URLS: undefined, DUMPDBG_SYMBOLS: undefined, XDG_CACHE_HOME: path.join(root, "xdg-cache"), ...env },
  });
  expect(result.code, result.stderr).toBe(0);
  return { crash: JSON.parse(result.stdout) as Crash, stderr: result.stderr, ms: result.ms };
}

/** The lines dumpdbg says about symbols. */
function symbolLines(stderr: string): string[] {
  return stderr.split("\n").filter((line) => /^dumpdbg: (symbols|warning: .*symbol)/.test(line));
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A server on a free port of 127.0.0.1 that records what it was asked. */
async function serve(handler: Handler): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? "");
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

/** Serves the files of a folder, 404 for anything else. */
function files(dir: string): Handler {
  return (req, res) => {
    const file = path.join(dir, decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname));
    if (!file.startsWith(dir) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end("not here");
      return;
    }
    res.writeHead(200, { "content-length": statSync(file).size });
    createReadStream(file).pipe(res);
  };
}

/** The PDB with one byte of its GUID changed: another build's PDB under the same name. */
async function anotherBuildsPdb(): Promise<Buffer> {
  const bytes = await readFile(built.pdb);
  const opened = DumpFile.open(built.pdb);
  const guid = (() => {
    try {
      return readPdbIdentity(opened).guid;
    } finally {
      opened.close();
    }
  })();
  const [d1 = "", d2 = "", d3 = "", d4 = "", d5 = ""] = guid.split("-");
  const stored = Buffer.alloc(16);
  stored.writeUInt32LE(Number.parseInt(d1, 16), 0);
  stored.writeUInt16LE(Number.parseInt(d2, 16), 4);
  stored.writeUInt16LE(Number.parseInt(d3, 16), 6);
  Buffer.from(d4 + d5, "hex").copy(stored, 8);
  const at = bytes.indexOf(stored);
  if (at < 0 || bytes.indexOf(stored, at + 1) >= 0) throw new Error(`the PDB holds its GUID ${guid} not exactly once`);
  bytes[at + 15] = (bytes[at + 15] ?? 0) ^ 0xff;
  return bytes;
}

describe.skipIf(missing.length > 0)(`triage of a Windows dump whose program's debug information is a PDB${skipReason}`, () => {
  let culprit: { function: string; line: number };
  /** The run without any PDB: the baseline of the timings. */
  let bare: Triage;

  beforeAll(async () => {
    built = await buildPdbMinidump("config-null");
    root = await mkdtemp(path.join(os.tmpdir(), "dumpdbg-pdb-symbols-"));
    const recorded = readPeIdentity(built.exe).codeView;
    if (!recorded?.id) throw new Error(`${built.exe} has no CodeView record with a GUID and age`);
    id = recorded.id;
    culprit = { function: "listen_port", line: windowsCulpritLine("config-null") };
    const { exe, dump } = await withoutPdb("bare");
    bare = await triage(exe, dump, []);
  }, BUILD_TIMEOUT_MS);

  const expectCulprit = (result: Triage) => {
    expect(result.crash.kind).toBe("null-dereference");
    expect(result.crash.culprit).toMatchObject(culprit);
    expect(result.crash.culprit.file).toMatch(/config-null\.c$/);
  };

  it("without any PDB names no culprit line, and says nothing of symbols", () => {
    expect(bare.crash.kind).toBe("null-dereference");
    expect(bare.crash.culprit.line).toBeNull();
    expect(bare.crash.culprit.function).not.toBe(culprit.function);
    expect(symbolLines(bare.stderr)).toEqual([]);
  });

  it.each([[[] as string[]], [["--modules-path", WINE_DLLS]]])("names the culprit from the PDB beside the program under the record's base name, with no symbols setting (extra args %j)", async (extra) => {
    const dir = await folder(`beside-${extra.length}`);
    const exe = path.join(dir, "config-null.exe");
    const dump = path.join(await folder(`beside-${extra.length}-dump`), "crash.dmp");
    await copyFile(built.exe, exe);
    await copyFile(built.dump, dump);
    await copyFile(built.pdb, path.join(dir, PDB));
    // Without Wine's DLLs too: the PDB's frame data unwinds through msvcrt's atoi.
    const result = await runCli(["triage", dump, "--exe", exe, "--json", ...extra], { env: { _NT_SYMBOL_PATH: undefined, DEBUGINFOD_URLS: undefined, DUMPDBG_SYMBOLS: undefined, XDG_CACHE_HOME: path.join(root, "xdg-cache") } });
    expect(result.code, result.stderr).toBe(0);
    expectCulprit({ crash: JSON.parse(result.stdout) as Crash, stderr: result.stderr, ms: result.ms });
    expect(symbolLines(result.stderr)).toEqual(["dumpdbg: symbols: 1 module already here"]);
  }, RUN_TIMEOUT_MS);

  it("names the culprit from a Microsoft store (<name>.pdb/<GUID+age>/<name>.pdb) given with --symbols", async () => {
    const store = await folder("store");
    await put(path.join(store, PDB, id, PDB), await readFile(built.pdb));
    const { exe, dump } = await withoutPdb("from-store");
    const result = await triage(exe, dump, ["--symbols", store, "--symbols-cache", await folder("store-cache")]);
    expectCulprit(result);
    expect(symbolLines(result.stderr)).toEqual(["dumpdbg: symbols: 1 module already here"]);
  }, RUN_TIMEOUT_MS);

  it("names the culprit from a two-tier store (index2.txt, co/config-null.pdb/<id>/config-null.pdb)", async () => {
    const store = await folder("two-tier");
    await put(path.join(store, "index2.txt"), "");
    await put(path.join(store, "co", PDB, id, PDB), await readFile(built.pdb));
    const { exe, dump } = await withoutPdb("from-two-tier");
    const result = await triage(exe, dump, ["--symbols", store, "--symbols-cache", await folder("two-tier-cache")]);
    expectCulprit(result);
    expect(symbolLines(result.stderr)).toEqual(["dumpdbg: symbols: 1 module already here"]);
  }, RUN_TIMEOUT_MS);

  it("names the culprit from a flat folder of PDBs", async () => {
    const flat = await folder("flat");
    await copyFile(built.pdb, path.join(flat, PDB));
    const { exe, dump } = await withoutPdb("from-flat");
    const result = await triage(exe, dump, ["--symbols", flat, "--symbols-cache", await folder("flat-cache")]);
    expectCulprit(result);
    expect(symbolLines(result.stderr)).toEqual(["dumpdbg: symbols: 1 module already here"]);
  }, RUN_TIMEOUT_MS);

  describe("from a symbol server on 127.0.0.1", () => {
    let store: string;
    let server: Awaited<ReturnType<typeof serve>>;

    beforeAll(async () => {
      store = await folder("served");
      await put(path.join(store, PDB, id, PDB), await readFile(built.pdb));
      server = await serve(files(store));
    });

    it("fetches the PDB into --symbols-cache from --symbols URL, then finds it there with --offline and no request", async () => {
      const cache = await folder("url-cache");
      const { exe, dump } = await withoutPdb("from-url");
      const fetched = await triage(exe, dump, ["--symbols", server.url, "--symbols-cache", cache]);
      expectCulprit(fetched);
      expect(symbolLines(fetched.stderr)).toEqual([`dumpdbg: symbols: 1 module from ${server.url}`]);
      expect(server.requests).toContain(`/${PDB}/${id}/${PDB}`);
      expect(existsSync(path.join(cache, PDB, id, PDB))).toBe(true);

      const asked = server.requests.length;
      const offline = await triage(exe, dump, ["--symbols", server.url, "--symbols-cache", cache, "--offline"]);
      expectCulprit(offline);
      expect(symbolLines(offline.stderr)).toEqual(["dumpdbg: symbols: 1 module already here"]);
      expect(server.requests.length).toBe(asked);
    }, RUN_TIMEOUT_MS * 2);

    it("fetches it through _NT_SYMBOL_PATH=srv*<downstream>*URL into --symbols-cache, then offline from there", async () => {
      const cache = await folder("srv-cache");
      const downstream = await folder("srv-downstream");
      const { exe, dump } = await withoutPdb("from-srv");
      const env = { _NT_SYMBOL_PATH: `srv*${downstream}*${server.url}` };
      const fetched = await triage(exe, dump, ["--symbols-cache", cache], env);
      expectCulprit(fetched);
      expect(symbolLines(fetched.stderr)).toEqual([`dumpdbg: symbols: 1 module from ${server.url}`]);
      expect(existsSync(path.join(cache, PDB, id, PDB))).toBe(true);

      const asked = server.requests.length;
      const offline = await triage(exe, dump, ["--symbols-cache", cache, "--offline"], env);
      expectCulprit(offline);
      expect(symbolLines(offline.stderr)).toEqual(["dumpdbg: symbols: 1 module already here"]);
      expect(server.requests.length).toBe(asked);
    }, RUN_TIMEOUT_MS * 2);
  });

  describe("refused or not found", () => {
    /** A local store holding another build's PDB under this build's id; triage with it, online or not. */
    const staleStore = async (name: string, args: string[]): Promise<Triage> => {
      const store = await folder(`${name}-store`);
      await put(path.join(store, PDB, id, PDB), await anotherBuildsPdb());
      const { exe, dump } = await withoutPdb(name);
      return triage(exe, dump, ["--symbols", store, "--symbols-cache", await folder(`${name}-cache`), ...args]);
    };

    it("does not use another build's PDB filed under this build's id in a local store", async () => {
      const result = await staleStore("stale", []);
      expect(result.crash.culprit.line).toBeNull();
      expect(result.crash.culprit.function).not.toBe(culprit.function);
    }, RUN_TIMEOUT_MS);

    it("says so in one line with --offline", async () => {
      const result = await staleStore("stale-offline", ["--offline"]);
      expect(result.crash.culprit.line).toBeNull();
      expect(symbolLines(result.stderr)).toEqual([`dumpdbg: symbols: 1 module refused, another build's file: config-null.exe`]);
    }, RUN_TIMEOUT_MS);

    // Known bug: without --offline, fetchSymbols (server.ts) drops findLocal's refusals once it goes on to the
    // servers, here none: the module is "missing" with nothing tried, and the summary filters it out, so no line.
    it("says so in one line online too", async () => {
      const result = await staleStore("stale-online", []);
      expect(symbolLines(result.stderr)).toEqual([`dumpdbg: symbols: 1 module refused, another build's file: config-null.exe`]);
    }, RUN_TIMEOUT_MS);

    it("refuses another build's PDB beside the program, with one line and no culprit line", async () => {
      const { exe, dump } = await withoutPdb("stale-beside");
      await put(path.join(path.dirname(exe), PDB), await anotherBuildsPdb());
      const result = await triage(exe, dump, []);
      expect(result.crash.culprit.line).toBeNull();
      expect(symbolLines(result.stderr)).toEqual([`dumpdbg: symbols: 1 module refused, another build's file: config-null.exe`]);
    }, RUN_TIMEOUT_MS);

    it("refuses another build's PDB in a flat folder, with one line and no culprit line", async () => {
      const flat = await folder("stale-flat");
      await put(path.join(flat, PDB), await anotherBuildsPdb());
      const { exe, dump } = await withoutPdb("stale-flat-run");
      const result = await triage(exe, dump, ["--symbols", flat, "--symbols-cache", await folder("stale-flat-cache")]);
      expect(result.crash.culprit.line).toBeNull();
      expect(symbolLines(result.stderr)).toEqual([`dumpdbg: symbols: 1 module refused, another build's file: config-null.exe`]);
    }, RUN_TIMEOUT_MS);

    it("refuses another build's PDB served under this build's id, and keeps it out of the cache", async () => {
      const store = await folder("stale-served");
      await put(path.join(store, PDB, id, PDB), await anotherBuildsPdb());
      const stale = await serve(files(store));
      const cache = await folder("stale-served-cache");
      const { exe, dump } = await withoutPdb("stale-served-run");
      const result = await triage(exe, dump, ["--symbols", stale.url, "--symbols-cache", cache]);
      expect(result.crash.culprit.line).toBeNull();
      expect(symbolLines(result.stderr)).toEqual([`dumpdbg: symbols: 1 module refused, another build's file: config-null.exe`]);
      expect(existsSync(path.join(cache, PDB, id, PDB))).toBe(false);
    }, RUN_TIMEOUT_MS);

    it("costs a few seconds and one line when the server accepts connections and never answers", async () => {
      const silent = await serve(() => undefined);
      const { exe, dump } = await withoutPdb("silent");
      const result = await triage(exe, dump, ["--symbols", silent.url, "--symbols-cache", await folder("silent-cache")]);
      expect(result.crash.culprit.line).toBeNull();
      expect(silent.requests.length).toBeGreaterThan(0);
      expect(symbolLines(result.stderr)).toEqual([`dumpdbg: symbols: 1 module missing: config-null.exe (timeout)`]);
      console.log(`a server that never answers: ${Math.round(result.ms)} ms, against ${Math.round(bare.ms)} ms without any server`);
      expect(result.ms).toBeLessThan(20_000);
      expect(result.ms - bare.ms).toBeLessThan(16_000);
    }, RUN_TIMEOUT_MS);

    it.each([404, 500])("costs little and one line when the server answers %i", async (status) => {
      const failing = await serve((_req, res) => res.writeHead(status).end("no"));
      const { exe, dump } = await withoutPdb(`status-${status}`);
      const result = await triage(exe, dump, ["--symbols", failing.url, "--symbols-cache", await folder(`status-${status}-cache`)]);
      expect(result.crash.culprit.line).toBeNull();
      expect(failing.requests).toContain(`/${PDB}/${id}/${PDB}`);
      expect(symbolLines(result.stderr)).toEqual([expect.stringMatching(new RegExp(`^dumpdbg: symbols: 1 module missing: config-null\\.exe \\(${status}\\b`))]);
      console.log(`a server answering ${status}: ${Math.round(result.ms)} ms, against ${Math.round(bare.ms)} ms without any server`);
      expect(result.ms - bare.ms).toBeLessThan(5_000);
    }, RUN_TIMEOUT_MS);
  });
});
