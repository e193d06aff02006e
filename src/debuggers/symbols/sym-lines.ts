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
 * Each line of the file, decoded as UTF-8 without its line ending, or `null` for a line longer
 * than `maxLineBytes`, which is skipped whole. Each string is decoded on its own, so names kept
 * from it hold no chunk alive.
 */
export async function* fileLines(file: FileHandle, maxLineBytes: number): AsyncGenerator<string | null> {
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
      if (carried === null) yield null;
      else if (carried.length + end - start > maxLineBytes) yield null;
      else yield decodeLine(carried.length === 0 ? chunk.subarray(start, end) : Buffer.concat([carried, chunk.subarray(start, end)]));
      carried = Buffer.alloc(0);
      start = end + 1;
    }
    if (carried !== null && start < bytesRead) {
      carried = carried.length + bytesRead - start > maxLineBytes ? null : Buffer.concat([carried, chunk.subarray(start, bytesRead)]);
    }
  }
  if (carried === null) yield null;
  else if (carried.length > 0) yield decodeLine(carried);
}

/** A line's text without a Windows line ending's carriage return. */
function decodeLine(bytes: Buffer): string {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === CARRIAGE_RETURN ? bytes.length - 1 : bytes.length;
  return bytes.toString("utf8", 0, end);
}
