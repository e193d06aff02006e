/**
 * readPdbIdentity on hand-built MSF 7.00 files, whole and corrupted: the GUID and age read through
 * the block map and a stream directory scattered over blocks, the DBI stream's age preferred, a
 * PDB 2.00 recognised and refused, and files that lie (block sizes, counts and block indices past
 * the file, cut short, bytes flipped) ending in a DumpFileError after a bounded number of reads.
 */
import { mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { DumpFile, DumpFileError } from "../../src/debuggers/dumpfile/index.js";
import { readPdbIdentity, UnsupportedPdbError, type PdbIdentity } from "../../src/debuggers/symbols/pdb.js";
import { buildMsf, dbiStream, infoStream, pdbBytes } from "../helpers/pdb-file.js";

const PDB2_MAGIC = "Microsoft C/C++ program database 2.00\r\n\x1aJG\0\0";
const GUID = "3F2504E0-4F89-41D3-9A0C-0305E82C3301";
const NIL = null;

/** The info stream of this file's GUID. */
const info = (age: number, version?: number): Buffer => infoStream({ guid: GUID, age, ...(version === undefined ? {} : { version }) });

const standard = () => buildMsf({ streams: [Buffer.alloc(0), info(1), Buffer.alloc(0), dbiStream(1)] });

let dir = "";
let serial = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "dumpdbg-pdb-bounds-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A DumpFile that counts what it reads. */
class CountingDumpFile extends DumpFile {
  reads = 0;
  bytesRead = 0;

  override read(offset: number, length: number, what: string): Buffer {
    const bytes = super.read(offset, length, what);
    this.reads++;
    this.bytesRead += bytes.length;
    return bytes;
  }
}

function identityOf(bytes: Buffer): { identity: PdbIdentity | null; error: unknown; reads: number; bytesRead: number } {
  const path = join(dir, `pdb-${serial++}`);
  writeFileSync(path, bytes);
  const file = new CountingDumpFile(openSync(path, "r"));
  try {
    return { identity: readPdbIdentity(file), error: null, reads: file.reads, bytesRead: file.bytesRead };
  } catch (error) {
    return { identity: null, error, reads: file.reads, bytesRead: file.bytesRead };
  } finally {
    file.close();
  }
}

function errorOf(bytes: Buffer): unknown {
  const { error } = identityOf(bytes);
  if (!error) throw new Error("the PDB was read");
  return error;
}

describe("readPdbIdentity on a hand-built PDB", () => {
  it("reads the GUID and age through the block map, as symbol stores write them", () => {
    const { identity, error } = identityOf(standard().bytes);
    expect(error).toBeNull();
    expect(identity).toEqual({ id: "3F2504E04F8941D39A0C0305E82C33011", guid: GUID, age: 1, infoAge: 1, signature: 0x5f3a2b1c });
  });

  it("follows a stream directory scattered over several blocks, and streams of several blocks", () => {
    // 300 streams' sizes make a directory of three 512-byte blocks; stream 1 spans two blocks.
    const longInfo = Buffer.concat([info(2), Buffer.alloc(600)]);
    const streams = [Buffer.alloc(0), longInfo, NIL, dbiStream(2), ...Array.from({ length: 296 }, () => Buffer.alloc(0))];
    const built = buildMsf({ streams });
    expect(built.directory.length).toBeGreaterThan(2);
    expect(built.streamBlocks[1]).toHaveLength(2);
    expect(identityOf(built.bytes).identity?.id).toBe("3F2504E04F8941D39A0C0305E82C33012");
  });

  it("takes the DBI stream's age over the info stream's, and the info stream's when there is no DBI stream", () => {
    const relinked = identityOf(buildMsf({ streams: [Buffer.alloc(0), info(1), Buffer.alloc(0), dbiStream(0x1a)] }).bytes).identity;
    expect([relinked?.id, relinked?.age, relinked?.infoAge]).toEqual(["3F2504E04F8941D39A0C0305E82C33011A", 0x1a, 1]);
    expect(identityOf(buildMsf({ streams: [Buffer.alloc(0), info(3)] }).bytes).identity?.id).toBe("3F2504E04F8941D39A0C0305E82C33013");
    expect(identityOf(buildMsf({ streams: [Buffer.alloc(0), info(3), NIL, NIL] }).bytes).identity?.id).toBe("3F2504E04F8941D39A0C0305E82C33013");
    expect(identityOf(buildMsf({ streams: [Buffer.alloc(0), info(3), NIL, Buffer.alloc(0)] }).bytes).identity?.age).toBe(3);
  });

  it("reads a PDB of 4 KiB blocks, as lld and Microsoft's linker write them", () => {
    expect(identityOf(buildMsf({ blockSize: 4096, streams: [Buffer.alloc(0), info(1), Buffer.alloc(0), dbiStream(1)] }).bytes).identity?.id).toBe("3F2504E04F8941D39A0C0305E82C33011");
  });
});

describe("the tests' pdbBytes (tests/helpers/pdb-file.ts)", () => {
  it("writes a PDB whose id is the GUID given and the age in hex, as the symbol-server tests serve them", () => {
    expect(identityOf(pdbBytes({ guid: GUID, age: 1 })).identity).toEqual({ id: "3F2504E04F8941D39A0C0305E82C33011", guid: GUID, age: 1, infoAge: 1, signature: 0x5f3a2b1c });
    const other = identityOf(pdbBytes({ guid: "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9", age: 0x1a, blockSize: 4096 }));
    expect(other.error).toBeNull();
    expect(other.identity?.id).toBe("0A1B2C3D4E5F60718293A4B5C6D7E8F91A");
  });
});

describe("readPdbIdentity on a file it cannot read", () => {
  it("recognises a PDB 2.00 and refuses it as unsupported", () => {
    const error = errorOf(Buffer.concat([Buffer.from(PDB2_MAGIC, "latin1"), Buffer.alloc(1024)]));
    expect(error).toBeInstanceOf(UnsupportedPdbError);
    expect(error).toBeInstanceOf(DumpFileError);
    expect((error as UnsupportedPdbError).format).toBe("Microsoft C/C++ program database 2.00");
  });

  it("refuses what is no PDB: an empty file, a PE, text", () => {
    for (const bytes of [Buffer.alloc(0), Buffer.from("MZ\x90\0", "latin1"), Buffer.from("MODULE windows x86_64 3F2504E04F8941D39A0C0305E82C33011 chat.pdb\n")]) {
      const error = errorOf(bytes);
      expect(error).toBeInstanceOf(DumpFileError);
      expect(error).not.toBeInstanceOf(UnsupportedPdbError);
    }
  });

  it("refuses an info stream older than VC 7.0, or a DBI stream without its signature", () => {
    expect(String(errorOf(buildMsf({ streams: [Buffer.alloc(0), info(1, 19970604)] }).bytes))).toMatch(/version 19970604/);
    expect(String(errorOf(buildMsf({ streams: [Buffer.alloc(0), info(1), Buffer.alloc(0), Buffer.alloc(64)] }).bytes))).toMatch(/DBI stream has no header signature/);
  });
});

describe("readPdbIdentity on a PDB that lies", () => {
  const lie = (edit: (bytes: Buffer, built: ReturnType<typeof buildMsf>) => void): unknown => {
    const built = standard();
    edit(built.bytes, built);
    return errorOf(built.bytes);
  };
  const word = (bytes: Buffer, at: number, value: number) => bytes.writeUInt32LE(value, at);

  it("refuses a block size no MSF file uses, and more blocks than the file holds", () => {
    expect(String(lie((b) => word(b, 32, 3000)))).toMatch(/block size 3000/);
    expect(String(lie((b) => word(b, 32, 0)))).toMatch(/block size 0/);
    expect(String(lie((b) => word(b, 40, 0xffffffff)))).toMatch(/more than its \d+ bytes hold/);
  });

  it("refuses a block map past the last block, and a directory too large for one block map", () => {
    expect(lie((b) => word(b, 52, 0x7fffffff))).toBeInstanceOf(DumpFileError);
    expect(String(lie((b) => word(b, 44, 0xffffffff)))).toMatch(/needs more blocks than one block map lists/);
  });

  it("refuses a directory that names a block past the file, or a stream count beyond any PDB", () => {
    expect(String(lie((b, built) => word(b, (built.directory[0] ?? 0) * 512 + 4 + 4 * 4, 0xfffffff0)))).toMatch(/past the PDB's \d+ blocks/);
    expect(String(lie((b, built) => word(b, (built.directory[0] ?? 0) * 512, 0x80000000)))).toMatch(/exceeds the limit/);
  });

  it("refuses an info stream whose claimed size runs past the directory's block lists", () => {
    expect(lie((b, built) => word(b, (built.directory[0] ?? 0) * 512 + 4 + 4, 0xfffffff0))).toBeInstanceOf(DumpFileError);
  });

  it("ends a PDB cut short at any length in a DumpFileError", () => {
    const { bytes } = standard();
    for (let length = 0; length < bytes.length; length += 7) {
      expect(errorOf(bytes.subarray(0, length)), `cut at ${length}`).toBeInstanceOf(DumpFileError);
    }
  });

  it("leaves byte flips with an identity or a DumpFileError, after a bounded number of reads", () => {
    const { bytes } = standard();
    let state = 0x9db;
    const random = () => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state / 2 ** 31;
    };
    const stats = { read: 0, refused: 0, maxReads: 0, maxBytes: 0 };
    for (let round = 0; round < 2000; round++) {
      const flipped = Buffer.from(bytes);
      // Most flips land in the few bytes that matter: the superblock, the directory, streams 1 and 3.
      for (let i = 0; i < 1 + Math.floor(random() * 4); i++) {
        const at = random() < 0.5 ? Math.floor(random() * 64) : Math.floor(random() * flipped.length);
        flipped[at] = (flipped[at] ?? 0) ^ (1 + Math.floor(random() * 255));
      }
      const { error, reads, bytesRead } = identityOf(flipped);
      if (error && !(error instanceof DumpFileError)) throw new Error(`round ${round} threw ${String(error)}`, { cause: error });
      if (error) stats.refused++;
      else stats.read++;
      stats.maxReads = Math.max(stats.maxReads, reads);
      stats.maxBytes = Math.max(stats.maxBytes, bytesRead);
    }
    expect(stats.read).toBeGreaterThan(0);
    expect(stats.refused).toBeGreaterThan(0);
    expect(stats.maxReads).toBeLessThanOrEqual(40);
    expect(stats.maxBytes).toBeLessThanOrEqual(bytes.length);
  });
});
