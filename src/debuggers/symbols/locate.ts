/**
 * Every module of a dump matched with its debug information, by the ids the dump (or the program's
 * own file) records, from everywhere the user keeps it: Breakpad stores, build-id trees and folders
 * of debug files (`../symbols.ts`), PDBs in a Microsoft store (one or two tiers), a flat folder or
 * beside the dump and the program, and symbol servers through dumpdbg's cache (`server.ts`). The
 * result is what the debugger is given (files to add, folders to search) and one row per module
 * saying where its symbols came from or why there are none.
 */
import { existsSync, linkSync, lstatSync, mkdirSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";

import { readPeIdentity } from "../dumpfile/pe.js";
import type { Module } from "../model.js";
import { breakpadId, findSymbols } from "../symbols.js";
import type { SymbolFile } from "./layouts.js";
import { fetchSymbols, type SymbolOutcome, type SymbolQuery, type SymbolResult } from "./server.js";
import type { SymbolSources } from "./sources.js";
import { symbolsSummary } from "./summary.js";
import { mismatch } from "./verify.js";

export interface LocateInput {
  modules: Module[];
  dumpPath: string;
  executable: string | null;
  sources: SymbolSources;
  /** No network request (`--offline`): the cache and folders only. */
  offline: boolean;
  /** Per request and for the whole fetch; the defaults suit a user at a terminal. */
  requestTimeoutMs?: number;
  deadlineMs?: number;
}

/** The ids a module is known by, each null when neither the dump nor its file records it. */
export interface ModuleIds {
  /** GNU build id (ELF) or the CodeView GUID and age (PE). */
  buildId: string | null;
  /** The id a Breakpad store files it under. */
  breakpadId: string | null;
  /** The PDB the CodeView record names. */
  debugFile: string | null;
  /** A PE's TimeDateStamp and SizeOfImage (`%08X%x`). */
  codeId: string | null;
}

export interface ModuleSymbols {
  module: string;
  path: string;
  ids: ModuleIds;
  /** found: on this machine; fetched: downloaded now; missing: looked for, none; refused: another build's; unidentified: the dump gives no id to look for. */
  status: "found" | "fetched" | "missing" | "refused" | "unidentified" | "not looked for";
  /** The file given to the debugger. */
  file: string | null;
  /** Where it came from: a folder, a store or a server. */
  from: string | null;
  /** What was tried, or why it was refused. */
  detail: string | null;
  /** The module's image fetched or found in a store (a system DLL the dump's machine had), given to the debugger. */
  image?: string;
}

export interface SymbolPlan {
  /** Files the debugger adds (LLDB's `target symbols add`): PDBs and Breakpad `.sym` files. */
  symbolFiles: string[];
  /** Folders the debugger searches for separate debug files (build-id trees, debug links). */
  debugDirectories: string[];
  /** Folders holding module images fetched from a server, searched by file name. */
  modulesPath: string[];
  modules: ModuleSymbols[];
  /** Settings and stores that could not be used, one line each. */
  notes: string[];
  /** One line for the terminal (`symbols: 3 modules from …, 2 missing: kernel32.pdb (404)`); null when nothing was looked for. */
  summary: string | null;
}

export async function locateSymbols(input: LocateInput): Promise<SymbolPlan> {
  const folders = input.sources.sources.flatMap((s) => (s.kind === "folder" ? [s.path] : []));
  const local = folders.length ? findSymbols(folders, input.modules) : { debugDirectories: [], symbolFiles: [], notes: [] };
  const plan: SymbolPlan = { symbolFiles: local.symbolFiles.map((s) => s.file), debugDirectories: [...local.debugDirectories], modulesPath: [], modules: [], notes: [...input.sources.notes, ...local.notes], summary: null };
  const program = input.executable ? programIdentity(input.executable) : null;
  const queries: { row: ModuleSymbols; query: SymbolQuery; refusals: string[] }[] = [];
  // Found here without a fetch: counted in the summary line with what the fetch found.
  const foundHere: SymbolResult[] = [];
  for (const module of input.modules) {
    const ids = idsOf(module, program && sameFile(module.path, input.executable) ? program : null);
    const row: ModuleSymbols = { module: fileName(module.path), path: module.path, ids, status: "not looked for", file: null, from: null, detail: null };
    plan.modules.push(row);
    const sym = local.symbolFiles.find((s) => s.module === module.path);
    if (sym) {
      Object.assign(row, { status: "found", file: sym.file, from: dirname(dirname(dirname(sym.file))) });
      foundHere.push({ module: row.module, outcome: { status: "found", path: sym.file, from: dirname(dirname(dirname(sym.file))), file: { kind: "sym", module: row.module, id: ids.breakpadId ?? "" } } });
      continue;
    }
    const files = wantedFiles(ids, module);
    if (files.length === 0) {
      Object.assign(row, { status: "unidentified", detail: "the dump records no id for it" });
      continue;
    }
    const pdb = wantedPdb(files);
    const flat = pdb ? await flatPdb(pdb, [...folders, ...besideDump(input.dumpPath, input.executable)]) : { file: null, refusals: [] };
    if (pdb && flat.file) {
      Object.assign(row, { status: "found", file: flat.file, from: dirname(flat.file) });
      foundHere.push({ module: row.module, outcome: { status: "found", path: flat.file, from: dirname(flat.file), file: pdb } });
      plan.symbolFiles.push(flat.file);
      continue;
    }
    queries.push({ row, query: { module: row.module, files }, refusals: flat.refusals });
  }
  plan.summary = symbolsSummary(foundHere);
  const fetchOptions = { cache: input.sources.cache, offline: input.offline, ...(input.requestTimeoutMs ? { requestTimeoutMs: input.requestTimeoutMs } : {}), ...(input.deadlineMs ? { deadlineMs: input.deadlineMs } : {}) };
  // A minidump read away from its machine lacks the system modules' files, and with them their
  // unwind tables: a store or server that keeps the images (by timestamp and size) gives them.
  const images = [
    ...(input.sources.sources.length > 0 ? imageQueries(plan.modules, input.executable) : []),
    // A core read away from its machine lacks the shared libraries themselves: debuginfod keeps them by build id.
    ...(input.sources.sources.some((s) => s.kind === "server") ? libraryQueries(plan.modules, input.executable) : []),
  ];
  const fetchingImages = images.length > 0 ? fetchSymbols(images.map((i) => i.query), input.sources.sources, fetchOptions) : Promise.resolve([]);
  // Awaited below; a full cache that fails both fetches is reported once, by the first.
  fetchingImages.catch(() => undefined);
  if (queries.length > 0) {
    const fetched = await fetchSymbols(
      queries.map((q) => q.query),
      input.sources.sources,
      fetchOptions,
    );
    // A stale PDB by name beside the program is worth saying when nothing better turned up.
    const results = fetched.map((result, i): SymbolResult => {
      const refusals = queries[i]?.refusals ?? [];
      if (result.outcome.status !== "missing" || refusals.length === 0) return result;
      return { module: result.module, outcome: { status: "refused", reason: refusals.join("; "), tried: result.outcome.tried } };
    });
    results.forEach((result, i) => {
      const row = queries[i]?.row;
      if (row) use(plan, row, result.outcome, input.sources.cache);
    });
    plan.summary = symbolsSummary([...foundHere, ...results.filter((r) => r.outcome.status !== "missing" || r.outcome.tried.length > 0)]);
  }
  const gotImages = (await fetchingImages).flatMap((result, i) => {
    const row = images[i]?.row;
    if (!row || (result.outcome.status !== "found" && result.outcome.status !== "fetched")) return [];
    const { path, from, file } = result.outcome;
    // gdb and LLDB look for a library by its file name: debuginfod's `executable` is linked under it.
    const folder = file.kind === "executable" ? libraryFolder(input.sources.cache, file.buildId, row.module, path) : dirname(path);
    if (folder === null) {
      plan.notes.push(`symbols: ${row.module}'s image from ${from} could not be linked under its name in ${join(input.sources.cache, "modules")}`);
      return [];
    }
    return [{ row, path, from, folder }];
  });
  for (const { row, path, from, folder } of gotImages) {
    row.image = `${path} (from ${from})`;
    if (!plan.modulesPath.includes(folder)) plan.modulesPath.push(folder);
  }
  if (gotImages.length > 0) plan.summary = `${plan.summary ?? "symbols: none"}; ${gotImages.length} module ${gotImages.length === 1 ? "image" : "images"} from ${[...new Set(gotImages.map((g) => g.from))].join(", ")}`;
  return plan;
}

/** The Windows modules other than the program, by their images' ids: what a symbol server keeps of the system's DLLs. */
function imageQueries(rows: ModuleSymbols[], executable: string | null): { row: ModuleSymbols; query: SymbolQuery }[] {
  return rows.flatMap((row) => {
    if (!PE_NAME.test(row.module) || !row.ids.codeId || sameFile(row.path, executable)) return [];
    return [{ row, query: { module: row.module, files: [{ kind: "pe", name: row.module.toLowerCase(), id: row.ids.codeId }] } }];
  });
}

/**
 * The ELF shared libraries whose files are not on this machine (a core read away from where it was
 * written), by build id: debuginfod's `executable`. Never the program, which the user gives.
 */
function libraryQueries(rows: ModuleSymbols[], executable: string | null): { row: ModuleSymbols; query: SymbolQuery }[] {
  return rows.flatMap((row) => {
    const buildId = row.ids.buildId?.toLowerCase();
    if (PE_NAME.test(row.module) || !buildId || !/^[0-9a-f]{8,}$/.test(buildId) || sameFile(row.path, executable) || existsSync(row.path)) return [];
    return [{ row, query: { module: row.module, files: [{ kind: "executable", buildId }] } }];
  });
}

/**
 * A folder of the cache holding one file, `modules/<build id>/<libname.so.N>`, the library fetched
 * as `buildid/<id>/executable` under its own name: the folder goes on the debugger's search path.
 * A hard link where it can be (gdb resolves a symlink and would name the frame's module
 * `executable`), else a symlink.
 */
function libraryFolder(cache: string, buildId: string, name: string, file: string): string | null {
  if (!/^[0-9a-f]+$/i.test(buildId) || !name || name === "." || name === ".." || /[/\\\0]/.test(name) || /[\x00-\x1f]/.test(name)) return null;
  const folder = join(cache, "modules", buildId.toLowerCase());
  return link(join(folder, name), file, "hard") || link(join(folder, name), file, "symbolic") ? folder : null;
}

/** A link to `file`, made beside and renamed over, so a run reading it never sees a half-made link. */
function link(path: string, file: string, kind: "hard" | "symbolic" = "symbolic"): boolean {
  const target = relative(dirname(path), file);
  try {
    if (kind === "symbolic" && existsSync(path) && lstatSync(path).isSymbolicLink() && readlinkSync(path) === target) return true;
    if (kind === "hard" && sameInode(path, file)) return true;
    mkdirSync(dirname(path), { recursive: true });
    const temporary = `${path}.${process.pid}.tmp`;
    rmSync(temporary, { force: true });
    if (kind === "hard") linkSync(file, temporary);
    else symlinkSync(target, temporary);
    renameSync(temporary, path);
    // rename does nothing when both names are already links to one file (another run made it).
    rmSync(temporary, { force: true });
    return true;
  } catch {
    return false;
  }
}

function sameInode(a: string, b: string): boolean {
  try {
    const [x, y] = [lstatSync(a), statSync(b)];
    return x.isFile() && x.ino === y.ino && x.dev === y.dev;
  } catch {
    return false;
  }
}

/**
 * Whether a PDB one of the dump's modules names lies beside the dump or the program, where a
 * Windows build leaves it: then symbols are looked for even when the user named no store.
 */
export function hasPdbBeside(modules: Module[], dumpPath: string, executable: string | null): boolean {
  const program = executable ? programIdentity(executable) : null;
  const folders = besideDump(dumpPath, executable);
  return modules.some((module) => {
    const pdb = wantedPdb(wantedFiles(idsOf(module, program && sameFile(module.path, executable) ? program : null), module));
    return pdb !== null && folders.some((folder) => existsSync(join(folder, pdb.name)));
  });
}

function besideDump(dumpPath: string, executable: string | null): string[] {
  return [dirname(dumpPath), ...(executable ? [dirname(executable)] : [])];
}

function wantedPdb(files: SymbolFile[]): Extract<SymbolFile, { kind: "pdb" }> | null {
  return files.find((f): f is Extract<SymbolFile, { kind: "pdb" }> => f.kind === "pdb") ?? null;
}

/** The program's own CodeView record and image id, for a dump whose writer left them out (Wine's). */
function programIdentity(executable: string): Partial<ModuleIds> | null {
  try {
    const identity = readPeIdentity(executable);
    return { buildId: identity.codeView?.id ?? null, debugFile: identity.codeView?.debugFile ?? null, codeId: identity.codeId };
  } catch {
    return null;
  }
}

function idsOf(module: Module, program: Partial<ModuleIds> | null): ModuleIds {
  const buildId = module.buildId ?? program?.buildId ?? null;
  return {
    buildId,
    breakpadId: breakpadId({ ...module, buildId }),
    debugFile: module.debugFile ?? program?.debugFile ?? null,
    codeId: module.codeId ?? program?.codeId ?? null,
  };
}

const PE_NAME = /\.(exe|dll|sys|ocx|cpl|drv|scr|efi)$/i;

/** The files that would give a module's symbols, best first. */
function wantedFiles(ids: ModuleIds, module: Module): SymbolFile[] {
  const name = fileName(module.path);
  if (PE_NAME.test(name) || ids.debugFile?.toLowerCase().endsWith(".pdb")) {
    const pdbName = ids.debugFile ? fileName(ids.debugFile) : name.replace(/\.[^.]+$/, ".pdb");
    const files: SymbolFile[] = [];
    if (ids.buildId && /^[0-9A-F]{33,40}$/i.test(ids.buildId)) files.push({ kind: "pdb", name: pdbName, id: ids.buildId.toUpperCase() }, { kind: "sym", module: pdbName, id: ids.buildId.toUpperCase() });
    return files;
  }
  const files: SymbolFile[] = [];
  if (ids.buildId && /^[0-9a-f]{8,}$/i.test(ids.buildId)) files.push({ kind: "debuginfo", buildId: ids.buildId.toLowerCase() });
  if (ids.breakpadId) files.push({ kind: "sym", module: name, id: ids.breakpadId });
  return files;
}

/**
 * A PDB kept by name in a folder, beside the dump or the program, or in a two-tier store; taken
 * only when its GUID and age are the module's, else why each one found was not.
 */
async function flatPdb(pdb: Extract<SymbolFile, { kind: "pdb" }>, folders: string[]): Promise<{ file: string | null; refusals: string[] }> {
  const refusals: string[] = [];
  for (const folder of new Set(folders)) {
    const candidates = [join(folder, pdb.name)];
    // symstore's two-tier layout puts each name under its first two letters (`ke/kernel32.pdb/…`).
    if (existsSync(join(folder, "index2.txt"))) candidates.push(join(folder, pdb.name.slice(0, 2), pdb.name, pdb.id, pdb.name));
    for (const candidate of candidates) {
      // A Microsoft store keeps a folder of that name (`kernel32.pdb/<id>/…`): read as a store, not here.
      if (!isFile(candidate)) continue;
      const wrong = await mismatch(candidate, pdb, undefined);
      if (wrong === null) return { file: candidate, refusals: [] };
      refusals.push(`${candidate}: ${wrong}`);
    }
  }
  return { file: null, refusals };
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** What the fetch found for a module becomes a row and something the debugger is given. */
function use(plan: SymbolPlan, row: ModuleSymbols, outcome: SymbolOutcome, cache: string): void {
  if (outcome.status === "missing") {
    Object.assign(row, { status: "missing", detail: outcome.tried.length ? outcome.tried.map((t) => `${t.url}: ${t.outcome}`).join("; ") : "no store or server holds it" });
    return;
  }
  if (outcome.status === "refused") {
    Object.assign(row, { status: "refused", detail: outcome.reason });
    return;
  }
  Object.assign(row, { status: outcome.status, file: outcome.path, from: outcome.from });
  const file = outcome.file;
  if (file.kind === "pdb" || file.kind === "sym") plan.symbolFiles.push(outcome.path);
  else if (file.kind === "debuginfo") {
    const tree = buildIdTree(cache, file.buildId, outcome.path);
    if (tree && !plan.debugDirectories.includes(tree)) plan.debugDirectories.push(tree);
  } else if (file.kind === "pe" && !plan.modulesPath.includes(dirname(outcome.path))) plan.modulesPath.push(dirname(outcome.path));
}

/**
 * gdb and LLDB find a separate debug file by build id under a folder's `.build-id/ab/cdef….debug`:
 * a debug file from debuginfod's layout (`buildid/<id>/debuginfo`) is linked there, in the cache.
 */
function buildIdTree(cache: string, buildId: string, file: string): string | null {
  const root = join(cache, "debug-tree");
  return link(join(root, ".build-id", buildId.slice(0, 2), `${buildId.slice(2)}.debug`), file) ? root : null;
}

function fileName(path: string): string {
  return path.split(/[\\/]/).at(-1) ?? path;
}

/** A dump names the program by its path on the machine it ran on (`C:\app\server.exe`): the same file name is the same module. */
function sameFile(modulePath: string, executable: string | null): boolean {
  return executable !== null && fileName(modulePath).toLowerCase() === basename(executable).toLowerCase();
}
