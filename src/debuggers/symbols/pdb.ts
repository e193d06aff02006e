/**
 * Which build a PDB file belongs to, read from the file itself: the GUID and age symbol stores
 * file it under (`<name>.pdb/<GUID><age>/<name>.pdb`), the same id an executable's CodeView record
 * and a minidump's module list give for the build it was linked with.
 *
 * A PDB is an MSF 7.00 container: a superblock, fixed-size blocks, and a stream directory (found
 * through the block map) that lists each stream's size and blocks. Stream 1, the PDB info stream,
 * holds the GUID and an age; stream 3, the DBI stream, holds the age the linker last wrote, which
 * is the one that matches the executable's (Microsoft's tools and LLVM's read it from there).
 *
 * The file is untrusted: every block index, size and count is checked, and a malformed file is a
 * DumpFileError, never a RangeError or a huge read.
 */
import { checkedCount, DumpFile, DumpFileError, Fields } from "../dumpfile/file.js";
import { pdbId } from "../dumpfile/pe.js";

export interface PdbIdentity {
  /** GUID and age as symbol stores and minidump.ts write them (`532D7EE7D43D97A04C4C44205044422E1`). */
  id: string;
  /** The GUID as Windows prints it: `532D7EE7-D43D-97A0-4C4C-44205044422E`. */
  guid: string;
  /** The age in the id: the DBI stream's when the file has one, else the info stream's. */
  age: number;
  /** The info stream's own age; linkers that rewrite a PDB may leave it behind the DBI stream's. */
  infoAge: number;
  /** The info stream's signature: the PDB 2.00-era timestamp, kept beside the GUID. */
  signature: number;
}

/** A PDB in a format this reader recognises but does not read: the "program database 2.00" of Visual C++ 6 and before. */
export class UnsupportedPdbError extends DumpFileError {
  constructor(readonly format: string) {
    super(`a ${format} file: only MSF 7.00 PDBs (Visual C++ 2002 and later, LLVM's lld) are read`);
    this.name = "UnsupportedPdbError";
  }
}

const MSF7_MAGIC = Buffer.from("Microsoft C/C++ MSF 7.00\r\n\x1aDS\0\0\0", "latin1");
const PDB2_MAGIC = Buffer.from("Microsoft C/C++ program database 2.00\r\n\x1aJG\0\0", "latin1");
const SUPERBLOCK_BYTES = 56;
/** LLVM's MSF writer uses 4 KiB blocks; Microsoft's allows up to 32 KiB for PDBs past 4 GiB. */
const BLOCK_SIZES = new Set([512, 1024, 2048, 4096, 8192, 16384, 32768]);
/** Real PDBs hold a few streams per compiled module: a million is far beyond any of them. */
const MAX_STREAMS = 1_000_000;
/** A stream whose size is this is absent (a deleted stream). */
const NIL_STREAM = 0xffffffff;
const INFO_STREAM = 1;
const DBI_STREAM = 3;
/** The PDB info stream: version, signature, age, then (from VC 7.0) the GUID. */
const INFO_BYTES = 28;
const INFO_VC70 = 20000404;
/** The DBI stream's header starts with a signature of -1, its version, and the age. */
const DBI_AGE_BYTES = 12;

/** A PDB file's identity: a DumpFileError (an UnsupportedPdbError for a PDB 2.00) when it has none to read. */
export function readPdbIdentity(file: DumpFile): PdbIdentity {
  // The PDB 2.00 signature is shorter than an MSF 7.00 superblock.
  const head = file.read(0, Math.min(file.size, SUPERBLOCK_BYTES), "the PDB's superblock");
  if (head.subarray(0, PDB2_MAGIC.length).equals(PDB2_MAGIC)) throw new UnsupportedPdbError("Microsoft C/C++ program database 2.00");
  if (!head.subarray(0, MSF7_MAGIC.length).equals(MSF7_MAGIC)) throw new DumpFileError("not a PDB file: no MSF 7.00 superblock");
  const msf = new Msf(file, new Fields(head, "the PDB's superblock"));
  const info = new Fields(msf.stream(INFO_STREAM).read(0, INFO_BYTES, "the PDB info stream"), "the PDB info stream");
  const version = info.u32(0);
  if (version < INFO_VC70) throw new DumpFileError(`the PDB info stream has version ${version}, older than VC 7.0's GUID`);
  const guid = info.slice(12, 16);
  const infoAge = info.u32(8);
  const age = (msf.streamCount > DBI_STREAM ? dbiAge(msf.stream(DBI_STREAM)) : null) ?? infoAge;
  return { id: pdbId(guid, age), guid: windowsGuid(guid), age, infoAge, signature: info.u32(4) };
}

/** The DBI stream's age; null when the stream is empty, as in a PDB that holds only types. */
function dbiAge(dbi: MsfStream): number | null {
  if (dbi.size === 0) return null;
  const header = new Fields(dbi.read(0, DBI_AGE_BYTES, "the DBI stream's header"), "the DBI stream's header");
  if (header.i32(0) !== -1) throw new DumpFileError("the DBI stream has no header signature");
  return header.u32(8);
}

function windowsGuid(guid: Buffer): string {
  const hex = pdbId(guid, 0).slice(0, 32);
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join("-");
}

/** An MSF file's superblock and stream directory, read as far as streams are asked for. */
class Msf {
  readonly blockSize: number;
  readonly blockCount: number;
  readonly streamCount: number;
  private readonly directory: MsfStream;

  constructor(
    private readonly file: DumpFile,
    superblock: Fields,
  ) {
    this.blockSize = superblock.u32(32);
    if (!BLOCK_SIZES.has(this.blockSize)) throw new DumpFileError(`the PDB's block size ${this.blockSize} is none an MSF file uses`);
    this.blockCount = superblock.u32(40);
    if (this.blockCount * this.blockSize > file.size) {
      throw new DumpFileError(`the PDB claims ${this.blockCount} blocks of ${this.blockSize} bytes, more than its ${file.size} bytes hold`);
    }
    const directoryBytes = superblock.u32(44);
    const directoryBlocks = this.blocksOf(directoryBytes);
    // The block map: one block listing the directory's blocks.
    if (directoryBlocks * 4 > this.blockSize) throw new DumpFileError(`the PDB's stream directory (${directoryBytes} bytes) needs more blocks than one block map lists`);
    const map = new Fields(this.block(superblock.u32(52), 0, directoryBlocks * 4, "the PDB's block map"), "the PDB's block map");
    this.directory = new MsfStream(this, directoryBytes, Array.from({ length: directoryBlocks }, (_, i) => map.u32(i * 4)), "the PDB's stream directory");
    this.streamCount = checkedCount(this.directory.u32(0), MAX_STREAMS, "the PDB's stream directory");
  }

  /** Stream `index`; its blocks are listed after every stream's size and the blocks of the streams before it. */
  stream(index: number): MsfStream {
    if (index >= this.streamCount) throw new DumpFileError(`the PDB has ${this.streamCount} streams, no stream ${index}`);
    let at = 4 + this.streamCount * 4;
    for (let i = 0; i < index; i++) at += this.blocksOf(this.streamSize(i)) * 4;
    const size = this.streamSize(index);
    const what = `PDB stream ${index}`;
    const list = new Fields(this.directory.read(at, this.blocksOf(size) * 4, `the block list of ${what}`), `the block list of ${what}`);
    return new MsfStream(this, size, Array.from({ length: this.blocksOf(size) }, (_, i) => list.u32(i * 4)), what);
  }

  /** `length` bytes at `offset` in block `index`. */
  block(index: number, offset: number, length: number, what: string): Buffer {
    if (index >= this.blockCount) throw new DumpFileError(`${what} lies in block ${index}, past the PDB's ${this.blockCount} blocks`);
    return this.file.read(index * this.blockSize + offset, length, what);
  }

  private streamSize(index: number): number {
    const size = this.directory.u32(4 + index * 4);
    return size === NIL_STREAM ? 0 : size;
  }

  private blocksOf(bytes: number): number {
    return Math.ceil(bytes / this.blockSize);
  }
}

/** A stream's bytes, scattered over the blocks its list names. */
class MsfStream {
  constructor(
    private readonly msf: Msf,
    readonly size: number,
    private readonly blocks: number[],
    private readonly what: string,
  ) {}

  read(offset: number, length: number, what: string): Buffer {
    if (offset + length > this.size) throw new DumpFileError(`${what} (${length} bytes at ${offset}) runs past the end of ${this.what} (${this.size} bytes)`);
    const parts: Buffer[] = [];
    let at = offset;
    while (at < offset + length) {
      const index = Math.floor(at / this.msf.blockSize);
      const within = at % this.msf.blockSize;
      const take = Math.min(this.msf.blockSize - within, offset + length - at);
      const block = this.blocks[index];
      if (block === undefined) throw new DumpFileError(`${what} lies past the blocks of ${this.what}`);
      parts.push(this.msf.block(block, within, take, what));
      at += take;
    }
    return Buffer.concat(parts);
  }

  u32(offset: number): number {
    return new Fields(this.read(offset, 4, this.what), this.what).u32(0);
  }
}
