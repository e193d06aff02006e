/** What dumpdbg knows of glibc's data structures, as expressions in C over a dump's memory. */

/** glibc's pthread_mutex_t.__data.__owner (the owner's LWP) is the third int on every Linux ABI. */
export function mutexOwnerExpression(lock: string): string {
  return `*(int *)(${lock} + 8)`;
}

/** Where malloc's main arena ends: its top chunk. */
export const MAIN_ARENA_TOP = "main_arena.top";
/** Where the main arena's heap begins. */
export const HEAP_START = "mp_.sbrk_base";

/** A malloc chunk's header (prev_size, size) is the two 8-byte words just before the pointer malloc returned. */
export function chunkHeaderAddress(pointer: string): string {
  return `(char *)(${pointer}) - 16`;
}
export const CHUNK_HEADER_WORDS = 2;

/** The header of the chunk right after the one `pointer` points into: its own header's address plus its size. */
export function nextChunkHeaderAddress(pointer: string): string {
  return `(char *)(${pointer}) - 16 + (*(unsigned long *)((char *)(${pointer}) - 8) & ~7UL)`;
}

/** A chunk header's size without its three flag bits, and those bits. */
export function chunkSize(words: bigint[]): { size: bigint; flags: bigint } | null {
  const size = words[1];
  return size === undefined ? null : { size: size & ~7n, flags: size & 7n };
}

/** The largest chunk size a heap of an ordinary process holds; beyond it a size field is not one malloc wrote. */
const MAX_PLAUSIBLE_CHUNK = 1n << 32n;

/** Whether a chunk's size field is one malloc writes: at least the minimum chunk, aligned, and not absurd. */
export function plausibleChunkSize(words: bigint[]): boolean {
  const chunk = chunkSize(words);
  return chunk !== null && chunk.size >= 0x20n && chunk.size % 16n === 0n && chunk.size < MAX_PLAUSIBLE_CHUNK;
}

/** A chunk size's flag that says the chunk before it is in use. */
const PREV_INUSE = 1n;

/**
 * Whether the next chunk's header (prev_size, size), which says the block before it is free (its
 * PREV_INUSE bit clear, what "(!prev)" reads), was left so by a write past the block's end rather
 * than by a free: a free of the block puts its size (or that of the free block it merged into,
 * never less) in the next chunk's prev_size, while in use those bytes are the block's own last
 * ones. `block` is the freed block's header. False when the bit is set or either header is not read.
 */
export function inUseBitOverwritten(block: bigint[], next: bigint[]): boolean {
  const freed = chunkSize(block);
  const [footer, size] = next;
  if (freed === null || footer === undefined || size === undefined || (size & PREV_INUSE) !== 0n) return false;
  return !(footer >= freed.size && footer % 16n === 0n && footer < MAX_PLAUSIBLE_CHUNK);
}

/**
 * glibc's "double free or corruption (out)", "(!prev)" and "(top)" are said for a block freed twice
 * and for a block whose header, or its neighbour's, an overflow overwrote alike; only the headers tell them apart.
 * "double free detected in tcache" and "(fasttop)" check the free lists themselves.
 */
export const AMBIGUOUS_FREE_MESSAGE = /^double free or corruption \((out|!prev|top)\)$/;

/** What a line of C frees: `free(conn->read_buffer);` → `conn->read_buffer`. */
export function freedExpression(code: string): string | null {
  const match = /\b(?:free|g_free|delete\s*\[\s*\]|delete)\s*\(?\s*([^;()]+?)\s*\)?\s*;/.exec(code);
  return match?.[1]?.trim() ?? null;
}

/** A chunk whose next chunk's header marks it free while its prev_size is not its size (`inUseBitOverwritten`). */
export interface ClearedInUseBit {
  /** The chunk's address (its header's), its size, and the next chunk's prev_size. */
  chunk: bigint;
  size: bigint;
  footer: bigint;
}

/** Reads `words` 8-byte words at an address of the dump; fewer, or none, where it holds no memory there. */
export type WordReader = (address: bigint, words: number) => Promise<bigint[]>;

/**
 * Walks a heap's chunks from `start` by their sizes, as malloc lays them out, to the top chunk that
 * ends at `end`, for the first chunk whose in-use bit its neighbour shows cleared by a write past its
 * end (the walk stops there: the neighbour's size may be damaged too). The walk is the evidence that
 * the memory is malloc's heap: its first chunk as malloc makes it (no chunk before it, marked in use),
 * every size chaining to the next; null where that fails (memory the dump lacks, another region, a
 * size that breaks the chain) or `limit` chunks do not reach the end.
 */
export async function walkHeap(read: WordReader, start: bigint, end: bigint, limit: number): Promise<{ cleared: ClearedInUseBit | null } | null> {
  let header = await read(start, CHUNK_HEADER_WORDS);
  if (header[0] !== 0n || ((header[1] ?? 0n) & PREV_INUSE) === 0n) return null;
  for (let at = start, walked = 0; walked < limit; walked++) {
    const chunk = chunkSize(header);
    if (chunk === null || header.length < CHUNK_HEADER_WORDS || !plausibleChunkSize(header) || at + chunk.size > end) return null;
    const next = at + chunk.size;
    if (next === end) return { cleared: null };
    const following = await read(next, CHUNK_HEADER_WORDS);
    if (inUseBitOverwritten(header, following)) return { cleared: { chunk: at, size: chunk.size, footer: following[0] ?? 0n } };
    at = next;
    header = following;
  }
  return null;
}
