/**
 * Fetches each module's debug information from the places the user named: dumpdbg's cache first,
 * then local folders, then servers in parallel (a few requests at a time), every request bounded
 * and the whole fetch under one deadline. A download reaches the cache only whole and checked.
 */
import { existsSync, statSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { StorageError } from "../../storage-errors.js";
import { downloadBeside, intoCache, type RequestLimits } from "./download.js";
import { compressedName, serves, storePath, unsafeReason, type SymbolFile } from "./layouts.js";
import type { SymbolSource } from "./sources.js";
import { compressedCopy, followPointer, type Tried } from "./symsrv.js";
import { mismatch, type VerifyFile } from "./verify.js";

export type { Tried } from "./symsrv.js";

/** One module, and the files that would give its symbols, best first. */
export interface SymbolQuery {
  /** The module as a summary names it: `kernel32.pdb`, `libfoo.so`. */
  module: string;
  files: SymbolFile[];
  /** Checks what dumpdbg cannot read itself (a PDB's GUID and age). */
  verify?: VerifyFile;
}

export type SymbolOutcome =
  /** Already on this machine: in the cache, a named folder, or where a `file.ptr` pointed. */
  | { status: "found"; path: string; from: string; file: SymbolFile }
  | { status: "fetched"; path: string; from: string; file: SymbolFile; bytes: number; ms: number }
  | { status: "missing"; tried: Tried[] }
  /** Some store had a file under the module's name and id, but not the module's build. */
  | { status: "refused"; reason: string; tried: Tried[] };

export interface SymbolResult {
  module: string;
  outcome: SymbolOutcome;
}

export interface FetchOptions {
  /** dumpdbg's cache folder (`symbolSources(...).cache`). */
  cache: string;
  /** No network request at all: only the cache and folders. */
  offline?: boolean;
  /** Per request: connect, first byte and body. */
  requestTimeoutMs?: number;
  /** For the whole fetch, every module together. */
  deadlineMs?: number;
  maxBytes?: number;
  parallelRequests?: number;
  maxRedirects?: number;
}

const DEFAULTS = { requestTimeoutMs: 5_000, deadlineMs: 15_000, maxBytes: 1024 ** 3, parallelRequests: 4, maxRedirects: 5 };

export async function fetchSymbols(queries: SymbolQuery[], sources: SymbolSource[], options: FetchOptions): Promise<SymbolResult[]> {
  const settings = { ...DEFAULTS, ...definedOnly(options) };
  const deadline = AbortSignal.timeout(settings.deadlineMs);
  const pool = new RequestPool(settings.parallelRequests);
  const servers = sources.filter((s): s is Extract<SymbolSource, { kind: "server" }> => s.kind === "server");
  const folders = [options.cache, ...sources.flatMap((s) => (s.kind === "folder" ? [s.path] : []))];
  const fetchOne = async (query: SymbolQuery): Promise<SymbolResult> => {
    const files = query.files.filter((file) => unsafeReason(file) === null);
    const unsafe = query.files.map(unsafeReason).find((reason) => reason !== null);
    if (files.length === 0) return { module: query.module, outcome: unsafe ? { status: "refused", reason: unsafe, tried: [] } : { status: "missing", tried: [] } };
    const local = await findLocal(files, folders, query.verify);
    if (local.outcome) return { module: query.module, outcome: local.outcome };
    if (options.offline) return { module: query.module, outcome: notFound(local.refusals, servers.filter((s) => files.some((file) => serves(s.protocol, file))).map((s) => ({ url: s.url, outcome: "offline" }))) };
    const outcome = await fromServers(files, servers, query.verify, { cache: options.cache, pool, deadline, settings });
    // Another build's file on this machine is worth saying when no server had the right one.
    if (outcome.status === "missing" && local.refusals.length > 0) return { module: query.module, outcome: notFound(local.refusals, outcome.tried) };
    return { module: query.module, outcome };
  };
  return Promise.all(queries.map(fetchOne));
}

/** The first file in the cache or a folder that is the module's build. */
async function findLocal(files: SymbolFile[], folders: string[], verify: VerifyFile | undefined): Promise<{ outcome: SymbolOutcome | null; refusals: string[] }> {
  const refusals: string[] = [];
  for (const folder of folders) {
    for (const file of files) {
      const path = join(folder, ...storePath(file));
      if (!isFile(path)) continue;
      const wrong = await mismatch(path, file, verify);
      if (wrong === null) return { outcome: { status: "found", path, from: folder, file }, refusals };
      refusals.push(`${path}: ${wrong}`);
    }
  }
  return { outcome: null, refusals };
}

interface ServerContext {
  cache: string;
  pool: RequestPool;
  deadline: AbortSignal;
  settings: typeof DEFAULTS;
}

type Server = Extract<SymbolSource, { kind: "server" }>;
type Attempt = { outcome: Extract<SymbolOutcome, { status: "found" | "fetched" }> | null; tried: Tried[]; refusal: string | null };

/**
 * Asks every server for every file it may hold, all at once through the request pool: the first
 * checked file wins and the requests still running are cancelled. Servers named first start first.
 */
async function fromServers(files: SymbolFile[], servers: Server[], verify: VerifyFile | undefined, context: ServerContext): Promise<SymbolOutcome> {
  const won = new AbortController();
  const limits: RequestLimits = {
    timeoutMs: context.settings.requestTimeoutMs,
    deadline: AbortSignal.any([context.deadline, won.signal]),
    maxBytes: context.settings.maxBytes,
    maxRedirects: context.settings.maxRedirects,
  };
  const attempts = servers.flatMap((server) => files.filter((file) => serves(server.protocol, file)).map((file) => ({ server, file })));
  let winner: Attempt["outcome"] = null;
  const results = await Promise.all(
    attempts.map(async ({ server, file }) => {
      const attempt = await askServer(server, file, verify, limits, context);
      if (attempt.outcome && !winner) {
        winner = attempt.outcome;
        won.abort();
      }
      return attempt;
    }),
  );
  if (winner) return winner;
  return notFound(
    results.flatMap((r) => (r.refusal ? [r.refusal] : [])),
    results.flatMap((r) => r.tried),
  );
}

/** One file from one server: the file itself, then for symsrv its compressed copy and its `file.ptr`. */
async function askServer(server: Server, file: SymbolFile, verify: VerifyFile | undefined, limits: RequestLimits, context: ServerContext): Promise<Attempt> {
  const path = storePath(file);
  const url = `${server.url}/${path.map(encodeURIComponent).join("/")}`;
  const destination = join(context.cache, ...path);
  let started = Date.now();
  const download = await context.pool.run(() => {
    // The time a download took, not the time it waited for a free slot.
    started = Date.now();
    return downloadBeside(url, destination, limits).catch((error: NodeJS.ErrnoException) => {
      // A full, read-only or forbidden cache ends the run; anything else in its way is this file's miss.
      if (error instanceof StorageError) throw error;
      return { ok: false as const, failure: `cache not writable (${error.code ?? error.message})` };
    });
  });
  if (download.ok) {
    const wrong = await mismatch(download.temp, file, verify);
    if (wrong !== null) {
      await rm(download.temp, { force: true });
      return { outcome: null, tried: [{ url, outcome: "wrong id" }], refusal: `${url}: ${wrong}` };
    }
    await intoCache(destination, () => rename(download.temp, destination));
    return { outcome: { status: "fetched", path: destination, from: server.url, file, bytes: download.bytes, ms: Date.now() - started }, tried: [], refusal: null };
  }
  const tried: Tried[] = [{ url, outcome: download.failure }];
  const symsrv = server.protocol !== "debuginfod" && (file.kind === "pdb" || file.kind === "pe");
  if (download.failure !== "404" || !symsrv) return { outcome: null, tried, refusal: null };
  const folder = `${server.url}/${path.slice(0, 2).map(encodeURIComponent).join("/")}`;
  tried.push(await context.pool.run(() => compressedCopy(`${folder}/${encodeURIComponent(compressedName(file.name))}`, limits)));
  const pointer = await context.pool.run(() => followPointer(`${folder}/file.ptr`, limits));
  tried.push(pointer.tried);
  if (pointer.path === null) return { outcome: null, tried, refusal: null };
  const wrong = await mismatch(pointer.path, file, verify);
  if (wrong !== null) return { outcome: null, tried, refusal: `${pointer.path}: ${wrong}` };
  return { outcome: { status: "found", path: pointer.path, from: pointer.tried.url, file }, tried: [], refusal: null };
}

/** A file of the wrong build is worth saying over a plain miss: the user named a store that is stale. */
function notFound(refusals: string[], tried: Tried[]): SymbolOutcome {
  return refusals.length > 0 ? { status: "refused", reason: refusals.join("; "), tried } : { status: "missing", tried };
}

/** At most `size` requests at once; a request that starts after the deadline fails at once on its aborted signal. */
class RequestPool {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    while (this.running >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

function isFile(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isFile();
  } catch {
    return false;
  }
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
}
