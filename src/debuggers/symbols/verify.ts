/**
 * Whether a file a store gave is the build the dump names: a `.sym` by its MODULE line's id, an
 * ELF file by its GNU build id note. A server that answers with another build's file is refused,
 * since symbols of another build name the wrong functions.
 */
import { symbolFileModule } from "../symbols.js";
import { DumpFile } from "../dumpfile/file.js";
import { programBuildId } from "../dumpfile/elf.js";
import type { SymbolFile } from "./layouts.js";

/**
 * The caller's own check of a file dumpdbg cannot read itself (a PDB's id, a PE's timestamp):
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
  return null;
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
