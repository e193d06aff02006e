/**
 * Whether a file a store gave is the build the dump names: a `.sym` by its MODULE line's id, an
 * ELF file by its GNU build id note, a PE image by its timestamp and image size, a PDB by its GUID
 * and age. A server that answers with another build's file is refused,
 * since symbols of another build name the wrong functions.
 */
import { symbolFileModule } from "../symbols.js";
import { DumpFile } from "../dumpfile/file.js";
import { programBuildId } from "../dumpfile/elf.js";
import { readPeIdentity } from "../dumpfile/pe.js";
import type { SymbolFile } from "./layouts.js";
import { readPdbIdentity } from "./pdb.js";

/**
 * The caller's own check of a file dumpdbg cannot read itself (a PDB's GUID and age):
 * true when it matches, false or the reason when it does not.
 */
export type VerifyFile = (path: string, file: SymbolFile) => Promise<boolean | string>;

/** null when the file is the wanted build, else why it is not. */
export async function mismatch(path: string, file: SymbolFile, verify: VerifyFile | undefined): Promise<string | null> {
  const own = ownCheck(path, file);
  if (own !== null) return own;
  if (!verify) return null;
  const verdict = await verify(path, file).catch((error: Error) => `the check of its id failed: ${error.message}`);
  return verdict === true ? null : verdict === false ? "its id does not match the module's" : verdict;
}

function ownCheck(path: string, file: SymbolFile): string | null {
  if (file.kind === "sym") {
    const module = symbolFileModule(path);
    if (!module) return "it has no Breakpad MODULE line";
    return module.id === file.id.toUpperCase() ? null : `its MODULE id is ${module.id}, not ${file.id.toUpperCase()}`;
  }
  if (file.kind === "debuginfo" || file.kind === "executable") {
    const id = elfBuildId(path);
    if (id === null) return "it is not an ELF file with a build id";
    return id === file.buildId.toLowerCase() ? null : `its build id is ${id}, not ${file.buildId.toLowerCase()}`;
  }
  if (file.kind === "pe") {
    const id = peImageIndex(path);
    if (id === null) return "it is not a PE image";
    return id.toUpperCase() === file.id.toUpperCase() ? null : `its timestamp and image size are ${id}, not ${file.id}`;
  }
  const id = pdbFileId(path);
  if (id === null) return "it is not a PDB file this reader knows (MSF 7.00)";
  return id === file.id.toUpperCase() ? null : `its GUID and age are ${id}, not ${file.id.toUpperCase()}`;
}

/** A PDB's GUID and age as stores write them; null for a file that is no PDB 7.00. */
export function pdbFileId(path: string): string | null {
  let pdb: DumpFile | null = null;
  try {
    pdb = DumpFile.open(path);
    return readPdbIdentity(pdb).id;
  } catch {
    return null;
  } finally {
    pdb?.close();
  }
}

/** symsrv's index of a PE image on disk (the PE reader bounds every read); null for no PE file. */
function peImageIndex(path: string): string | null {
  try {
    return readPeIdentity(path).codeId;
  } catch {
    return null;
  }
}

/** The ELF reader bounds every read against the file; a malformed file is no build id. */
function elfBuildId(path: string): string | null {
  let elf: DumpFile | null = null;
  try {
    elf = DumpFile.open(path);
    return programBuildId(elf);
  } catch {
    return null;
  } finally {
    elf?.close();
  }
}
