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

/** A chunk header's size without its three flag bits, and those bits. */
export function chunkSize(words: bigint[]): { size: bigint; flags: bigint } | null {
  const size = words[1];
  return size === undefined ? null : { size: size & ~7n, flags: size & 7n };
}
