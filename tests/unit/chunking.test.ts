import { describe, expect, it } from "vitest";
import { headAndTail, splitAtLines, type ChunkSpan } from "../../src/evidence/chunking.js";

/** gdb `bt full` lines, as gdb prints them for a thread blocked on a mutex. */
const BT = `Thread 3 (Thread 0x7ffff6dff6c0 (LWP 4242)):
#0  futex_wait (private=0, expected=2, futex_word=0x5555555580a0 <gate>) at ../sysdeps/nptl/futex-internal.h:146
        __ret = -512
        err = <optimized out>
#1  __GI___lll_lock_wait (futex=futex@entry=0x5555555580a0 <gate>, private=0) at ./nptl/lowlevellock.c:49
No locals.
#2  0x00005555555551ff in worker (arg=0x2) at prog.c:13
        id = 2
        name = "worker-2", '\\000' <repeats 23 times>
`;

function texts(text: string, spans: ChunkSpan[]): string[] {
  const bytes = Buffer.from(text);
  return spans.map((s) => bytes.toString("utf8", s.startByte, s.endByte));
}

/** The invariants every split must keep, whatever the text. */
function expectWellFormed(text: string, spans: ChunkSpan[], maxBytes: number): void {
  const bytes = Buffer.from(text);
  expect(spans.length).toBeGreaterThan(0);
  expect(spans[0]?.startByte).toBe(0);
  expect(spans.at(-1)?.endByte).toBe(bytes.length);
  const lines = text.split("\n");
  spans.forEach((span, i) => {
    expect(span.n).toBe(i);
    expect(span.endByte - span.startByte).toBeLessThanOrEqual(maxBytes);
    if (i > 0) expect(span.startByte).toBe(spans[i - 1]?.endByte);
    const piece = bytes.toString("utf8", span.startByte, span.endByte);
    expect(piece).not.toContain("\uFFFD");
    const linesBefore = bytes.toString("utf8", 0, span.startByte).split("\n").length;
    expect(span.startLine).toBe(linesBefore);
    if (piece.length > 0) {
      const last = piece.endsWith("\n") ? piece.slice(0, -1) : piece;
      expect(span.endLine).toBe(span.startLine + last.split("\n").length - 1);
      expect(lines[span.endLine - 1]).toBeDefined();
    }
  });
  expect(texts(text, spans).join("")).toBe(text);
}

describe("splitAtLines", () => {
  it("keeps a text under the size in one chunk", () => {
    const spans = splitAtLines(Buffer.from(BT), 4096);
    expect(spans).toEqual([{ n: 0, startByte: 0, endByte: Buffer.byteLength(BT), startLine: 1, endLine: 9 }]);
  });

  it("makes one empty chunk of an empty text, so every output has a first chunk", () => {
    expect(splitAtLines(Buffer.alloc(0), 64)).toEqual([{ n: 0, startByte: 0, endByte: 0, startLine: 1, endLine: 1 }]);
  });

  it("cuts gdb output only at line ends, each chunk within the size", () => {
    const spans = splitAtLines(Buffer.from(BT), 200);
    expectWellFormed(BT, spans, 200);
    expect(spans.length).toBeGreaterThan(2);
    for (const piece of texts(BT, spans)) expect(piece.endsWith("\n")).toBe(true);
  });

  it("numbers the lines each chunk covers", () => {
    const text = "a\nbb\nccc\ndddd\n";
    const spans = splitAtLines(Buffer.from(text), 6);
    expect(spans.map((s) => [s.startLine, s.endLine])).toEqual([
      [1, 2],
      [3, 3],
      [4, 4],
    ]);
    expect(texts(text, spans)).toEqual(["a\nbb\n", "ccc\n", "dddd\n"]);
  });

  it("counts a last line without a newline", () => {
    const spans = splitAtLines(Buffer.from("one\ntwo"), 100);
    expect(spans[0]).toMatchObject({ startLine: 1, endLine: 2 });
  });

  it("cuts a line longer than a chunk between characters, never inside one", () => {
    const text = `${"é€𝄞x".repeat(50)}\nshort\n`;
    for (const size of [4, 5, 6, 7, 13, 64]) {
      const spans = splitAtLines(Buffer.from(text), size);
      expectWellFormed(text, spans, size);
    }
  });

  it("continues a cut line's number into the next chunk", () => {
    const text = "abcdefgh\nij\n";
    const spans = splitAtLines(Buffer.from(text), 4);
    expect(texts(text, spans)).toEqual(["abcd", "efgh", "\nij\n"]);
    expect(spans.map((s) => [s.startLine, s.endLine])).toEqual([
      [1, 1],
      [1, 1],
      [1, 2],
    ]);
  });

  it("keeps its invariants on random text", () => {
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return (seed >>> 16) % n;
    };
    const alphabet = ["a", "b", " ", "\n", "\n\n", "é", "€", "𝄞", "<optimized out>", "0x7ffff7e60482"];
    for (let round = 0; round < 200; round++) {
      let text = "";
      const length = random(300);
      for (let i = 0; i < length; i++) text += alphabet[random(alphabet.length)];
      const size = 4 + random(60);
      expectWellFormed(text, splitAtLines(Buffer.from(text), size), size);
    }
  });

  it("refuses a size too small to hold any character", () => {
    expect(() => splitAtLines(Buffer.from("abc"), 3)).toThrow(RangeError);
    expect(() => splitAtLines(Buffer.from("abc"), 4.5)).toThrow(/at least 4 bytes/);
  });
});

describe("headAndTail", () => {
  it("keeps a short text whole in the head", () => {
    expect(headAndTail(BT, 1000)).toEqual({ head: BT, tail: "" });
  });

  it("cuts head and tail at line boundaries within the budget", () => {
    const lines = Array.from({ length: 100 }, (_, i) => `#${i}  frame_${i} () at prog.c:${i}`);
    const text = `${lines.join("\n")}\n`;
    const { head, tail } = headAndTail(text, 120);
    expect(head.length).toBeLessThanOrEqual(120);
    expect(tail.length).toBeLessThanOrEqual(120);
    expect(head.startsWith("#0  frame_0 () at prog.c:0\n")).toBe(true);
    expect(lines).toContain(head.split("\n").at(-1));
    expect(tail.endsWith("#99  frame_99 () at prog.c:99\n")).toBe(true);
    expect(lines).toContain(tail.split("\n")[0]);
  });

  it("cuts inside a line only when one line is over the budget, and never splits a character", () => {
    const text = "𝄞".repeat(300);
    const { head, tail } = headAndTail(text, 101);
    expect(head).toBe("𝄞".repeat(50));
    expect(tail).toBe("𝄞".repeat(50));
  });
});
