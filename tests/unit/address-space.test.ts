/**
 * Whether an address is code, read three ways: shown (true), shown not (false), unknown (null). A
 * file that is not here is unknown, never "no code"; the dump's own mappings decide before the
 * files found here.
 */
import { describe, expect, it } from "vitest";
import { codeAt, type AddressSpace } from "../../src/analyzers/address-space.js";
import type { MemoryRegion } from "../../src/debuggers/model.js";
import type { TargetSection } from "../../src/debuggers/probe.js";

const PROGRAM = "/srv/app/server";
const section = (name: string, start: number, end: number, source = "exec", loaded?: boolean): TargetSection => ({
  name,
  start: `0x${start.toString(16)}`,
  end: `0x${end.toString(16)}`,
  source,
  ...(loaded === undefined ? {} : { loaded }),
});
const region = (start: number, end: number, permissions: string | null, file: string | null = null): MemoryRegion => ({
  start: `0x${start.toString(16)}`,
  end: `0x${end.toString(16)}`,
  permissions,
  file,
  offset: file ? "0x0" : null,
});
const space = (parts: Partial<AddressSpace>): AddressSpace => ({
  files: { executable: PROGRAM, core: null, sections: parts.files?.sections ?? [] },
  regions: parts.regions ?? [],
  absentImages: parts.absentImages ?? [],
});

/** The program as a debugger shows it with its file here: code, read-only data, data. */
const programHere = [section(".text", 0x401000, 0x402000), section(".rodata", 0x402000, 0x403000), section(".data", 0x404000, 0x405000)];
/** The same program known only by its extent in a minidump's module list. */
const programImage = [section(".module_image", 0x400000, 0x406000, "exec", false)];

describe("codeAt", () => {
  it("shows code where a file here has a code section, and no code in its data or outside every mapping", () => {
    const here = space({ files: { executable: PROGRAM, core: null, sections: programHere } });
    expect(codeAt(here, 0x401234n)).toBe(true);
    expect(codeAt(here, 0x402010n)).toBe(false);
    expect(codeAt(here, 0x404010n)).toBe(false);
    expect(codeAt(here, 0x7f0000001000n)).toBe(false);
  });

  it("shows no code in the null page, whatever else is known", () => {
    expect(codeAt(space({}), 0x0n)).toBe(false);
    expect(codeAt(space({ files: { executable: null, core: null, sections: programImage } }), 0x18n)).toBe(false);
  });

  it("cannot tell inside a module whose file is not here, and cannot tell at all with no mappings recorded", () => {
    const imageOnly = space({ files: { executable: PROGRAM, core: null, sections: programImage } });
    expect(codeAt(imageOnly, 0x401234n)).toBeNull();
    // Outside every module, a dump that records no mappings may still have had code there (a JIT's).
    expect(codeAt(imageOnly, 0x7f0000001000n)).toBeNull();
    expect(codeAt(space({}), 0x401234n)).toBeNull();
  });

  it("takes the dump's own mappings first: their permissions are the process's", () => {
    const maps = [region(0x400000, 0x401000, "r--p", PROGRAM), region(0x401000, 0x402000, "r-xp", PROGRAM), region(0x7ffe0000, 0x7fff0000, "rw-p")];
    const imageAndMaps = space({ files: { executable: PROGRAM, core: null, sections: programImage }, regions: maps });
    expect(codeAt(imageAndMaps, 0x401234n)).toBe(true);
    expect(codeAt(imageAndMaps, 0x400010n)).toBe(false);
    expect(codeAt(imageAndMaps, 0x7ffe1000n)).toBe(false);
    // Mapped by nothing the dump records.
    expect(codeAt(imageAndMaps, 0x10000000n)).toBe(false);
  });

  it("reads Windows' protections and does not take a reservation for code", () => {
    const info = [region(0x140001000, 0x140002000, "r-x", "C:\\app\\server.exe"), region(0x200000, 0x210000, "---")];
    expect(codeAt(space({ regions: info }), 0x140001010n)).toBe(true);
    expect(codeAt(space({ regions: info }), 0x200010n)).toBe(false);
  });

  it("cannot tell inside a library of another build or missing here, unless the dump's mappings say", () => {
    const libc = { start: 0x7f0000000000n, end: 0x7f0000200000n };
    // The debugger loaded this machine's libc there: its sections are another build's layout.
    const otherBuild = [section(".data", 0x7f0000100000, 0x7f0000101000, "/lib/x86_64-linux-gnu/libc.so.6")];
    const foreign = space({ files: { executable: PROGRAM, core: null, sections: [...programHere, ...otherBuild] }, absentImages: [libc] });
    expect(codeAt(foreign, 0x7f0000100010n)).toBeNull();
    const withSegments = space({ ...foreign, regions: [region(0x7f0000100000, 0x7f0000180000, "r-x", "/lib/x86_64-linux-gnu/libc.so.6")] });
    expect(codeAt(withSegments, 0x7f0000100010n)).toBe(true);
  });
});
