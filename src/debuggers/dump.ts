/**
 * Recognising a dump by its content, reading an ELF core's own notes (the program it came from,
 * its mapped files), and checking an executable against it by build-id. Pure file reads: no
 * debugger is involved, so bad input is caught before one is started.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";

export type DumpFormat = "elf-core" | "minidump";

export interface MappedFile {
  start: bigint;
  end: bigint;
  fileOffset: bigint;
  path: string;
}

export interface DumpInfo {
  path: string;
  format: DumpFormat;
  bytes: number;
  /** The program name the kernel recorded (at most 15 characters). */
  programName: string | null;
  /** The command line the kernel recorded (at most 80 characters). */
  commandLine: string | null;
  /** Files mapped into the process when it died (ELF cores from Linux). */
  mappedFiles: MappedFile[];
  /** The executable named by the core's own notes, whether or not it exists here. */
  executableFromNotes: string | null;
}

/** Bad input: the dump or executable is missing, unreadable, not a dump, or does not match. */
export class DumpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DumpError";
  }
}

const ET_CORE = 4;
const PT_LOAD = 1;
const PT_NOTE = 4;
const NT_PRPSINFO = 3;
const NT_FILE = 0x46494c45;
const NT_GNU_BUILD_ID = 3;

interface ElfHeader {
  is64: boolean;
  little: boolean;
  type: number;
  phoff: number;
  phentsize: number;
  phnum: number;
}

interface ProgramHeader {
  type: number;
  offset: number;
  vaddr: bigint;
  filesz: number;
}

/** Opens and recognises a dump; throws DumpError with a one-line reason when it is not one. */
export function inspectDump(path: string): DumpInfo {
  const full = resolve(path);
  const file = openChecked(full, "dump");
  try {
    const size = fstatSync(file).size;
    if (size === 0) throw new DumpError(`${path} is empty, not a crash dump`);
    const head = readAt(file, 0, 64);
    if (head.subarray(0, 4).toString("latin1") === "MDMP") {
      return { path: full, format: "minidump", bytes: size, programName: null, commandLine: null, mappedFiles: [], executableFromNotes: null };
    }
    if (!isElf(head)) {
      throw new DumpError(`${path} is not a crash dump (expected an ELF core file or a Windows minidump)`);
    }
    const header = elfHeader(head);
    if (header.type !== ET_CORE) {
      throw new DumpError(`${path} is an ELF ${header.type === 2 || header.type === 3 ? "program" : "file"}, not a core dump; pass the core file (and this file with --exe)`);
    }
    const phdrs = programHeaders(file, header, size, path);
    const end = phdrs.reduce((max, ph) => Math.max(max, ph.offset + ph.filesz), 0);
    if (end > size) {
      throw new DumpError(`${path} is truncated: its headers describe ${end} bytes but the file has ${size}; copy the whole core again`);
    }
    const info: DumpInfo = { path: full, format: "elf-core", bytes: size, programName: null, commandLine: null, mappedFiles: [], executableFromNotes: null };
    for (const ph of phdrs.filter((p) => p.type === PT_NOTE)) {
      for (const note of notes(readAt(file, ph.offset, ph.filesz), header.little)) {
        if (note.name === "CORE" && note.type === NT_PRPSINFO) readPrpsinfo(note.desc, header, info);
        if (note.name === "CORE" && note.type === NT_FILE) info.mappedFiles = readFileNote(note.desc, header);
      }
    }
    info.executableFromNotes = executableFromNotes(info);
    return info;
  } finally {
    closeSync(file);
  }
}

/**
 * The executable to load: `--exe` when given (checked to be an ELF program), else the one the core
 * names in its notes. Throws DumpError naming what was looked for when there is none.
 */
export function resolveExecutable(dump: DumpInfo, exe: string | undefined): string | null {
  if (exe !== undefined) {
    const full = resolve(exe);
    const file = openChecked(full, "executable");
    try {
      const head = readAt(file, 0, 64);
      if (!isElf(head) || elfHeader(head).type === ET_CORE) {
        throw new DumpError(`--exe ${exe} is not an ELF executable`);
      }
    } finally {
      closeSync(file);
    }
    return full;
  }
  if (dump.format !== "elf-core") return null;
  const named = dump.executableFromNotes;
  if (!named) {
    throw new DumpError(`${dump.path} does not name its executable in its notes; pass it with --exe PATH`);
  }
  const candidates = [named, resolve(dirname(dump.path), basename(named))];
  for (const candidate of candidates) {
    if (isFile(candidate)) return candidate;
  }
  throw new DumpError(`the executable of this core was not found: looked for ${candidates.join(" and ")}; pass it with --exe PATH`);
}

/**
 * Compares the executable's build-id with the one in the core's copy of its first page.
 * Returns a warning line on a mismatch, null when they match or either id is unavailable.
 */
export function buildIdMismatch(dump: DumpInfo, exe: string): string | null {
  if (dump.format !== "elf-core") return null;
  const exeId = executableBuildId(exe);
  const coreId = coreBuildId(dump, exe);
  if (!exeId || !coreId || exeId === coreId) return null;
  return `${exe} does not match the core (build-id ${exeId}, the core's program has ${coreId}); symbols and source lines may be wrong`;
}

function executableBuildId(exe: string): string | null {
  const file = openSync(exe, "r");
  try {
    const size = fstatSync(file).size;
    const header = elfHeader(readAt(file, 0, 64));
    for (const ph of programHeaders(file, header, size, exe).filter((p) => p.type === PT_NOTE)) {
      if (ph.offset + ph.filesz > size) continue;
      for (const note of notes(readAt(file, ph.offset, ph.filesz), header.little)) {
        if (note.name === "GNU" && note.type === NT_GNU_BUILD_ID) return note.desc.toString("hex");
      }
    }
    return null;
  } finally {
    closeSync(file);
  }
}

/** The kernel dumps the first page of every ELF mapping, which holds the build-id note. */
function coreBuildId(dump: DumpInfo, exe: string): string | null {
  const mapping =
    dump.mappedFiles.find((m) => m.fileOffset === 0n && m.path === exe) ??
    dump.mappedFiles.find((m) => m.fileOffset === 0n && m.path === dump.executableFromNotes);
  if (!mapping) return null;
  const file = openSync(dump.path, "r");
  try {
    const size = fstatSync(file).size;
    const header = elfHeader(readAt(file, 0, 64));
    const load = programHeaders(file, header, size, dump.path).find((p) => p.type === PT_LOAD && p.vaddr === mapping.start);
    if (!load || load.filesz === 0) return null;
    const page = readAt(file, load.offset, Math.min(load.filesz, 8192));
    return findBuildIdNote(page);
  } finally {
    closeSync(file);
  }
}

function findBuildIdNote(page: Buffer): string | null {
  const marker = Buffer.from("GNU\0", "latin1");
  for (let at = page.indexOf(marker); at >= 12; at = page.indexOf(marker, at + 1)) {
    const namesz = page.readUInt32LE(at - 12);
    const descsz = page.readUInt32LE(at - 8);
    const type = page.readUInt32LE(at - 4);
    if (namesz === 4 && type === NT_GNU_BUILD_ID && descsz >= 8 && descsz <= 64 && at + 4 + descsz <= page.length) {
      return page.subarray(at + 4, at + 4 + descsz).toString("hex");
    }
  }
  return null;
}

function executableFromNotes(info: DumpInfo): string | null {
  const firstMappings = info.mappedFiles.filter((m) => m.fileOffset === 0n);
  const byName = info.programName
    ? firstMappings.find((m) => basename(m.path).startsWith(info.programName!))
    : undefined;
  const chosen = byName ?? firstMappings[0];
  if (chosen) return chosen.path.replace(/ \(deleted\)$/, "");
  const argv0 = info.commandLine?.split(" ")[0];
  return argv0 ? argv0 : null;
}

function readPrpsinfo(desc: Buffer, header: ElfHeader, info: DumpInfo): void {
  const fnameAt = header.is64 ? 40 : 28;
  if (desc.length < fnameAt + 96) return;
  info.programName = cString(desc.subarray(fnameAt, fnameAt + 16)) || null;
  info.commandLine = cString(desc.subarray(fnameAt + 16, fnameAt + 96)).trim() || null;
}

function readFileNote(desc: Buffer, header: ElfHeader): MappedFile[] {
  const word = header.is64 ? 8 : 4;
  const read = (at: number): bigint =>
    header.is64
      ? header.little ? desc.readBigUInt64LE(at) : desc.readBigUInt64BE(at)
      : BigInt(header.little ? desc.readUInt32LE(at) : desc.readUInt32BE(at));
  if (desc.length < 2 * word) return [];
  const count = Number(read(0));
  const tableEnd = 2 * word + count * 3 * word;
  if (count > 1_000_000 || tableEnd > desc.length) return [];
  const names = desc.subarray(tableEnd).toString("utf8").split("\0");
  const files: MappedFile[] = [];
  for (let i = 0; i < count; i++) {
    const at = 2 * word + i * 3 * word;
    files.push({ start: read(at), end: read(at + word), fileOffset: read(at + 2 * word) * read(word), path: names[i] ?? "" });
  }
  return files;
}

interface Note {
  name: string;
  type: number;
  desc: Buffer;
}

function notes(data: Buffer, little: boolean): Note[] {
  const found: Note[] = [];
  const u32 = (at: number) => (little ? data.readUInt32LE(at) : data.readUInt32BE(at));
  let at = 0;
  while (at + 12 <= data.length) {
    const namesz = u32(at);
    const descsz = u32(at + 4);
    const type = u32(at + 8);
    const nameAt = at + 12;
    const descAt = nameAt + align4(namesz);
    if (descAt + descsz > data.length) break;
    found.push({ name: cString(data.subarray(nameAt, nameAt + namesz)), type, desc: data.subarray(descAt, descAt + descsz) });
    at = descAt + align4(descsz);
  }
  return found;
}

function programHeaders(file: number, header: ElfHeader, size: number, path: string): ProgramHeader[] {
  const tableBytes = header.phentsize * header.phnum;
  if (header.phoff + tableBytes > size || header.phentsize < (header.is64 ? 56 : 32)) {
    throw new DumpError(`${path} is truncated or corrupt: its program headers lie outside the file`);
  }
  const table = readAt(file, header.phoff, tableBytes);
  const headers: ProgramHeader[] = [];
  for (let i = 0; i < header.phnum; i++) {
    const at = i * header.phentsize;
    const u32 = (o: number) => (header.little ? table.readUInt32LE(at + o) : table.readUInt32BE(at + o));
    const u64 = (o: number) => (header.little ? table.readBigUInt64LE(at + o) : table.readBigUInt64BE(at + o));
    headers.push(
      header.is64
        ? { type: u32(0), offset: Number(u64(8)), vaddr: u64(16), filesz: Number(u64(32)) }
        : { type: u32(0), offset: u32(4), vaddr: BigInt(u32(8)), filesz: u32(16) },
    );
  }
  return headers;
}

function elfHeader(head: Buffer): ElfHeader {
  const is64 = head[4] === 2;
  const little = head[5] !== 2;
  const u16 = (o: number) => (little ? head.readUInt16LE(o) : head.readUInt16BE(o));
  const u32 = (o: number) => (little ? head.readUInt32LE(o) : head.readUInt32BE(o));
  const u64 = (o: number) => Number(little ? head.readBigUInt64LE(o) : head.readBigUInt64BE(o));
  return is64
    ? { is64, little, type: u16(16), phoff: u64(32), phentsize: u16(54), phnum: u16(56) }
    : { is64, little, type: u16(16), phoff: u32(28), phentsize: u16(42), phnum: u16(44) };
}

function isElf(head: Buffer): boolean {
  return head.length >= 52 && head[0] === 0x7f && head.subarray(1, 4).toString("latin1") === "ELF" && (head[4] === 1 || head[4] === 2);
}

function openChecked(path: string, what: string): number {
  let stat;
  try {
    stat = statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new DumpError(code === "ENOENT" ? `${what} not found: ${path}` : `cannot read ${what} ${path}: ${code ?? (error as Error).message}`);
  }
  if (stat.isDirectory()) throw new DumpError(`${path} is a directory, not a ${what} file`);
  try {
    return openSync(path, "r");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new DumpError(`cannot read ${what} ${path}: ${code === "EACCES" ? "permission denied" : code ?? (error as Error).message}`);
  }
}

function readAt(file: number, offset: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  const read = readSync(file, buffer, 0, length, offset);
  return buffer.subarray(0, read);
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function cString(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? bytes.length : end).toString("utf8");
}

function align4(n: number): number {
  return (n + 3) & ~3;
}
