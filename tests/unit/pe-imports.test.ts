/**
 * `readPeImports` on hand-built PE files: what was written is read back (names, ordinals, the slots
 * where each is), and where a crafted file bends the layout, the table is read as the file has it:
 * a name that runs past its section's bytes, or to the end of the file; sections that overlap; a
 * section with no bytes in the file, or whose bytes are not there; names past the part of the table
 * read at once.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DumpFileError } from "../../src/debuggers/dumpfile/index.js";
import { readPeImports } from "../../src/debuggers/dumpfile/pe.js";

const dir = mkdtempSync(join(tmpdir(), "dumpdbg-pe-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface SectionSpec {
  rva: number;
  /** Where its bytes are in the file. */
  raw: number;
  bytes: Buffer;
  /** Its SizeOfRawData, when not the length of `bytes`. */
  rawSize?: number;
}

const OPTIONAL_HEADER_BYTES = 240;
const HEADERS_END = 0x40 + 24 + OPTIONAL_HEADER_BYTES;

/** A PE32+ file: DOS and PE headers, the import directory at `importRva`, then the sections' bytes where each says. */
function peFile(sections: SectionSpec[], importRva: number): string {
  const size = Math.max(HEADERS_END + sections.length * 40, ...sections.map((s) => s.raw + s.bytes.length));
  const file = Buffer.alloc(size);
  file.write("MZ", 0, "latin1");
  file.writeUInt32LE(0x40, 60);
  file.write("PE\0\0", 0x40, "latin1");
  file.writeUInt16LE(0x8664, 0x44);
  file.writeUInt16LE(sections.length, 0x46);
  file.writeUInt16LE(OPTIONAL_HEADER_BYTES, 0x54);
  const optional = 0x58;
  file.writeUInt16LE(0x20b, optional);
  file.writeUInt32LE(16, optional + 108);
  file.writeUInt32LE(importRva, optional + 112 + 8);
  file.writeUInt32LE(40, optional + 112 + 12);
  sections.forEach((section, i) => {
    const at = optional + OPTIONAL_HEADER_BYTES + i * 40;
    file.write(`.s${i}`, at, "latin1");
    file.writeUInt32LE(section.bytes.length, at + 8);
    file.writeUInt32LE(section.rva, at + 12);
    file.writeUInt32LE(section.rawSize ?? section.bytes.length, at + 16);
    file.writeUInt32LE(section.raw, at + 20);
    section.bytes.copy(file, section.raw);
  });
  const path = join(dir, `pe-${Math.random().toString(16).slice(2)}.exe`);
  writeFileSync(path, file);
  return path;
}

/**
 * An import section at `rva`: its descriptors, then each DLL's lookup table and import address
 * table (8 bytes a slot), then the names. A number imports by ordinal. `nameAt` moves the names elsewhere.
 */
function importSection(rva: number, dlls: { name: string; imports: (string | number)[] }[], nameAt?: { rva: number; bytes: Buffer }): { bytes: Buffer; slots: number[][] } {
  const descriptors = (dlls.length + 1) * 20;
  let tables = descriptors;
  const layout = dlls.map((dll) => {
    const lookup = tables;
    const iat = lookup + (dll.imports.length + 1) * 8;
    tables = iat + (dll.imports.length + 1) * 8;
    return { lookup, iat };
  });
  const names: Buffer[] = [];
  const nameBase = nameAt?.rva ?? rva + tables;
  let nameOffset = 0;
  const addName = (text: string, hint: boolean) => {
    const at = nameBase + nameOffset;
    const bytes = Buffer.concat([hint ? Buffer.alloc(2) : Buffer.alloc(0), Buffer.from(`${text}\0`, "latin1")]);
    names.push(bytes);
    nameOffset += bytes.length;
    return at;
  };
  const bytes = Buffer.alloc(tables);
  const slots: number[][] = [];
  dlls.forEach((dll, i) => {
    const { lookup, iat } = layout[i]!;
    bytes.writeUInt32LE(rva + lookup, i * 20);
    bytes.writeUInt32LE(addName(dll.name, false), i * 20 + 12);
    bytes.writeUInt32LE(rva + iat, i * 20 + 16);
    slots.push(dll.imports.map((_, j) => rva + iat + j * 8));
    dll.imports.forEach((entry, j) => {
      const value = typeof entry === "number" ? (1n << 63n) | BigInt(entry) : BigInt(addName(entry, true));
      bytes.writeBigUInt64LE(value, lookup + j * 8);
      bytes.writeBigUInt64LE(value, iat + j * 8);
    });
  });
  const nameBytes = Buffer.concat(names);
  if (nameAt) {
    nameBytes.copy(nameAt.bytes);
    return { bytes, slots };
  }
  return { bytes: Buffer.concat([bytes, nameBytes]), slots };
}

describe("readPeImports on a hand-built PE file", () => {
  it("reads each DLL's imports by name and by ordinal, at their slots", () => {
    const { bytes, slots } = importSection(0x3000, [
      { name: "KERNEL32.dll", imports: ["CreateFileA", "CloseHandle"] },
      { name: "WS2_32.dll", imports: [115, "WSACleanup"] },
    ]);
    const file = peFile([{ rva: 0x3000, raw: 0x400, bytes }], 0x3000);
    expect(readPeImports(file)).toEqual([
      { slot: slots[0]![0], dll: "KERNEL32.dll", name: "CreateFileA" },
      { slot: slots[0]![1], dll: "KERNEL32.dll", name: "CloseHandle" },
      { slot: slots[1]![0], dll: "WS2_32.dll", name: "#115" },
      { slot: slots[1]![1], dll: "WS2_32.dll", name: "WSACleanup" },
    ]);
  });

  it("reads a name that runs past its section's bytes on into the file, as the file has it", () => {
    const { bytes } = importSection(0x3000, [{ name: "a.dll", imports: ["SetLastError"] }]);
    // The section's SizeOfRawData stops two bytes into the last name; the rest of it follows in the file.
    const file = peFile([{ rva: 0x3000, raw: 0x400, bytes, rawSize: bytes.length - 11 }], 0x3000);
    expect(readPeImports(file).map((entry) => entry.name)).toEqual(["SetLastError"]);
  });

  it("reads an RVA from the section listed first where sections overlap, as every other read does", () => {
    // The import section spans 0x2000–0x4000, names included; a section listed before it claims
    // 0x3000–0x3100, where the names are, with other bytes: those are the names.
    const names = Buffer.alloc(0x100);
    const { bytes } = importSection(0x2000, [{ name: "real.dll", imports: ["Real"] }], { rva: 0x3000, bytes: names });
    const decoy = Buffer.alloc(0x2000, "decoy\0", "latin1");
    bytes.copy(decoy);
    const file = peFile(
      [
        { rva: 0x3000, raw: 0x3000, bytes: names },
        { rva: 0x2000, raw: 0x800, bytes: decoy },
      ],
      0x2000,
    );
    expect(readPeImports(file)).toEqual([{ slot: expect.any(Number), dll: "real.dll", name: "Real" }]);
  });

  it("reads a name that runs to the end of the file, in a section that claims more bytes than the file has", () => {
    const { bytes } = importSection(0x3000, [{ name: "a.dll", imports: ["LastInTheFile"] }]);
    // No NUL after the last name: the file ends there; the section claims 64 KiB more.
    const path = peFile([{ rva: 0x3000, raw: 0x400, bytes: bytes.subarray(0, bytes.length - 1), rawSize: bytes.length + 0x10000 }], 0x3000);
    expect(readPeImports(path).map((entry) => entry.name)).toEqual(["LastInTheFile"]);
  });

  it("reads a table whose section has no bytes in the file (SizeOfRawData 0) from where the section places it", () => {
    const { bytes } = importSection(0x3000, [{ name: "a.dll", imports: ["F", "G"] }]);
    const file = peFile([{ rva: 0x3000, raw: 0x400, bytes, rawSize: 0 }], 0x3000);
    expect(readPeImports(file).map((entry) => entry.name)).toEqual(["F", "G"]);
  });

  it("reads names more than a mebibyte past the import directory, beyond what is read at once", () => {
    const far = Buffer.alloc(0x100);
    const { bytes } = importSection(0x3000, [{ name: "far.dll", imports: ["FarAway", 7] }], { rva: 0x3000 + 0x120000, bytes: far });
    const section = Buffer.alloc(0x120000 + far.length);
    bytes.copy(section);
    far.copy(section, 0x120000);
    const file = peFile([{ rva: 0x3000, raw: 0x400, bytes: section }], 0x3000);
    expect(readPeImports(file).map((entry) => `${entry.dll} ${entry.name}`)).toEqual(["far.dll FarAway", "far.dll #7"]);
  });

  it("refuses an import section whose bytes lie past the end of the file", () => {
    const { bytes } = importSection(0x3000, [{ name: "a.dll", imports: ["F"] }]);
    const path = peFile([{ rva: 0x3000, raw: 0x400, bytes }], 0x3000);
    // The same file, its section's bytes cut off.
    const cut = join(dir, "cut.exe");
    writeFileSync(cut, readFileSync(path).subarray(0, 0x400));
    expect(() => readPeImports(cut)).toThrow(DumpFileError);
  });
});
