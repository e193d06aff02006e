/**
 * Reading an untrusted dump file: positioned reads checked against the file's size, and fields
 * read from a buffer checked against its length. A read that does not fit is a DumpFileError,
 * never a RangeError, a huge allocation or a read of the whole file.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";

import type { Address } from "../model.js";

/** The dump file says something impossible: a record past its end, a count beyond any real process. */
export class DumpFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DumpFileError";
  }
}

/** The most one read may take: note segments and streams of real dumps stay far below it. */
const MAX_READ_BYTES = 64 * 1024 * 1024;

/**
 * Opens a regular file for reading, never blocking: O_NONBLOCK keeps a FIFO or a device from
 * waiting for a writer (a path checked as a file may have been swapped since), and anything that
 * is not a regular file is closed again and refused with a DumpFileError naming what it is.
 */
export function openRegularFile(path: string): number {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  const stats = fstatSync(fd);
  if (!stats.isFile()) {
    closeSync(fd);
    throw new DumpFileError(`${path} is ${specialFileKind(stats) ?? "not a regular file"}`);
  }
  return fd;
}

/** What a path that is not a regular file is ("a FIFO (named pipe)"); null for a regular file. */
export function specialFileKind(stats: Stats): string | null {
  if (stats.isFile()) return null;
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSocket()) return "a socket";
  return "not a regular file";
}

/** An open dump file, read by position. */
export class DumpFile {
  readonly size: number;

  constructor(readonly fd: number) {
    this.size = fstatSync(fd).size;
  }

  static open(path: string): DumpFile {
    return new DumpFile(openRegularFile(path));
  }

  /** Exactly `length` bytes at `offset`; what lies outside the file or exceeds the cap is an error. */
  read(offset: number, length: number, what: string): Buffer {
    this.checkRange(offset, length, what);
    const buffer = Buffer.alloc(length);
    let done = 0;
    while (done < length) {
      const read = readSync(this.fd, buffer, done, length - done, offset + done);
      if (read === 0) throw new DumpFileError(`${what} could not be read: the file shrank while being read`);
      done += read;
    }
    return buffer;
  }

  /** Throws the DumpFileError that reading `length` bytes at `offset` would, without reading them. */
  checkRange(offset: number, length: number, what: string): void {
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
      throw new DumpFileError(`${what} has an impossible location (offset ${offset}, ${length} bytes)`);
    }
    if (length > MAX_READ_BYTES) {
      throw new DumpFileError(`${what} claims ${length} bytes, more than the ${MAX_READ_BYTES} this reader accepts`);
    }
    if (offset + length > this.size) {
      throw new DumpFileError(`${what} (${length} bytes at offset ${offset}) runs past the end of the file (${this.size} bytes)`);
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** A record's bytes, read field by field; a field outside them is a DumpFileError naming the record. */
export class Fields {
  constructor(
    readonly bytes: Buffer,
    private readonly what: string,
    private readonly little = true,
  ) {}

  get length(): number {
    return this.bytes.length;
  }

  has(at: number, size: number): boolean {
    return at >= 0 && at + size <= this.bytes.length;
  }

  u8(at: number): number {
    this.check(at, 1);
    return this.bytes.readUInt8(at);
  }

  u16(at: number): number {
    this.check(at, 2);
    return this.little ? this.bytes.readUInt16LE(at) : this.bytes.readUInt16BE(at);
  }

  i16(at: number): number {
    this.check(at, 2);
    return this.little ? this.bytes.readInt16LE(at) : this.bytes.readInt16BE(at);
  }

  u32(at: number): number {
    this.check(at, 4);
    return this.little ? this.bytes.readUInt32LE(at) : this.bytes.readUInt32BE(at);
  }

  i32(at: number): number {
    this.check(at, 4);
    return this.little ? this.bytes.readInt32LE(at) : this.bytes.readInt32BE(at);
  }

  u64(at: number): bigint {
    this.check(at, 8);
    return this.little ? this.bytes.readBigUInt64LE(at) : this.bytes.readBigUInt64BE(at);
  }

  /** A pointer-sized word: 4 or 8 bytes. */
  word(at: number, size: 4 | 8): bigint {
    return size === 8 ? this.u64(at) : BigInt(this.u32(at));
  }

  slice(at: number, size: number): Buffer {
    this.check(at, size);
    return this.bytes.subarray(at, at + size);
  }

  private check(at: number, size: number): void {
    if (!this.has(at, size)) {
      throw new DumpFileError(`${this.what} is too short: ${size} bytes at ${at} lie past its ${this.bytes.length}`);
    }
  }
}

/** A 64-bit file offset or size as a number, or an error when no real file could hold it. */
export function toOffset(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new DumpFileError(`${what} is impossibly large (${value})`);
  return Number(value);
}

/** A count read from the file, refused when it exceeds what any real process has. */
export function checkedCount(count: number | bigint, limit: number, what: string): number {
  if (count > limit) throw new DumpFileError(`${what}: a count of ${count} exceeds the limit of ${limit}`);
  return Number(count);
}

/** An unsigned value as the model writes addresses: `0x7ffc1234`, `0x0`. */
export function hex(value: bigint | number): Address {
  return `0x${value.toString(16)}`;
}

/** Text up to its first NUL. */
export function cString(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? bytes.length : end).toString("utf8");
}

/** Runs one part of a parse; a DumpFileError there is noted and the rest of the dump still read. */
export function partial<T>(problems: string[], fallback: T, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof DumpFileError)) throw error;
    problems.push(error.message);
    return fallback;
  }
}

/** Address ranges sorted once, for finding the one that holds an address in log time. */
export class SortedRanges<T> {
  private readonly items: T[];

  constructor(
    items: T[],
    private readonly start: (item: T) => bigint,
    private readonly end: (item: T) => bigint,
  ) {
    this.items = [...items].sort((a, b) => (start(a) < start(b) ? -1 : start(a) > start(b) ? 1 : 0));
  }

  /** The range holding `address`; of overlapping ones, the last to start at or before it. */
  at(address: bigint): T | null {
    let low = 0;
    let high = this.items.length - 1;
    let found: T | null = null;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const item = this.items[middle] as T;
      if (this.start(item) <= address) {
        found = item;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    return found !== null && address < this.end(found) ? found : null;
  }
}
