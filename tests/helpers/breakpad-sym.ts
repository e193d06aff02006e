/**
 * A small writer of Breakpad symbol files (.sym) for our own test programs, made from their
 * DWARF with what Debian has (Debian ships no Breakpad `dump_syms`).
 *
 * THE FORMAT, as this writer produces it. A Breakpad symbol file is plain text, one record a
 * line, fields separated by single spaces; a record's last field (a name or a path) runs to the
 * end of the line and may itself hold spaces. Addresses, sizes and parameter sizes are hex
 * without "0x" (lower case); line numbers and file numbers are decimal.
 *
 *   MODULE <os> <arch> <id> <name>
 *       First line, exactly once. os is "Linux" for an ELF; arch is Breakpad's name of the CPU
 *       ("x86_64", "x86", "arm", "arm64"). id is the module's debug identifier: for an ELF, the
 *       first 16 bytes of its GNU build id read as a GUID (uint32 data1, uint16 data2, uint16
 *       data3, each little-endian, then the last 8 bytes as they are; a shorter build id is
 *       padded with zeros) printed as 32 upper-case hex digits, then the age, always "0" on
 *       Linux: 33 characters in all. name is the file's base name. Symbol stores lay the files
 *       out as <name>/<id>/<name>.sym.
 *   INFO CODE_ID <code id>
 *       The module's code identifier: for an ELF the whole build id (20 bytes for the linker's
 *       sha1 ids) in upper-case hex, the bytes in the note's order.
 *   FILE <number> <path>
 *       A source file that line and INLINE records refer to by number: numbered 0, 1, ... in the
 *       sorted order of the paths, only the files that some line or INLINE record uses.
 *   INLINE_ORIGIN <number> <name>
 *       (Only with { inlines: true }, as dump_syms writes them only with -d.) A function that some
 *       call was inlined from, named as its FUNC would be: numbered 0, 1, ... in the sorted order
 *       of the names.
 *   FUNC <address> <size> <param_size> <name>
 *       A function with debug information covering [address, address + size); a function whose
 *       code is split (main and its main.cold part at -O2) has one FUNC per range, all with the
 *       function's name. name is the demangled linkage name where the DWARF has one, with the
 *       parameter list for C++ ("Session::idle_seconds(long) const"), else the DWARF name
 *       qualified by its namespaces and classes ("main", "should_expire" for a static C++
 *       function). param_size is the size of the parameters on the stack, which matters to
 *       32-bit Windows only: 0 here. (Rust's legacy symbols demangle as "std::rt::lang_start::h<hash>";
 *       a dump_syms built without a Rust demangler writes them mangled.)
 *   INLINE <depth> <call line> <call file> <origin> <address> <size> [<address> <size>]...
 *       (Only with { inlines: true }.) Under the FUNC it was inlined into, before its line
 *       records: a call of INLINE_ORIGIN <origin> whose code is in the ranges given (cut to the
 *       FUNC's), made at line <call line> of FILE <call file>. depth 0 is a call made by the
 *       FUNC's own code; depth n + 1 one made by the code of a depth-n call, whose record comes
 *       before it (records are in the order of their first address, the outer call first).
 *   <address> <size> <line> <filenum>
 *       A line record, under the FUNC it belongs to: the code in [address, address + size)
 *       comes from line <line> of FILE <filenum> (for inlined code, the line in the inlined
 *       function: the call sites are in the INLINE records).
 *   PUBLIC <address> <param_size> <name>
 *       A function symbol of the ELF symbol table (STT_FUNC) where no FUNC starts, e.g. _start:
 *       a start only; it is taken to run until the next FUNC or PUBLIC. The name is demangled.
 *   STACK CFI ... / STACK WIN ...
 *       Unwind rules. Not written here: lldb unwinds with the binary's own .eh_frame.
 * Addresses are relative to the module's load address, the p_vaddr of its first PT_LOAD: for a
 * PIE or a shared object that is 0, so they are the ELF's own virtual addresses; for a non-PIE
 * executable (first PT_LOAD at 0x400000) that base is subtracted.
 *
 * WHERE EACH PART COMES FROM. The ELF and its DWARF are read here (ELF32/ELF64 little-endian,
 * DWARF 2 to 5, zlib-compressed sections); binutils' c++filt demangles, as dump_syms' demangler
 * does. The tests check the parts against binutils: the build id against `readelf -n`, the
 * line rows against `objdump --dwarf=decodedline` (which prints base names only, the
 * directories being in another table: that is why the line programs are run here), the
 * functions against `nm -S`.
 * - Functions and their ranges: the DW_TAG_subprogram entries of .debug_info with code
 *   (DW_AT_low_pc/high_pc or DW_AT_ranges), their name through DW_AT_specification and
 *   DW_AT_abstract_origin. Two at one address: the first one is kept.
 * - Line rows: the .debug_line programs. A row runs to the next row of its sequence (the
 *   end_sequence row only ends the last range; it is no record); rows of no length are dropped;
 *   ranges are cut at the bounds of their function's ranges; rows in no function are dropped.
 * - PUBLIC records: .symtab (or .dynsym without it), STT_FUNC symbols that are defined.
 * - INLINE records: the DW_TAG_inlined_subroutine entries with code, their depth the number of
 *   inlined_subroutine entries around them (lexical blocks do not count), their origin's name
 *   through DW_AT_abstract_origin, their call site from DW_AT_call_file (a file number of the
 *   unit's line table) and DW_AT_call_line. A call without DW_AT_call_file is left out.
 */
import { spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { inflateSync } from "node:zlib";

export interface BreakpadSymbolsResult {
  /** absolute path of the written .sym */
  file: string;
  /** Breakpad module id: 32 hex digits of the GUID plus the age "0" */
  id: string;
  /** the module's base name */
  name: string;
}

/**
 * Breakpad's module id of an ELF from its GNU build id (hex, any case): its first 16 bytes as
 * a GUID with data1, data2 and data3 little-endian (zero-padded if the build id is shorter),
 * upper-case hex, then the age "0".
 */
export function breakpadModuleId(buildIdHex: string): string {
  const hex = buildIdHex.trim();
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex)) throw new Error(`not a build id: ${JSON.stringify(buildIdHex)}`);
  const guid = Buffer.alloc(16);
  Buffer.from(hex, "hex").copy(guid, 0, 0, 16);
  const swapped = Buffer.concat([
    Buffer.from(guid.subarray(0, 4)).reverse(),
    Buffer.from(guid.subarray(4, 6)).reverse(),
    Buffer.from(guid.subarray(6, 8)).reverse(),
    guid.subarray(8, 16),
  ]);
  return `${swapped.toString("hex").toUpperCase()}0`;
}

// ---------------------------------------------------------------------------------------------
// ELF

interface ElfSection {
  name: string;
  type: number;
  flags: bigint;
  addr: bigint;
  offset: number;
  size: number;
  link: number;
}

interface ElfSegment {
  type: number;
  vaddr: bigint;
  offset: number;
  filesz: number;
}

interface ElfInfo {
  data: Buffer;
  is64: boolean;
  machine: number;
  sections: ElfSection[];
  segments: ElfSegment[];
  /** the GNU build id in lower-case hex, or undefined */
  buildId: string | undefined;
  /** p_vaddr of the first PT_LOAD */
  loadAddress: bigint;
}

const PT_LOAD = 1;
const PT_NOTE = 4;
const SHT_SYMTAB = 2;
const SHT_NOBITS = 8;
const SHT_DYNSYM = 11;
const SHF_EXECINSTR = 0x4n;
const SHF_COMPRESSED = 0x800n;
const NT_GNU_BUILD_ID = 3;
const STT_FUNC = 2;

function parseElf(data: Buffer): ElfInfo {
  if (data.length < 52 || data.readUInt32BE(0) !== 0x7f454c46) throw new Error("not an ELF file");
  const is64 = data[4] === 2;
  if (data[5] !== 1) throw new Error("only little-endian ELF files are supported");
  const machine = data.readUInt16LE(18);
  const word = (off: number): bigint => (is64 ? data.readBigUInt64LE(off) : BigInt(data.readUInt32LE(off)));
  const phoff = Number(word(is64 ? 32 : 28));
  const shoff = Number(word(is64 ? 40 : 32));
  const phentsize = data.readUInt16LE(is64 ? 54 : 42);
  const phnum = data.readUInt16LE(is64 ? 56 : 44);
  const shentsize = data.readUInt16LE(is64 ? 58 : 46);
  const shnum = data.readUInt16LE(is64 ? 60 : 48);
  const shstrndx = data.readUInt16LE(is64 ? 62 : 50);

  const segments: ElfSegment[] = [];
  for (let i = 0; i < phnum; i++) {
    const p = phoff + i * phentsize;
    segments.push(
      is64
        ? {
            type: data.readUInt32LE(p),
            offset: Number(data.readBigUInt64LE(p + 8)),
            vaddr: data.readBigUInt64LE(p + 16),
            filesz: Number(data.readBigUInt64LE(p + 32)),
          }
        : {
            type: data.readUInt32LE(p),
            offset: data.readUInt32LE(p + 4),
            vaddr: BigInt(data.readUInt32LE(p + 8)),
            filesz: data.readUInt32LE(p + 16),
          },
    );
  }

  const raw: Array<Omit<ElfSection, "name"> & { nameOffset: number }> = [];
  for (let i = 0; i < shnum; i++) {
    const s = shoff + i * shentsize;
    raw.push(
      is64
        ? {
            nameOffset: data.readUInt32LE(s),
            type: data.readUInt32LE(s + 4),
            flags: data.readBigUInt64LE(s + 8),
            addr: data.readBigUInt64LE(s + 16),
            offset: Number(data.readBigUInt64LE(s + 24)),
            size: Number(data.readBigUInt64LE(s + 32)),
            link: data.readUInt32LE(s + 40),
          }
        : {
            nameOffset: data.readUInt32LE(s),
            type: data.readUInt32LE(s + 4),
            flags: BigInt(data.readUInt32LE(s + 8)),
            addr: BigInt(data.readUInt32LE(s + 12)),
            offset: data.readUInt32LE(s + 16),
            size: data.readUInt32LE(s + 20),
            link: data.readUInt32LE(s + 24),
          },
    );
  }
  const strtab = raw[shstrndx];
  const sections: ElfSection[] = raw.map(({ nameOffset, ...rest }) => ({
    ...rest,
    name: strtab ? cString(data, strtab.offset + nameOffset) : "",
  }));

  // The build id: the .note.gnu.build-id section, else any PT_NOTE segment.
  const noteAreas: Array<[number, number]> = [];
  for (const s of sections) if (s.name === ".note.gnu.build-id") noteAreas.push([s.offset, s.size]);
  for (const p of segments) if (p.type === PT_NOTE) noteAreas.push([p.offset, p.filesz]);
  let buildId: string | undefined;
  for (const [offset, size] of noteAreas) {
    buildId = findBuildIdNote(data, offset, size);
    if (buildId) break;
  }

  const firstLoad = segments.find((p) => p.type === PT_LOAD);
  return { data, is64, machine, sections, segments, buildId, loadAddress: firstLoad ? firstLoad.vaddr : 0n };
}

function findBuildIdNote(data: Buffer, offset: number, size: number): string | undefined {
  const align4 = (n: number): number => (n + 3) & ~3;
  let p = offset;
  const end = Math.min(offset + size, data.length);
  while (p + 12 <= end) {
    const namesz = data.readUInt32LE(p);
    const descsz = data.readUInt32LE(p + 4);
    const type = data.readUInt32LE(p + 8);
    const nameStart = p + 12;
    const descStart = nameStart + align4(namesz);
    const name = data.toString("latin1", nameStart, nameStart + Math.max(0, namesz - 1));
    if (type === NT_GNU_BUILD_ID && name === "GNU" && descStart + descsz <= end) {
      return data.toString("hex", descStart, descStart + descsz);
    }
    p = descStart + align4(descsz);
  }
  return undefined;
}

function cString(data: Buffer, offset: number): string {
  let end = offset;
  while (end < data.length && data[end] !== 0) end++;
  return data.toString("utf8", offset, end);
}

/** A section's contents, inflated if it is SHF_COMPRESSED (zlib) or a legacy .zdebug one. */
function sectionData(elf: ElfInfo, name: string): Buffer | undefined {
  const section =
    elf.sections.find((s) => s.name === name) ?? elf.sections.find((s) => s.name === name.replace(/^\./, ".z"));
  if (!section || section.type === SHT_NOBITS) return undefined;
  const bytes = elf.data.subarray(section.offset, section.offset + section.size);
  if (section.flags & SHF_COMPRESSED) {
    // Elf_Chdr: ch_type (1 = zlib), then sizes; 24 bytes on ELF64, 12 on ELF32.
    const chType = bytes.readUInt32LE(0);
    if (chType !== 1) throw new Error(`${name}: unsupported compression type ${chType}`);
    return inflateSync(bytes.subarray(elf.is64 ? 24 : 12));
  }
  if (section.name.startsWith(".zdebug")) return inflateSync(bytes.subarray(12)); // "ZLIB" + 8-byte size
  return bytes;
}

/** Whether [start, end) lies in a section of code (this leaves out the ranges of discarded code). */
function inCode(elf: ElfInfo, start: bigint, end: bigint): boolean {
  return elf.sections.some((s) => s.flags & SHF_EXECINSTR && s.addr !== 0n && start >= s.addr && end <= s.addr + BigInt(s.size));
}

interface ElfSymbol {
  name: string;
  value: bigint;
  type: number;
  shndx: number;
}

/** The symbols of .symtab, or of .dynsym if there is no .symtab. */
function elfSymbols(elf: ElfInfo): ElfSymbol[] {
  const table = elf.sections.find((s) => s.type === SHT_SYMTAB) ?? elf.sections.find((s) => s.type === SHT_DYNSYM);
  const strings = table ? elf.sections[table.link] : undefined;
  if (!table || !strings) return [];
  const { data } = elf;
  const entsize = elf.is64 ? 24 : 16;
  const symbols: ElfSymbol[] = [];
  for (let p = table.offset + entsize; p + entsize <= table.offset + table.size; p += entsize) {
    const nameOffset = data.readUInt32LE(p);
    const info = elf.is64 ? data.readUInt8(p + 4) : data.readUInt8(p + 12);
    const shndx = elf.is64 ? data.readUInt16LE(p + 6) : data.readUInt16LE(p + 14);
    const value = elf.is64 ? data.readBigUInt64LE(p + 8) : BigInt(data.readUInt32LE(p + 4));
    symbols.push({ name: cString(data, strings.offset + nameOffset), value, type: info & 0xf, shndx });
  }
  return symbols;
}

const ARCH_BY_MACHINE: Record<number, string> = { 3: "x86", 40: "arm", 62: "x86_64", 183: "arm64" };

// ---------------------------------------------------------------------------------------------
// DWARF: reading

class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    pos = 0,
  ) {
    this.pos = pos;
  }
  u8(): number {
    return this.buf.readUInt8(this.pos++);
  }
  u16(): number {
    const v = this.buf.readUInt16LE(this.pos);
    this.pos += 2;
    return v;
  }
  u24(): number {
    const v = this.buf.readUIntLE(this.pos, 3);
    this.pos += 3;
    return v;
  }
  u32(): number {
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  u64(): bigint {
    const v = this.buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    return v;
  }
  s8(): number {
    return this.buf.readInt8(this.pos++);
  }
  uleb(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = this.u8();
      result |= BigInt(byte & 0x7f) << shift;
      shift += 7n;
      if (!(byte & 0x80)) return result;
    }
  }
  ulebNum(): number {
    return Number(this.uleb());
  }
  sleb(): bigint {
    let result = 0n;
    let shift = 0n;
    let byte: number;
    do {
      byte = this.u8();
      result |= BigInt(byte & 0x7f) << shift;
      shift += 7n;
    } while (byte & 0x80);
    if (byte & 0x40) result -= 1n << shift;
    return result;
  }
  address(size: number): bigint {
    if (size === 8) return this.u64();
    if (size === 4) return BigInt(this.u32());
    if (size === 2) return BigInt(this.u16());
    throw new Error(`unsupported DWARF address size ${size}`);
  }
  offset(size: 4 | 8): number {
    return size === 8 ? Number(this.u64()) : this.u32();
  }
  cstr(): string {
    const end = this.buf.indexOf(0, this.pos);
    if (end < 0) throw new Error("unterminated string in DWARF data");
    const s = this.buf.toString("utf8", this.pos, end);
    this.pos = end + 1;
    return s;
  }
  /** A unit's initial length: its length and whether it is 64-bit DWARF. */
  unitLength(): { length: number; offsetSize: 4 | 8 } {
    const length = this.u32();
    if (length === 0xffffffff) return { length: Number(this.u64()), offsetSize: 8 };
    return { length, offsetSize: 4 };
  }
}

/** The debug sections of an ELF that values of DWARF forms may point into. */
interface DebugSections {
  str: Buffer | undefined;
  lineStr: Buffer | undefined;
  strOffsets: Buffer | undefined;
  addr: Buffer | undefined;
}

/** The context in which a form's value is read: its unit's sizes and bases. */
interface FormContext {
  version: number;
  offsetSize: 4 | 8;
  addressSize: number;
  /** offset of the unit in .debug_info, for unit-relative references */
  unitOffset: number;
  sections: DebugSections;
}

/** A form's value: a number, a string, a reference (absolute .debug_info offset), an address, or an index. */
type FormValue =
  | { kind: "num"; value: bigint }
  | { kind: "str"; value: string }
  | { kind: "strx"; index: number }
  | { kind: "ref"; offset: number }
  | { kind: "addr"; value: bigint }
  | { kind: "addrx"; index: number }
  | { kind: "rnglistx"; index: number }
  | { kind: "skipped" };

const DW_FORM_implicit_const = 0x21;
const DW_FORM_indirect = 0x16;

/** Reads one value of a DWARF form (numbers as in DWARF 5, with the GNU extensions gcc uses). */
function readForm(r: Reader, form: number, ctx: FormContext, implicitConst = 0n): FormValue {
  const strAt = (table: Buffer | undefined, which: string, off: number): FormValue => {
    if (!table) throw new Error(`DWARF refers to a missing ${which}`);
    return { kind: "str", value: cString(table, off) };
  };
  const skip = (n: number): FormValue => {
    r.pos += n;
    return { kind: "skipped" };
  };
  switch (form) {
    case 0x01: // addr
      return { kind: "addr", value: r.address(ctx.addressSize) };
    case 0x03: // block2
      return skip(r.u16());
    case 0x04: // block4
      return skip(r.u32());
    case 0x05: // data2
      return { kind: "num", value: BigInt(r.u16()) };
    case 0x06: // data4
      return { kind: "num", value: BigInt(r.u32()) };
    case 0x07: // data8
      return { kind: "num", value: r.u64() };
    case 0x08: // string
      return { kind: "str", value: r.cstr() };
    case 0x09: // block
    case 0x18: // exprloc
      return skip(r.ulebNum());
    case 0x0a: // block1
      return skip(r.u8());
    case 0x0b: // data1
    case 0x0c: // flag
      return { kind: "num", value: BigInt(r.u8()) };
    case 0x0d: // sdata
      return { kind: "num", value: r.sleb() };
    case 0x0e: // strp
      return strAt(ctx.sections.str, ".debug_str", r.offset(ctx.offsetSize));
    case 0x1f: // line_strp
      return strAt(ctx.sections.lineStr, ".debug_line_str", r.offset(ctx.offsetSize));
    case 0x0f: // udata
      return { kind: "num", value: r.uleb() };
    case 0x10: // ref_addr: an offset in .debug_info (the address size in DWARF 2)
      return { kind: "ref", offset: ctx.version <= 2 ? Number(r.address(ctx.addressSize)) : r.offset(ctx.offsetSize) };
    case 0x11: // ref1
      return { kind: "ref", offset: ctx.unitOffset + r.u8() };
    case 0x12: // ref2
      return { kind: "ref", offset: ctx.unitOffset + r.u16() };
    case 0x13: // ref4
      return { kind: "ref", offset: ctx.unitOffset + r.u32() };
    case 0x14: // ref8
      return { kind: "ref", offset: ctx.unitOffset + Number(r.u64()) };
    case 0x15: // ref_udata
      return { kind: "ref", offset: ctx.unitOffset + r.ulebNum() };
    case DW_FORM_indirect:
      return readForm(r, r.ulebNum(), ctx, implicitConst);
    case 0x17: // sec_offset
      return { kind: "num", value: BigInt(r.offset(ctx.offsetSize)) };
    case 0x19: // flag_present
      return { kind: "num", value: 1n };
    case 0x1a: // strx
    case 0x1f02: // GNU_str_index
      return { kind: "strx", index: r.ulebNum() };
    case 0x25: // strx1
      return { kind: "strx", index: r.u8() };
    case 0x26: // strx2
      return { kind: "strx", index: r.u16() };
    case 0x27: // strx3
      return { kind: "strx", index: r.u24() };
    case 0x28: // strx4
      return { kind: "strx", index: r.u32() };
    case 0x1b: // addrx
    case 0x1f01: // GNU_addr_index
      return { kind: "addrx", index: r.ulebNum() };
    case 0x29: // addrx1
      return { kind: "addrx", index: r.u8() };
    case 0x2a: // addrx2
      return { kind: "addrx", index: r.u16() };
    case 0x2b: // addrx3
      return { kind: "addrx", index: r.u24() };
    case 0x2c: // addrx4
      return { kind: "addrx", index: r.u32() };
    case 0x1c: // ref_sup4
      return skip(4);
    case 0x1d: // strp_sup
    case 0x1f20: // GNU_ref_alt
    case 0x1f21: // GNU_strp_alt
      return skip(ctx.offsetSize);
    case 0x1e: // data16
      return skip(16);
    case 0x20: // ref_sig8
    case 0x24: // ref_sup8
      return skip(8);
    case DW_FORM_implicit_const:
      return { kind: "num", value: implicitConst };
    case 0x22: // loclistx
      r.uleb();
      return { kind: "skipped" };
    case 0x23: // rnglistx
      return { kind: "rnglistx", index: r.ulebNum() };
    default:
      throw new Error(`unsupported DWARF form 0x${form.toString(16)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// DWARF line tables

/** One row of a DWARF line table, with its length to the next row of its sequence. */
export interface LineRow {
  /** the row's address (the ELF's virtual address) */
  address: bigint;
  /** bytes to the next row of the same sequence (0 where two rows share an address) */
  size: bigint;
  line: number;
  /** the source file's path: its directory (made absolute with the compilation directory) and name */
  file: string;
}

const DW_LNCT_path = 1;
const DW_LNCT_directory_index = 2;

function joinPath(dir: string | undefined, name: string): string {
  if (name.startsWith("/") || !dir) return name;
  return dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
}

/** Runs every line-number program of .debug_line and returns its rows (end_sequence rows left out). */
function readLineRowsFrom(
  debugLine: Buffer,
  sections: DebugSections,
  compDirs: Map<number, string>,
  fileTables?: Map<number, string[]>,
): LineRow[] {
  const rows: LineRow[] = [];
  let unitStart = 0;
  while (unitStart + 4 <= debugLine.length) {
    const r = new Reader(debugLine, unitStart);
    const { length, offsetSize } = r.unitLength();
    const unitEnd = r.pos + length;
    const version = r.u16();
    if (version < 2 || version > 5) throw new Error(`unsupported .debug_line version ${version}`);
    let addressSize = 8;
    if (version >= 5) {
      addressSize = r.u8();
      r.u8(); // segment_selector_size
    }
    const headerLength = r.offset(offsetSize);
    const programStart = r.pos + headerLength;
    const minInstLength = r.u8();
    if (version >= 4) r.u8(); // maximum_operations_per_instruction: VLIW only, taken as 1
    r.u8(); // default_is_stmt: every row is kept, as dump_syms keeps them
    const lineBase = r.s8();
    const lineRange = r.u8();
    const opcodeBase = r.u8();
    const opcodeLengths: number[] = [0];
    for (let i = 1; i < opcodeBase; i++) opcodeLengths.push(r.u8());

    const ctx: FormContext = { version, offsetSize, addressSize, unitOffset: 0, sections };
    const dirs: string[] = [];
    const files: Array<{ name: string; dir: number }> = [];
    if (version >= 5) {
      const readEntries = (): Array<Map<number, FormValue>> => {
        const formatCount = r.u8();
        const format: Array<[number, number]> = [];
        for (let i = 0; i < formatCount; i++) format.push([r.ulebNum(), r.ulebNum()]);
        const count = r.ulebNum();
        const entries: Array<Map<number, FormValue>> = [];
        for (let i = 0; i < count; i++) {
          const entry = new Map<number, FormValue>();
          for (const [contentType, form] of format) entry.set(contentType, readForm(r, form, ctx));
          entries.push(entry);
        }
        return entries;
      };
      const str = (v: FormValue | undefined): string => (v?.kind === "str" ? v.value : "");
      const num = (v: FormValue | undefined): number => (v?.kind === "num" ? Number(v.value) : 0);
      for (const e of readEntries()) dirs.push(str(e.get(DW_LNCT_path)));
      for (const e of readEntries()) files.push({ name: str(e.get(DW_LNCT_path)), dir: num(e.get(DW_LNCT_directory_index)) });
    } else {
      // Directory 0 is the compilation directory, which DWARF 2-4 keep in .debug_info
      // (DW_AT_comp_dir of the unit whose DW_AT_stmt_list is this table), not here.
      const compDir = compDirs.get(unitStart) ?? "";
      dirs.push(compDir);
      for (let d = r.cstr(); d !== ""; d = r.cstr()) dirs.push(d.startsWith("/") ? d : joinPath(compDir, d));
      files.push({ name: "", dir: 0 });
      for (let f = r.cstr(); f !== ""; f = r.cstr()) {
        const dir = r.ulebNum();
        r.uleb(); // mtime
        r.uleb(); // length
        files.push({ name: f, dir });
      }
    }
    const filePath = (index: number): string => {
      const f = files[index];
      if (!f) return `<file ${index}>`;
      const dir = dirs[f.dir];
      // A relative directory is relative to the compilation directory, entry 0 in DWARF 5.
      const fullDir = version >= 5 && f.dir !== 0 && dir !== undefined && !dir.startsWith("/") ? joinPath(dirs[0], dir) : dir;
      return joinPath(fullDir, f.name);
    };
    fileTables?.set(unitStart, files.map((_, i) => filePath(i)));

    r.pos = programStart;
    // The state machine's registers that rows need.
    let address = 0n;
    let file = 1;
    let line = 1;
    let sequence: Array<{ address: bigint; line: number; file: number }> = [];
    const emit = (): void => {
      sequence.push({ address, line, file });
    };
    const endSequence = (): void => {
      for (let i = 0; i < sequence.length; i++) {
        const row = sequence[i]!;
        const next = sequence[i + 1]?.address ?? address; // the last row runs to the end_sequence
        rows.push({ address: row.address, size: next - row.address, line: row.line, file: filePath(row.file) });
      }
      sequence = [];
      address = 0n;
      file = 1;
      line = 1;
    };
    const advance = (operationAdvance: bigint): void => {
      address += operationAdvance * BigInt(minInstLength);
    };
    while (r.pos < unitEnd) {
      const opcode = r.u8();
      if (opcode >= opcodeBase) {
        const adjusted = opcode - opcodeBase;
        advance(BigInt(Math.floor(adjusted / lineRange)));
        line += lineBase + (adjusted % lineRange);
        emit();
        continue;
      }
      switch (opcode) {
        case 0: {
          const len = r.ulebNum();
          const next = r.pos + len;
          const sub = len > 0 ? r.u8() : 0;
          if (sub === 1) endSequence(); // DW_LNE_end_sequence
          else if (sub === 2) address = r.address(len - 1); // DW_LNE_set_address
          // DW_LNE_define_file (3), DW_LNE_set_discriminator (4) and vendor ones: skipped
          r.pos = next;
          break;
        }
        case 1: // DW_LNS_copy
          emit();
          break;
        case 2: // DW_LNS_advance_pc
          advance(r.uleb());
          break;
        case 3: // DW_LNS_advance_line
          line += Number(r.sleb());
          break;
        case 4: // DW_LNS_set_file
          file = r.ulebNum();
          break;
        case 8: // DW_LNS_const_add_pc
          advance(BigInt(Math.floor((255 - opcodeBase) / lineRange)));
          break;
        case 9: // DW_LNS_fixed_advance_pc
          address += BigInt(r.u16());
          break;
        default: // set_column, negate_stmt, basic_block, prologue_end, epilogue_begin, set_isa, ...
          for (let i = 0; i < (opcodeLengths[opcode] ?? 0); i++) r.uleb();
      }
    }
    unitStart = unitEnd;
  }
  return rows;
}

function debugSections(elf: ElfInfo): DebugSections {
  return {
    str: sectionData(elf, ".debug_str"),
    lineStr: sectionData(elf, ".debug_line_str"),
    strOffsets: sectionData(elf, ".debug_str_offsets"),
    addr: sectionData(elf, ".debug_addr"),
  };
}

/** The line rows; `fileTables` gets each line table's file paths by number, for DW_AT_call_file. */
function lineRowsOf(elf: ElfInfo, compDirs: Map<number, string>, fileTables?: Map<number, string[]>): LineRow[] {
  const debugLine = sectionData(elf, ".debug_line");
  return debugLine ? readLineRowsFrom(debugLine, debugSections(elf), compDirs, fileTables) : [];
}

/** The rows of an ELF's DWARF line tables, in table order (none if it has no .debug_line). */
export async function readLineRows(elfPath: string): Promise<LineRow[]> {
  const elf = parseElf(await readFile(elfPath));
  return lineRowsOf(elf, readDebugInfo(elf).compDirs);
}

// ---------------------------------------------------------------------------------------------
// DWARF: functions from .debug_info

const DW_TAG = {
  class_type: 0x02,
  enumeration_type: 0x04,
  inlined_subroutine: 0x1d,
  compile_unit: 0x11,
  structure_type: 0x13,
  union_type: 0x17,
  subprogram: 0x2e,
  interface_type: 0x38,
  namespace: 0x39,
  partial_unit: 0x3c,
  skeleton_unit: 0x4a,
} as const;
const SCOPE_TAGS = new Set<number>([
  DW_TAG.class_type,
  DW_TAG.enumeration_type,
  DW_TAG.structure_type,
  DW_TAG.union_type,
  DW_TAG.interface_type,
  DW_TAG.namespace,
]);
const UNIT_TAGS = new Set<number>([DW_TAG.compile_unit, DW_TAG.partial_unit, DW_TAG.skeleton_unit]);

const DW_AT = {
  stmt_list: 0x10,
  name: 0x03,
  low_pc: 0x11,
  comp_dir: 0x1b,
  high_pc: 0x12,
  abstract_origin: 0x31,
  declaration: 0x3c,
  specification: 0x47,
  ranges: 0x55,
  call_file: 0x58,
  call_line: 0x59,
  linkage_name: 0x6e,
  str_offsets_base: 0x72,
  addr_base: 0x73,
  rnglists_base: 0x74,
  MIPS_linkage_name: 0x2007,
} as const;

/** What this writer keeps of a subprogram, inlined call or scope DIE. */
interface Die {
  offset: number;
  tag: number;
  /** the nearest enclosing scope, subprogram or unit that was kept */
  parent: Die | undefined;
  name?: string;
  linkageName?: string;
  specification?: number;
  abstractOrigin?: number;
  declaration?: boolean;
  ranges: Array<[bigint, bigint]>;
  /** an inlined call's site: a file number of its unit's line table, and a line */
  callFile?: number;
  callLine?: number;
  /** the .debug_line offset of the unit's line table (DW_AT_stmt_list), which callFile numbers into */
  lineTable?: number;
}

interface Abbrev {
  tag: number;
  hasChildren: boolean;
  attrs: Array<{ name: number; form: number; implicitConst: bigint }>;
}

function readAbbrevs(abbrev: Buffer, offset: number): Map<number, Abbrev> {
  const r = new Reader(abbrev, offset);
  const table = new Map<number, Abbrev>();
  for (;;) {
    const code = r.ulebNum();
    if (code === 0) return table;
    const tag = r.ulebNum();
    const hasChildren = r.u8() !== 0;
    const attrs: Abbrev["attrs"] = [];
    for (;;) {
      const name = r.ulebNum();
      const form = r.ulebNum();
      if (name === 0 && form === 0) break;
      attrs.push({ name, form, implicitConst: form === DW_FORM_implicit_const ? r.sleb() : 0n });
    }
    table.set(code, { tag, hasChildren, attrs });
  }
}

interface DebugInfo {
  /** subprograms and the scopes that qualify their names, by .debug_info offset */
  dies: Map<number, Die>;
  /** each unit's DW_AT_comp_dir, by the offset of its line table (DW_AT_stmt_list) */
  compDirs: Map<number, string>;
}

/** Reads the subprograms, the scopes that qualify their names and the units of .debug_info. */
function readDebugInfo(elf: ElfInfo): DebugInfo {
  const info = sectionData(elf, ".debug_info");
  const abbrevSection = sectionData(elf, ".debug_abbrev");
  const dies = new Map<number, Die>();
  const compDirs = new Map<number, string>();
  if (!info || !abbrevSection) return { dies, compDirs };
  const sections = debugSections(elf);
  const rnglists = sectionData(elf, ".debug_rnglists");
  const oldRanges = sectionData(elf, ".debug_ranges");
  const abbrevCache = new Map<number, Map<number, Abbrev>>();

  let unitOffset = 0;
  while (unitOffset + 4 <= info.length) {
    const r = new Reader(info, unitOffset);
    const { length, offsetSize } = r.unitLength();
    const unitEnd = r.pos + length;
    const version = r.u16();
    let abbrevOffset: number;
    let addressSize: number;
    if (version >= 5) {
      const unitType = r.u8();
      addressSize = r.u8();
      abbrevOffset = r.offset(offsetSize);
      if (unitType === 2 || unitType === 6) {
        unitOffset = unitEnd; // type units hold no code
        continue;
      }
      if (unitType === 4 || unitType === 5) r.pos += 8; // dwo_id
    } else {
      abbrevOffset = r.offset(offsetSize);
      addressSize = r.u8();
    }
    let abbrevs = abbrevCache.get(abbrevOffset);
    if (!abbrevs) {
      abbrevs = readAbbrevs(abbrevSection, abbrevOffset);
      abbrevCache.set(abbrevOffset, abbrevs);
    }
    const ctx: FormContext = { version, offsetSize, addressSize, unitOffset, sections };

    // The unit's bases, set by its unit DIE; values that need them are resolved at the unit's end.
    let strOffsetsBase = offsetSize === 8 ? 16 : 8;
    let addrBase = 8;
    let rnglistsBase = offsetSize === 8 ? 20 : 12;
    let unitLowPc = 0n;
    let unitLineTable: number | undefined;
    const pending: Array<() => void> = [];
    const resolveStr = (v: FormValue): string | undefined => {
      if (v.kind === "str") return v.value;
      if (v.kind !== "strx" || !sections.strOffsets || !sections.str) return undefined;
      const at = strOffsetsBase + v.index * offsetSize;
      const off = offsetSize === 8 ? Number(sections.strOffsets.readBigUInt64LE(at)) : sections.strOffsets.readUInt32LE(at);
      return cString(sections.str, off);
    };
    const resolveAddr = (v: FormValue): bigint | undefined => {
      if (v.kind === "addr") return v.value;
      if (v.kind !== "addrx" || !sections.addr) return undefined;
      return new Reader(sections.addr, addrBase + v.index * addressSize).address(addressSize);
    };
    const readRanges = (v: FormValue): Array<[bigint, bigint]> => {
      const out: Array<[bigint, bigint]> = [];
      let base = unitLowPc;
      if (version >= 5) {
        if (!rnglists) return out;
        let offset: number;
        if (v.kind === "rnglistx") {
          const at = rnglistsBase + v.index * offsetSize;
          offset = rnglistsBase + (offsetSize === 8 ? Number(rnglists.readBigUInt64LE(at)) : rnglists.readUInt32LE(at));
        } else if (v.kind === "num") offset = Number(v.value);
        else return out;
        const rr = new Reader(rnglists, offset);
        const addrx = (index: number): bigint => resolveAddr({ kind: "addrx", index }) ?? 0n;
        for (;;) {
          const kind = rr.u8();
          if (kind === 0) break; // DW_RLE_end_of_list
          switch (kind) {
            case 1: // base_addressx
              base = addrx(rr.ulebNum());
              break;
            case 2: {
              // startx_endx
              const s = addrx(rr.ulebNum());
              out.push([s, addrx(rr.ulebNum())]);
              break;
            }
            case 3: {
              // startx_length
              const s = addrx(rr.ulebNum());
              out.push([s, s + rr.uleb()]);
              break;
            }
            case 4: {
              // offset_pair
              const s = base + rr.uleb();
              out.push([s, base + rr.uleb()]);
              break;
            }
            case 5: // base_address
              base = rr.address(addressSize);
              break;
            case 6: {
              // start_end
              const s = rr.address(addressSize);
              out.push([s, rr.address(addressSize)]);
              break;
            }
            case 7: {
              // start_length
              const s = rr.address(addressSize);
              out.push([s, s + rr.uleb()]);
              break;
            }
            default:
              throw new Error(`unknown DW_RLE kind ${kind} in .debug_rnglists`);
          }
        }
      } else {
        if (!oldRanges || v.kind !== "num") return out;
        const rr = new Reader(oldRanges, Number(v.value));
        const max = addressSize === 8 ? 0xffffffffffffffffn : 0xffffffffn;
        for (;;) {
          const s = rr.address(addressSize);
          const e = rr.address(addressSize);
          if (s === 0n && e === 0n) break;
          if (s === max) base = e;
          else out.push([base + s, base + e]);
        }
      }
      return out;
    };

    const parents: Array<Die | undefined> = [];
    let parent: Die | undefined;
    while (r.pos < unitEnd) {
      const offset = r.pos;
      const code = r.ulebNum();
      if (code === 0) {
        parent = parents.pop();
        continue;
      }
      const abbrev = abbrevs.get(code);
      if (!abbrev) throw new Error(`.debug_info: unknown abbreviation ${code} at 0x${offset.toString(16)}`);
      const keep =
        abbrev.tag === DW_TAG.subprogram || abbrev.tag === DW_TAG.inlined_subroutine || SCOPE_TAGS.has(abbrev.tag) || UNIT_TAGS.has(abbrev.tag);
      const values = new Map<number, { form: number; value: FormValue }>();
      for (const a of abbrev.attrs) {
        const value = readForm(r, a.form, ctx, a.implicitConst);
        if (keep) values.set(a.name, { form: a.form, value });
      }
      let die: Die | undefined;
      if (keep) {
        const d: Die = { offset, tag: abbrev.tag, parent, ranges: [] };
        die = d;
        dies.set(offset, d);
        const get = (name: number): FormValue | undefined => values.get(name)?.value;
        if (UNIT_TAGS.has(abbrev.tag)) {
          const num = (v: FormValue | undefined): number | undefined => (v?.kind === "num" ? Number(v.value) : undefined);
          strOffsetsBase = num(get(DW_AT.str_offsets_base)) ?? strOffsetsBase;
          addrBase = num(get(DW_AT.addr_base)) ?? addrBase;
          rnglistsBase = num(get(DW_AT.rnglists_base)) ?? rnglistsBase;
        }
        pending.push(() => {
          const stmtList = get(DW_AT.stmt_list);
          const compDir = get(DW_AT.comp_dir);
          if (UNIT_TAGS.has(d.tag) && stmtList?.kind === "num" && compDir) {
            const dir = resolveStr(compDir);
            if (dir !== undefined) compDirs.set(Number(stmtList.value), dir);
          }
          const name = get(DW_AT.name);
          const linkage = get(DW_AT.linkage_name) ?? get(DW_AT.MIPS_linkage_name);
          if (name) d.name = resolveStr(name);
          if (linkage) d.linkageName = resolveStr(linkage);
          const spec = get(DW_AT.specification);
          if (spec?.kind === "ref") d.specification = spec.offset;
          const origin = get(DW_AT.abstract_origin);
          if (origin?.kind === "ref") d.abstractOrigin = origin.offset;
          const callFile = get(DW_AT.call_file);
          const callLine = get(DW_AT.call_line);
          if (callFile?.kind === "num") d.callFile = Number(callFile.value);
          if (callLine?.kind === "num") d.callLine = Number(callLine.value);
          d.lineTable = unitLineTable;
          const decl = get(DW_AT.declaration);
          d.declaration = decl?.kind === "num" && decl.value !== 0n;
          const low = get(DW_AT.low_pc);
          const high = values.get(DW_AT.high_pc);
          const lowPc = low ? resolveAddr(low) : undefined;
          if (UNIT_TAGS.has(d.tag)) return;
          if (lowPc !== undefined && high) {
            const highPc = high.value.kind === "num" ? lowPc + high.value.value : resolveAddr(high.value);
            if (highPc !== undefined) d.ranges.push([lowPc, highPc]);
          } else {
            const ranges = get(DW_AT.ranges);
            if (ranges) d.ranges.push(...readRanges(ranges));
          }
        });
        if (UNIT_TAGS.has(abbrev.tag)) {
          // The unit's low_pc is the base of its range lists: resolve it now (its addr_base is known).
          const low = get(DW_AT.low_pc);
          unitLowPc = (low && resolveAddr(low)) ?? 0n;
          const stmtList = get(DW_AT.stmt_list);
          unitLineTable = stmtList?.kind === "num" ? Number(stmtList.value) : undefined;
        }
      }
      if (abbrev.hasChildren) {
        parents.push(parent);
        if (die) parent = die;
      }
    }
    for (const resolve of pending) resolve();
    unitOffset = unitEnd;
  }
  return { dies, compDirs };
}

/** Demangles names with binutils' c++filt; a name it leaves as it is maps to undefined. */
async function demangle(names: string[]): Promise<Map<string, string | undefined>> {
  const result = new Map<string, string | undefined>();
  const unique = [...new Set(names)].filter((n) => !n.includes("\n"));
  if (unique.length === 0) return result;
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn("c++filt", [], { stdio: ["pipe", "pipe", "inherit"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(Buffer.concat(chunks).toString("utf8")) : reject(new Error(`c++filt exited with ${code}`)),
    );
    child.stdin.end(`${unique.join("\n")}\n`);
  });
  const lines = output.split("\n");
  unique.forEach((name, i) => {
    const out = lines[i];
    result.set(name, out !== undefined && out !== name ? out : undefined);
  });
  return result;
}

interface DwarfFunction {
  name: string;
  ranges: Array<[bigint, bigint]>;
}

/** A call the compiler inlined: where its code is, what it calls, and from where. */
interface DwarfInlinedCall {
  /** the called function's name, as its FUNC would be named */
  name: string;
  /** the inlined calls it sits in: 0 directly in a function */
  depth: number;
  ranges: Array<[bigint, bigint]>;
  callFile: string | undefined;
  callLine: number;
}

/** The functions with code that .debug_info describes, and the calls inlined into them, named as dump_syms names them. */
async function dwarfFunctions(
  dies: Map<number, Die>,
  fileTables: Map<number, string[]>,
): Promise<{ functions: DwarfFunction[]; inlinedCalls: DwarfInlinedCall[] }> {
  const withCode = [...dies.values()].filter((d) => d.tag === DW_TAG.subprogram && !d.declaration && d.ranges.length > 0);
  const inlined = [...dies.values()].filter((d) => d.tag === DW_TAG.inlined_subroutine && d.ranges.length > 0);

  // A linkage name: the DIE's own, else its specification's (a method's declaration in its
  // class), else its abstract origin's (the function an inlined or cloned copy comes from).
  const linkageOf = (d: Die | undefined, depth = 0): string | undefined => {
    if (!d || depth > 8) return undefined;
    if (d.linkageName) return d.linkageName;
    return linkageOf(dies.get(d.specification ?? -1), depth + 1) ?? linkageOf(dies.get(d.abstractOrigin ?? -1), depth + 1);
  };
  const demangled = await demangle([...withCode, ...inlined].map((d) => linkageOf(d)).filter((n): n is string => n !== undefined));

  const scopeName = (d: Die | undefined, depth = 0): string => {
    if (!d || !SCOPE_TAGS.has(d.tag) || depth > 32) return "";
    const spec = dies.get(d.specification ?? -1);
    const own = d.name ?? spec?.name ?? (d.tag === DW_TAG.namespace ? "(anonymous namespace)" : "<anonymous>");
    const outer = scopeName(spec ? spec.parent : d.parent, depth + 1);
    return outer ? `${outer}::${own}` : own;
  };
  const nameOf = (d: Die, depth = 0): string => {
    const linkage = linkageOf(d);
    const pretty = linkage === undefined ? undefined : demangled.get(linkage);
    if (pretty) return pretty;
    const origin = dies.get(d.abstractOrigin ?? -1);
    if (origin && depth < 8) return nameOf(origin, depth + 1);
    const spec = dies.get(d.specification ?? -1);
    const name = d.name ?? spec?.name ?? linkage;
    if (name === undefined) return "<name omitted>";
    const scope = scopeName(spec ? spec.parent : d.parent);
    return scope ? `${scope}::${name}` : name;
  };
  // Lexical blocks are not kept, so a call's kept parents are the calls it sits in, then its function.
  const depthOf = (d: Die): number => {
    let depth = 0;
    for (let p = d.parent; p?.tag === DW_TAG.inlined_subroutine && depth < 256; p = p.parent) depth++;
    return depth;
  };
  return {
    functions: withCode.map((d) => ({ name: nameOf(d), ranges: d.ranges })),
    inlinedCalls: inlined.map((d) => ({
      name: nameOf(d),
      depth: depthOf(d),
      ranges: d.ranges,
      callFile: d.lineTable === undefined || d.callFile === undefined ? undefined : fileTables.get(d.lineTable)?.[d.callFile],
      callLine: d.callLine ?? 0,
    })),
  };
}

// ---------------------------------------------------------------------------------------------
// The .sym file

/** Lower-case hex without a prefix, as the .sym format writes numbers. */
function hex(n: bigint): string {
  return n.toString(16);
}

export interface BreakpadSymbols {
  /** Breakpad module id (33 hex digits) */
  id: string;
  /** the module's base name */
  name: string;
  /** the GNU build id, lower-case hex */
  buildId: string;
  /** the .sym file's text */
  text: string;
}

export interface BreakpadSymbolsOptions {
  /** Write INLINE_ORIGIN and INLINE records, as dump_syms does when given -d. */
  inlines?: boolean;
}

/** The .sym text of an ELF built with -g (see the format at the top of this file). */
export async function breakpadSymbols(elfPath: string, options: BreakpadSymbolsOptions = {}): Promise<BreakpadSymbols> {
  const elf = parseElf(await readFile(elfPath));
  if (!elf.buildId) throw new Error(`${elfPath} has no GNU build id (link it with --build-id)`);
  const arch = ARCH_BY_MACHINE[elf.machine];
  if (!arch) throw new Error(`${elfPath}: unsupported ELF machine ${elf.machine}`);
  const name = path.basename(elfPath);
  const id = breakpadModuleId(elf.buildId);
  const base = elf.loadAddress;

  // Functions: one per address (the first wins), each range of a function a FUNC of its own.
  const funcs = new Map<bigint, { name: string; start: bigint; end: bigint }>();
  const { dies, compDirs } = readDebugInfo(elf);
  const fileTables = new Map<number, string[]>();
  const allRows = lineRowsOf(elf, compDirs, fileTables);
  const { functions, inlinedCalls } = await dwarfFunctions(dies, fileTables);
  for (const f of functions) {
    for (const [start, end] of f.ranges) {
      if (end > start && !funcs.has(start) && inCode(elf, start, end)) funcs.set(start, { name: f.name, start, end });
    }
  }
  const sortedFuncs = [...funcs.values()].sort((a, b) => (a.start < b.start ? -1 : 1));

  const rows = allRows.filter((r) => r.size > 0n);
  rows.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  /** the rows that overlap [start, end), cut to it */
  const rowsIn = (start: bigint, end: bigint): LineRow[] => {
    let lo = 0;
    let hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (rows[mid]!.address + rows[mid]!.size <= start) lo = mid + 1;
      else hi = mid;
    }
    const out: LineRow[] = [];
    for (let i = lo; i < rows.length && rows[i]!.address < end; i++) {
      const r = rows[i]!;
      const from = r.address > start ? r.address : start;
      const to = r.address + r.size < end ? r.address + r.size : end;
      if (to > from) out.push({ ...r, address: from, size: to - from });
    }
    return out;
  };
  /** the inlined calls with code in [start, end), their ranges cut to it, each after the call it sits in */
  const inlinedCallsIn = (start: bigint, end: bigint): DwarfInlinedCall[] => {
    if (!options.inlines) return [];
    const calls = inlinedCalls.flatMap((c) => {
      // A call without DW_AT_call_file has no call site an INLINE record could give.
      if (c.callFile === undefined) return [];
      const ranges = c.ranges
        .map(([s, e]): [bigint, bigint] => [s > start ? s : start, e < end ? e : end])
        .filter(([s, e]) => e > s)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return ranges.length > 0 ? [{ ...c, ranges }] : [];
    });
    const first = (c: DwarfInlinedCall): bigint => c.ranges[0]![0];
    return calls.sort((a, b) => (first(a) < first(b) ? -1 : first(a) > first(b) ? 1 : a.depth - b.depth));
  };
  const funcLines = sortedFuncs.map((f) => ({ ...f, lines: rowsIn(f.start, f.end), inlines: inlinedCallsIn(f.start, f.end) }));

  // PUBLIC records: defined STT_FUNC symbols where no FUNC starts, one per address.
  const publicSymbols = new Map<bigint, string>();
  for (const s of elfSymbols(elf)) {
    if (s.type === STT_FUNC && s.shndx !== 0 && s.name && !funcs.has(s.value) && !publicSymbols.has(s.value)) {
      publicSymbols.set(s.value, s.name);
    }
  }
  const publicNames = await demangle([...publicSymbols.values()]);

  const usedPaths = funcLines.flatMap((f) => [...f.lines.map((l) => l.file), ...f.inlines.map((c) => c.callFile ?? "")]);
  const paths = [...new Set(usedPaths)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const fileNumber = new Map(paths.map((p, i) => [p, i]));
  const origins = [...new Set(funcLines.flatMap((f) => f.inlines.map((c) => c.name)))].sort();
  const originNumber = new Map(origins.map((o, i) => [o, i]));

  const out: string[] = [`MODULE Linux ${arch} ${id} ${name}`, `INFO CODE_ID ${elf.buildId.toUpperCase()}`];
  paths.forEach((p, i) => out.push(`FILE ${i} ${p}`));
  origins.forEach((o, i) => out.push(`INLINE_ORIGIN ${i} ${o}`));
  for (const f of funcLines) {
    out.push(`FUNC ${hex(f.start - base)} ${hex(f.end - f.start)} 0 ${f.name}`);
    for (const c of f.inlines) {
      const ranges = c.ranges.map(([s, e]) => `${hex(s - base)} ${hex(e - s)}`).join(" ");
      out.push(`INLINE ${c.depth} ${c.callLine} ${fileNumber.get(c.callFile ?? "")} ${originNumber.get(c.name)} ${ranges}`);
    }
    for (const l of f.lines) out.push(`${hex(l.address - base)} ${hex(l.size)} ${l.line} ${fileNumber.get(l.file)}`);
  }
  for (const [address, mangled] of [...publicSymbols].sort(([a], [b]) => (a < b ? -1 : 1))) {
    out.push(`PUBLIC ${hex(address - base)} 0 ${publicNames.get(mangled) ?? mangled}`);
  }
  return { id, name, buildId: elf.buildId, text: `${out.join("\n")}\n` };
}

/**
 * Writes the .sym of an ELF built with -g into a symbol store, as <storeDir>/<name>/<id>/<name>.sym,
 * and returns its path, module id and name.
 */
export async function writeBreakpadSymbols(elf: string, storeDir: string, options: BreakpadSymbolsOptions = {}): Promise<BreakpadSymbolsResult> {
  const { id, name, text } = await breakpadSymbols(elf, options);
  const dir = path.resolve(storeDir, name, id);
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${name}.sym`);
  await writeFile(file, text);
  return { file, id, name };
}

