/** What glibc's chunk headers say of a block a failed free was given: pure parts. */
import { describe, expect, it } from "vitest";
import { inUseBitOverwritten, plausibleChunkSize, walkHeap } from "../../src/analyzers/glibc.js";

/** A header as the dump holds it: prev_size, then the size with its flag bits. */
const header = (prevSize: bigint, size: bigint) => [prevSize, size];
/** The little-endian word of 8 bytes of text, as a string's bytes lie in memory. */
const textWord = (text: string) => Buffer.from(text, "latin1").readBigUInt64LE(0);

describe("the header after a block glibc found already free", () => {
  const block = header(0n, 0x581n);

  it("was left so by a free: the next chunk's prev_size is the block's size, or the larger free block it merged into", () => {
    expect(inUseBitOverwritten(block, header(0x580n, 0x520n))).toBe(false);
    expect(inUseBitOverwritten(block, header(0x9a0n, 0x520n))).toBe(false);
  });

  it("was left so by a write past the block's end: its own last bytes where a free puts its size, the in-use bit cleared by the terminator", () => {
    // The subject's text ran to the block's end and its NUL cleared the low byte of 0x521.
    const next = header(textWord("Re: quar"), 0x500n);
    expect(plausibleChunkSize(next)).toBe(true);
    expect(inUseBitOverwritten(block, next)).toBe(true);
    // Zeros, or a size smaller than the block's, are no footer a free of it writes either.
    expect(inUseBitOverwritten(block, header(0n, 0x500n))).toBe(true);
    expect(inUseBitOverwritten(block, header(0x30n, 0x500n))).toBe(true);
  });

  it("says nothing when the bit is set, or a header is not read", () => {
    expect(inUseBitOverwritten(block, header(textWord("Re: quar"), 0x521n))).toBe(false);
    expect(inUseBitOverwritten(block, [])).toBe(false);
    expect(inUseBitOverwritten([], header(0n, 0x500n))).toBe(false);
  });
});

describe("a walk of malloc's heap", () => {
  /** A dump's memory: 8-byte words by address; none where it holds nothing. */
  const memory = (words: Map<bigint, bigint>) => async (address: bigint, count: number) => {
    const read: bigint[] = [];
    for (let i = 0n; i < BigInt(count); i++) {
      const word = words.get(address + i * 8n);
      if (word === undefined) break;
      read.push(word);
    }
    return read;
  };
  /** Chunk headers laid out from `start`: [prev_size, size with flags] each, the last the top chunk up to `end`. */
  const heap = (start: bigint, headers: [bigint, bigint][]) => {
    const words = new Map<bigint, bigint>();
    let at = start;
    for (const [prevSize, size] of headers) {
      words.set(at, prevSize);
      words.set(at + 8n, size);
      at += size & ~7n;
    }
    return { read: memory(words), end: at };
  };
  const start = 0x555555559000n;

  it("reaches the top chunk at the region's end, over a block really freed (its footer its size)", async () => {
    const { read, end } = heap(start, [[0n, 0x291n], [0n, 0x581n], [0x580n, 0x520n], [0n, 0x20ac1n]]);
    expect(await walkHeap(read, start, end, 16)).toEqual({ cleared: null });
  });

  it("stops at the block whose neighbour's in-use bit a write past its end cleared, its text where the footer goes", async () => {
    // The NUL took the low byte of 0x521: the neighbour's size shrank to 0x500 too, so the walk goes no further.
    const words = heap(start, [[0n, 0x291n], [0n, 0x581n], [textWord("Re: quar"), 0x500n]]);
    expect(await walkHeap(words.read, start, words.end + 0x20000n, 16)).toEqual({ cleared: { chunk: start + 0x290n, size: 0x580n, footer: textWord("Re: quar") } });
  });

  it("claims nothing of memory that does not walk as malloc's heap", async () => {
    const { read, end } = heap(start, [[0n, 0x291n], [0n, 0x581n], [0x580n, 0x521n]]);
    // The chain stops short of the region's end: the memory the dump lacks past it.
    expect(await walkHeap(read, start, end + 0x1000n, 16)).toBeNull();
    // No first chunk as malloc makes it (a thread's stack, another mapping).
    expect(await walkHeap(heap(start, [[0x41n, 0x291n], [0n, 0x20001n]]).read, start, end, 16)).toBeNull();
    // More chunks than the walk takes.
    expect(await walkHeap(read, start, end, 2)).toBeNull();
  });
});
