/**
 * Where users keep debug information (`--symbols DIR`, repeatable, and DUMPDBG_SYMBOLS): a
 * Breakpad/Crashpad symbol store (`<module>/<ID>/<module>.sym`), a build-id tree
 * (`.build-id/ab/cdef….debug`) or a plain folder of debug files. A store's `.sym` files are matched
 * to the dump's modules by their ids, never by name alone: a `.sym` is used only when its MODULE
 * line carries the id of a module in the dump.
 */
import { closeSync, existsSync, openSync, readSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import type { Module } from "./model.js";
import { parseSymRecord } from "./symbols/sym-records.js";

export interface SymbolPlaces {
  /** Folders a debugger searches for separate debug files itself (build-id trees, debug files). */
  debugDirectories: string[];
  /** Breakpad `.sym` files whose MODULE id is a module's id in the dump. */
  symbolFiles: { module: string; file: string }[];
  /** What could not be used, one line each. */
  notes: string[];
}

/** Bytes of a `.sym` file read to find its MODULE line. */
const HEADER_BYTES = 512;
/** Store entries looked at per module name (a store of many versions keeps many ids). */
const MAX_IDS_PER_MODULE = 4096;

/**
 * The Breakpad id of a module: a PE's is its CodeView GUID and age (the dump gives it so); an ELF
 * module's is its GNU build id's first 16 bytes read as a GUID (the first three fields byte-swapped)
 * and an age of 0, as Breakpad's FileID computes it.
 */
export function breakpadId(module: Module): string | null {
  const id = module.buildId;
  if (!id) return null;
  if (/^[0-9A-F]{33,40}$/.test(id) && !/[a-f]/.test(id)) return id;
  if (!/^[0-9a-f]+$/i.test(id) || id.length < 8) return null;
  const bytes = Buffer.alloc(16);
  Buffer.from(id.length % 2 === 0 ? id : `${id}0`, "hex").copy(bytes, 0, 0, 16);
  const guid = [bytes.readUInt32LE(0).toString(16).padStart(8, "0"), bytes.readUInt16LE(4).toString(16).padStart(4, "0"), bytes.readUInt16LE(6).toString(16).padStart(4, "0"), bytes.subarray(8, 16).toString("hex")];
  return `${guid.join("")}0`.toUpperCase();
}

/** A module's file name in either system's spelling (`C:\app\server.exe` → `server.exe`). */
function fileName(path: string): string {
  return path.split(/[\\/]/).at(-1) ?? path;
}

/** The names a store files a module under: its own, and for a PE its PDB's (`server.pdb`). */
function storeNames(module: Module): string[] {
  const name = fileName(module.path);
  const pdb = /\.(exe|dll|sys)$/i.test(name) ? name.replace(/\.[^.]+$/, ".pdb") : null;
  return [name, ...(pdb ? [pdb] : [])];
}

/** The MODULE line of a `.sym` file: `MODULE Linux x86_64 2E3A… server`. */
export function symbolFileModule(file: string): { os: string; arch: string; id: string; name: string } | null {
  let fd: number | null = null;
  try {
    fd = openSync(file, "r");
    const head = Buffer.alloc(HEADER_BYTES);
    const read = readSync(fd, head, 0, HEADER_BYTES, 0);
    const newline = head.subarray(0, read).indexOf(0x0a);
    const end = newline < 0 ? read : newline;
    // The one reader of a .sym's records; only the MODULE line is wanted here (a CRLF file's \r dropped).
    const record = parseSymRecord(head.subarray(0, end > 0 && head[end - 1] === 0x0d ? end - 1 : end));
    return record.kind === "module" && /^[0-9A-F]{33,40}$/i.test(record.id) ? { os: record.os, arch: record.arch, id: record.id.toUpperCase(), name: record.name } : null;
  } catch {
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Whether a folder is a Breakpad store: some `<name>/<ID>/<sym>.sym` under it. */
function isBreakpadStore(dir: string): boolean {
  try {
    for (const name of readdirSync(dir).slice(0, 64)) {
      const ids = isDirectory(join(dir, name)) ? readdirSync(join(dir, name)).slice(0, 8) : [];
      if (ids.some((id) => /^[0-9A-F]{33,40}$/i.test(id) && readdirSync(join(dir, name, id)).some((file) => file.endsWith(".sym")))) return true;
    }
  } catch {
    return false;
  }
  return false;
}

/** Sorts the folders by kind and finds each module's `.sym` in the stores, by its id. */
export function findSymbols(dirs: string[], modules: Module[]): SymbolPlaces {
  const places: SymbolPlaces = { debugDirectories: [], symbolFiles: [], notes: [] };
  const stores: string[] = [];
  for (const dir of dirs) {
    if (!isDirectory(dir)) {
      places.notes.push(`--symbols ${dir} is not a folder`);
      continue;
    }
    if (isBreakpadStore(dir)) stores.push(dir);
    else places.debugDirectories.push(dir);
  }
  for (const module of modules) {
    const id = breakpadId(module);
    if (!id) continue;
    for (const store of stores) {
      const file = storeNames(module)
        .map((name) => join(store, name, id, `${name.replace(/\.pdb$/i, "")}.sym`))
        .find((candidate) => existsSync(candidate) && symbolFileModule(candidate)?.id === id);
      if (file) {
        places.symbolFiles.push({ module: module.path, file });
        break;
      }
      const other = storeNames(module).flatMap((name) => (isDirectory(join(store, name)) ? readdirSync(join(store, name)).slice(0, MAX_IDS_PER_MODULE) : []));
      if (other.length > 0) places.notes.push(`${basename(store)} has symbols for ${fileName(module.path)}, but not for the build in this dump (id ${id})`);
    }
  }
  return places;
}
