/**
 * Pure splitting of debugger output: the chunks an output is analysed and searched in, and the
 * short preview (head and tail) kept on every evidence row.
 */

/** One chunk of an output: a half-open byte range of its UTF-8 text and the lines it covers (1-based). */
export interface ChunkSpan {
  /** 0-based position of the chunk in its output. */
  n: number;
  startByte: number;
  endByte: number;
  startLine: number;
  endLine: number;
}

/** The smallest chunk size: the longest UTF-8 character, so a cut inside a long line always advances. */
export const MIN_CHUNK_BYTES = 4;

const NEWLINE = 0x0a;

/**
 * Splits UTF-8 text into consecutive chunks of at most `maxBytes` bytes that end at line boundaries.
 * A line longer than a chunk is cut between characters. The chunks cover the text exactly, and
 * there is always at least one (an empty text is one empty chunk), so every output has a first chunk.
 */
export function splitAtLines(text: Buffer, maxBytes: number): ChunkSpan[] {
  if (!Number.isInteger(maxBytes) || maxBytes < MIN_CHUNK_BYTES) {
    throw new RangeError(`chunk size must be an integer of at least ${MIN_CHUNK_BYTES} bytes, got ${maxBytes}`);
  }
  const spans: ChunkSpan[] = [];
  let start = 0;
  let line = 1;
  do {
    const end = chunkEnd(text, start, maxBytes);
    const newlines = countNewlines(text, start, end);
    const endsWithNewline = end > start && text[end - 1] === NEWLINE;
    spans.push({
      n: spans.length,
      startByte: start,
      endByte: end,
      startLine: line,
      endLine: line + newlines - (endsWithNewline ? 1 : 0),
    });
    line += newlines;
    start = end;
  } while (start < text.length);
  return spans;
}

function chunkEnd(text: Buffer, start: number, maxBytes: number): number {
  const limit = start + maxBytes;
  if (limit >= text.length) return text.length;
  const lastNewline = text.lastIndexOf(NEWLINE, limit - 1);
  if (lastNewline >= start) return lastNewline + 1;
  let cut = limit;
  while (cut > start + 1 && isContinuationByte(text[cut])) cut--;
  return cut;
}

function isContinuationByte(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

function countNewlines(text: Buffer, start: number, end: number): number {
  let count = 0;
  for (let at = text.indexOf(NEWLINE, start); at !== -1 && at < end; at = text.indexOf(NEWLINE, at + 1)) count++;
  return count;
}

/**
 * The first and last lines of a text, up to `budget` characters each, cut at line boundaries
 * (inside a line only when a single line exceeds the budget). A text of up to twice the budget is
 * kept whole in `head`, with an empty `tail`, so the two never overlap.
 */
export function headAndTail(text: string, budget: number): { head: string; tail: string } {
  if (text.length <= 2 * budget) return { head: text, tail: "" };
  const headEnd = text.lastIndexOf("\n", budget);
  const tailStart = text.indexOf("\n", text.length - budget - 1) + 1;
  return {
    head: text.slice(0, headEnd > 0 ? headEnd : budget - (splitsPair(text, budget) ? 1 : 0)),
    tail: text.slice(
      tailStart > 0 && tailStart < text.length
        ? tailStart
        : text.length - budget + (splitsPair(text, text.length - budget) ? 1 : 0),
    ),
  };
}

/** Whether cutting at `index` would split a surrogate pair (one character outside the BMP). */
function splitsPair(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff;
}
