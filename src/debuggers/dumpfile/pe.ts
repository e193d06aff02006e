/**
 * A Windows program's import table, read from its PE file: which function of which DLL each import
 * address table slot holds once loaded (`__imp__assert` → msvcrt.dll `_assert`). A minidump read
 * without the system DLLs shows only that the program called through a slot; the table names the
 * function. The file is untrusted: every field is checked against its record, counts are capped.
 */
import { DumpFile, DumpFileError, Fields } from "./file.js";

export interface PeImport {
  /** The slot's offset from the image base (its RVA). */
  slot: number;
  dll: string;
  /** The function's name, or `#N` for an import by ordinal. */
  name: string;
}

const MAX_SECTIONS = 96;
const MAX_DESCRIPTORS = 512;
const MAX_IMPORTS_PER_DLL = 8192;
const MAX_NAME = 512;
const IMAGE_DIRECTORY_ENTRY_IMPORT = 1;
const PE32_PLUS = 0x20b;

interface Section {
  rva: number;
  size: number;
  raw: number;
}

export function readPeImports(path: string): PeImport[] {
  const file = DumpFile.open(path);
  try {
    return imports(file);
  } finally {
    file.close();
  }
}

function imports(file: DumpFile): PeImport[] {
  const dos = new Fields(file.read(0, 64, "the DOS header"), "the DOS header");
  if (dos.u16(0) !== 0x5a4d) throw new DumpFileError("not a PE file: no MZ header");
  const pe = dos.u32(60);
  const header = new Fields(file.read(pe, 24, "the PE header"), "the PE header");
  if (header.u32(0) !== 0x4550) throw new DumpFileError("not a PE file: no PE signature");
  const sectionCount = header.u16(6);
  const optionalSize = header.u16(20);
  if (sectionCount > MAX_SECTIONS) throw new DumpFileError(`the PE file claims ${sectionCount} sections`);
  const optional = new Fields(file.read(pe + 24, optionalSize, "the optional header"), "the optional header");
  const plus = optional.u16(0) === PE32_PLUS;
  const directories = plus ? 112 : 96;
  if (!optional.has(directories + (IMAGE_DIRECTORY_ENTRY_IMPORT + 1) * 8, 0)) return [];
  const importRva = optional.u32(directories + IMAGE_DIRECTORY_ENTRY_IMPORT * 8);
  if (importRva === 0) return [];
  const table = new Fields(file.read(pe + 24 + optionalSize, sectionCount * 40, "the section table"), "the section table");
  const sections: Section[] = Array.from({ length: sectionCount }, (_, i) => ({ rva: table.u32(i * 40 + 12), size: Math.max(table.u32(i * 40 + 8), table.u32(i * 40 + 16)), raw: table.u32(i * 40 + 20) }));
  const offsetOf = (rva: number) => {
    const section = sections.find((s) => s.rva <= rva && rva < s.rva + s.size);
    if (!section) throw new DumpFileError(`RVA 0x${rva.toString(16)} is in no section`);
    return section.raw + (rva - section.rva);
  };
  const cString = (rva: number) => {
    const at = offsetOf(rva);
    const bytes = file.read(at, Math.min(MAX_NAME, file.size - at), "a name in the import table");
    const end = bytes.indexOf(0);
    return bytes.subarray(0, end < 0 ? bytes.length : end).toString("latin1");
  };
  const wordSize = plus ? 8 : 4;
  const result: PeImport[] = [];
  for (let i = 0; i < MAX_DESCRIPTORS; i++) {
    const descriptor = new Fields(file.read(offsetOf(importRva + i * 20), 20, "an import descriptor"), "an import descriptor");
    const lookup = descriptor.u32(0) || descriptor.u32(16);
    const nameRva = descriptor.u32(12);
    const slots = descriptor.u32(16);
    if (nameRva === 0 && slots === 0) break;
    const dll = cString(nameRva);
    for (let j = 0; j < MAX_IMPORTS_PER_DLL; j++) {
      const entry = new Fields(file.read(offsetOf(lookup + j * wordSize), wordSize, "an import lookup entry"), "an import lookup entry");
      const value = plus ? entry.u64(0) : BigInt(entry.u32(0));
      if (value === 0n) break;
      const byOrdinal = (value >> BigInt(wordSize * 8 - 1)) & 1n;
      const name = byOrdinal ? `#${Number(value & 0xffffn)}` : cString(Number(value & 0x7fffffffn) + 2);
      result.push({ slot: slots + j * wordSize, dll, name });
    }
  }
  return result;
}
