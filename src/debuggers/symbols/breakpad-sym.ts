/**
 * dumpdbg's own reader of Breakpad symbol files (`.sym`), so a frame gets its function, file and
 * line, inlined calls included, whatever a debugger makes of the file (LLDB refuses some, a macOS
 * module's for one). The file is untrusted: its size and line length are capped, it is read in
 * chunks, and a line that does not parse is counted in `damage`, never thrown.
 */
import { open } from "node:fs/promises";
import { readLines } from "./sym-lines.js";
import { parseSymRecord } from "./sym-records.js";
import { SymbolIndexBuilder, type SymbolFileDamage, type SymbolIndex, type SymbolizedFrame } from "./sym-index.js";

export type { SymbolFileDamage, SymbolizedFrame } from "./sym-index.js";

/** The file cannot be read as a symbol file at all: missing, too large, or no MODULE line first. */
export class SymbolFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SymbolFileError";
  }
}

/** A symbol file's MODULE record: `MODULE Linux x86_64 2E3A… server`. */
export interface SymbolFileModule {
  os: string;
  arch: string;
  /** The Breakpad debug id, upper-case: 32 hex digits of a GUID and the age. */
  id: string;
  name: string;
}

export interface BreakpadSymbols {
  module: SymbolFileModule;
  /** `INFO CODE_ID`: a PE's timestamp and size, an ELF's whole build id; null where the file has none. */
  codeId: string | null;
  damage: SymbolFileDamage;
  /**
   * The frames at an address relative to the module's load address, innermost first (the deepest
   * inlined call, ..., the FUNC itself), or one frame with only a name under a PUBLIC, or null
   * where the file names nothing. A PUBLIC reaches to the next FUNC or PUBLIC: past the last one,
   * only the caller knows where the module ends.
   */
  lookup(rva: bigint | number): SymbolizedFrame[] | null;
}

/** libxul's symbol file is a few hundred megabytes; a larger file is no symbol file we will hold. */
const MAX_FILE_BYTES = 512 * 1024 * 1024;
/** C++ template names reach a few kilobytes; a longer line is damage. */
const MAX_LINE_BYTES = 64 * 1024;

export async function loadBreakpadSymbols(path: string): Promise<BreakpadSymbols> {
  const { module, codeId, index, damage } = await readSymbolFile(path);
  return {
    module,
    codeId,
    damage,
    lookup: (rva) => {
      const address = moduleOffset(rva);
      return address === null ? null : index.lookup(address);
    },
  };
}

/**
 * Reads the file's records into an index. Apart from loadBreakpadSymbols so that its `lookup`
 * closes over the index alone, not over the builder's growing columns.
 */
async function readSymbolFile(path: string): Promise<{ module: SymbolFileModule; codeId: string | null; index: SymbolIndex; damage: SymbolFileDamage }> {
  const file = await open(path, "r").catch((error: NodeJS.ErrnoException) => {
    throw new SymbolFileError(`${path} cannot be read: ${error.code ?? error.message}`);
  });
  try {
    const { size } = await file.stat();
    if (size > MAX_FILE_BYTES) throw new SymbolFileError(`${path} is ${size} bytes, more than the ${MAX_FILE_BYTES} a symbol file may have`);
    const builder = new SymbolIndexBuilder();
    let module: SymbolFileModule | null = null;
    let codeId: string | null = null;
    await readLines(file, MAX_LINE_BYTES, (line) => {
      const record = line === null ? null : parseSymRecord(line);
      if (module === null) {
        if (record?.kind !== "module") throw new SymbolFileError(`${path} is not a Breakpad symbol file: its first line is no MODULE record`);
        module = { os: record.os, arch: record.arch, id: record.id.toUpperCase(), name: record.name };
      } else if (record === null) builder.damage.overlongLines++;
      else if (record.kind === "code-id") codeId ??= record.codeId;
      else builder.add(record);
    });
    if (module === null) throw new SymbolFileError(`${path} is empty`);
    return { module, codeId, index: builder.finish(), damage: builder.damage };
  } finally {
    await file.close();
  }
}

/** An address as a double, where it is one exactly; a negative or larger one is in no module. */
function moduleOffset(rva: bigint | number): number | null {
  const address = typeof rva === "bigint" ? (rva >= 0n && rva <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(rva) : null) : rva;
  return address !== null && Number.isSafeInteger(address) && address >= 0 ? address : null;
}
