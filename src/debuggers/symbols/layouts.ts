/**
 * Where a store files one module's debug information, as a path relative to the store's root:
 * the same path under a server's URL, a local store and dumpdbg's cache, so a download lands in
 * the cache exactly where a later run reads it.
 */
import type { SymbolProtocol } from "./sources.js";

/** One file a store may hold for a module, named by the id the dump gives for that module. */
export type SymbolFile =
  /** A PDB by its CodeView GUID and age (`dumpfile/pe.ts` `pdbId`): `crash.pdb/<GUID><age>/crash.pdb`. */
  | { kind: "pdb"; name: string; id: string }
  /** A PE image by its timestamp and image size (`dumpfile/pe.ts` `peCodeId`): `crash.exe/<TIMESTAMP><size>/crash.exe`. */
  | { kind: "pe"; name: string; id: string }
  /** A Breakpad `.sym` of a debug file (`crash.pdb`, `libfoo.so`) by its Breakpad id. */
  | { kind: "sym"; module: string; id: string }
  /** debuginfod's separate debug file, by the full GNU build id. */
  | { kind: "debuginfo"; buildId: string }
  /** debuginfod's executable, by the full GNU build id. */
  | { kind: "executable"; buildId: string };

/** The last letter of a symsrv-compressed file is `_` (`crash.pd_`): a CAB archive of the file. */
export function compressedName(name: string): string {
  return `${name.slice(0, -1)}_`;
}

/** A name from a dump becomes one path component, never a way out of the store. */
function isSafeName(name: string): boolean {
  return name.length > 0 && name.length <= 255 && name !== "." && name !== ".." && !/[/\\\0]/.test(name) && !/[\x00-\x1f]/.test(name);
}

/** Why a wanted file cannot be asked for by path, or null when it can. */
export function unsafeReason(file: SymbolFile): string | null {
  if (file.kind === "debuginfo" || file.kind === "executable") return /^[0-9a-f]{2,128}$/i.test(file.buildId) ? null : `build id ${JSON.stringify(file.buildId)} is not hex`;
  const name = file.kind === "sym" ? file.module : file.name;
  if (!isSafeName(name)) return `module name ${JSON.stringify(name)} is not a plain file name`;
  return /^[0-9a-f]{1,80}$/i.test(file.id) ? null : `id ${JSON.stringify(file.id)} is not hex`;
}

/** The store path of the file itself. */
export function storePath(file: SymbolFile): string[] {
  switch (file.kind) {
    case "pdb":
    case "pe":
      return [file.name, file.id, file.name];
    case "sym":
      return [file.module, file.id, `${file.module.replace(/\.pdb$/i, "")}.sym`];
    case "debuginfo":
    case "executable":
      return ["buildid", file.buildId.toLowerCase(), file.kind];
  }
}

/** Whether a server that speaks `protocol` can hold this kind of file. */
export function serves(protocol: SymbolProtocol, file: SymbolFile): boolean {
  if (protocol === "any") return true;
  if (protocol === "microsoft") return file.kind === "pdb" || file.kind === "pe";
  return file.kind === "debuginfo" || file.kind === "executable";
}
