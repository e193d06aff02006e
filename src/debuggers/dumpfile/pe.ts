/**
 * What a Windows program's PE file says about itself. Its import table: which function of which
 * DLL each import address table slot holds once loaded (`__imp__assert` → msvcrt.dll `_assert`); a
 * minidump read without the system DLLs shows only that the program called through a slot, the
 * table names the function. Its identity: the TimeDateStamp and SizeOfImage Microsoft symbol
 * servers file the executable under, and the CodeView record of its debug directory, the PDB it was
 * linked with (a minidump's module list copies that record). The file is untrusted: every field is
 * checked against its record, counts are capped.
 */
import { cString, DumpFile, DumpFileError, Fields } from "./file.js";

export interface PeImport {
  /** The slot's offset from the image base (its RVA). */
  slot: number;
  dll: string;
  /** The function's name, or `#N` for an import by ordinal. */
  name: string;
}

/** A CodeView record: where a module's debug information is and which build it must come from. */
export interface CodeViewRecord {
  /**
   * The id symbol stores file the debug information under: a PDB's GUID and age (RSDS,
   * `3F2504E04F8941D39A0C0305E82C33011`), an old PDB's signature and age (NB10), or an ELF build id
   * in lower-case hex (Breakpad's BpEL).
   */
  id: string | null;
  /** The debug file the record names, as the linker wrote it (`C:\build\prog.pdb`); null when it names none. */
  debugFile: string | null;
}

export interface PeIdentity {
  /** `%08X%x` of TimeDateStamp and SizeOfImage: the id Microsoft symbol servers file the executable itself under. */
  codeId: string;
  timeDateStamp: number;
  sizeOfImage: number;
  /** The first CodeView entry of the debug directory; null when there is none. */
  codeView: CodeViewRecord | null;
}

const MAX_SECTIONS = 96;
const MAX_DESCRIPTORS = 512;
const MAX_IMPORTS_PER_DLL = 8192;
const MAX_NAME = 512;
/** The most of an import table read at once (a program's: a few KiB; a big DLL's: tens). */
const MAX_IMPORT_WINDOW_BYTES = 1024 * 1024;
const MAX_DEBUG_ENTRIES = 64;
/** A CodeView record is a header and a path: a few hundred bytes, a path of at most 4 KiB. */
const MAX_CODEVIEW_BYTES = 4096 + 24;
const IMAGE_DIRECTORY_ENTRY_IMPORT = 1;
const IMAGE_DIRECTORY_ENTRY_DEBUG = 6;
const IMAGE_DEBUG_TYPE_CODEVIEW = 2;
const DEBUG_ENTRY_BYTES = 28;
const PE32_PLUS = 0x20b;

const CV_PDB70 = 0x53445352; // "RSDS"
const CV_PDB20 = 0x3031424e; // "NB10"
const CV_ELF = 0x4270454c; // "BpEL"

interface Section {
  rva: number;
  /** In memory: the larger of its virtual size and its size in the file. */
  size: number;
  raw: number;
  /** Its size in the file. */
  rawSize: number;
}

/** The headers of a PE file, and where in the file an RVA lies. */
interface PeHeaders {
  timeDateStamp: number;
  optional: Fields;
  plus: boolean;
  offsetOf: (rva: number) => number;
  /** The section that holds an RVA (the first listed, where sections overlap); null when none does. */
  sectionOf: (rva: number) => Section | null;
}

export function readPeImports(path: string): PeImport[] {
  const file = DumpFile.open(path);
  try {
    return imports(file);
  } finally {
    file.close();
  }
}

/** The identity of the PE file at `path`; a DumpFileError when it is no PE file or a record does not fit. */
export function readPeIdentity(path: string): PeIdentity {
  const file = DumpFile.open(path);
  try {
    return identity(file);
  } finally {
    file.close();
  }
}

/** `%08X%x` of a PE's TimeDateStamp and SizeOfImage, as symbol servers and minidump writers spell it. */
export function peCodeId(timeDateStamp: number, sizeOfImage: number): string {
  return `${timeDateStamp.toString(16).padStart(8, "0").toUpperCase()}${sizeOfImage.toString(16)}`;
}

/**
 * A PDB 7.00 id as symbol stores write it: the GUID as Windows prints it (Data1, Data2 and Data3
 * little-endian, then Data4's 8 bytes) in upper-case hex without dashes, then the age in hex.
 */
export function pdbId(guid: Buffer, age: number): string {
  if (guid.length !== 16) throw new DumpFileError(`a GUID has 16 bytes, not ${guid.length}`);
  const parts = [guid.readUInt32LE(0).toString(16).padStart(8, "0"), guid.readUInt16LE(4).toString(16).padStart(4, "0"), guid.readUInt16LE(6).toString(16).padStart(4, "0"), guid.subarray(8).toString("hex")];
  return `${parts.join("")}${age.toString(16)}`.toUpperCase();
}

/** A CodeView record's id and the debug file it names; null for a kind of record this reader does not know. */
export function readCodeViewRecord(fields: Fields): CodeViewRecord | null {
  const signature = fields.u32(0);
  const path = (at: number) => (fields.has(at, 1) ? cString(fields.bytes.subarray(at)) || null : null);
  if (signature === CV_PDB70) return { id: pdbId(fields.slice(4, 16), fields.u32(20)), debugFile: path(24) };
  if (signature === CV_PDB20) return { id: `${fields.u32(8).toString(16).padStart(8, "0")}${fields.u32(12).toString(16)}`.toUpperCase(), debugFile: path(16) };
  if (signature === CV_ELF) return { id: fields.bytes.subarray(4).toString("hex") || null, debugFile: null };
  return null;
}

function headers(file: DumpFile): PeHeaders {
  const dos = new Fields(file.read(0, 64, "the DOS header"), "the DOS header");
  if (dos.u16(0) !== 0x5a4d) throw new DumpFileError("not a PE file: no MZ header");
  const pe = dos.u32(60);
  const header = new Fields(file.read(pe, 24, "the PE header"), "the PE header");
  if (header.u32(0) !== 0x4550) throw new DumpFileError("not a PE file: no PE signature");
  const sectionCount = header.u16(6);
  const optionalSize = header.u16(20);
  if (sectionCount > MAX_SECTIONS) throw new DumpFileError(`the PE file claims ${sectionCount} sections`);
  const optional = new Fields(file.read(pe + 24, optionalSize, "the optional header"), "the optional header");
  const table = new Fields(file.read(pe + 24 + optionalSize, sectionCount * 40, "the section table"), "the section table");
  const sections: Section[] = Array.from({ length: sectionCount }, (_, i) => ({
    rva: table.u32(i * 40 + 12),
    size: Math.max(table.u32(i * 40 + 8), table.u32(i * 40 + 16)),
    raw: table.u32(i * 40 + 20),
    rawSize: table.u32(i * 40 + 16),
  }));
  const sectionOf = (rva: number) => sections.find((s) => s.rva <= rva && rva < s.rva + s.size) ?? null;
  const offsetOf = (rva: number) => {
    const section = sectionOf(rva);
    if (!section) throw new DumpFileError(`RVA 0x${rva.toString(16)} is in no section`);
    return section.raw + (rva - section.rva);
  };
  return { timeDateStamp: header.u32(8), optional, plus: optional.u16(0) === PE32_PLUS, offsetOf, sectionOf };
}

/** The RVA and size of data directory `index`; null when the optional header has no such entry or it is empty. */
function dataDirectory({ optional, plus }: PeHeaders, index: number): { rva: number; size: number } | null {
  const at = (plus ? 112 : 96) + index * 8;
  if (!optional.has(at, 8)) return null;
  const rva = optional.u32(at);
  return rva === 0 ? null : { rva, size: optional.u32(at + 4) };
}

function identity(file: DumpFile): PeIdentity {
  const pe = headers(file);
  // SizeOfImage sits at the same offset in PE32 and PE32+ optional headers.
  const sizeOfImage = pe.optional.u32(56);
  return { codeId: peCodeId(pe.timeDateStamp, sizeOfImage), timeDateStamp: pe.timeDateStamp, sizeOfImage, codeView: codeView(file, pe) };
}

function codeView(file: DumpFile, pe: PeHeaders): CodeViewRecord | null {
  const debug = dataDirectory(pe, IMAGE_DIRECTORY_ENTRY_DEBUG);
  if (!debug) return null;
  const count = Math.floor(debug.size / DEBUG_ENTRY_BYTES);
  if (count > MAX_DEBUG_ENTRIES) throw new DumpFileError(`the debug directory claims ${count} entries`);
  const entries = new Fields(file.read(pe.offsetOf(debug.rva), count * DEBUG_ENTRY_BYTES, "the debug directory"), "the debug directory");
  for (let i = 0; i < count; i++) {
    const at = i * DEBUG_ENTRY_BYTES;
    if (entries.u32(at + 12) !== IMAGE_DEBUG_TYPE_CODEVIEW) continue;
    const size = entries.u32(at + 16);
    const rva = entries.u32(at + 20);
    // The record's file offset; a debug record outside every section has only that.
    const offset = entries.u32(at + 24) || pe.offsetOf(rva);
    const what = "the CodeView record of the debug directory";
    return readCodeViewRecord(new Fields(file.read(offset, Math.min(size, MAX_CODEVIEW_BYTES), what), what));
  }
  return null;
}

function imports(file: DumpFile): PeImport[] {
  const pe = headers(file);
  const directory = dataDirectory(pe, IMAGE_DIRECTORY_ENTRY_IMPORT);
  if (!directory) return [];
  const { offsetOf, plus } = pe;
  const table = importWindow(file, pe, directory.rva);
  const nameAt = (rva: number) => {
    // The bytes before the first NUL of the next MAX_NAME: from the window when that NUL is in it.
    const inWindow = table.prefix(rva, MAX_NAME);
    if (inWindow?.includes(0)) return beforeNul(inWindow);
    const offset = offsetOf(rva);
    return beforeNul(file.read(offset, Math.min(MAX_NAME, file.size - offset), "a name in the import table"));
  };
  const read = (rva: number, length: number, what: string) => new Fields(table.bytes(rva, length) ?? file.read(offsetOf(rva), length, what), what);
  const wordSize = plus ? 8 : 4;
  const result: PeImport[] = [];
  for (let i = 0; i < MAX_DESCRIPTORS; i++) {
    const descriptor = read(directory.rva + i * 20, 20, "an import descriptor");
    const lookup = descriptor.u32(0) || descriptor.u32(16);
    const nameRva = descriptor.u32(12);
    const slots = descriptor.u32(16);
    if (nameRva === 0 && slots === 0) break;
    const dll = nameAt(nameRva);
    for (let j = 0; j < MAX_IMPORTS_PER_DLL; j++) {
      const entry = read(lookup + j * wordSize, wordSize, "an import lookup entry");
      const value = plus ? entry.u64(0) : BigInt(entry.u32(0));
      if (value === 0n) break;
      const byOrdinal = (value >> BigInt(wordSize * 8 - 1)) & 1n;
      const name = byOrdinal ? `#${Number(value & 0xffffn)}` : nameAt(Number(value & 0x7fffffffn) + 2);
      result.push({ slot: slots + j * wordSize, dll, name });
    }
  }
  return result;
}

function beforeNul(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end < 0 ? bytes.length : end).toString("latin1");
}

/** Bytes of the import table, read from the file at once (`importWindow`). */
interface ImportWindow {
  /** Exactly `length` bytes at `rva`; null when they are not all in the window. */
  bytes(rva: number, length: number): Buffer | null;
  /** Up to `length` bytes at `rva`, fewer where the window ends; null when `rva` is not in it. */
  prefix(rva: number, length: number): Buffer | null;
}

/**
 * The bytes from the import directory to the end of its section, at most MAX_IMPORT_WINDOW_BYTES,
 * read in one read: the descriptors, lookup entries and names follow the directory there (mingw's
 * .idata, MSVC's .rdata), so a table is one read rather than one per field. What lies outside it
 * is read from the file as before, field by field; so is an RVA that an earlier section overlapping
 * this one holds (a crafted file), as `offsetOf` places it there.
 */
function importWindow(file: DumpFile, pe: PeHeaders, directoryRva: number): ImportWindow {
  const section = pe.sectionOf(directoryRva);
  const offset = section ? section.raw + (directoryRva - section.rva) : 0;
  const end = section ? Math.min(section.raw + section.rawSize, file.size, offset + MAX_IMPORT_WINDOW_BYTES) : 0;
  if (!section || end <= offset) return { bytes: () => null, prefix: () => null };
  const bytes = file.read(offset, end - offset, "the import table");
  const startOf = (rva: number) => {
    const start = rva - directoryRva;
    return start < 0 || start >= bytes.length || pe.sectionOf(rva) !== section ? null : start;
  };
  return {
    bytes: (rva, length) => {
      const start = startOf(rva);
      return start === null || start + length > bytes.length ? null : bytes.subarray(start, start + length);
    },
    prefix: (rva, length) => {
      const start = startOf(rva);
      return start === null ? null : bytes.subarray(start, Math.min(start + length, bytes.length));
    },
  };
}
