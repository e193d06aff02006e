/**
 * dumpdbg's reader of Breakpad symbol files against binutils: programs built with real gcc/g++,
 * their .sym written from their DWARF by tests/helpers/breakpad-sym.ts (with INLINE records, as
 * dump_syms -d writes them, where a test asks), and every address the .sym names looked up in it
 * and in `addr2line -f -i -C` on the program itself: the same functions, files and lines, inlined
 * calls included.
 *
 * For C++ the oracle is llvm-symbolizer-16: binutils 2.40's addr2line gives code gcc 12 inlined
 * from a header (std::_Rb_tree::_M_erase, at stl_tree.h:1933 in the line table) the line of the
 * header but the file of the unit (cpp-null-deref.cpp:1933), and names an inlined
 * __static_initialization_and_destruction_0 by its caller. And C++ names are compared without
 * their parameter lists: dump_syms names a static function by its DWARF name (should_expire),
 * the symbolizers by its demangled symbol (should_expire(SessionManager&, int, long)).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadBreakpadSymbols, type BreakpadSymbols } from "../../src/debuggers/symbols/breakpad-sym.js";
import { writeBreakpadSymbols } from "../helpers/breakpad-sym.js";

const exec = promisify(execFile);
const PROGRAMS = fileURLToPath(new URL("../fixtures/programs/", import.meta.url));
const INLINED = fileURLToPath(new URL("../fixtures/inlined/packet-checksum.c", import.meta.url));

let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "dumpdbg-sym-reader-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Builds a program with the given flags, writes its .sym and loads it with the reader. */
async function build(source: string, out: string, flags: string[], inlines: boolean): Promise<{ exe: string; symText: string; symbols: BreakpadSymbols }> {
  const exe = path.join(dir, out);
  await exec(source.endsWith(".cpp") ? "g++" : "gcc", [...flags, "-o", exe, source]);
  const written = await writeBreakpadSymbols(exe, path.join(dir, "symbols"), { inlines });
  return { exe, symText: await readFile(written.file, "utf8"), symbols: await loadBreakpadSymbols(written.file) };
}

/**
 * The addresses a .sym names, to look up: each FUNC's and PUBLIC's first byte, each line record's
 * first and last byte. A PIE's .sym addresses are its own virtual addresses, which addr2line takes.
 */
function addressesOf(symText: string): bigint[] {
  const addresses = new Set<bigint>();
  for (const line of symText.split("\n")) {
    let m: RegExpExecArray | null;
    if ((m = /^(?:FUNC|PUBLIC) ([0-9a-f]+) /.exec(line))) addresses.add(BigInt(`0x${m[1]}`));
    else if ((m = /^([0-9a-f]+) ([0-9a-f]+) \d+ \d+$/.exec(line))) {
      const start = BigInt(`0x${m[1]}`);
      addresses.add(start);
      addresses.add(start + BigInt(`0x${m[2]}`) - 1n);
    }
  }
  return [...addresses].sort((a, b) => (a < b ? -1 : 1));
}

/** One frame as both sides are compared: `function file:line`, "?" for no line. */
type Frame = string;

/** addr2line's frames at each address, innermost first (-a marks where each address's frames begin). */
async function addr2line(exe: string, addresses: bigint[]): Promise<Map<bigint, Frame[]>> {
  const args = ["-a", "-f", "-i", "-C", "-e", exe, ...addresses.map((a) => `0x${a.toString(16)}`)];
  const { stdout } = await exec("addr2line", args, { maxBuffer: 64 * 1024 * 1024 });
  const frames = new Map<bigint, Frame[]>();
  let current: Frame[] = [];
  const lines = stdout.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (/^0x[0-9a-f]+$/.test(line)) {
      current = [];
      frames.set(BigInt(line), current);
    } else if (line !== "") {
      const place = (lines[++i] ?? "").replace(/ \(discriminator \d+\)$/, "");
      const m = /^(.*):(\d+|\?)$/.exec(place);
      const known = m && m[1] !== "??" && m[2] !== "0" && m[2] !== "?";
      current.push(`${line} ${known ? `${m[1]}:${m[2]}` : "?"}`);
    }
  }
  return frames;
}

/**
 * llvm-symbolizer-16's frames at each address, innermost first, names as `cppName` leaves them.
 * Its names are demangled by c++filt, as the .sym's are (dump_syms demangles as libiberty does):
 * LLVM's demangler names an inheriting constructor by its class, libiberty by the base's.
 */
async function llvmSymbolizer(exe: string, addresses: bigint[]): Promise<Map<bigint, Frame[]>> {
  const args = ["--output-style=JSON", "--no-demangle", `--obj=${exe}`, ...addresses.map((a) => `0x${a.toString(16)}`)];
  const { stdout } = await exec("llvm-symbolizer-16", args, { maxBuffer: 64 * 1024 * 1024 });
  const answers = JSON.parse(stdout) as Array<{ Address: string; Symbol: Array<{ FunctionName: string; FileName: string; Line: number }> }>;
  const mangled = [...new Set(answers.flatMap((a) => a.Symbol.map((f) => f.FunctionName)))];
  const demangled = (await exec("c++filt", mangled, { maxBuffer: 64 * 1024 * 1024 })).stdout.split("\n");
  const names = new Map(mangled.map((name, i) => [name, demangled[i] ?? name]));
  return new Map(
    answers.map((a) => [
      BigInt(a.Address),
      a.Symbol.map((f) => `${cppName(names.get(f.FunctionName) ?? f.FunctionName)} ${f.FileName !== "" && f.Line !== 0 ? `${f.FileName}:${f.Line}` : "?"}`),
    ]),
  );
}

/**
 * A C++ function's name as both sides can give it: no return type (a function template's
 * demangled name starts with one), no parameter list, no spaces, no clone's suffix (` (.isra.0)`)
 * and no `.cold` (the symbol of a function's cold part, which dump_syms names by the function).
 */
function cppName(name: string): string {
  const plain = name.replace(/ \(\.\w+\.\d+\)$/, "").replace(/\.cold$/, "");
  let depth = 0;
  let start = 0;
  let end = plain.length;
  for (let i = 0; i < plain.length; i++) {
    const c = plain[i];
    if (c === "<") depth++;
    else if (c === ">") depth--;
    else if (c === " " && depth === 0) start = i + 1;
    else if (c === "(" && depth === 0 && i > 0) {
      end = i;
      break;
    }
  }
  return plain.slice(start, end).replaceAll(" ", "");
}

function ours(symbols: BreakpadSymbols, address: bigint, name = (n: string) => n): Frame[] {
  return (symbols.lookup(address) ?? []).map((f) => `${name(f.function)} ${f.file !== null && f.line !== null ? `${f.file}:${f.line}` : "?"}`);
}

type Oracle = "addr2line" | "llvm-symbolizer";

/** The oracle's frames at each .sym address: `base` is where the program's first PT_LOAD is (a non-PIE's 0x400000). */
async function oracleFrames(oracle: Oracle, exe: string, addresses: bigint[], base: bigint): Promise<Map<bigint, Frame[]>> {
  const atLoad = addresses.map((a) => a + base);
  const frames = oracle === "addr2line" ? await addr2line(exe, atLoad) : await llvmSymbolizer(exe, atLoad);
  return new Map(addresses.map((a) => [a, frames.get(a + base) ?? []]));
}

/** Our frames with names as the oracle's are compared. */
function oursFor(oracle: Oracle, symbols: BreakpadSymbols, address: bigint): Frame[] {
  return ours(symbols, address, oracle === "llvm-symbolizer" ? cppName : undefined);
}

describe("the reader against addr2line (llvm-symbolizer for C++)", () => {
  it.each([
    ["null-deref.c", "nd-O0", ["-g", "-O0"], "addr2line", 0n],
    ["null-deref.c", "nd-O0-dwarf4-nopie", ["-gdwarf-4", "-O0", "-no-pie"], "addr2line", 0x400000n],
  ] as const)("%s (%s, %j): one frame at every address, %s's", async (fixture, out, flags, oracle, base) => {
    const { exe, symText, symbols } = await build(path.join(PROGRAMS, fixture), out, [...flags], false);
    const addresses = addressesOf(symText);
    expect(addresses.length).toBeGreaterThan(30);
    const theirs = await oracleFrames(oracle, exe, addresses, base);
    for (const address of addresses) {
      const expected = theirs.get(address) ?? [];
      expect(expected, `${oracle} at 0x${address.toString(16)}`).toHaveLength(1);
      // a PUBLIC has only a name: the oracle has the symbol table's, and no line either
      expect([address, oursFor(oracle, symbols, address)]).toEqual([address, expected]);
    }
    expect(symbols.damage).toEqual({ malformedLines: 0, overlongLines: 0, overlappingFunctions: 0, beyondCaps: 0 });
  });

  // libstdc++'s always_inline functions are inlined even at -O0
  it.each([
    [INLINED, "inlined-O2-flat", ["-g", "-O2"], "addr2line"],
    [path.join(PROGRAMS, "cpp-null-deref.cpp"), "cpp-O0-flat", ["-g", "-O0"], "llvm-symbolizer"],
    [path.join(PROGRAMS, "cpp-null-deref.cpp"), "cpp-O2-flat", ["-g", "-O2"], "llvm-symbolizer"],
  ] as const)("%s (%s, %j) without INLINE records: %s's outermost function at its innermost line", async (source, out, flags, oracle) => {
    const { exe, symText, symbols } = await build(source, out, [...flags], false);
    const addresses = addressesOf(symText);
    const theirs = await oracleFrames(oracle, exe, addresses, 0n);
    let inlined = 0;
    for (const address of addresses) {
      const expected = theirs.get(address) ?? [];
      if (expected.length > 1) inlined++;
      const [innermost, outermost] = [expected[0] ?? "", expected.at(-1) ?? ""];
      // frames are "<name> <place>", and a place has no space in these programs' paths
      const flattened = `${outermost.slice(0, outermost.lastIndexOf(" "))} ${innermost.slice(innermost.lastIndexOf(" ") + 1)}`;
      expect([address, oursFor(oracle, symbols, address)]).toEqual([address, [flattened]]);
    }
    expect(inlined, "the compiler inlined nothing in this program").toBeGreaterThan(0);
  });

  it.each([
    [INLINED, "inlined-O2", ["-g", "-O2"], "addr2line"],
    [INLINED, "inlined-O3-dwarf4", ["-gdwarf-4", "-O3"], "addr2line"],
    [path.join(PROGRAMS, "cpp-null-deref.cpp"), "cpp-O2-inlines", ["-g", "-O2"], "llvm-symbolizer"],
  ] as const)("%s (%s, %j) with INLINE records: %s's frames, inlined calls included", async (source, out, flags, oracle) => {
    const { exe, symText, symbols } = await build(source, out, [...flags], true);
    expect(symText).toMatch(/^INLINE_ORIGIN /m);
    expect(symText).toMatch(/^INLINE 1 /m);
    const addresses = addressesOf(symText);
    const theirs = await oracleFrames(oracle, exe, addresses, 0n);
    let deepest = 0;
    for (const address of addresses) {
      const expected = theirs.get(address) ?? [];
      deepest = Math.max(deepest, expected.length);
      expect([address, oursFor(oracle, symbols, address)]).toEqual([address, expected]);
    }
    expect(deepest).toBeGreaterThanOrEqual(3);
  });

  it("names byte_weight inlined into header_checksum inlined into checksum_all, at their source lines", async () => {
    const { exe, symbols } = await build(INLINED, "inlined-named", ["-g", "-O2"], true);
    const lines = (await readFile(INLINED, "utf8")).split("\n");
    const lineOf = (text: string): number => lines.findIndex((l) => l.includes(text)) + 1;
    const { stdout } = await exec("nm", ["--defined-only", exe]);
    const start = BigInt(`0x${/^([0-9a-f]+) T checksum_all$/m.exec(stdout)?.[1]}`);
    const deepest = [...Array(0x100).keys()].map((i) => symbols.lookup(start + BigInt(i)) ?? []).find((frames) => frames.length === 3);
    expect(deepest?.map((f) => [f.kind, f.function, f.file, f.line])).toEqual([
      ["inlined", "byte_weight", INLINED, lineOf("return packet->bytes[at]")],
      ["inlined", "header_checksum", INLINED, lineOf("sum += byte_weight(packet, i)")],
      ["function", "checksum_all", INLINED, lineOf("total += header_checksum(&packets[i])")],
    ]);
    expect(deepest?.map((f) => f.offset)).toEqual([null, null, expect.any(Number)]);
  });
});
