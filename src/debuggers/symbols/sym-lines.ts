/**
 * The lines of an untrusted text file, read in chunks by position: a symbol file can be hundreds
 * of megabytes (libxul's), so it is never held whole, and no line may grow without bound.
 */
import type { FileHandle } from "node:fs/promises";

/** Bytes read per chunk: large enough that reads are few, small enough that one is cheap to hold. */
const CHUNK_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Calls `onLine` with each line's bytes, without its line ending, or with `null` for a line longer
 * than `maxLineBytes`, which is skipped whole. The bytes are a view into the chunk being read,
 * good only until `onLine` returns: a symbol file has tens of millions of lines, and copying or
 * decoding each one (or awaiting each one) is most of the time reading takes.
 */
export async function readLines(file: FileHandle, maxLineBytes: number, onLine: (line: Buffer | null) => void): Promise<void> {
  const chunk = Buffer.alloc(CHUNK_BYTES);
  // The start of a line that runs past the chunk, copied out; null while an overlong line is skipped.
  let carried: Buffer | null = Buffer.alloc(0);
  let position = 0;
  for (;;) {
    const { bytesRead } = await file.read(chunk, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE, start); end !== -1 && end < bytesRead; end = chunk.indexOf(NEWLINE, start)) {
      if (carried === null || carried.length + end - start > maxLineBytes) onLine(null);
      else onLine(withoutCarriageReturn(carried.length === 0 ? chunk.subarray(start, end) : Buffer.concat([carried, chunk.subarray(start, end)])));
      carried = Buffer.alloc(0);
      start = end + 1;
    }
    if (carried !== null && start < bytesRead) {
      carried = carried.length + bytesRead - start > maxLineBytes ? null : Buffer.concat([carried, chunk.subarray(start, bytesRead)]);
    }
  }
  if (carried === null) onLine(null);
  else if (carried.length > 0) onLine(withoutCarriageReturn(carried));
}

/** A line without a Windows line ending's carriage return. */
function withoutCarriageReturn(line: Buffer): Buffer {
  return line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN ? line.subarray(0, line.length - 1) : line;
}
