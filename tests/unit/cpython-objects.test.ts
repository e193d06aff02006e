/**
 * CPython 3.11's objects and the stack walk over a process laid out in memory by the test, field by
 * field at the offsets of the 3.11 layout: strings of every kind, cut and hostile; threads and
 * frames, read whole, and with a page taken away, a loop, too many frames or an object of the
 * wrong type: what could not be read is unknown with a reason, never invented.
 */
import { describe, expect, it } from "vitest";

import { PYTHON_3_11, readString, walkThreads, type ValueAddresses } from "../../src/runtimes/cpython/index.js";
import { PagedMemory } from "../helpers/cpython.js";

const L = PYTHON_3_11;
const TYPES: ValueAddresses = {
  code: 0x9a0000n,
  str: 0x9a1000n,
  bytes: 0x9a2000n,
  tuple: 0x9a3000n,
  list: 0x9a4000n,
  dict: 0x9a5000n,
  long: 0x9a6000n,
  float: 0x9a7000n,
  builtinMethod: 0x9a8000n,
  boundMethod: 0x9a9000n,
  none: 0x9aa000n,
  true: 0x9ab000n,
  false: 0x9ac000n,
};
const PAGE = 0x1000n;

/** A process's memory with a bump allocator that gives each object a page of its own, so a test can take one away. */
class Process {
  readonly memory = new PagedMemory();
  private next = 0x10000n;

  place(bytes: Buffer): bigint {
    const at = this.next;
    this.memory.write(at, bytes);
    this.next += ((BigInt(bytes.length) + PAGE - 1n) / PAGE) * PAGE || PAGE;
    return at;
  }

  struct(size: number, fields: [number, bigint | number, 1 | 4 | 8][]): Buffer {
    const bytes = Buffer.alloc(size);
    for (const [at, value, width] of fields) {
      if (width === 8) bytes.writeBigUInt64LE(BigInt(value), at);
      else if (width === 4) bytes.writeInt32LE(Number(value), at);
      else bytes.writeUInt8(Number(value), at);
    }
    return bytes;
  }

  /** A compact str of `kind`-byte characters; ASCII text in the ASCII form. */
  str(text: string, options: { kind?: 1 | 2 | 4; length?: bigint; state?: number; type?: bigint } = {}): bigint {
    const points = [...text].map((c) => c.codePointAt(0)!);
    const kind = options.kind ?? (points.every((p) => p < 0x80) ? 1 : points.every((p) => p < 0x100) ? 1 : points.every((p) => p < 0x10000) ? 2 : 4);
    const ascii = points.every((p) => p < 0x80) && kind === 1;
    const start = ascii ? L.unicode.asciiData : L.unicode.compactData;
    const header = this.struct(start, [
      [L.objectType, options.type ?? TYPES.str, 8],
      [L.unicode.length, options.length ?? BigInt(points.length), 8],
      [L.unicode.state, options.state ?? ((kind << 2) | 0x20 | (ascii ? 0x40 : 0) | 0x80), 1],
    ]);
    const data = Buffer.alloc(points.length * kind);
    points.forEach((p, i) => (kind === 1 ? data.writeUInt8(p, i) : kind === 2 ? data.writeUInt16LE(p, i * 2) : data.writeUInt32LE(p, i * 4)));
    return this.place(Buffer.concat([header, data]));
  }

  bytes(content: Buffer): bigint {
    const header = this.struct(L.bytes.data, [
      [L.objectType, TYPES.bytes, 8],
      [L.bytes.size, content.length, 8],
    ]);
    return this.place(Buffer.concat([header, content]));
  }

  /** A code object whose instructions map to lines by LINE_TABLE; returns it and where its instructions start. */
  code(qualname: string, file: string, firstLine: number, options: { firstTraceable?: number; type?: bigint } = {}): { at: bigint; instructions: bigint; name: bigint } {
    const name = this.str(qualname);
    const object = this.struct(L.code.size, [
      [L.objectType, options.type ?? TYPES.code, 8],
      [L.code.filename, this.str(file), 8],
      [L.code.name, name, 8],
      [L.code.qualname, name, 8],
      [L.code.lineTable, this.bytes(LINE_TABLE), 8],
      [L.code.firstLine, firstLine, 4],
      [L.code.firstTraceable, options.firstTraceable ?? 0, 4],
    ]);
    const at = this.place(Buffer.concat([object, Buffer.alloc(64)]));
    return { at, instructions: at + BigInt(L.code.codeAdaptive), name };
  }

  frame(code: { at: bigint; instructions: bigint }, offset: number, previous: bigint, options: { entry?: boolean; owner?: number } = {}): bigint {
    return this.place(
      this.struct(L.frame.size, [
        [L.frame.code, code.at, 8],
        [L.frame.previous, previous, 8],
        [L.frame.prevInstr, code.instructions + BigInt(offset), 8],
        [L.frame.isEntry, options.entry ? 1 : 0, 1],
        [L.frame.owner, options.owner ?? 0, 1],
      ]),
    );
  }

  thread(lwp: number, currentFrame: bigint, next: bigint): bigint {
    const cframe = this.place(this.struct(L.cframe.size, [[L.cframe.currentFrame, currentFrame, 8]]));
    return this.place(
      this.struct(L.thread.size, [
        [L.thread.next, next, 8],
        [L.thread.cframe, cframe, 8],
        [L.thread.nativeThreadId, lwp, 8],
      ]),
    );
  }

  runtime(threadsHead: bigint): bigint {
    const interpreter = this.place(this.struct(L.interpreter.size, [[L.interpreter.threadsHead, threadsHead, 8]]));
    return this.place(this.struct(L.runtime.interpretersHead + 8, [[L.runtime.interpretersHead, interpreter, 8]]));
  }

  /** Rewrites one pointer of an object placed before. */
  point(at: bigint, field: number, value: bigint): void {
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64LE(value);
    this.memory.write(at + BigInt(field), bytes);
  }
}

/** Code units 0–7 on the first line + 1 (no columns, +1), units 8–15 on the first line + 2 (one-line form, +1). */
const LINE_TABLE = Buffer.from([0x80 | (13 << 3) | 7, 2, 0x80 | (11 << 3) | 7, 4, 9]);

describe("a str read from memory", () => {
  const read = (process: Process, at: bigint) => readString(process.memory, L, TYPES, at, "the name");

  it("reads compact ASCII, Latin-1, UCS-2 and UCS-4 text", () => {
    const process = new Process();
    for (const text of ["parse_record", "café", "Привет_мир", "𝔘nicode_🐍"]) expect(read(process, process.str(text))).toEqual({ value: text });
  });

  it("cuts a string longer than 1,024 characters, saying so with an ellipsis", () => {
    const process = new Process();
    expect(read(process, process.str("x".repeat(5000)))).toEqual({ value: `${"x".repeat(1024)}…` });
  });

  it("does not read past the core for a length it claims but does not hold", () => {
    const process = new Process();
    // 1,024 characters of 4 bytes run from the str's page into the next, which the core left out.
    const at = process.str("\u{1d518}", { length: 2n ** 62n });
    process.memory.takeAway(at + PAGE);
    expect(read(process, at)).toEqual({ why: expect.stringContaining("the text of the name") });
  });

  it.each([
    ["NULL", () => 0n, "is NULL"],
    ["of another type", (p: Process) => p.str("name", { type: TYPES.bytes }), "is not one"],
    ["of a negative length", (p: Process) => p.str("name", { length: 2n ** 64n - 3n }), "negative length"],
    ["not compact", (p: Process) => p.str("name", { state: (1 << 2) | 0x40 }), "not a compact str"],
    ["of 3-byte characters", (p: Process) => p.str("name", { state: (3 << 2) | 0x20 }), "characters of 3 bytes"],
  ])("refuses a str %s", (_, make, why) => {
    const process = new Process();
    expect(read(process, make(process))).toEqual({ why: expect.stringContaining(why) });
  });

  it("refuses a str ASCII by its state, with a byte past ASCII", () => {
    const process = new Process();
    const at = process.str("cafe");
    process.memory.write(at + BigInt(L.unicode.asciiData) + 3n, Buffer.from([0xe9]));
    expect(read(process, at)).toEqual({ why: expect.stringContaining("characters its kind cannot") });
  });

  it("refuses a str holding a code point past Unicode", () => {
    const process = new Process();
    const at = process.str("\u{10ffff}");
    process.memory.write(at + BigInt(L.unicode.compactData), Buffer.from([0x00, 0x00, 0x11, 0x00]));
    expect(read(process, at)).toEqual({ why: expect.stringContaining("characters its kind cannot") });
  });

  it("says where a str's page is missing", () => {
    const process = new Process();
    const at = process.str("handle");
    process.memory.takeAway(at);
    expect(read(process, at)).toEqual({ why: `the name (a str) at 0x${at.toString(16)} is not in the core` });
  });
});

/** Two threads: 101 runs parse_record ← handle ← <module> (the entry frame); 102 runs worker. */
function twoThreads() {
  const process = new Process();
  const module = process.code("<module>", "/srv/app.py", 1);
  const handle = process.code("handle", "/srv/app.py", 10);
  const parse = process.code("parse_record", "/srv/app.py", 5);
  const outer = process.frame(module, 20, 0n, { entry: true });
  const middle = process.frame(handle, 4, outer);
  const inner = process.frame(parse, 16, middle);
  const worker = process.frame(process.code("Worker.run", "/srv/worker.py", 30), 2, 0n, { entry: true });
  const second = process.thread(102, worker, 0n);
  const first = process.thread(101, inner, second);
  return { process, runtime: process.runtime(first), frames: { outer, middle, inner }, codes: { module, handle, parse }, first, second };
}

const walk = (process: Process, runtime: bigint) => walkThreads(process.memory, L, TYPES, runtime);

describe("the walk over threads and frames", () => {
  it("reads every thread's frames, innermost first, with their lines", () => {
    const { process, runtime } = twoThreads();
    expect(walk(process, runtime)).toMatchObject({
      threads: [
        {
          lwp: 101,
          frames: [
            { function: "parse_record", file: "/srv/app.py", line: 7, firstLine: 5, entry: false },
            { function: "handle", file: "/srv/app.py", line: 11, firstLine: 10, entry: false },
            { function: "<module>", file: "/srv/app.py", line: 3, firstLine: 1, entry: true },
          ],
          complete: true,
          why: null,
        },
        { lwp: 102, frames: [{ function: "Worker.run", file: "/srv/worker.py", line: 31, firstLine: 30, entry: true }], complete: true, why: null },
      ],
      notes: [],
    });
  });

  it("keeps the frames before a frame whose page is gone, and says the rest are unknown", () => {
    const { process, runtime, frames } = twoThreads();
    process.memory.takeAway(frames.middle);
    const [first, second] = walk(process, runtime).threads;
    expect(first!.frames.map((f) => f.function)).toEqual(["parse_record"]);
    expect(first!.complete).toBe(false);
    expect(first!.why).toBe(`the frame at 0x${frames.middle.toString(16)} is not in the core: it and the frames that called it are unknown`);
    expect(second!.complete).toBe(true);
  });

  it("stops at a frame whose code object is gone or of another type", () => {
    const { process, runtime, codes } = twoThreads();
    process.memory.takeAway(codes.handle.at);
    expect(walk(process, runtime).threads[0]).toMatchObject({ frames: [{ function: "parse_record" }], complete: false, why: expect.stringContaining("code object at") });
    const other = twoThreads();
    other.process.point(other.codes.handle.at, L.objectType, TYPES.str);
    expect(walk(other.process, other.runtime).threads[0]).toMatchObject({ frames: [{ function: "parse_record" }], complete: false, why: expect.stringContaining("is not one") });
  });

  it("keeps a frame whose name is gone, its name unknown", () => {
    const { process, runtime, codes } = twoThreads();
    process.memory.takeAway(codes.handle.name);
    const [first] = walk(process, runtime).threads;
    expect(first!.frames[1]).toMatchObject({ function: null, file: "/srv/app.py", line: 11, firstLine: 10, entry: false });
    expect(first!.frames).toHaveLength(3);
    expect(first!.complete).toBe(false);
    expect(first!.why).toBe(`the function's name (a str) at 0x${codes.handle.name.toString(16)} is not in the core`);
  });

  it("skips a frame not yet started, as CPython's tracebacks do, but never a generator's", () => {
    const process = new Process();
    const caller = process.frame(process.code("main", "/srv/app.py", 1), 2, 0n);
    const pushed = process.frame(process.code("fresh", "/srv/app.py", 20, { firstTraceable: 2 }), 0, caller);
    const generator = process.frame(process.code("numbers", "/srv/app.py", 40, { firstTraceable: 2 }), -2, pushed, { owner: L.ownedByGenerator });
    const threads = walk(process, process.runtime(process.thread(7, generator, 0n))).threads;
    expect(threads[0]!.frames.map((f) => [f.function, f.line])).toEqual([
      ["numbers", 40],
      ["main", 2],
    ]);
  });

  it("stops where frames loop back, or where threads do", () => {
    const { process, runtime, frames, first, second } = twoThreads();
    process.point(frames.outer, L.frame.previous, frames.middle);
    process.point(second, L.thread.next, first);
    const result = walk(process, runtime);
    expect(result.threads).toHaveLength(2);
    expect(result.threads[0]).toMatchObject({ complete: false, why: `its frames loop back to 0x${frames.middle.toString(16)}` });
    expect(result.threads[0]!.frames).toHaveLength(3);
    expect(result.notes).toEqual([`the list of threads loops back to 0x${first.toString(16)}`]);
  });

  it("reads at most 1,000 frames of a thread", () => {
    const process = new Process();
    const code = process.code("recurse", "/srv/deep.py", 1);
    let frame = 0n;
    for (let i = 0; i < 1005; i++) frame = process.frame(code, 0, frame);
    const [thread] = walk(process, process.runtime(process.thread(9, frame, 0n))).threads;
    expect(thread!.frames).toHaveLength(1000);
    expect(thread).toMatchObject({ complete: false, why: "more than 1000 frames: the outer ones were not read" });
  });

  it("finds no thread where _PyRuntime is not in the core", () => {
    const { process, runtime } = twoThreads();
    process.memory.takeAway(runtime);
    expect(walk(process, runtime)).toEqual({ threads: [], gilHolder: null, notes: [`_PyRuntime at 0x${runtime.toString(16)} is not in the core: no interpreter could be found`] });
  });
});
