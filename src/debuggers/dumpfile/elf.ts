/**
 * The ELF container, as far as dumps need it: the file header, program headers, notes, and the
 * GNU build id of a program on disk or of an image's first page as a core holds it.
 */
import { checkedCount, cString, DumpFile, DumpFileError, Fields, toOffset } from "./file.js";

export const ET_CORE = 4;
export const PT_LOAD = 1;
export const PT_NOTE = 4;

/** Section header 0 holds the real count when a core has this many segments or more. */
const PN_XNUM = 0xffff;
/** A program header's flag: the segment is executable. */
export const PF_X = 1;
const NT_GNU_BUILD_ID = 3;
/** Enough for the 65530 mappings Linux allows by default and the 262144 some servers set. */
const MAX_PROGRAM_HEADERS = 1_000_000;
/** The notes of a program on disk are a few hundred bytes in all; past this many, no build-id note is looked for. */
const MAX_PROGRAM_NOTES_BYTES = 1024 * 1024;

export const EM_386 = 3;
export const EM_ARM = 40;
export const EM_X86_64 = 62;
export const EM_AARCH64 = 183;

export interface ElfHeader {
  is64: boolean;
  little: boolean;
  type: number;
  machine: number;
  /** Where the program starts, at the addresses the file names (a PIE's are moved by its load base). */
  entry: bigint;
  phoff: number;
  phentsize: number;
  phnum: number;
  shoff: number;
}

export interface ProgramHeader {
  type: number;
  /** PF_X 1, PF_W 2, PF_R 4. */
  flags: number;
  offset: number;
  vaddr: bigint;
  filesz: number;
  memsz: bigint;
  align: number;
}

export interface Note {
  name: string;
  type: number;
  desc: Buffer;
}

/** The first bytes of a file start an ELF file of either class. */
export function isElf(head: Buffer): boolean {
  return head.length >= 52 && head[0] === 0x7f && head.subarray(1, 4).toString("latin1") === "ELF" && (head[4] === 1 || head[4] === 2);
}

/** The file header from the file's first 64 bytes (52 suffice for a 32-bit file). */
export function readElfHeader(head: Buffer): ElfHeader {
  const is64 = head[4] === 2;
  const little = head[5] !== 2;
  const fields = new Fields(head, "the ELF header", little);
  return is64
    ? {
        is64,
        little,
        type: fields.u16(16),
        machine: fields.u16(18),
        entry: fields.u64(24),
        phoff: toOffset(fields.u64(32), "the program header offset"),
        shoff: toOffset(fields.u64(40), "the section header offset"),
        phentsize: fields.u16(54),
        phnum: fields.u16(56),
      }
    : {
        is64,
        little,
        type: fields.u16(16),
        machine: fields.u16(18),
        entry: BigInt(fields.u32(24)),
        phoff: fields.u32(28),
        shoff: fields.u32(32),
        phentsize: fields.u16(42),
        phnum: fields.u16(44),
      };
}

const ET_DYN = 3;

/**
 * How far the loader moved a program from the addresses its file names: a PIE (ET_DYN) by where the
 * kernel entered it (the core's AT_ENTRY) less the entry its file names; null for a PIE whose entry
 * is not known; 0 for a program loaded where it was linked.
 */
export function loadBias(header: ElfHeader, processEntry: bigint | null): bigint | null {
  if (header.type !== ET_DYN) return 0n;
  return processEntry === null ? null : processEntry - header.entry;
}

/** The program header table of a file; a table outside the file is a DumpFileError. */
export function readProgramHeaders(file: DumpFile, header: ElfHeader): ProgramHeader[] {
  const count = header.phnum === PN_XNUM ? realSegmentCount(file, header) : header.phnum;
  checkedCount(count, MAX_PROGRAM_HEADERS, "the program header table");
  if (header.phentsize < (header.is64 ? 56 : 32)) throw new DumpFileError(`its program headers are ${header.phentsize} bytes, too small`);
  const tableBytes = header.phentsize * count;
  if (header.phoff + tableBytes > file.size) throw new DumpFileError("its program headers lie outside the file");
  return parseProgramHeaders(file.read(header.phoff, tableBytes, "the program header table"), header, count);
}

/**
 * How many bytes a core's headers describe (the end of its last segment, or of the section header
 * table gdb's gcore writes after them), read from the file's first bytes alone; null when they are
 * not an ELF core or its tables cannot be placed from them. A compressed core is bounded by it
 * while it is unpacked: the core says how big it may be.
 */
export function coreExtent(head: Buffer): number | null {
  if (!isElf(head)) return null;
  const header = readElfHeader(head);
  if (header.type !== ET_CORE || header.phnum === PN_XNUM || header.phentsize < (header.is64 ? 56 : 32)) return null;
  const tableEnd = header.phoff + header.phentsize * header.phnum;
  if (tableEnd > head.length) return null;
  const fields = new Fields(head, "the ELF header", header.little);
  const sectionSize = fields.u16(header.is64 ? 58 : 46);
  const sections = fields.u16(header.is64 ? 60 : 48);
  // More sections than the header can count are counted in section 0, which lies beyond the head.
  if (header.shoff !== 0 && sections === 0) return null;
  const segments = parseProgramHeaders(head.subarray(header.phoff, tableEnd), header, header.phnum);
  return segments.reduce((end, s) => Math.max(end, s.offset + s.filesz), Math.max(tableEnd, header.shoff + sectionSize * sections));
}

function realSegmentCount(file: DumpFile, header: ElfHeader): number {
  const entry = new Fields(file.read(header.shoff, header.is64 ? 64 : 40, "section header 0"), "section header 0", header.little);
  return entry.u32(header.is64 ? 44 : 28);
}

function parseProgramHeaders(table: Buffer, header: ElfHeader, count: number): ProgramHeader[] {
  const fields = new Fields(table, "the program header table", header.little);
  const headers: ProgramHeader[] = [];
  for (let i = 0; i < count; i++) {
    const at = i * header.phentsize;
    headers.push(
      header.is64
        ? {
            type: fields.u32(at),
            flags: fields.u32(at + 4),
            offset: toOffset(fields.u64(at + 8), "a segment's offset"),
            vaddr: fields.u64(at + 16),
            filesz: toOffset(fields.u64(at + 32), "a segment's size"),
            memsz: fields.u64(at + 40),
            align: toOffset(fields.u64(at + 48), "a segment's alignment"),
          }
        : {
            type: fields.u32(at),
            offset: fields.u32(at + 4),
            vaddr: BigInt(fields.u32(at + 8)),
            filesz: fields.u32(at + 16),
            memsz: BigInt(fields.u32(at + 20)),
            flags: fields.u32(at + 24),
            align: fields.u32(at + 28),
          },
    );
  }
  return headers;
}

/**
 * The notes of one PT_NOTE segment. A note that runs past the segment ends the walk: the notes
 * before it are returned, and `problem` says where it stopped.
 */
export function parseNotes(data: Buffer, little: boolean, align: number): { notes: Note[]; problem: string | null } {
  const notes: Note[] = [];
  const problem = forEachNote(data, little, align, (note) => notes.push(note));
  return { notes, problem };
}

/**
 * Hands each note of one PT_NOTE segment to `visit` as it is met, keeping none: a segment of
 * 64 MiB may hold millions. Returns where a note that runs past the segment ended the walk.
 */
export function forEachNote(data: Buffer, little: boolean, align: number, visit: (note: Note) => void): string | null {
  const pad = align === 8 ? 8 : 4;
  const round = (n: number) => Math.ceil(n / pad) * pad;
  const fields = new Fields(data, "a note segment", little);
  let at = 0;
  while (at + 12 <= data.length) {
    const namesz = fields.u32(at);
    const descsz = fields.u32(at + 4);
    const type = fields.u32(at + 8);
    const nameAt = at + 12;
    const descAt = nameAt + round(namesz);
    if (descAt + descsz > data.length) {
      return `a note of type 0x${type.toString(16)} at ${at} runs past the end of its segment (${data.length} bytes)`;
    }
    visit({ name: cString(data.subarray(nameAt, nameAt + namesz)), type, desc: data.subarray(descAt, descAt + descsz) });
    at = descAt + round(descsz);
  }
  return null;
}

/** The GNU build id among notes, in hex. */
export function buildIdOf(notes: Note[]): string | null {
  const note = notes.find((n) => n.name === "GNU" && n.type === NT_GNU_BUILD_ID && n.desc.length > 0);
  return note ? note.desc.toString("hex") : null;
}

/** The build id of an ELF program or library on disk; null when it has none or is not ELF. */
export function programBuildId(file: DumpFile): string | null {
  const head = file.read(0, Math.min(64, file.size), "the ELF header");
  if (!isElf(head)) return null;
  const header = readElfHeader(head);
  let noteBytes = 0;
  for (const ph of readProgramHeaders(file, header)) {
    if (ph.type !== PT_NOTE || ph.offset + ph.filesz > file.size) continue;
    noteBytes += ph.filesz;
    if (noteBytes > MAX_PROGRAM_NOTES_BYTES) return null;
    const id = buildIdOf(parseNotes(file.read(ph.offset, ph.filesz, "a note segment"), header.little, ph.align).notes);
    if (id) return id;
  }
  return null;
}

/**
 * The build id in an ELF image's first bytes as they were mapped (file offset 0): the header,
 * the program headers and the notes they point to, where these lie within `image`.
 */
export function imageBuildId(image: Buffer): string | null {
  if (!isElf(image)) return null;
  const header = readElfHeader(image);
  if (header.phnum === PN_XNUM || header.phentsize < (header.is64 ? 56 : 32)) return null;
  const tableEnd = header.phoff + header.phentsize * header.phnum;
  if (tableEnd > image.length) return null;
  const headers = parseProgramHeaders(image.subarray(header.phoff, tableEnd), header, header.phnum);
  // Real note segments do not overlap; headers that name the same bytes again are not walked again.
  let noteBytes = 0;
  for (const ph of headers) {
    if (ph.type !== PT_NOTE || ph.offset + ph.filesz > image.length) continue;
    noteBytes += ph.filesz;
    if (noteBytes > image.length) return null;
    const id = buildIdOf(parseNotes(image.subarray(ph.offset, ph.offset + ph.filesz), header.little, ph.align).notes);
    if (id) return id;
  }
  return null;
}

/**
 * The code of an ELF image whose first page, `image`, is mapped at `base`: the addresses of its
 * executable PT_LOAD segments there. Empty when the page holds no complete program header table.
 */
export function imageCodeRanges(image: Buffer, base: bigint): { start: bigint; end: bigint }[] {
  if (!isElf(image)) return [];
  const header = readElfHeader(image);
  if (header.phnum === PN_XNUM || header.phentsize < (header.is64 ? 56 : 32)) return [];
  const tableEnd = header.phoff + header.phentsize * header.phnum;
  if (tableEnd > image.length) return [];
  const loads = parseProgramHeaders(image.subarray(header.phoff, tableEnd), header, header.phnum).filter((ph) => ph.type === PT_LOAD);
  const lowest = loads.reduce<bigint | null>((min, ph) => (min === null || ph.vaddr < min ? ph.vaddr : min), null);
  if (lowest === null) return [];
  // The first page maps the lowest segment's page: a shared object's at 0, a fixed executable's at its own address.
  const bias = base - (lowest & ~0xfffn);
  return loads.filter((ph) => ph.flags & PF_X).map((ph) => ({ start: bias + ph.vaddr, end: bias + ph.vaddr + ph.memsz }));
}

/** More sections than any real program has; a count past it is damage, not a program. */
const MAX_SECTIONS = 100_000;
/** The section names' string table of a real program is a few KiB. */
const MAX_SECTION_NAMES_BYTES = 1024 * 1024;

/** One section of an ELF file as its header gives it. */
export interface ElfSection {
  name: string;
  type: number;
  /** Its `sh_flags` (SHF_COMPRESSED: its contents are compressed). */
  flags: bigint;
  /** Where it is loaded (0 for a section that is not). */
  address: bigint;
  offset: number;
  size: number;
  /** The index of the section it links to (a symbol table's string table). */
  link: number;
  entrySize: number;
}

/**
 * An ELF file's sections, from its section header table and the string table it names; empty when
 * the file has none (a stripped-of-sections file, a core). Bounded like the rest.
 */
export function elfSections(file: DumpFile): ElfSection[] {
  const head = file.read(0, Math.min(64, file.size), "the ELF header");
  if (!isElf(head)) return [];
  const header = readElfHeader(head);
  const fields = new Fields(head, "the ELF header", header.little);
  const entrySize = fields.u16(header.is64 ? 58 : 46);
  let count = fields.u16(header.is64 ? 60 : 48);
  let namesIndex = fields.u16(header.is64 ? 62 : 50);
  if (header.shoff === 0 || entrySize < (header.is64 ? 64 : 40)) return [];
  const entry = (i: number) => new Fields(file.read(header.shoff + i * entrySize, entrySize, "a section header"), "a section header", header.little);
  // A file of 0xff00 sections or more keeps the real count and names index in section 0.
  if (count === 0) count = entry(0).u32(header.is64 ? 32 : 20);
  if (namesIndex === 0xffff) namesIndex = entry(0).u32(header.is64 ? 40 : 24);
  checkedCount(count, MAX_SECTIONS, "the section header table");
  if (namesIndex >= count) return [];
  file.checkRange(header.shoff, entrySize * count, "the section header table");
  const table = new Fields(file.read(header.shoff, entrySize * count, "the section header table"), "the section header table", header.little);
  const at = (i: number) => i * entrySize;
  const section = (i: number): Omit<ElfSection, "name"> & { nameAt: number } =>
    header.is64
      ? {
          nameAt: table.u32(at(i)),
          type: table.u32(at(i) + 4),
          flags: table.u64(at(i) + 8),
          address: table.u64(at(i) + 16),
          offset: toOffset(table.u64(at(i) + 24), "a section's offset"),
          size: toOffset(table.u64(at(i) + 32), "a section's size"),
          link: table.u32(at(i) + 40),
          entrySize: toOffset(table.u64(at(i) + 56), "a section's entry size"),
        }
      : {
          nameAt: table.u32(at(i)),
          type: table.u32(at(i) + 4),
          flags: BigInt(table.u32(at(i) + 8)),
          address: BigInt(table.u32(at(i) + 12)),
          offset: table.u32(at(i) + 16),
          size: table.u32(at(i) + 20),
          link: table.u32(at(i) + 24),
          entrySize: table.u32(at(i) + 36),
        };
  const names = section(namesIndex);
  if (names.size > MAX_SECTION_NAMES_BYTES) throw new DumpFileError(`its section names claim ${names.size} bytes`);
  const strings = file.read(names.offset, names.size, "the section names");
  const result: ElfSection[] = [];
  for (let i = 0; i < count; i++) {
    const { nameAt, ...rest } = section(i);
    if (nameAt >= strings.length) continue;
    result.push({ name: cString(strings.subarray(nameAt)), ...rest });
  }
  return result;
}

/** A dynamic symbol table of a real program holds tens of thousands of symbols; past this many, the rest are not looked at. */
const MAX_DYNAMIC_SYMBOLS = 1_000_000;
const SHN_UNDEF = 0;

/**
 * The addresses, as the file names them (before any load bias), of those of `names` that the file
 * defines in its dynamic symbol table (.dynsym, which `strip` keeps); a name it does not define is
 * absent from the result. Bounded like the rest.
 */
export function dynamicSymbols(file: DumpFile, names: readonly string[]): Map<string, bigint> {
  const found = new Map<string, bigint>();
  const sections = elfSections(file);
  const table = sections.find((section) => section.name === ".dynsym");
  const strings = table ? sections[table.link] : undefined;
  if (!table || !strings) return found;
  const header = readElfHeader(file.read(0, Math.min(64, file.size), "the ELF header"));
  const entrySize = header.is64 ? 24 : 16;
  if (table.entrySize !== 0 && table.entrySize < entrySize) throw new DumpFileError(`its dynamic symbols are ${table.entrySize} bytes, too small`);
  const step = table.entrySize || entrySize;
  const count = checkedCount(Math.floor(table.size / step), MAX_DYNAMIC_SYMBOLS, "the dynamic symbol table");
  const symbols = new Fields(file.read(table.offset, count * step, "the dynamic symbol table"), "the dynamic symbol table", header.little);
  const text = file.read(strings.offset, strings.size, "the dynamic symbols' names");
  const wanted = new Set(names);
  for (let i = 0; i < count && found.size < wanted.size; i++) {
    const at = i * step;
    const nameAt = symbols.u32(at);
    const shndx = symbols.u16(at + (header.is64 ? 6 : 14));
    if (shndx === SHN_UNDEF || nameAt >= text.length) continue;
    const name = cString(text.subarray(nameAt));
    if (wanted.has(name) && !found.has(name)) found.set(name, header.is64 ? symbols.u64(at + 8) : BigInt(symbols.u32(at + 4)));
  }
  return found;
}

/**
 * Where an ELF file on disk, mapped from its start at `base`, was moved from the addresses it
 * names: `base` less the page its lowest PT_LOAD segment starts on. 0 for a program loaded where it
 * was linked; null for a file without segments.
 */
export function mappedBias(file: DumpFile, base: bigint): bigint | null {
  const header = readElfHeader(file.read(0, Math.min(64, file.size), "the ELF header"));
  const loads = readProgramHeaders(file, header).filter((ph) => ph.type === PT_LOAD);
  const lowest = loads.reduce<ProgramHeader | null>((min, ph) => (min === null || ph.vaddr < min.vaddr ? ph : min), null);
  if (lowest === null) return null;
  return base - ((lowest.vaddr - BigInt(lowest.offset)) & ~0xfffn);
}

/** The names of an ELF file's sections. */
export function sectionNames(file: DumpFile): string[] {
  return elfSections(file).map((section) => section.name);
}

/** Sections only the Go toolchain writes: its build information, its build id note, its pc-line table. */
const GO_SECTIONS = new Set([".go.buildinfo", ".note.go.buildid", ".gopclntab"]);

/** Whether an ELF file carries DWARF debug information (`-ldflags=-w` and `strip` remove it); false for anything unreadable. */
export function hasDwarf(path: string): boolean {
  let file: DumpFile | null = null;
  try {
    file = DumpFile.open(path);
    return sectionNames(file).some((name) => name === ".debug_info" || name === ".zdebug_info");
  } catch {
    return false;
  } finally {
    file?.close();
  }
}

/** Whether an ELF program was built by Go, by its sections; false for anything unreadable. */
export function isGoProgram(path: string): boolean {
  let file: DumpFile | null = null;
  try {
    file = DumpFile.open(path);
    return sectionNames(file).some((name) => GO_SECTIONS.has(name));
  } catch {
    return false;
  } finally {
    file?.close();
  }
}
