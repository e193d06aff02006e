/**
 * Compressed dumps, recognised by their first bytes and never by their names: zstd and lz4 (the two
 * formats systemd-coredump writes), xz and gzip (what a core attached to a bug report usually is).
 * Where the format's own header says how much it holds, that size is read here, so the unpacking
 * can refuse a file that decompresses to more (a damaged file, or a compression bomb).
 */
import { DumpFileError, Fields, type DumpFile } from "./file.js";

export type Packing = "zstd" | "lz4" | "xz" | "gzip";

const ZSTD_MAGIC = 0xfd2fb528;
const LZ4_FRAME_MAGIC = 0x184d2204;
const LZ4_LEGACY_MAGIC = 0x184c2102;
const XZ_MAGIC = Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]);
const XZ_FOOTER_MAGIC = "YZ";
/** An xz index larger than this is not read for its sizes: the unpacking's other bounds still hold. */
const MAX_XZ_INDEX_BYTES = 1 << 20;

/** The compression a file's first bytes announce; null for anything else. */
export function packingOf(head: Buffer): Packing | null {
  if (head.length < 6) return null;
  const magic = head.readUInt32LE(0);
  if (magic === ZSTD_MAGIC) return "zstd";
  if (magic === LZ4_FRAME_MAGIC || magic === LZ4_LEGACY_MAGIC) return "lz4";
  if (head.subarray(0, 6).equals(XZ_MAGIC)) return "xz";
  // gzip's magic and its only compression method, deflate.
  if (head[0] === 0x1f && head[1] === 0x8b && head[2] === 0x08) return "gzip";
  return null;
}

/**
 * How many bytes the file says it decompresses to, or null when its format does not say:
 * zstd's and lz4's frame content size (optional in both), xz's index (a single stream's).
 * gzip's trailer holds the size modulo 4 GiB only, which bounds nothing.
 */
export function declaredBytes(packing: Packing, file: DumpFile): number | null {
  switch (packing) {
    case "zstd":
      return zstdContentSize(file.read(0, Math.min(18, file.size), "the zstd frame header"));
    case "lz4":
      return lz4ContentSize(file.read(0, Math.min(15, file.size), "the lz4 frame header"));
    case "xz":
      return xzContentSize(file);
    case "gzip":
      return null;
  }
}

/** A zstd frame's Frame_Content_Size, when its header carries one (RFC 8878, 3.1.1.1). */
export function zstdContentSize(head: Buffer): number | null {
  if (head.length < 5 || head.readUInt32LE(0) !== ZSTD_MAGIC) return null;
  const descriptor = head[4]!;
  const sizeFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const dictionaryBytes = [0, 1, 2, 4][descriptor & 3]!;
  const sizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][sizeFlag]!;
  if (sizeBytes === 0) return null;
  const at = 5 + (singleSegment ? 0 : 1) + dictionaryBytes;
  const fields = new Fields(head, "the zstd frame header");
  if (!fields.has(at, sizeBytes)) throw new DumpFileError("its zstd frame header is cut short");
  if (sizeBytes === 1) return fields.u8(at);
  // A two-byte size is stored less 256 (the one-byte form covers 0-255).
  if (sizeBytes === 2) return fields.u16(at) + 256;
  if (sizeBytes === 4) return fields.u32(at);
  return safeSize(fields.u64(at), "its zstd frame content size");
}

/** An lz4 frame's Content Size, when its FLG byte says the frame carries one (lz4 frame format 1.6). */
export function lz4ContentSize(head: Buffer): number | null {
  if (head.length < 6 || head.readUInt32LE(0) !== LZ4_FRAME_MAGIC) return null;
  const flags = head[4]!;
  if ((flags & 0x08) === 0) return null;
  const fields = new Fields(head, "the lz4 frame header");
  if (!fields.has(6, 8)) throw new DumpFileError("its lz4 frame header is cut short");
  return safeSize(fields.u64(6), "its lz4 frame content size");
}

/**
 * The sum of an xz stream's uncompressed block sizes, from the index its footer points at; null
 * when the file holds more than one stream (the last one's index would undercount) or when the
 * index is too large to read whole.
 */
export function xzContentSize(file: DumpFile): number | null {
  if (file.size < 32) throw new DumpFileError("it is too small to be an xz file");
  const footer = new Fields(file.read(file.size - 12, 12, "the xz stream footer"), "the xz stream footer");
  if (footer.bytes.subarray(10, 12).toString("latin1") !== XZ_FOOTER_MAGIC) return null;
  const indexBytes = (footer.u32(4) + 1) * 4;
  if (indexBytes > MAX_XZ_INDEX_BYTES || indexBytes + 24 > file.size) return null;
  const indexAt = file.size - 12 - indexBytes;
  const index = file.read(indexAt, indexBytes, "the xz index");
  if (index[0] !== 0) throw new DumpFileError("its xz index does not start with an index indicator");
  let at = 1;
  const next = (): bigint => {
    let value = 0n;
    for (let shift = 0n; shift < 63n; shift += 7n) {
      const byte = index[at++];
      if (byte === undefined) throw new DumpFileError("its xz index is cut short");
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
    throw new DumpFileError("its xz index holds a number too long");
  };
  const records = next();
  if (records > BigInt(indexBytes)) throw new DumpFileError("its xz index counts more records than it can hold");
  let blocks = 0n;
  let total = 0n;
  for (let i = 0n; i < records; i++) {
    const unpadded = next();
    total += next();
    blocks += (unpadded + 3n) & ~3n;
  }
  // One stream: its 12-byte header, the blocks, the index and the footer make the whole file.
  if (12n + blocks + BigInt(indexBytes) + 12n !== BigInt(file.size)) return null;
  return safeSize(total, "its xz uncompressed size");
}

function safeSize(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new DumpFileError(`${what} (${value} bytes) is impossibly large`);
  return Number(value);
}
