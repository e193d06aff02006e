/**
 * Go's own pc-line table read from fixture services built here, checked against Go's own
 * `go tool addr2line` on the same build: the function a pc is compiled in and its innermost file
 * and line; the same answers from the stripped (`-ldflags=-s -w`) and PIE builds of the same code,
 * and the calls the compiler inlined at a pc, as the runtime's traceback lists them; and each
 * frame's size at a pc as the runtime's own traceback measured it when the service crashed.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DumpFile, readElfCore } from "../../src/debuggers/dumpfile/index.js";
import { readGoLineTable, type GoPosition } from "../../src/debuggers/dumpfile/go-pclntab.js";
import { buildGoCore, goCulpritLine } from "../helpers/go.js";

/** The program's own functions and their entries, as `go tool nm` lists them. */
function mainFunctions(exe: string): { name: string; entry: bigint }[] {
  return execFileSync("go", ["tool", "nm", exe], { encoding: "utf8" })
    .split("\n")
    .map((line) => /^\s*([0-9a-f]+) T (main\.\S+)$/.exec(line))
    .flatMap((m) => (m?.[1] && m[2] ? [{ name: m[2], entry: BigInt(`0x${m[1]}`) }] : []));
}

/** `go tool addr2line`: per pc, the function and `file:line`. */
function addr2line(exe: string, pcs: bigint[]): { function: string; file: string; line: number }[] {
  const out = execFileSync("go", ["tool", "addr2line", exe], { input: pcs.map((pc) => `0x${pc.toString(16)}`).join("\n"), encoding: "utf8" }).trim().split("\n");
  return pcs.map((_, i) => {
    const [, file = "", line = "0"] = /^(.*):(\d+)$/.exec(out[i * 2 + 1] ?? "") ?? [];
    return { function: out[i * 2] ?? "", file, line: Number(line) };
  });
}

/** Where the kernel entered the process (the core's AT_ENTRY). */
function processEntry(core: string): bigint {
  const file = DumpFile.open(core);
  const entry = BigInt(readElfCore(file).auxv?.entry ?? "0x0");
  file.close();
  return entry;
}

/** The entry a program's file names: a PIE read as if loaded where it was linked. */
function fileEntry(exe: string): bigint {
  const file = DumpFile.open(exe);
  const entry = file.read(24, 8, "e_entry").readBigUInt64LE(0);
  file.close();
  return entry;
}

describe("Go's pc-line table", () => {
  it("names every pc of the program's own functions as go tool addr2line does", async () => {
    const built = await buildGoCore("nil-map");
    const table = readGoLineTable(built.exe, 0n);
    expect(table).not.toBeNull();
    const pcs = mainFunctions(built.exe).flatMap(({ entry }) => [entry, entry + 9n, entry + 31n]);
    expect(pcs.length).toBeGreaterThanOrEqual(12);
    const expected = addr2line(built.exe, pcs);
    const read = pcs.map((pc) => table?.framesAt(pc) ?? []);
    // addr2line names the function the code is compiled in, and the innermost position, inlined or not.
    expect(read.map((frames) => ({ function: frames.at(-1)?.function, file: frames[0]?.file, line: frames[0]?.line }))).toEqual(expected);
  }, 120_000);

  it("reads the same from the stripped build, and from a PIE where the core says it was loaded", async () => {
    const [plain, stripped, pie, pieStripped] = await Promise.all([
      buildGoCore("nil-map", { optimized: true }),
      buildGoCore("nil-map", { optimized: true, stripped: true }),
      buildGoCore("nil-map", { optimized: true, pie: true }),
      buildGoCore("nil-map", { optimized: true, pie: true, stripped: true }),
    ]);
    // Stripping drops the symbol table and DWARF, not a byte of code: the same pcs, the same answers
    // (each build compiled in its own folder, so the file is compared by its name).
    const named = (frames: GoPosition[] | null | undefined) => frames?.map((f) => ({ ...f, file: f.file?.split("/").at(-1) }));
    const pcs = mainFunctions(plain.exe).flatMap(({ entry }) => [entry, entry + 17n]);
    const fromPlain = pcs.map((pc) => named(readGoLineTable(plain.exe, 0n)?.framesAt(pc)));
    expect(fromPlain.every((frames) => frames?.at(-1)?.function.startsWith("main."))).toBe(true);
    expect(pcs.map((pc) => named(readGoLineTable(stripped.exe, 0n)?.framesAt(pc)))).toEqual(fromPlain);
    // A PIE's pcs are where its core says the loader put it.
    const bias = processEntry(pieStripped.core) - fileEntry(pieStripped.exe);
    expect(bias).toBeGreaterThan(0n);
    const piePcs = mainFunctions(pie.exe).flatMap(({ entry }) => [entry, entry + 17n]);
    const fromPie = piePcs.map((pc) => named(readGoLineTable(pie.exe, fileEntry(pie.exe))?.framesAt(pc)));
    expect(fromPie.map((frames) => frames?.at(-1)?.function)).toEqual(fromPlain.map((frames) => frames?.at(-1)?.function));
    const loaded = readGoLineTable(pieStripped.exe, processEntry(pieStripped.core));
    expect(piePcs.map((pc) => named(loaded?.framesAt(pc + bias)))).toEqual(fromPie);
    expect(loaded?.framesAt(piePcs[0] ?? 0n)).toBeNull();
    expect(readGoLineTable(pieStripped.exe, null)).toBeNull();
  }, 120_000);

  it("gives each frame's size at its pc as the runtime's traceback measured it (its fp and sp), PIE or not", async () => {
    for (const built of await Promise.all([buildGoCore("nil-pointer"), buildGoCore("index-range", { pie: true }), buildGoCore("nil-map", { optimized: true })])) {
      // GOTRACEBACK=crash prints each frame with the pc it was at and its stack pointer and frame pointer: fp = sp + size + 8.
      const measured = [...built.output.matchAll(/ fp=(0x[0-9a-f]+) sp=(0x[0-9a-f]+) pc=(0x[0-9a-f]+)$/gm)].map(([, fp, sp, pc]) => ({ pc: BigInt(pc ?? ""), size: Number(BigInt(fp ?? "") - BigInt(sp ?? "") - 8n) }));
      expect(measured.length, built.exe).toBeGreaterThanOrEqual(5);
      const table = readGoLineTable(built.exe, processEntry(built.core));
      expect(measured.map(({ pc }) => table?.frameSize(pc))).toEqual(measured.map(({ size }) => size));
      // Outside Go's code there is no size to give.
      expect(table?.frameSize(0x10n)).toBeNull();
    }
  }, 180_000);

  it("lists the calls inlined at a pc, innermost first, each at its line", async () => {
    const built = await buildGoCore("nil-map", { optimized: true });
    const table = readGoLineTable(built.exe, 0n);
    const { entry } = mainFunctions(built.exe).find((f) => f.name === "main.main") ?? { entry: 0n };
    // (*Cache).Put and load are inlined into main: somewhere in main.main the runtime says so.
    const inlined = Array.from({ length: 2048 }, (_, i) => table?.framesAt(entry + BigInt(i)) ?? []).find((frames) => frames[0]?.function === "main.(*Cache).Put");
    const source = readFileSync(built.source, "utf8").split("\n");
    const lineOf = (code: string) => source.findIndex((line) => line.includes(code)) + 1;
    expect(inlined?.map((f) => [f.function, f.line])).toEqual([
      ["main.(*Cache).Put", goCulpritLine("nil-map")],
      ["main.load", lineOf("c.Put(id")],
      ["main.main", lineOf("load(cache")],
    ]);
  }, 120_000);
});
