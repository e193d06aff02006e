/**
 * Where an ELF image's code lies once loaded, from its first page as a core holds it: what the stack
 * scan takes for code of a library the dump maps but this machine lacks. Checked against readelf's
 * reading of real files: a shared object (loaded anywhere) and a fixed-address executable.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { imageCodeRanges } from "../../src/debuggers/dumpfile/elf.js";

const PAGE = 4096;

/** readelf's executable LOAD segments: [vaddr, memsz]. */
function executableLoads(file: string): [bigint, bigint][] {
  const text = execFileSync("readelf", ["-lW", file], { encoding: "utf8" });
  return [...text.matchAll(/^\s*LOAD\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+R?W?\s?E\b/gim)].map((m) => [BigInt(m[1] as string), BigInt(m[2] as string)]);
}

const firstPage = (file: string) => readFileSync(file).subarray(0, PAGE);

describe("imageCodeRanges", () => {
  it("a shared object's code is its executable segments moved to where its first page is mapped", () => {
    const libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    const base = 0x7ffff7d80000n;
    const loads = executableLoads(libc);
    expect(loads.length).toBeGreaterThan(0);
    expect(imageCodeRanges(firstPage(libc), base)).toEqual(loads.map(([vaddr, size]) => ({ start: base + vaddr, end: base + vaddr + size })));
  });

  it.runIf(existsSync("/usr/bin/python3.11"))("a fixed-address executable's code is where its headers put it", () => {
    const python = "/usr/bin/python3.11";
    const loads = executableLoads(python);
    expect(imageCodeRanges(firstPage(python), 0x400000n)).toEqual(loads.map(([vaddr, size]) => ({ start: vaddr, end: vaddr + size })));
  });

  it("a page that is no ELF image, or whose header table runs past it, gives none", () => {
    expect(imageCodeRanges(Buffer.alloc(PAGE), 0x1000n)).toEqual([]);
    expect(imageCodeRanges(firstPage("/usr/lib/x86_64-linux-gnu/libc.so.6").subarray(0, 80), 0x1000n)).toEqual([]);
  });
});
