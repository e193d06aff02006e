/**
 * What a Linux ELF core says about itself, read from its notes and segments: the signal and who
 * sent it, each thread's registers, the process, its mapped files, its modules with their build
 * ids, and its address space. Only headers, notes and a few pages are read, never the whole core.
 */
import type { Address, MemoryRegion, Module, Platform, SignalStop } from "../model.js";
import { EM_386, EM_AARCH64, EM_ARM, EM_X86_64, forEachNote, imageBuildId, imageCodeRanges, PF_X, PT_LOAD, PT_NOTE, readElfHeader, readProgramHeaders, type ElfHeader, type Note, type ProgramHeader } from "./elf.js";
import { coreCut, type CoreCut } from "./core-cut.js";
import { checkedCount, cString, DumpFile, DumpFileError, Fields, hex, partial, SortedRanges } from "./file.js";

/** A file mapped into the process, from NT_FILE. */
export interface MappedFile {
  start: bigint;
  end: bigint;
  fileOffset: bigint;
  path: string;
}

export interface CoreThread {
  /** The kernel's thread id (pr_pid). */
  lwp: number;
  /** The signal pending for the thread when it was dumped (pr_cursig); 0 for none. */
  signal: number;
  /** General registers by gdb's names (`rip`, `rsp`, `x29`, `pc`); empty for an unknown architecture. */
  registers: Record<string, Address>;
}

export interface Auxv {
  /** Every AT_* pair, in the order the kernel wrote them. */
  pairs: { type: number; value: Address }[];
  phdr: Address | null;
  entry: Address | null;
  /** Where the vDSO was mapped. */
  sysinfoEhdr: Address | null;
  /** Where the path the program was run by lies, and that path, read from the core's copy of the stack. */
  execfn: Address | null;
  execfnPath: string | null;
  /** Where the platform string lies (`x86_64`), and that string. */
  platform: Address | null;
  platformName: string | null;
}

export interface ElfCoreFacts {
  format: "elf-core";
  platform: Platform;
  /** The signal that killed the process: the first thread's (the one that got it) current signal and its NT_SIGINFO; null for a dump of a live process. */
  stopReason: SignalStop | null;
  /** In the core's order: the thread that received the signal comes first. */
  threads: CoreThread[];
  /** Files mapped from offset 0 that hold code or an ELF header, with the build id from the core's copy of their first page. */
  modules: Module[];
  /** One per PT_LOAD segment, named by the NT_FILE mapping it falls in. */
  regions: MemoryRegion[];
  mappedFiles: MappedFile[];
  auxv: Auxv | null;
  /** The program name the kernel recorded (at most 15 characters). */
  programName: string | null;
  /** The command line the kernel recorded (at most 80 characters). */
  commandLine: string | null;
  pid: number | null;
  uid: number | null;
  /** Bytes the program headers describe; a smaller file was cut short. */
  expectedBytes: number;
  /** What a core cut short lost (and whether its notes went with it); null for a whole core. */
  cut: CoreCut | null;
  /** What was malformed and skipped; the rest was still read. */
  problems: string[];
}

const NT_PRSTATUS = 1;
const NT_PRPSINFO = 3;
const NT_AUXV = 6;
const NT_SIGINFO = 0x53494749;
const NT_FILE = 0x46494c45;

const SIGILL = 4;
const SIGBUS = 7;
const SIGFPE = 8;
const SIGSEGV = 11;
const FAULT_SIGNALS = new Set([SIGILL, SIGBUS, SIGFPE, SIGSEGV]);
/** The signals whose default action dumps core (signal(7)): only these leave a core of a process they killed. */
const CORE_SIGNALS = new Set([3, SIGILL, 5, 6, SIGBUS, SIGFPE, SIGSEGV, 24, 25, 31]);
const SI_USER = 0;
const SI_QUEUE = -1;
const SI_TKILL = -6;
const SI_KERNEL = 0x80;
const SENT_BY_PROCESS = new Set([SI_USER, SI_QUEUE, SI_TKILL]);

const AT_NULL = 0;
const AT_PHDR = 3;
const AT_ENTRY = 9;
const AT_PLATFORM = 15;
const AT_EXECFN = 31;
const AT_SYSINFO_EHDR = 33;

const PF_W = 2;
const PF_R = 4;

const MAX_THREADS = 100_000;
/** As much as one read may take: the notes of a core of thousands of threads stay below it. */
const MAX_NOTE_BYTES = 64 * 1024 * 1024;
/** Processes map a few hundred ELF files, rarely a few thousand; the first page of each is read for its build id. */
const MAX_FIRST_PAGES = 10_000;
const MAX_MAPPED_FILES = 1_000_000;
const MAX_AUXV_PAIRS = 1024;
/** The kernel dumps one page of each ELF mapping; a bigger read would not find more headers. */
const FIRST_PAGE_BYTES = 8192;
const MAX_STRING_BYTES = 4096;

/** The general registers in `user_regs_struct` order, by gdb's names. */
const REGISTER_NAMES: Record<number, string[]> = {
  [EM_X86_64]: ["r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs"],
  [EM_386]: ["ebx", "ecx", "edx", "esi", "edi", "ebp", "eax", "ds", "es", "fs", "gs", "orig_eax", "eip", "cs", "eflags", "esp", "ss"],
  [EM_AARCH64]: [...Array.from({ length: 31 }, (_, i) => `x${i}`), "sp", "pc", "cpsr"],
  [EM_ARM]: [...Array.from({ length: 13 }, (_, i) => `r${i}`), "sp", "lr", "pc", "cpsr", "orig_r0"],
};

const ARCHES: Record<number, Platform["arch"]> = { [EM_X86_64]: "x86_64", [EM_386]: "x86", [EM_AARCH64]: "arm64", [EM_ARM]: "arm" };

/** Reads an ELF core's facts; a DumpFileError only when its program headers cannot be read at all. */
export function readElfCore(file: DumpFile): ElfCoreFacts {
  const header = readElfHeader(file.read(0, Math.min(64, file.size), "the ELF header"));
  const segments = readProgramHeaders(file, header);
  const problems: string[] = [];
  const notes = readCoreNotes(file, header, segments.filter((s) => s.type === PT_NOTE), problems);
  const loads = segments.filter((s) => s.type === PT_LOAD);
  const pointerSize = header.is64 ? 8 : 4;

  const { threads, prpsinfo, fileNote, auxvNote } = notes;
  const process = prpsinfo ? partial(problems, null, () => readPrpsinfo(prpsinfo, header)) : null;
  const mappedFiles = fileNote ? partial(problems, [], () => readFileNote(fileNote, header)) : [];
  const memory = new CoreMemory(file, loads);
  const mappings = new SortedRanges(mappedFiles, (m) => m.start, (m) => m.end);
  const auxv = auxvNote ? partial(problems, null, () => readAuxv(auxvNote, header, memory)) : null;

  return {
    format: "elf-core",
    platform: { os: notes.fromLinux ? "linux" : "other", arch: ARCHES[header.machine] ?? "other", pointerSize },
    stopReason: fatalSignal(notes.siginfo, threads[0] ?? null, problems),
    threads,
    modules: partial(problems, [], () => modulesOf(mappedFiles, loads, memory, problems)),
    regions: regionsOf(loads, mappings),
    mappedFiles,
    auxv,
    programName: process?.programName ?? null,
    commandLine: process?.commandLine ?? null,
    pid: process?.pid ?? null,
    uid: process?.uid ?? null,
    expectedBytes: segments.reduce((max, s) => Math.max(max, s.offset + s.filesz), 0),
    cut: coreCut(segments, file.size, mappedFiles, threads),
    problems,
  };
}

interface CoreNotes {
  /** Some note is named CORE, as Linux and gdb name theirs. */
  fromLinux: boolean;
  threads: CoreThread[];
  /** The first thread's NT_SIGINFO. */
  siginfo: SignalStop | null;
  /** The descriptions of the first NT_PRPSINFO, NT_FILE and NT_AUXV. */
  prpsinfo: Buffer | null;
  fileNote: Buffer | null;
  auxvNote: Buffer | null;
}

/**
 * Walks the notes of every PT_NOTE segment once, reading each note it needs as it meets it. A
 * real core has one note segment; past MAX_NOTE_BYTES in all (headers may name the same bytes
 * again and again), and past MAX_THREADS NT_PRSTATUS notes, the rest is not read.
 */
function readCoreNotes(file: DumpFile, header: ElfHeader, segments: ProgramHeader[], problems: string[]): CoreNotes {
  const found: CoreNotes = { fromLinux: false, threads: [], siginfo: null, prpsinfo: null, fileNote: null, auxvNote: null };
  let statusNotes = 0;
  let siginfoRead = false;
  const visit = (note: Note) => {
    if (note.name !== "CORE") return;
    found.fromLinux = true;
    if (note.type === NT_PRSTATUS && ++statusNotes === MAX_THREADS + 1) problems.push(`more than ${MAX_THREADS} threads: the rest were not read`);
    if (note.type === NT_PRSTATUS && statusNotes <= MAX_THREADS) {
      const thread = partial(problems, null, () => readPrstatus(note.desc, header));
      if (thread) found.threads.push(thread);
    }
    // The kernel and gdb both write the signalled thread first, its NT_SIGINFO after its NT_PRSTATUS.
    const first = found.threads[0];
    if (note.type === NT_SIGINFO && found.threads.length === 1 && first && !siginfoRead) {
      siginfoRead = true;
      found.siginfo = partial(problems, null, () => readSiginfo(note.desc, header, first.lwp));
    }
    if (note.type === NT_PRPSINFO) found.prpsinfo ??= note.desc;
    if (note.type === NT_FILE) found.fileNote ??= note.desc;
    if (note.type === NT_AUXV) found.auxvNote ??= note.desc;
  };
  let noteBytes = 0;
  for (const segment of segments) {
    if (noteBytes > 0 && noteBytes + segment.filesz > MAX_NOTE_BYTES) {
      problems.push(`the note segments hold more than ${MAX_NOTE_BYTES} bytes: the notes past them were not read`);
      break;
    }
    noteBytes += segment.filesz;
    const problem = partial(problems, null, () => forEachNote(file.read(segment.offset, segment.filesz, "the note segment"), header.little, segment.align, visit));
    if (problem) problems.push(problem);
  }
  return found;
}

function readPrstatus(desc: Buffer, header: ElfHeader): CoreThread {
  const fields = new Fields(desc, "an NT_PRSTATUS note", header.little);
  const word = header.is64 ? 8 : 4;
  // pr_reg follows pr_pid, pr_ppid, pr_pgrp, pr_sid and four timevals.
  const base = header.is64 ? 112 : 72;
  const registers: Record<string, Address> = {};
  (REGISTER_NAMES[header.machine] ?? []).forEach((name, i) => (registers[name] = hex(fields.word(base + i * word, word))));
  return { lwp: fields.i32(header.is64 ? 32 : 24), signal: fields.i16(12), registers };
}

/** si_code decides which member of siginfo's union is filled: a sender's pid and uid, or a fault address. */
function readSiginfo(desc: Buffer, header: ElfHeader, thread: number | null): SignalStop | null {
  const fields = new Fields(desc, "an NT_SIGINFO note", header.little);
  const signo = fields.i32(0);
  if (signo === 0) return null;
  const code = fields.i32(8);
  const union = header.is64 ? 16 : 12;
  const sent = SENT_BY_PROCESS.has(code);
  const faulted = FAULT_SIGNALS.has(signo) && (code > 0 || code === SI_KERNEL) && !sent;
  return {
    type: "signal",
    signo,
    code,
    errno: fields.i32(4),
    address: faulted ? hex(fields.word(union, header.is64 ? 8 : 4)) : null,
    senderPid: sent ? fields.i32(union) : null,
    senderUid: sent ? fields.u32(union + 4) : null,
    thread,
    recordedBy: "kernel",
  };
}

/**
 * The signal that ended the process: the first thread's pr_cursig, with NT_SIGINFO's details. A
 * dump of a live process (gcore) has no current signal, and its NT_SIGINFO only records how the
 * dumper stopped the process (SIGSTOP when attaching): that is no stop reason. A core with a
 * current signal that dumps core and no NT_SIGINFO (qemu-user's cores of its guest, kernels
 * before 3.7) records the signal alone: its code, address and sender are not known.
 */
function fatalSignal(siginfo: SignalStop | null, first: CoreThread | null, problems: string[]): SignalStop | null {
  if (first === null || first.signal === 0) return null;
  if (siginfo === null) {
    if (!CORE_SIGNALS.has(first.signal)) return null;
    return { type: "signal", signo: first.signal, code: 0, errno: 0, address: null, senderPid: null, senderUid: null, thread: first.lwp, recordedBy: "thread-status" };
  }
  if (siginfo.signo !== first.signal) {
    problems.push(`NT_SIGINFO records signal ${siginfo.signo} but the thread's current signal is ${first.signal}`);
    return null;
  }
  return siginfo;
}

function readPrpsinfo(desc: Buffer, header: ElfHeader): { programName: string | null; commandLine: string | null; pid: number; uid: number } {
  const fields = new Fields(desc, "the NT_PRPSINFO note", header.little);
  // 32-bit x86 and ARM keep 16-bit uids here; 64-bit kernels use 32-bit ones.
  const layout = header.is64 ? { uid: fields.u32(16), pid: 24, fname: 40 } : { uid: fields.u16(8), pid: 12, fname: 28 };
  return {
    programName: cString(fields.slice(layout.fname, 16)) || null,
    commandLine: cString(fields.slice(layout.fname + 16, 80)).trim() || null,
    pid: fields.i32(layout.pid),
    uid: layout.uid,
  };
}

function readFileNote(desc: Buffer, header: ElfHeader): MappedFile[] {
  const fields = new Fields(desc, "the NT_FILE note", header.little);
  const word = header.is64 ? 8 : 4;
  const count = checkedCount(fields.word(0, word), MAX_MAPPED_FILES, "the NT_FILE note");
  const pageSize = fields.word(word, word);
  const tableEnd = 2 * word + count * 3 * word;
  if (tableEnd > desc.length) throw new DumpFileError(`the NT_FILE note lists ${count} files but has room for ${Math.floor((desc.length - 2 * word) / (3 * word))}`);
  const names = desc.subarray(tableEnd).toString("utf8").split("\0");
  const files: MappedFile[] = [];
  for (let i = 0; i < count; i++) {
    const at = 2 * word + i * 3 * word;
    files.push({ start: fields.word(at, word), end: fields.word(at + word, word), fileOffset: fields.word(at + 2 * word, word) * pageSize, path: names[i] ?? "" });
  }
  return files;
}

function readAuxv(desc: Buffer, header: ElfHeader, memory: CoreMemory): Auxv {
  const fields = new Fields(desc, "the NT_AUXV note", header.little);
  const word = header.is64 ? 8 : 4;
  const pairs: { type: number; value: bigint }[] = [];
  for (let at = 0; at + 2 * word <= desc.length && pairs.length < MAX_AUXV_PAIRS; at += 2 * word) {
    const type = Number(fields.word(at, word));
    if (type === AT_NULL) break;
    pairs.push({ type, value: fields.word(at + word, word) });
  }
  const value = (type: number) => pairs.find((p) => p.type === type)?.value ?? null;
  const address = (type: number) => {
    const found = value(type);
    return found === null ? null : hex(found);
  };
  const text = (type: number) => {
    const found = value(type);
    return found === null ? null : memory.string(found);
  };
  return {
    pairs: pairs.map((p) => ({ type: p.type, value: hex(p.value) })),
    phdr: address(AT_PHDR),
    entry: address(AT_ENTRY),
    sysinfoEhdr: address(AT_SYSINFO_EHDR),
    execfn: address(AT_EXECFN),
    execfnPath: text(AT_EXECFN),
    platform: address(AT_PLATFORM),
    platformName: text(AT_PLATFORM),
  };
}

/** A file mapped from offset 0 is a module when it holds code or its first page is an ELF header. */
function modulesOf(mappedFiles: MappedFile[], loads: ProgramHeader[], memory: CoreMemory, problems: string[]): Module[] {
  const byPath = new Map<string, MappedFile[]>();
  for (const mapping of mappedFiles) {
    const list = byPath.get(mapping.path);
    if (list) list.push(mapping);
    else byPath.set(mapping.path, [mapping]);
  }
  const executableStarts = new Set(loads.filter((l) => l.flags & PF_X).map((l) => l.vaddr));
  const modules: Module[] = [];
  let pages = 0;
  for (const [path, mappings] of byPath) {
    const first = mappings.find((m) => m.fileOffset === 0n);
    if (!first) continue;
    if (++pages === MAX_FIRST_PAGES + 1) problems.push(`more than ${MAX_FIRST_PAGES} files are mapped from their start: the first page of the rest was not read, so they have no build id`);
    const page = pages <= MAX_FIRST_PAGES ? memory.bytes(first.start, FIRST_PAGE_BYTES) : null;
    const isElfImage = page !== null && page.subarray(0, 4).toString("latin1") === "\x7fELF";
    if (!isElfImage && !mappings.some((m) => executableStarts.has(m.start))) continue;
    modules.push({
      path,
      start: hex(mappings.reduce((min, m) => (m.start < min ? m.start : min), first.start)),
      end: hex(mappings.reduce((max, m) => (m.end > max ? m.end : max), first.end)),
      buildId: page ? partial(problems, null, () => imageBuildId(page)) : null,
      debugFile: null,
      codeId: null,
      symbolsLoaded: null,
      // Its build id's reading already said what is wrong with the page.
      code: page ? partial([], [], () => imageCodeRanges(page, first.start)).map((range) => ({ start: hex(range.start), end: hex(range.end) })) : [],
    });
  }
  return modules;
}

function regionsOf(loads: ProgramHeader[], mappings: SortedRanges<MappedFile>): MemoryRegion[] {
  return loads.map((load) => {
    const mapping = mappings.at(load.vaddr);
    const permissions = `${load.flags & PF_R ? "r" : "-"}${load.flags & PF_W ? "w" : "-"}${load.flags & PF_X ? "x" : "-"}`;
    return {
      start: hex(load.vaddr),
      end: hex(load.vaddr + load.memsz),
      permissions,
      file: mapping?.path ?? null,
      offset: mapping ? hex(mapping.fileOffset + (load.vaddr - mapping.start)) : null,
    };
  });
}

/** Pages of anonymous memory searched for glibc's abort message (1 GiB of 4 KiB pages). */
const MAX_ABORT_MESSAGE_PAGES = 262_144;
const PAGE = 4096;

/**
 * Where glibc kept the message it aborted with, found without its symbols: `__libc_message` maps
 * anonymous pages for it, their total size (a page multiple) first, then the text, ending in a
 * newline. For a core whose libc is not on this machine, where `__abort_msg` cannot be looked up.
 * The address of the text; null when no page holds one.
 */
export function findAbortMessage(file: DumpFile): Address | null {
  const header = readElfHeader(file.read(0, Math.min(64, file.size), "the ELF header"));
  const segments = readProgramHeaders(file, header);
  const notes = readCoreNotes(file, header, segments.filter((s) => s.type === PT_NOTE), []);
  const mapped = notes.fileNote ? readFileNote(notes.fileNote, header) : [];
  const files = new SortedRanges(mapped, (m) => m.start, (m) => m.end);
  let pages = 0;
  for (const load of segments) {
    if (load.type !== PT_LOAD || !(load.flags & PF_W) || load.filesz === 0 || files.at(load.vaddr) !== null) continue;
    for (let skip = 0; skip + 8 <= load.filesz && load.offset + skip + 8 <= file.size; skip += PAGE) {
      if (++pages > MAX_ABORT_MESSAGE_PAGES) return null;
      const head = file.read(load.offset + skip, Math.min(PAGE, load.filesz - skip, file.size - load.offset - skip), "an anonymous page");
      const size = head.readUInt32LE(0);
      if (size === 0 || size % PAGE !== 0 || size > 16 * PAGE) continue;
      const end = head.indexOf(0, 4);
      const text = head.subarray(4, end < 0 ? head.length : end).toString("latin1");
      if (text.length >= 8 && text.endsWith("\n") && /^[\x20-\x7e\n\t]+$/.test(text)) return hex(load.vaddr + BigInt(skip) + 4n);
    }
  }
  return null;
}

/** The process memory a core holds, read from its program headers alone. */
export function coreMemory(file: DumpFile): CoreMemory {
  const header = readElfHeader(file.read(0, Math.min(64, file.size), "the ELF header"));
  return new CoreMemory(file, readProgramHeaders(file, header).filter((s) => s.type === PT_LOAD));
}

/** The process memory the core holds: the bytes of PT_LOAD segments that were dumped. */
export class CoreMemory {
  private readonly dumped: SortedRanges<ProgramHeader>;

  constructor(
    private readonly file: DumpFile,
    loads: ProgramHeader[],
  ) {
    this.dumped = new SortedRanges(loads.filter((l) => l.filesz > 0), (l) => l.vaddr, (l) => l.vaddr + BigInt(l.filesz));
  }

  /**
   * Whether `address` lies in bytes the core held and lost past the end of its file (a core cut
   * short): unknown, where the mapped file's bytes on disk must not stand in for them.
   */
  lost(address: bigint): boolean {
    const load = this.dumped.at(address);
    return load !== null && address < load.vaddr + BigInt(load.filesz) && load.offset + Number(address - load.vaddr) >= this.file.size;
  }

  /** Up to `length` bytes at `address`, as far as one dumped segment holds them in the file; null when none does. */
  bytes(address: bigint, length: number): Buffer | null {
    const load = this.dumped.at(address);
    if (!load) return null;
    const skip = Number(address - load.vaddr);
    // A core cut short holds a segment only up to the end of its file.
    const size = Math.min(length, load.filesz - skip, this.file.size - load.offset - skip);
    if (size <= 0) return null;
    return this.file.read(load.offset + skip, size, "a dumped segment");
  }

  string(address: bigint): string | null {
    const bytes = this.bytes(address, MAX_STRING_BYTES);
    return bytes ? cString(bytes) : null;
  }
}
