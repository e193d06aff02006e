/** What glibc's chunk headers say of a block a failed free was given: pure parts. */
import { describe, expect, it } from "vitest";
import { inUseBitOverwritten, plausibleChunkSize } from "../../src/analyzers/glibc.js";

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
