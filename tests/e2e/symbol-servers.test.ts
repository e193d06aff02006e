/**
 * Fetching symbols from servers (src/debuggers/symbols/server.ts) against real HTTP servers on
 * 127.0.0.1: a node:http server serving a Microsoft symbol store and a Breakpad store from a
 * temp folder, with faults (404, 500, a server that never answers, a file over the cap, a
 * truncated body, file.ptr, a CAB-compressed .pd_, a .sym or a PDB of another build), and Debian's real
 * debuginfod serving the separate debug file of a C program built and split here with gcc and
 * binutils. The PDBs served are real MSF 7.00 files (tests/helpers/pdb-file.ts) whose GUID and
 * age dumpdbg reads and checks itself. Every fetch is bounded: the hanging servers' tests measure
 * that they end in time.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createReadStream, existsSync, statSync } from "node:fs";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchSymbols, type FetchOptions, type SymbolQuery } from "../../src/debuggers/symbols/server.js";
import type { SymbolSource } from "../../src/debuggers/symbols/sources.js";
import { symbolsSummary } from "../../src/debuggers/symbols/summary.js";
import { StorageError } from "../../src/storage-errors.js";
import { pdbBytes } from "../helpers/pdb-file.js";
import { fillToTheLastByte, mountingAllowed, mountTmpfs, unmount } from "../helpers/tmpfs.js";

const exec = promisify(execFile);
const dirs: string[] = [];
const servers: Server[] = [];

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "dumpdbg-symbol-servers-"));
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A server on a free port of 127.0.0.1; it counts requests and the most it had open at once. */
async function serve(handler: Handler): Promise<{ url: string; requests: string[]; mostAtOnce: () => number }> {
  const requests: string[] = [];
  let open = 0;
  let most = 0;
  const server = createServer((req, res) => {
    requests.push(req.url ?? "");
    open++;
    most = Math.max(most, open);
    res.on("close", () => open--);
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, mostAtOnce: () => most };
}

/** Serves files of `root` under `/store/`, after the faults named by path. */
function storeHandler(root: string, faults: Record<string, Handler> = {}): Handler {
  return (req, res) => {
    const url = decodeURIComponent(req.url ?? "");
    const fault = faults[url];
    if (fault) return fault(req, res);
    const file = path.join(root, url.replace(/^\/store\//, ""));
    if (!url.startsWith("/store/") || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end("not here");
      return;
    }
    res.writeHead(200, { "content-length": statSync(file).size });
    createReadStream(file).pipe(res);
  };
}

async function put(root: string, relative: string, content: string | Buffer): Promise<string> {
  const file = path.join(root, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
  return file;
}

/** Every file under a folder, relative to it: what a fetch left in the cache. */
async function filesUnder(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name))).sort();
}

const GUID = "3F2504E0-4F89-11D3-9A0C-0305E82C3301";
/** GUID and age 1 as a store files them: the build every PDB query here asks for. */
const PDB_ID = "3F2504E04F8911D39A0C0305E82C33011";
/** The PDB of that build. */
const PDB = pdbBytes({ guid: GUID, age: 1 });
/** The same program relinked (age 2), and another program (another GUID): real PDBs of other builds. */
const RELINKED = pdbBytes({ guid: GUID, age: 2 });
const RELINKED_ID = "3F2504E04F8911D39A0C0305E82C33012";
const ANOTHER = pdbBytes({ guid: "9B1D4E2A-7C3F-4A5E-8D6B-0F1E2D3C4B5A", age: 1 });
const ANOTHER_ID = "9B1D4E2A7C3F4A5E8D6B0F1E2D3C4B5A1";
/** Only a PDB's first bytes: the magic, with no superblock or streams behind it. */
const PDB_MAGIC_ONLY = "Microsoft C/C++ MSF 7.00\r\n\x1aDS\0\0\0 and nothing more";
/** The size cap of most fetches here: a few real PDBs' worth. */
const MAX_BYTES = 8 * 1024;
const SYM_ID = "94A792245CC8D171EFEE567ADB4CE36C0";
const pdb = (name: string): SymbolQuery => ({ module: name, files: [{ kind: "pdb", name, id: PDB_ID }] });
const ms = (url: string): SymbolSource => ({ kind: "server", url, protocol: "microsoft", origin: "_NT_SYMBOL_PATH" });
const any = (url: string): SymbolSource => ({ kind: "server", url, protocol: "any", origin: "--symbols" });

describe("a Microsoft store and a Breakpad store over HTTP", () => {
  let root: string;
  let store: Awaited<ReturnType<typeof serve>>;
  let pointed: string;
  let stale: string;

  beforeAll(async () => {
    root = await tempDir();
    await put(root, `crash.pdb/${PDB_ID}/crash.pdb`, PDB);
    await put(root, `relinked.pdb/${PDB_ID}/relinked.pdb`, RELINKED);
    await put(root, `another.pdb/${PDB_ID}/another.pdb`, ANOTHER);
    await put(root, `magic.pdb/${PDB_ID}/magic.pdb`, PDB_MAGIC_ONLY);
    await put(root, `crash.pdb/${SYM_ID}/crash.sym`, `MODULE windows x86_64 ${SYM_ID} crash.pdb\nFUNC 1000 10 0 main\n`);
    await put(root, `libold.so/${SYM_ID}/libold.so.sym`, `MODULE Linux x86_64 00000000000000000000000000000000A libold.so\n`);
    await put(root, `packed.pdb/${PDB_ID}/packed.pd_`, Buffer.concat([Buffer.from("MSCF"), Buffer.alloc(60)]));
    pointed = await put(await tempDir(), "share/pointed.pdb", PDB);
    await put(root, `pointed.pdb/${PDB_ID}/file.ptr`, `PATH:${pointed}`);
    stale = await put(await tempDir(), "share/stale.pdb", RELINKED);
    await put(root, `stale.pdb/${PDB_ID}/file.ptr`, `PATH:${stale}`);
    await put(root, `remote.pdb/${PDB_ID}/file.ptr`, "PATH:\\\\fileserver\\symbols\\remote.pdb");
    await put(root, `withdrawn.pdb/${PDB_ID}/file.ptr`, "MSG:withdrawn by the build team\r\n");
    store = await serve(
      storeHandler(root, {
        [`/store/big.pdb/${PDB_ID}/big.pdb`]: (_req, res) => res.writeHead(200, { "content-length": 2 * MAX_BYTES }).end(Buffer.alloc(2 * MAX_BYTES)),
        [`/store/stream.pdb/${PDB_ID}/stream.pdb`]: (_req, res) => {
          // No Content-Length: only counting the body as it arrives can stop it.
          res.writeHead(200);
          for (let i = 0; i < (2 * MAX_BYTES) / 1024; i++) res.write(Buffer.alloc(1024));
          res.end();
        },
        [`/store/cut.pdb/${PDB_ID}/cut.pdb`]: (_req, res) => {
          res.writeHead(200, { "content-length": 1000 });
          res.write(Buffer.alloc(100), () => res.destroy());
        },
        [`/store/moved.pdb/${PDB_ID}/moved.pdb`]: (_req, res) => res.writeHead(302, { location: `/store/crash.pdb/${PDB_ID}/crash.pdb` }).end(),
        [`/store/loop.pdb/${PDB_ID}/loop.pdb`]: (_req, res) => res.writeHead(302, { location: `/store/loop.pdb/${PDB_ID}/loop.pdb` }).end(),
      }),
    );
  });

  const options = async (over: Partial<FetchOptions> = {}): Promise<FetchOptions> => ({ cache: path.join(await tempDir(), "cache"), requestTimeoutMs: 2_000, deadlineMs: 8_000, maxBytes: MAX_BYTES, ...over });

  it("fetches a PDB by GUID and age into the cache at the store's own path, checked by the caller's hook, then finds it there", async () => {
    const opts = await options();
    expect(PDB.length).toBeLessThan(MAX_BYTES);
    const checked: string[] = [];
    const query: SymbolQuery = { ...pdb("crash.pdb"), verify: async (file) => (checked.push(file), true) };
    const [first] = await fetchSymbols([query], [ms(`${store.url}/store`)], opts);
    const cached = path.join(opts.cache, "crash.pdb", PDB_ID, "crash.pdb");
    expect(first?.outcome).toMatchObject({ status: "fetched", from: `${store.url}/store`, path: cached, bytes: PDB.length });
    expect(checked).toHaveLength(1);
    expect(await filesUnder(opts.cache)).toEqual([`crash.pdb/${PDB_ID}/crash.pdb`]);
    expect((await readFile(cached)).equals(PDB)).toBe(true);
    const asked = store.requests.length;
    const [again] = await fetchSymbols([query], [ms(`${store.url}/store`)], { ...opts, offline: true });
    expect(again?.outcome).toMatchObject({ status: "found", from: opts.cache });
    expect(store.requests.length).toBe(asked);
  });

  it("fetches a Breakpad .sym from a plain --symbols URL, checking its MODULE line's id", async () => {
    const opts = await options();
    const [result] = await fetchSymbols([{ module: "crash.pdb", files: [{ kind: "sym", module: "crash.pdb", id: SYM_ID }] }], [any(`${store.url}/store/`.replace(/\/$/, ""))], opts);
    expect(result?.outcome).toMatchObject({ status: "fetched", file: { kind: "sym" } });
    expect(await filesUnder(opts.cache)).toEqual([`crash.pdb/${SYM_ID}/crash.sym`]);
  });

  it("fetches a PE image by timestamp and image size, checked against its own headers: Wine's kernel32.dll", async () => {
    const dll = "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows/kernel32.dll";
    // The index as binutils reads the headers: the COFF timestamp as a date, SizeOfImage in hex.
    const { stdout } = await exec("x86_64-w64-mingw32-objdump", ["-p", dll], { env: { ...process.env, TZ: "UTC" } });
    const stamp = Date.parse(`${/^Time\/Date\s+(.+)$/m.exec(stdout)?.[1]} UTC`) / 1000;
    const size = Number.parseInt(/^SizeOfImage\s+([0-9a-f]+)$/m.exec(stdout)?.[1] ?? "", 16);
    const id = `${stamp.toString(16).toUpperCase().padStart(8, "0")}${size.toString(16)}`;
    await mkdir(path.join(root, "kernel32.dll", id), { recursive: true });
    await copyFile(dll, path.join(root, "kernel32.dll", id, "kernel32.dll"));
    await mkdir(path.join(root, "kernel32.dll", "5E0000001000"), { recursive: true });
    await copyFile(dll, path.join(root, "kernel32.dll", "5E0000001000", "kernel32.dll"));
    const opts = await options({ maxBytes: 16 * 1024 * 1024 });
    const results = await fetchSymbols(
      [
        { module: "kernel32.dll", files: [{ kind: "pe", name: "kernel32.dll", id }] },
        { module: "kernel32.dll", files: [{ kind: "pe", name: "kernel32.dll", id: "5E0000001000" }] },
      ],
      [ms(`${store.url}/store`)],
      opts,
    );
    expect(results[0]?.outcome).toMatchObject({ status: "fetched", bytes: statSync(dll).size });
    expect(results[1]?.outcome).toMatchObject({ status: "refused", reason: expect.stringContaining(`its timestamp and image size are ${id}, not 5E0000001000`) });
    expect(await filesUnder(opts.cache)).toEqual([`kernel32.dll/${id}/kernel32.dll`]);
  });

  it("refuses a .sym whose MODULE id is another build's, and keeps it out of the cache", async () => {
    const opts = await options();
    const [result] = await fetchSymbols([{ module: "libold.so", files: [{ kind: "sym", module: "libold.so", id: SYM_ID }] }], [any(`${store.url}/store`)], opts);
    expect(result?.outcome.status).toBe("refused");
    expect(result?.outcome.status === "refused" && result.outcome.reason).toContain(`its MODULE id is 00000000000000000000000000000000A, not ${SYM_ID}`);
    expect(await filesUnder(opts.cache)).toEqual([]);
  });

  it("refuses a real PDB of another build (another age, another GUID) by its own GUID and age, whatever the caller's hook says", async () => {
    const opts = await options();
    const hooked: string[] = [];
    const verify = async (file: string) => (hooked.push(file), true);
    const names = ["relinked.pdb", "another.pdb", "magic.pdb"];
    const results = await fetchSymbols(names.map((name) => ({ ...pdb(name), verify })), [ms(`${store.url}/store`)], opts);
    const urls = names.map((name) => `${store.url}/store/${name}/${PDB_ID}/${name}`);
    expect(results.map((r) => r.outcome)).toEqual([
      { status: "refused", reason: `${urls[0]}: its GUID and age are ${RELINKED_ID}, not ${PDB_ID}`, tried: [{ url: urls[0], outcome: "wrong id" }] },
      { status: "refused", reason: `${urls[1]}: its GUID and age are ${ANOTHER_ID}, not ${PDB_ID}`, tried: [{ url: urls[1], outcome: "wrong id" }] },
      { status: "refused", reason: `${urls[2]}: it is not a PDB file this reader knows (MSF 7.00)`, tried: [{ url: urls[2], outcome: "wrong id" }] },
    ]);
    // dumpdbg's own check refused them: the caller's hook, which would take anything, was never asked.
    expect(hooked).toEqual([]);
    expect(await filesUnder(opts.cache)).toEqual([]);
  });

  it("refuses the right build's PDB when the caller's hook says it is another build", async () => {
    const opts = await options();
    const url = `${store.url}/store/crash.pdb/${PDB_ID}/crash.pdb`;
    const [result] = await fetchSymbols([{ ...pdb("crash.pdb"), verify: async () => "its PDB age is 2, not 1" }], [ms(`${store.url}/store`)], opts);
    expect(result?.outcome).toEqual({ status: "refused", reason: `${url}: its PDB age is 2, not 1`, tried: [{ url, outcome: "wrong id" }] });
    const [thrown] = await fetchSymbols([{ ...pdb("crash.pdb"), verify: async () => { throw new Error("not a PDB") } }], [ms(`${store.url}/store`)], opts);
    expect(thrown?.outcome).toMatchObject({ status: "refused", reason: `${store.url}/store/crash.pdb/${PDB_ID}/crash.pdb: the check of its id failed: not a PDB` });
    expect(await filesUnder(opts.cache)).toEqual([]);
  });

  it("asks symsrv's fallbacks on a 404, the compressed copy and file.ptr, and says what each answered", async () => {
    const opts = await options();
    const [result] = await fetchSymbols([pdb("kernel32.pdb")], [ms(`${store.url}/store`)], opts);
    expect(result?.outcome).toEqual({
      status: "missing",
      tried: [
        { url: `${store.url}/store/kernel32.pdb/${PDB_ID}/kernel32.pdb`, outcome: "404" },
        { url: `${store.url}/store/kernel32.pdb/${PDB_ID}/kernel32.pd_`, outcome: "404" },
        { url: `${store.url}/store/kernel32.pdb/${PDB_ID}/file.ptr`, outcome: "404" },
      ],
    });
    expect(symbolsSummary([result!])).toBe("symbols: 1 module missing: kernel32.pdb (404)");
    // A miss leaves no folder behind in the cache either.
    expect(existsSync(opts.cache)).toBe(false);
  });

  it("recognises a CAB-compressed .pd_ by its MSCF magic and says plainly it cannot be expanded here", async () => {
    const [result] = await fetchSymbols([pdb("packed.pdb")], [ms(`${store.url}/store`)], await options());
    expect(result?.outcome.status === "missing" && result.outcome.tried[1]).toEqual({ url: `${store.url}/store/packed.pdb/${PDB_ID}/packed.pd_`, outcome: "compressed (.pd_), cannot be expanded here" });
  });

  it("follows a file.ptr to a file on this machine, refuses one of another build, and reports a UNC path or a MSG: instead of taking it", async () => {
    const opts = await options();
    const results = await fetchSymbols([pdb("pointed.pdb"), pdb("remote.pdb"), pdb("withdrawn.pdb"), pdb("stale.pdb")], [ms(`${store.url}/store`)], opts);
    expect(results[0]?.outcome).toEqual({ status: "found", path: pointed, from: `${store.url}/store/pointed.pdb/${PDB_ID}/file.ptr`, file: pdb("pointed.pdb").files[0] });
    expect(results[1]?.outcome.status === "missing" && results[1].outcome.tried[2]?.outcome).toBe("file.ptr points at \\\\fileserver\\symbols\\remote.pdb, not a file here");
    expect(results[2]?.outcome.status === "missing" && results[2].outcome.tried[2]?.outcome).toBe("file.ptr says: withdrawn by the build team");
    expect(results[3]?.outcome).toMatchObject({ status: "refused", reason: `${stale}: its GUID and age are ${RELINKED_ID}, not ${PDB_ID}` });
    expect(await filesUnder(opts.cache)).toEqual([]);
  });

  it("stops a file over the size cap, declared or streamed, and leaves no partial file in the cache", async () => {
    const opts = await options();
    const results = await fetchSymbols([pdb("big.pdb"), pdb("stream.pdb")], [ms(`${store.url}/store`)], opts);
    for (const result of results) expect(result.outcome.status === "missing" && result.outcome.tried[0]?.outcome).toBe("too large");
    expect(await filesUnder(opts.cache)).toEqual([]);
  });

  it("calls a body cut short truncated, and leaves no partial file in the cache", async () => {
    const opts = await options();
    const [result] = await fetchSymbols([pdb("cut.pdb")], [ms(`${store.url}/store`)], opts);
    expect(result?.outcome.status === "missing" && result.outcome.tried[0]?.outcome).toBe("truncated");
    expect(await filesUnder(opts.cache)).toEqual([]);
  });

  it("follows a redirect, and gives up on a redirect loop after a bounded number of hops", async () => {
    const opts = await options({ maxRedirects: 3 });
    const before = store.requests.length;
    const results = await fetchSymbols([{ module: "moved.pdb", files: [{ kind: "pdb", name: "moved.pdb", id: PDB_ID }] }, pdb("loop.pdb")], [ms(`${store.url}/store`)], opts);
    expect(results[0]?.outcome).toMatchObject({ status: "fetched", bytes: PDB.length, path: path.join(opts.cache, "moved.pdb", PDB_ID, "moved.pdb") });
    expect((await readFile(path.join(opts.cache, "moved.pdb", PDB_ID, "moved.pdb"))).equals(PDB)).toBe(true);
    expect(results[1]?.outcome.status === "missing" && results[1].outcome.tried[0]?.outcome).toBe("too many redirects");
    const loops = store.requests.slice(before).filter((r) => r.endsWith("loop.pdb"));
    expect(loops).toHaveLength(4);
  });

  it("goes past a server that fails (500, refused) to the next one that has the file", async () => {
    const broken = await serve((_req, res) => res.writeHead(500).end("oops"));
    const closed = await serve(() => undefined);
    const closedServer = servers.at(-1)!;
    await new Promise((resolve) => closedServer.close(resolve));
    const [result] = await fetchSymbols([pdb("crash.pdb")], [ms(broken.url), ms(closed.url), ms(`${store.url}/store`)], await options());
    expect(result?.outcome).toMatchObject({ status: "fetched", from: `${store.url}/store` });
    const [alone] = await fetchSymbols([pdb("crash.pdb")], [ms(broken.url), ms(closed.url)], await options());
    expect(alone?.outcome.status === "missing" && alone.outcome.tried.map((t) => t.outcome)).toEqual(["500", "refused"]);
  });

  it("ends a request to a server that accepts and never answers within its timeout", async () => {
    const silent = await serve(() => undefined);
    const started = Date.now();
    const [result] = await fetchSymbols([pdb("crash.pdb")], [ms(silent.url)], await options({ requestTimeoutMs: 700 }));
    const took = Date.now() - started;
    expect(result?.outcome).toEqual({ status: "missing", tried: [{ url: `${silent.url}/crash.pdb/${PDB_ID}/crash.pdb`, outcome: "timeout" }] });
    expect(took).toBeGreaterThanOrEqual(650);
    expect(took).toBeLessThan(3_000);
  });

  it("ends the whole fetch at its deadline however many modules wait on silent servers", async () => {
    const silent = await serve(() => undefined);
    const queries = Array.from({ length: 10 }, (_, i) => pdb(`m${i}.pdb`));
    const started = Date.now();
    const results = await fetchSymbols(queries, [ms(silent.url)], await options({ requestTimeoutMs: 10_000, deadlineMs: 1_000 }));
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(new Set(results.map((r) => r.outcome.status === "missing" && r.outcome.tried[0]?.outcome))).toEqual(new Set(["deadline passed"]));
    expect(silent.mostAtOnce()).toBe(4);
  });

  it("keeps at most four requests open at once over many modules", async () => {
    // Each answer waits a little, so requests overlap and the bound is what limits them.
    const slow = await serve((req, res) => setTimeout(() => storeHandler(root)(req, res), 100));
    const queries = Array.from({ length: 12 }, (_, i) => pdb(`absent${i}.pdb`));
    await fetchSymbols(queries, [ms(slow.url)], await options());
    expect(slow.requests.length).toBe(36);
    expect(slow.mostAtOnce()).toBe(4);
  });

  it("says the cache cannot be written when a file stands where its folder should be", async () => {
    const cache = await put(await tempDir(), "not-a-folder", "");
    const [result] = await fetchSymbols([pdb("crash.pdb")], [ms(`${store.url}/store`)], { ...(await options()), cache });
    expect(result?.outcome.status === "missing" && result.outcome.tried[0]?.outcome).toMatch(/^cache not writable \((ENOTDIR|EEXIST)\)$/);
  });

  it.skipIf(!mountingAllowed())("ends with a StorageError naming the file when the cache's disk is full, and leaves no part behind", async () => {
    const cache = mountTmpfs(path.join(await tempDir(), "full-cache"), "64k");
    try {
      fillToTheLastByte(path.join(cache, "filler"));
      const fetching = fetchSymbols([pdb("crash.pdb")], [ms(`${store.url}/store`)], { ...(await options()), cache });
      const error = await fetching.then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(StorageError);
      expect((error as StorageError).message).toMatch(new RegExp(`^cannot write ${cache}/crash\\.pdb/\\S+/crash\\.pdb: no space left on device; free some space there or choose another symbol cache \\(--symbols-cache DIR\\)$`));
      const left = (await readdir(cache, { recursive: true })).filter((entry) => entry.endsWith(".part"));
      expect(left).toEqual([]);
    } finally {
      unmount(cache);
    }
  });

  it("asks no server when offline, and says so", async () => {
    const before = store.requests.length;
    const [result] = await fetchSymbols([pdb("crash.pdb")], [ms(`${store.url}/store`)], await options({ offline: true }));
    expect(result?.outcome).toEqual({ status: "missing", tried: [{ url: `${store.url}/store`, outcome: "offline" }] });
    expect(store.requests.length).toBe(before);
  });

  it("reads a local folder in the store layouts before any server, passing over a folder's PDB of another build", async () => {
    const staleRoot = await tempDir();
    await put(staleRoot, `crash.pdb/${PDB_ID}/crash.pdb`, RELINKED);
    const folder = (at: string): SymbolSource => ({ kind: "folder", path: at, origin: "--symbols" });
    const before = store.requests.length;
    const [result] = await fetchSymbols([pdb("crash.pdb")], [ms(`${store.url}/store`), folder(staleRoot), folder(root)], await options());
    expect(result?.outcome).toMatchObject({ status: "found", path: path.join(root, "crash.pdb", PDB_ID, "crash.pdb"), from: root });
    expect(store.requests.length).toBe(before);
    // With only the stale folder, the server's copy is fetched.
    const [fetched] = await fetchSymbols([pdb("crash.pdb")], [ms(`${store.url}/store`), folder(staleRoot)], await options());
    expect(fetched?.outcome).toMatchObject({ status: "fetched", from: `${store.url}/store`, bytes: PDB.length });
    expect(store.requests.length).toBe(before + 1);
  });

  it("refuses a module name from a dump that would leave the cache, asking nothing", async () => {
    const before = store.requests.length;
    const [result] = await fetchSymbols([pdb("../../escape.pdb")], [ms(`${store.url}/store`)], await options());
    expect(result?.outcome).toMatchObject({ status: "refused", reason: 'module name "../../escape.pdb" is not a plain file name' });
    expect(store.requests.length).toBe(before);
  });
});

/** A free port on 127.0.0.1, found by listening on port 0 and letting it go. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function readelfBuildId(elf: string): Promise<string> {
  const { stdout } = await exec("readelf", ["-n", elf]);
  const match = /Build ID: ([0-9a-f]+)/.exec(stdout);
  if (!match?.[1]) throw new Error(`readelf -n shows no build id for ${elf}`);
  return match[1];
}

describe("Debian's debuginfod serving a program's separate debug file", () => {
  let debuginfod: ChildProcess;
  let url: string;
  let buildId: string;
  let program: string;

  beforeAll(async () => {
    const dir = await tempDir();
    const files = path.join(dir, "files");
    await mkdir(files);
    const source = await put(dir, "hello.c", 'int answer(int x) { return x * 2; }\nint main(void) { return answer(21) == 42 ? 0 : 1; }\n');
    program = path.join(files, "hello");
    // gcc links a build id by default; the debug file keeps it, so debuginfod files both under it.
    await exec("gcc", ["-g", "-O0", "-o", program, source]);
    await exec("objcopy", ["--only-keep-debug", program, `${program}.debug`]);
    await exec("strip", ["--strip-debug", program]);
    await exec("objcopy", [`--add-gnu-debuglink=${program}.debug`, program], { cwd: files });
    buildId = await readelfBuildId(program);
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    // -t 0 -g 0: one scan, no rescans or grooming; no DEBUGINFOD_URLS, so it asks no upstream.
    const env = { ...process.env, DEBUGINFOD_URLS: "" };
    debuginfod = spawn("debuginfod", ["-p", String(port), "-F", "-t", "0", "-g", "0", "-d", path.join(dir, "index.sqlite"), files], { stdio: "ignore", env });
    const until = Date.now() + 15_000;
    for (;;) {
      const status = await fetch(`${url}/buildid/${buildId}/debuginfo`).then((r) => (r.body?.cancel(), r.status), () => 0);
      if (status === 200) break;
      if (Date.now() > until || debuginfod.exitCode !== null) throw new Error(`debuginfod on ${url} did not serve ${buildId} within 15 s (last status ${status})`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 30_000);

  afterAll(async () => {
    if (!debuginfod || debuginfod.exitCode !== null) return;
    const exited = new Promise((resolve) => debuginfod.once("exit", resolve));
    debuginfod.kill();
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
  });

  const debuginfodServer = (at = url): SymbolSource => ({ kind: "server", url: at, protocol: "debuginfod", origin: "DEBUGINFOD_URLS" });

  it("fetches the debug file by build id, checks the build id note of what arrived, and caches it", async () => {
    const cache = path.join(await tempDir(), "cache");
    const [result] = await fetchSymbols([{ module: "hello", files: [{ kind: "debuginfo", buildId }] }], [debuginfodServer()], { cache });
    expect(result?.outcome).toMatchObject({ status: "fetched", from: url, path: path.join(cache, "buildid", buildId, "debuginfo") });
    const fetched = result?.outcome.status === "fetched" ? result.outcome.path : "";
    expect(await readelfBuildId(fetched)).toBe(buildId);
    // The debug file carries DWARF; the stripped program it came from does not.
    const { stdout } = await exec("readelf", ["-S", fetched]);
    expect(stdout).toContain(".debug_info");
    expect(await filesUnder(cache)).toEqual([`buildid/${buildId}/debuginfo`]);
    expect(symbolsSummary([result!])).toBe(`symbols: 1 module from ${url}`);
  });

  it("fetches the executable by the same build id, and asks debuginfod nothing of a PDB", async () => {
    const cache = path.join(await tempDir(), "cache");
    const results = await fetchSymbols(
      [
        { module: "hello", files: [{ kind: "executable", buildId }] },
        { module: "crash.pdb", files: [{ kind: "pdb", name: "crash.pdb", id: PDB_ID }] },
      ],
      [debuginfodServer()],
      { cache },
    );
    expect(results[0]?.outcome).toMatchObject({ status: "fetched", bytes: statSync(program).size });
    expect(results[1]?.outcome).toEqual({ status: "missing", tried: [] });
  });

  it("refuses an ELF file served under another build id, by its own build id note", async () => {
    const other = "ab".repeat(20);
    // A misfiled server: the real debug file, under a build id that is not its own.
    const misfiled = await serve((req, res) => (req.url === `/buildid/${other}/debuginfo` ? createReadStream(`${program}.debug`).pipe(res.writeHead(200)) : res.writeHead(404).end()));
    const cache = path.join(await tempDir(), "cache");
    const [result] = await fetchSymbols([{ module: "hello", files: [{ kind: "debuginfo", buildId: other }] }], [debuginfodServer(misfiled.url)], { cache });
    expect(result?.outcome).toMatchObject({ status: "refused", reason: `${misfiled.url}/buildid/${other}/debuginfo: its build id is ${buildId}, not ${other}` });
    expect(await filesUnder(cache)).toEqual([]);
  });

  it("reports a build id debuginfod does not know as a 404", async () => {
    const unknown = "00".repeat(20);
    const [result] = await fetchSymbols([{ module: "other", files: [{ kind: "debuginfo", buildId: unknown }] }], [debuginfodServer()], { cache: path.join(await tempDir(), "cache") });
    expect(result?.outcome).toEqual({ status: "missing", tried: [{ url: `${url}/buildid/${unknown}/debuginfo`, outcome: "404" }] });
  });
});
