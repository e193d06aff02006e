/**
 * dumpdbg's reader of Breakpad symbol files (src/debuggers/symbols/): every record kind on its
 * own, lookups at the edges of FUNCs, line records, inlined calls two deep and PUBLICs, and what
 * an untrusted file may do (malformed lines, an overlong line, no MODULE line, too many bytes).
 * The files are written by hand, in the shapes symbol_files.md gives and Google's dump_syms writes.
 */
import { mkdtemp, rm, truncate, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SymbolFileError, loadBreakpadSymbols, type BreakpadSymbols } from "../../src/debuggers/symbols/breakpad-sym.js";
import { parseSymRecord } from "../../src/debuggers/symbols/sym-records.js";

let dir = "";
let written = 0;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "dumpdbg-sym-reader-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function symFile(text: string): Promise<string> {
  const file = path.join(dir, `${written++}.sym`);
  await writeFile(file, text);
  return file;
}

async function load(lines: string[]): Promise<BreakpadSymbols> {
  return loadBreakpadSymbols(await symFile(`${lines.join("\n")}\n`));
}

const MODULE = "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 app";

/** A program whose main has an inlined call (outer_inline) that has one of its own (inner_inline). */
const INLINED = [
  MODULE,
  "INFO CODE_ID 0123456789abcdef0123",
  "FILE 0 /src/app.c",
  "FILE 1 /src/inl.h",
  "INLINE_ORIGIN 0 outer_inline",
  "INLINE_ORIGIN 1 inner_inline(int)",
  "PUBLIC 500 0 _start",
  "FUNC 1000 40 0 main",
  "INLINE 0 10 0 0 1010 20",
  "INLINE 1 30 1 1 1018 8",
  "1000 10 5 0",
  "1010 8 31 1",
  "1018 8 40 1",
  "1020 10 32 1",
  "1030 10 11 0",
  "FUNC m 2000 10 0 folded_a",
  "2000 8 7 0",
  "PUBLIC 3000 0 exported",
  "PUBLIC m 3100 4 exported too",
  "STACK CFI INIT 1000 40 .cfa: $rsp 8 + .ra: .cfa -8 + ^",
  "STACK CFI 1001 .cfa: $rsp 16 +",
  "STACK WIN 4 1000 40 0 0 0 0 0 0 1 $eip 4 + ^",
  "FUTURE_RECORD whatever it says",
];

describe("parseSymRecord", () => {
  it.each([
    [MODULE, { kind: "module", os: "Linux", arch: "x86_64", id: "0123456789ABCDEF0123456789ABCDEF0", name: "app" }],
    ["MODULE windows x86 ABCDEF01234567890ABCDEF0123456781 my app.pdb", { kind: "module", os: "windows", arch: "x86", id: "ABCDEF01234567890ABCDEF0123456781", name: "my app.pdb" }],
    ["INFO CODE_ID 5F3A1B2C4000 server.exe", { kind: "code-id", codeId: "5F3A1B2C4000" }],
    ["INFO GENERATOR mozilla/dump_syms 2.3.4", { kind: "ignored" }],
    ["FILE 12 C:\\src\\a b.cpp", { kind: "file", id: 12, path: "C:\\src\\a b.cpp" }],
    ["FUNC 1a2b 30 8 ns::f(int, char const*) const", { kind: "func", address: 0x1a2b, size: 0x30, name: "ns::f(int, char const*) const" }],
    ["FUNC m 1a2b 30 0 folded", { kind: "func", address: 0x1a2b, size: 0x30, name: "folded" }],
    ["1a2b 4 120 3", { kind: "line", address: 0x1a2b, size: 4, line: 120, file: 3 }],
    ["FACE 4 1 0", { kind: "line", address: 0xface, size: 4, line: 1, file: 0 }],
    ["FUNC 10 4 0 grüßen::überprüfen()", { kind: "func", address: 0x10, size: 4, name: "grüßen::überprüfen()" }],
    ["INLINE_ORIGIN 7 std::vector<int>::size() const", { kind: "inline-origin", id: 7, name: "std::vector<int>::size() const" }],
    ["INLINE 1 42 3 7 1a30 4 1a40 8", { kind: "inline", depth: 1, callLine: 42, callFile: 3, origin: 7, ranges: [0x1a30, 4, 0x1a40, 8] }],
    ["PUBLIC 1a00 0 _start", { kind: "public", address: 0x1a00, name: "_start" }],
    ["PUBLIC m 1a00 10 operator new(unsigned long)", { kind: "public", address: 0x1a00, name: "operator new(unsigned long)" }],
    ["STACK CFI INIT 1a00 30 .cfa: $rsp 8 +", { kind: "ignored" }],
    ["STACK WIN 4 1a00 30 0 0 0 0 0 0 1 $eip", { kind: "ignored" }],
    ["SOMETHING_NEW 1 2 3", { kind: "ignored" }],
  ])("%s", (line, record) => {
    expect(parseSymRecord(Buffer.from(line))).toEqual(record);
  });

  it.each([
    "MODULE Linux x86_64 0123",
    "FILE x /src/a.c",
    "FILE 3",
    "FUNC 1000 zz 0 f",
    "FUNC 1000 10 0",
    "FUNC 1000 10 0 ",
    "FUNC 10000000000000000 10 0 too_far",
    "PUBLIC 1000 _start",
    "1000 10 -5 0",
    "1000 10 5",
    "1000 10 5 0 extra",
    "1000 10 5 99999999999",
    "1000 10 5 4294967296",
    "1000  10 5 0",
    "1000 10 5 0 ",
    "INLINE 0 10 0 0 1010",
    "INLINE 0 10 0 1010 20",
    "INLINE 0 10 0 0 1010 2g",
    "INLINE_ORIGIN x name",
    "INFO CODE_ID not-hex",
  ])("%s is malformed", (line) => {
    expect(parseSymRecord(Buffer.from(line))).toEqual({ kind: "malformed", func: line.startsWith("FUNC") });
  });
});

describe("loadBreakpadSymbols", () => {
  it("reads the module and its code id, skipping unwind rules and records it does not know", async () => {
    const symbols = await load(INLINED);
    expect(symbols.module).toEqual({ os: "Linux", arch: "x86_64", id: "0123456789ABCDEF0123456789ABCDEF0", name: "app" });
    expect(symbols.codeId).toBe("0123456789ABCDEF0123");
    expect(symbols.damage).toEqual({ malformedLines: 0, overlongLines: 0, overlappingFunctions: 0, beyondCaps: 0 });
  });

  it("names an address in a FUNC with its line record's file and line and its offset in the FUNC", async () => {
    const symbols = await load(INLINED);
    expect(symbols.lookup(0x1000)).toEqual([{ kind: "function", function: "main", file: "/src/app.c", line: 5, offset: 0 }]);
    expect(symbols.lookup(0x100f)).toEqual([{ kind: "function", function: "main", file: "/src/app.c", line: 5, offset: 0xf }]);
    expect(symbols.lookup(0x103f)).toEqual([{ kind: "function", function: "main", file: "/src/app.c", line: 11, offset: 0x3f }]);
    expect(symbols.lookup(0x2007)).toEqual([{ kind: "function", function: "folded_a", file: "/src/app.c", line: 7, offset: 7 }]);
  });

  it("gives no file or line where the FUNC has no line record", async () => {
    const symbols = await load(INLINED);
    expect(symbols.lookup(0x2008)).toEqual([{ kind: "function", function: "folded_a", file: null, line: null, offset: 8 }]);
  });

  it("names inlined calls innermost first: the line record for the innermost, the call sites for the frames outside it", async () => {
    const symbols = await load(INLINED);
    expect(symbols.lookup(0x101a)).toEqual([
      { kind: "inlined", function: "inner_inline(int)", file: "/src/inl.h", line: 40, offset: null },
      { kind: "inlined", function: "outer_inline", file: "/src/inl.h", line: 30, offset: null },
      { kind: "function", function: "main", file: "/src/app.c", line: 10, offset: 0x1a },
    ]);
    // either side of the inner call: only the outer one
    for (const address of [0x1017, 0x1020]) {
      expect(symbols.lookup(address)?.map((f) => [f.function, f.line])).toEqual([
        ["outer_inline", address === 0x1017 ? 31 : 32],
        ["main", 10],
      ]);
    }
    // the first byte of each inlined range, and the first past the outer one
    expect(symbols.lookup(0x1010)?.map((f) => f.function)).toEqual(["outer_inline", "main"]);
    expect(symbols.lookup(0x1018)?.map((f) => f.function)).toEqual(["inner_inline(int)", "outer_inline", "main"]);
    expect(symbols.lookup(0x102f)?.map((f) => f.function)).toEqual(["outer_inline", "main"]);
    expect(symbols.lookup(0x1030)).toEqual([{ kind: "function", function: "main", file: "/src/app.c", line: 11, offset: 0x30 }]);
  });

  it("names an address under a PUBLIC up to the next FUNC or PUBLIC, with no file or line", async () => {
    const symbols = await load(INLINED);
    expect(symbols.lookup(0x4ff)).toBeNull();
    expect(symbols.lookup(0x500)).toEqual([{ kind: "public", function: "_start", file: null, line: null, offset: 0 }]);
    expect(symbols.lookup(0xfff)).toEqual([{ kind: "public", function: "_start", file: null, line: null, offset: 0xaff }]);
    // past main's end: main started after _start, so _start does not reach here
    expect(symbols.lookup(0x1040)).toBeNull();
    expect(symbols.lookup(0x2010)).toBeNull();
    expect(symbols.lookup(0x3000)?.[0]).toMatchObject({ function: "exported", offset: 0 });
    expect(symbols.lookup(0x30ff)?.[0]).toMatchObject({ function: "exported", offset: 0xff });
    expect(symbols.lookup(0x3100)?.[0]).toMatchObject({ function: "exported too", offset: 0 });
    expect(symbols.lookup(0x100000)?.[0]).toMatchObject({ function: "exported too", offset: 0x100000 - 0x3100 });
  });

  it("takes the address as a bigint or a number, and finds nothing at one no module has", async () => {
    const symbols = await load(INLINED);
    expect(symbols.lookup(0x101an)).toEqual(symbols.lookup(0x101a));
    expect(symbols.lookup(-1)).toBeNull();
    expect(symbols.lookup(-1n)).toBeNull();
    expect(symbols.lookup(1.5)).toBeNull();
    expect(symbols.lookup(2n ** 64n)).toBeNull();
  });

  it("reads Windows line endings", async () => {
    const symbols = await loadBreakpadSymbols(await symFile(`${INLINED.join("\r\n")}\r\n`));
    expect(symbols.module.name).toBe("app");
    expect(symbols.lookup(0x101a)?.map((f) => `${f.function} ${f.file}:${f.line}`)).toEqual([
      "inner_inline(int) /src/inl.h:40",
      "outer_inline /src/inl.h:30",
      "main /src/app.c:10",
    ]);
  });

  it("skips and counts malformed lines, and the line and INLINE records that belong to no FUNC", async () => {
    const symbols = await load([
      MODULE,
      "FILE 0 /src/a.c",
      "1000 4 1 0", // before any FUNC
      "INLINE 0 1 0 0 1000 4", // before any FUNC
      "FUNC 1000 zz 0 broken",
      "FUNC 2000 20 0 good",
      "2000 10 3 0",
      "2010 oops 4 0",
      "1f00 4 2 0", // before its FUNC's start
      "INLINE 0 9 0 5 1f00 4", // before its FUNC's start
      "2010 10 4 0",
      "PUBLIC zz 0 bad",
      "FUNC 3000 1g 0 broken too",
      "3004 4 8 0", // under the broken FUNC, not the one before it
    ]);
    expect(symbols.damage.malformedLines).toBe(9);
    expect(symbols.lookup(0x2011)).toEqual([{ kind: "function", function: "good", file: "/src/a.c", line: 4, offset: 0x11 }]);
    expect(symbols.lookup(0x1000)).toBeNull();
  });

  it("names an inlined call whose INLINE_ORIGIN is missing by its number, and a file it does not define not at all", async () => {
    const symbols = await load([MODULE, "FUNC 1000 10 0 f", "INLINE 0 3 9 4 1000 10", "1000 10 2 8"]);
    expect(symbols.lookup(0x1004)).toEqual([
      { kind: "inlined", function: "<inline origin 4>", file: null, line: 2, offset: null },
      { kind: "function", function: "f", file: null, line: 3, offset: 4 },
    ]);
  });

  it("finds an inlined call in each of its ranges, and not between them", async () => {
    const symbols = await load([MODULE, "FILE 0 /a.c", "INLINE_ORIGIN 0 g", "FUNC 1000 40 0 f", "INLINE 0 5 0 0 1004 4 1020 8", "1000 40 9 0"]);
    const names = (address: number): string[] | undefined => symbols.lookup(address)?.map((f) => f.function);
    expect([0x1003, 0x1004, 0x1007, 0x1008, 0x101f, 0x1020, 0x1027, 0x1028].map(names)).toEqual([
      ["f"],
      ["g", "f"],
      ["g", "f"],
      ["f"],
      ["f"],
      ["g", "f"],
      ["g", "f"],
      ["f"],
    ]);
  });

  it("treats line 0 as no line", async () => {
    const symbols = await load([MODULE, "FILE 0 /a.c", "FUNC 1000 10 0 f", "1000 10 0 0"]);
    expect(symbols.lookup(0x1000)?.[0]).toMatchObject({ file: "/a.c", line: null });
  });

  it("skips a line longer than its limit whole, and reads on after it", async () => {
    const symbols = await load([MODULE, `FUNC 1000 10 0 ${"x".repeat(200_000)}`, "1000 10 1 0", "FUNC 2000 10 0 after", "2000 10 2 0"]);
    expect(symbols.damage.overlongLines).toBe(1);
    expect(symbols.damage.malformedLines).toBe(1); // the overlong FUNC's line record, under no FUNC
    expect(symbols.lookup(0x1000)).toBeNull();
    expect(symbols.lookup(0x2000)?.[0]).toMatchObject({ function: "after", line: 2 });
  });

  it("keeps the first of two overlapping FUNCs, and reads line and inline records written out of order", async () => {
    const symbols = await load([
      MODULE,
      "FILE 0 /a.c",
      "INLINE_ORIGIN 0 g",
      "FUNC 1000 40 0 first",
      "INLINE 0 7 0 0 1020 10",
      "1030 10 4 0",
      "1000 10 1 0",
      "1020 10 3 0",
      "1010 10 2 0",
      "FUNC 1020 10 0 inside_first",
      "FUNC 1040 10 0 next",
      "1040 10 9 0",
    ]);
    expect(symbols.damage.overlappingFunctions).toBe(1);
    expect([0x1000, 0x1010, 0x1020, 0x1030].map((a) => symbols.lookup(a)?.map((f) => `${f.function}:${f.line}`).join(" < "))).toEqual([
      "first:1",
      "first:2",
      "g:3 < first:7",
      "first:4",
    ]);
    expect(symbols.lookup(0x1040)?.[0]).toMatchObject({ function: "next", line: 9 });
  });

  it("reads a file of many chunks, lines running across the chunks' edges", async () => {
    const lines = [MODULE, "FILE 0 /big.c"];
    for (let i = 0; i < 60_000; i++) lines.push(`FUNC ${(0x10000 + i * 0x20).toString(16)} 20 0 function_number_${i}`, `${(0x10000 + i * 0x20).toString(16)} 20 ${i + 1} 0`);
    const symbols = await load(lines);
    expect(symbols.damage).toEqual({ malformedLines: 0, overlongLines: 0, overlappingFunctions: 0, beyondCaps: 0 });
    for (const i of [0, 1, 29_999, 31_337, 59_999]) {
      expect(symbols.lookup(0x10000 + i * 0x20 + 0x1f)).toEqual([{ kind: "function", function: `function_number_${i}`, file: "/big.c", line: i + 1, offset: 0x1f }]);
    }
    expect(symbols.lookup(0x10000 + 60_000 * 0x20)).toBeNull();
  });

  it("refuses a file that is not a symbol file, is empty, is missing or is too large", async () => {
    await expect(loadBreakpadSymbols(await symFile("FUNC 1000 10 0 f\n"))).rejects.toThrow(/first line is no MODULE record/);
    await expect(loadBreakpadSymbols(await symFile(`${"M".repeat(100_000)}\n${MODULE}\n`))).rejects.toThrow(SymbolFileError);
    await expect(loadBreakpadSymbols(await symFile(""))).rejects.toThrow(/is empty/);
    await expect(loadBreakpadSymbols(path.join(dir, "missing.sym"))).rejects.toThrow(/cannot be read: ENOENT/);
    // a sparse file: its size is checked before a byte of it is read
    const huge = await symFile(`${MODULE}\n`);
    await truncate(huge, 513 * 1024 * 1024);
    await expect(loadBreakpadSymbols(huge)).rejects.toThrow(/more than the \d+ a symbol file may have/);
  });
});
