/**
 * Hand-built PDB files: MSF 7.00 containers with just the streams src/debuggers/symbols/pdb.ts
 * reads for a PDB's identity (stream 1, the PDB info stream, with the GUID and an age; stream 3,
 * the DBI stream, with the age the linker last wrote). `pdbBytes` makes a whole, valid PDB of a
 * given GUID and age, as a symbol store would serve it; `buildMsf` and the stream builders let a
 * test lay out (and then corrupt) other files.
 */

const MSF7_MAGIC = "Microsoft C/C++ MSF 7.00\r\n\x1aDS\0\0\0";
/** The PDB info stream's version from VC 7.0 on, the first with a GUID. */
const INFO_VC70 = 20000404;
/** The DBI stream's version written by VC 7.0 and later linkers. */
const DBI_V70 = 19990903;

/** A GUID's bytes as a PDB stores them: the first three fields little-endian. */
export function guidBytes(guid: string): Buffer {
  const parts = guid.split("-");
  if (parts.length !== 5 || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(guid)) throw new Error(`not a GUID: ${guid}`);
  const [d1 = "", d2 = "", d3 = "", d4 = "", d5 = ""] = parts;
  const bytes = Buffer.alloc(16);
  bytes.writeUInt32LE(Number.parseInt(d1, 16), 0);
  bytes.writeUInt16LE(Number.parseInt(d2, 16), 4);
  bytes.writeUInt16LE(Number.parseInt(d3, 16), 6);
  Buffer.from(d4 + d5, "hex").copy(bytes, 8);
  return bytes;
}

/** Stream 1: version, signature, age, GUID, then (empty) named-stream data. */
export function infoStream({ guid, age, version = INFO_VC70 }: { guid: string; age: number; version?: number }): Buffer {
  const bytes = Buffer.alloc(28 + 8);
  bytes.writeUInt32LE(version, 0);
  bytes.writeUInt32LE(0x5f3a2b1c, 4);
  bytes.writeUInt32LE(age, 8);
  guidBytes(guid).copy(bytes, 12);
  return bytes;
}

/** Stream 3: the DBI stream's header, signature -1, its version and the age. */
export function dbiStream(age: number): Buffer {
  const bytes = Buffer.alloc(64);
  bytes.writeInt32LE(-1, 0);
  bytes.writeUInt32LE(DBI_V70, 4);
  bytes.writeUInt32LE(age, 8);
  return bytes;
}

export interface MsfSpec {
  blockSize?: number;
  /** Stream contents by index; null is a nil stream (size 0xFFFFFFFF). */
  streams: (Buffer | null)[];
}

export interface BuiltMsf {
  bytes: Buffer;
  superblock: number;
  blockMap: number;
  /** The stream directory's blocks, in the block map's order. */
  directory: number[];
  /** Each stream's blocks, in order. */
  streamBlocks: number[][];
}

/**
 * An MSF 7.00 file: the superblock, two free-block-map blocks, each stream's blocks, the stream
 * directory's blocks in reverse order (so reading it follows the block map), and the block map.
 */
export function buildMsf({ blockSize = 512, streams }: MsfSpec): BuiltMsf {
  const blocks: Buffer[] = [Buffer.alloc(blockSize), Buffer.alloc(blockSize), Buffer.alloc(blockSize)];
  const place = (data: Buffer): number[] => {
    const placed: number[] = [];
    for (let at = 0; at < data.length; at += blockSize) {
      const block = Buffer.alloc(blockSize);
      data.copy(block, 0, at, Math.min(at + blockSize, data.length));
      placed.push(blocks.push(block) - 1);
    }
    return placed;
  };
  const streamBlocks = streams.map((stream) => (stream ? place(stream) : []));
  const directory = Buffer.alloc(4 + streams.length * 4 + streamBlocks.flat().length * 4);
  directory.writeUInt32LE(streams.length, 0);
  streams.forEach((stream, i) => directory.writeUInt32LE(stream ? stream.length : 0xffffffff, 4 + i * 4));
  streamBlocks.flat().forEach((block, i) => directory.writeUInt32LE(block, 4 + streams.length * 4 + i * 4));
  const directoryBlocks = place(directory);
  // The directory's parts in reverse file order: it is read in the block map's order, not the file's.
  const parts = directoryBlocks.map((b) => blocks[b] as Buffer);
  const reversed = [...directoryBlocks].reverse();
  reversed.forEach((b, i) => (blocks[b] = parts[i] as Buffer));
  const map = Buffer.alloc(blockSize);
  reversed.forEach((b, i) => map.writeUInt32LE(b, i * 4));
  const blockMap = blocks.push(map) - 1;
  const superblock = blocks[0] as Buffer;
  superblock.write(MSF7_MAGIC, 0, "latin1");
  superblock.writeUInt32LE(blockSize, 32);
  superblock.writeUInt32LE(1, 36);
  superblock.writeUInt32LE(blocks.length, 40);
  superblock.writeUInt32LE(directory.length, 44);
  superblock.writeUInt32LE(blockMap, 52);
  return { bytes: Buffer.concat(blocks), superblock: 0, blockMap, directory: reversed, streamBlocks };
}

/**
 * A minimal valid PDB (MSF 7.00, 512-byte blocks unless told) whose id, as symbol stores file it
 * and readPdbIdentity reads it, is the GUID's 32 hex digits then the age in hex, upper case:
 * `{ guid: "3F2504E0-4F89-11D3-9A0C-0305E82C3301", age: 0x1a }` is `3F2504E04F8911D39A0C0305E82C33011A`.
 * The info and DBI streams carry the same age.
 */
export function pdbBytes({ guid, age, blockSize }: { guid: string; age: number; blockSize?: number }): Buffer {
  return buildMsf({ ...(blockSize ? { blockSize } : {}), streams: [Buffer.alloc(0), infoStream({ guid, age }), Buffer.alloc(0), dbiStream(age)] }).bytes;
}
