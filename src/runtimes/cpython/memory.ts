/**
 * A process's memory as a core shows it: the bytes its PT_LOAD segments hold, and for the pages of
 * a mapped program or library that the core left out (never written, so as they are on disk), the
 * bytes of that file, when the file here is the very build the process mapped (same build id). A
 * page in neither is unknown: null, never zeros.
 */
import { DumpFile, DumpFileError, programBuildId, SortedRanges, type CoreMemory, type MappedFile } from "../../debuggers/dumpfile/index.js";
import type { Module } from "../../debuggers/model.js";

/** Bytes of a process by address; null where any of them is not known. */
export interface ProcessMemory {
  read(address: bigint, length: number): Buffer | null;
}

/** More than any one structure, string or line table the readers ask for at once. */
const MAX_READ_BYTES = 1024 * 1024;

/** A mapped file whose pages may stand in for those the core left out, and why it may or may not. */
interface Backing {
  file: DumpFile | null;
  /** Why its pages are not used; null when they are. */
  refused: string | null;
}

export class CoreProcessMemory implements ProcessMemory {
  private readonly mappings: SortedRanges<MappedFile>;
  private readonly backings = new Map<string, Backing>();
  private readonly buildIds: Map<string, string | null>;
  /** What the reads found wrong with the files on disk, once each. */
  readonly notes: string[] = [];

  constructor(
    private readonly core: CoreMemory,
    mappedFiles: MappedFile[],
    modules: Module[],
  ) {
    this.mappings = new SortedRanges(mappedFiles, (m) => m.start, (m) => m.end);
    this.buildIds = new Map(modules.map((module) => [module.path, module.buildId]));
  }

  read(address: bigint, length: number): Buffer | null {
    if (length < 0 || length > MAX_READ_BYTES || address < 0n) return null;
    const pieces: Buffer[] = [];
    let done = 0;
    while (done < length) {
      const piece = this.readPiece(address + BigInt(done), length - done);
      if (piece === null || piece.length === 0) return null;
      pieces.push(piece);
      done += piece.length;
    }
    return pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces, length);
  }

  /** The mapped files opened for their pages, closed. */
  close(): void {
    for (const backing of this.backings.values()) backing.file?.close();
    this.backings.clear();
  }

  /** Up to `length` bytes from one segment of the core or one mapping of a file. */
  private readPiece(address: bigint, length: number): Buffer | null {
    const dumped = this.core.bytes(address, length);
    if (dumped !== null && dumped.length > 0) return dumped;
    // Bytes the core held and lost when it was cut short were written: the file on disk is not them.
    if (this.core.lost(address)) return null;
    const mapping = this.mappings.at(address);
    if (!mapping) return null;
    const file = this.backing(mapping.path);
    if (!file) return null;
    const offset = mapping.fileOffset + (address - mapping.start);
    const size = Math.min(length, Number(mapping.end - address));
    if (offset + BigInt(size) > BigInt(file.size)) return null;
    try {
      return file.read(Number(offset), size, `${mapping.path}'s mapped pages`);
    } catch (error) {
      if (error instanceof DumpFileError) return null;
      throw error;
    }
  }

  private backing(path: string): DumpFile | null {
    let backing = this.backings.get(path);
    if (!backing) {
      backing = openBacking(path, this.buildIds.get(path) ?? null);
      if (backing.refused) this.notes.push(backing.refused);
      this.backings.set(path, backing);
    }
    return backing.file;
  }
}

/** The file here stands in for the process's pages only when it is the build the core's copy of its first page names. */
function openBacking(path: string, coreBuildId: string | null): Backing {
  if (coreBuildId === null) return { file: null, refused: `${path}: the core holds no build id of it, so its pages on disk could not be matched to the process's` };
  let file: DumpFile;
  try {
    file = DumpFile.open(path);
  } catch (error) {
    return { file: null, refused: `${path} could not be opened here (${(error as Error).message}): the pages of it the core left out are unknown` };
  }
  let here: string | null = null;
  try {
    here = programBuildId(file);
  } catch (error) {
    if (!(error instanceof DumpFileError)) throw error;
  }
  if (here !== coreBuildId) {
    file.close();
    return { file: null, refused: `${path} here is another build (build id ${here ?? "none"}) than the process mapped (${coreBuildId}): the pages of it the core left out are unknown` };
  }
  return { file, refused: null };
}
