/**
 * Whether a file a store gave is the build the dump names: a `.sym` by its MODULE line's id, an
 * ELF file by its GNU build id note, a PE image by its timestamp and image size. A server that answers with another build's file is refused,
 * since symbols of another build name the wrong functions.
 */
import { symbolFileModule } from "../symbols.js";
import { DumpFile } from "../dumpfile/file.js";
import { programBuildId } from "../dumpfile/elf.js";
import { peIndex, type SymbolFile } from "./layouts.js";

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
  return null;
}

/** DOS header's pointer to the PE header, and the fields read after it. */
const E_LFANEW = 0x3c;
/** `PE\0\0`, the COFF header (TimeDateStamp at +8), the optional header to SizeOfImage (+24+56). */
const PE_HEADER_BYTES = 24 + 60;

/** symsrv's index of a PE image on disk; every read is checked against the file's size. */
function peImageIndex(path: string): string | null {
  let image: DumpFile | null = null;
  try {
    image = DumpFile.open(path);
    const dos = image.read(0, 64, "the DOS header");
    if (dos.toString("latin1", 0, 2) !== "MZ") return null;
    const pe = image.read(dos.readUInt32LE(E_LFANEW), PE_HEADER_BYTES, "the PE header");
    if (pe.toString("latin1", 0, 4) !== "PE\0\0") return null;
    return peIndex(pe.readUInt32LE(8), pe.readUInt32LE(24 + 56));
  } catch {
    return null;
  } finally {
    image?.close();
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
