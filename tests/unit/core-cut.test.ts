/**
 * A core cut short, on a hand-built core cut at several offsets: what it lost (each segment, what
 * it held, the ranges a debugger must not read), its memory read only as far as the file goes, the
 * report's and triage's words for it, and the commands that keep gdb from reading a lost page
 * from the mapped file on disk.
 */
import { mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

import { cutCore } from "../../src/analyzers/triage/options.js";
import { inspectDump } from "../../src/debuggers/dump.js";
import { coreMemory, DumpFile, readElfCore, type CoreCut } from "../../src/debuggers/dumpfile/index.js";
import { gdbLoadCommands, gdbMemoryCommands } from "../../src/debuggers/gdb/arguments.js";
import { cutText } from "../../src/report/cut.js";
import { AT_ENTRY, buildElfCore, elfImagePage, type CoreSpec } from "../helpers/dump-writers.js";

const dir = mkdtempSync(join(tmpdir(), "dumpdbg-core-cut-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;

const EXE = "/usr/sbin/inventoryd";
const LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6";
const STACK = 0x7ffd10000000n;
const HEAP = 0x5600_0000_0000n;

/** inventoryd's worker (LWP 311) faulted at 0x18; its stack, the heap and libc's written data follow the notes. */
function spec(): CoreSpec {
  return {
    threads: [
      { lwp: 311, signal: 11, registers: { rip: 0x401136n, rsp: STACK + 0x800n } },
      { lwp: 310, signal: 0, registers: { rip: 0x7f0000001000n, rsp: STACK + 0xf00n } },
    ],
    siginfo: { signo: 11, code: 1, address: 0x18n },
    process: { pid: 310, uid: 1000, name: "inventoryd", args: EXE },
    auxv: [[AT_ENTRY, 0x401020n]],
    files: [
      { start: 0x400000n, end: 0x402000n, pageOffset: 0n, path: EXE },
      { start: 0x7f0000000000n, end: 0x7f0000002000n, pageOffset: 0n, path: LIBC },
      { start: 0x7f0000002000n, end: 0x7f0000003000n, pageOffset: 2n, path: LIBC },
    ],
    pageSize: 4096n,
    loads: [
      { vaddr: 0x400000n, flags: 4, data: elfImagePage(Buffer.alloc(20, 1), 256) },
      // Code the core never held (filesz 0): read from the program's file, rightly.
      { vaddr: 0x401000n, flags: 5, data: Buffer.alloc(0) },
      { vaddr: HEAP, flags: 6, data: Buffer.alloc(0x400, 0xaa) },
      { vaddr: 0x7f0000000000n, flags: 4, data: elfImagePage(Buffer.alloc(20, 2), 256) },
      { vaddr: 0x7f0000001000n, flags: 5, data: Buffer.alloc(0) },
      { vaddr: 0x7f0000002000n, flags: 6, data: Buffer.alloc(0x200, 0xbb) },
      { vaddr: STACK, flags: 6, data: Buffer.alloc(0x1000, 0xcc) },
    ],
  };
}

const core = buildElfCore(spec());
const notesEnd = core.noteSegment.offset + core.noteSegment.size;
/** Where each segment's bytes lie in the file, in the file's order. */
const segmentOffsets = (() => {
  const offsets: number[] = [];
  for (let i = 0; i < core.phnum; i++) {
    const at = core.phoff + i * 56;
    if (core.bytes.readUInt32LE(at) === 1) offsets.push(Number(core.bytes.readBigUInt64LE(at + 8)));
  }
  return offsets;
})();
const stackOffset = segmentOffsets.at(-1)!;

function cutAt(bytes: number): { path: string; cut: CoreCut | null } {
  const path = join(dir, `core-${serial++}`);
  writeFileSync(path, core.bytes.subarray(0, bytes));
  const file = new DumpFile(openSync(path, "r"));
  try {
    return { path, cut: readElfCore(file).cut };
  } finally {
    file.close();
  }
}

describe("coreCut", () => {
  it("finds nothing cut in a whole core", () => {
    expect(cutAt(core.bytes.length).cut).toBeNull();
  });

  it("says the notes are lost for a cut inside them, and inspectDump refuses such a core in one line", () => {
    const { path, cut } = cutAt(core.noteSegment.offset + 8);
    expect(cut).toMatchObject({ notesLost: true, notesEnd });
    expect(() => inspectDump(path)).toThrow(/^\S+ is truncated inside its notes \(the file ends at byte \d+, its notes at \d+\): the threads' registers and the signal are lost; copy the whole core again$/);
  });

  it("lists every segment lost just after the notes, each with what it held, and keeps the signal", () => {
    const { path, cut } = cutAt(notesEnd);
    expect(cut?.notesLost).toBe(false);
    expect(cut?.lost.map((segment) => [segment.start, segment.whole, segment.holds])).toEqual([
      ["0x400000", true, EXE],
      [`0x${HEAP.toString(16)}`, true, null],
      ["0x7f0000000000", true, LIBC],
      ["0x7f0000002000", true, LIBC],
      [`0x${STACK.toString(16)}`, true, "the stacks of LWPs 311, 310"],
    ]);
    // Merged across gaps where no readable memory lies: the code segments (filesz 0) stay readable.
    expect(cut?.unreadable).toEqual([
      { start: 0x400000n, end: 0x400100n },
      { start: HEAP, end: 0x7f0000000100n },
      { start: 0x7f0000002000n, end: STACK + 0x1000n },
    ]);
    expect(inspectDump(path).facts.stopReason).toMatchObject({ signo: 11, address: "0x18", thread: 311 });
  });

  it("keeps the first part of a segment cut in its middle, and reads memory only as far as the file goes", () => {
    const { path, cut } = cutAt(stackOffset + 0x900);
    expect(cut?.lost).toEqual([{ start: `0x${STACK.toString(16)}`, end: `0x${(STACK + 0x1000n).toString(16)}`, permissions: "rw-", lostBytes: 0x700, whole: false, holds: "the stacks of LWPs 311, 310" }]);
    expect(cut?.unreadable).toEqual([{ start: STACK + 0x900n, end: STACK + 0x1000n }]);
    const file = DumpFile.open(path);
    try {
      const memory = coreMemory(file);
      expect(memory.bytes(STACK + 0x8f0n, 0x100)?.length).toBe(0x10);
      expect(memory.bytes(STACK + 0x900n, 8)).toBeNull();
      expect([memory.lost(STACK + 0x8ffn), memory.lost(STACK + 0x900n), memory.lost(0x401000n)]).toEqual([false, true, false]);
    } finally {
      file.close();
    }
  });
});

describe("a cut in words", () => {
  it("says where the core ends and names the segments it lost, the rest counted", () => {
    const { cut } = cutAt(notesEnd);
    const { cut: reported, missing, lostMemory } = cutCore(cut!);
    expect(reported).toMatchObject({ at: notesEnd, expectedBytes: core.bytes.length, lostBytes: 0x100 + 0x400 + 0x100 + 0x200 + 0x1000, moreSegments: 0 });
    expect(cutText(reported)).toBe(
      `cut short at byte ${notesEnd.toLocaleString("en-US")} of ${core.bytes.length.toLocaleString("en-US")}: 5 segments lost (6,144 bytes): ${EXE} (0x400000-0x400100, 256 bytes), rw- memory at 0x560000000000-0x560000000400 (1,024 bytes), ${LIBC} (0x7f0000000000-0x7f0000000100, 256 bytes), ${LIBC} (0x7f0000002000-0x7f0000002200, 512 bytes) and 1 other segment`,
    );
    expect(missing[0]).toMatch(/^the core is cut short at byte .*: the signal, the registers and the mappings come from its notes, .* is unknown, not zeros/);
    expect([lostMemory(HEAP + 0x10n), lostMemory(0x401000n)]).toEqual([true, false]);
  });

  it("lists 32 segments in the report and counts the others", () => {
    const lost = Array.from({ length: 40 }, (_, i) => ({ start: `0x${(0x1000 * i).toString(16)}`, end: `0x${(0x1000 * i + 0x1000).toString(16)}`, permissions: "rw-", lostBytes: 0x1000, whole: true, holds: null }));
    const { cut } = cutCore({ fileBytes: 100, expectedBytes: 200_000, notesLost: false, notesEnd: 90, lost, unreadable: [] });
    expect([cut.segments.length, cut.moreSegments, cut.lostBytes]).toEqual([32, 8, 40 * 0x1000]);
    expect(cutText(cut)).toMatch(/40 segments lost \(163,840 bytes\): .* and 36 other segments$/);
  });
});

describe("gdbMemoryCommands", () => {
  it("gives gdb nothing for a whole core", () => {
    expect(gdbMemoryCommands([])).toEqual([]);
    expect(gdbLoadCommands("/tmp/core", null)).toHaveLength(2);
  });

  it("declares everything but the lost ranges readable, before the core is loaded", () => {
    const commands = gdbMemoryCommands([{ start: 0x1000n, end: 0x2000n }, { start: 0x5000n, end: 0x6000n }]);
    expect(commands).toEqual([
      '-interpreter-exec console "set mem inaccessible-by-default on"',
      '-interpreter-exec console "mem 0x0 0x1000 rw"',
      '-interpreter-exec console "mem 0x2000 0x5000 rw"',
      '-interpreter-exec console "mem 0x6000 0 rw"',
    ]);
    const load = gdbLoadCommands("/tmp/core", "/usr/sbin/inventoryd", [{ start: 0x1000n, end: 0x2000n }]);
    expect(load.at(-1)).toMatch(/core-file/);
    expect(load.slice(2, -1)).toHaveLength(3);
  });

  it("runs a range that ends at the top of memory to its end", () => {
    expect(gdbMemoryCommands([{ start: 0xffffffffff600000n, end: 1n << 64n }]).at(-1)).toBe('-interpreter-exec console "mem 0x0 0xffffffffff600000 rw"');
  });
});
