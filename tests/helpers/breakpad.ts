/**
 * A generator from a real process's state, since Debian ships no Breakpad: it turns a Linux
 * x86-64 kernel core (and the executable it ran) into the minidump that Breakpad's Linux client
 * would have written for the same crash, so that tests read real Breakpad-style files.
 *
 * It follows Breakpad's src/client/linux/minidump_writer/minidump_writer.cc as the in-process
 * client runs it from its signal handler (ExceptionHandler → WriteMinidump with a CrashContext):
 *
 * - File: the 32-byte header (`MDMP`, version 0xa793, the stream count, the directory right after
 *   the header, the time), then a 13-entry directory, then every record in the order the writer
 *   allocates them, each allocation padded to 8 bytes (MinidumpFileWriter::Allocate). Streams that
 *   Breakpad could not write keep their directory slot as an unused entry (type 0).
 * - Directory order: ThreadList, ModuleList, MemoryList, Exception, SystemInfo, LinuxCpuInfo,
 *   LinuxProcStatus, LinuxLsbRelease, LinuxCmdLine, LinuxEnviron, LinuxAuxv, LinuxMaps,
 *   LinuxDsoDebug. No MiscInfo: Breakpad on Linux writes none.
 * - Threads: in tid order (Breakpad lists /proc/PID/task); each one's stack is its rsp rounded down
 *   to a page, up to the end of the mapping holding it, at most 32 KiB (LinuxDumper::GetStackInfo);
 *   a thread whose rsp lies in no mapping gets an empty stack descriptor. The crashing thread's
 *   context is the signal's ucontext (UContextReader::FillCPUContext: CONTEXT_AMD64 | CONTROL |
 *   INTEGER | FLOATING_POINT = 0x0010000b, cs and the sigcontext's fs/gs, which the kernel zeroes),
 *   followed in the file by the 256 bytes around its rip bounded to the mapping holding it; the
 *   other threads' contexts are ptrace's (ThreadInfo::FillCPUContext: 0x0010000f, all segment
 *   registers). The FXSAVE area comes from each thread's NT_PRFPREG note.
 * - Modules: /proc/PID/maps' lines merged as LinuxDumper::EnumerateMappings merges them
 *   (contiguous, same file, and the same +x or a non-executable one followed by an executable
 *   one), the one holding AT_ENTRY moved first, kept when named, mapped from offset 0 or
 *   executable, and at least a page (ShouldIncludeMapping). Base and size are the merged
 *   mapping's; the CodeView record is `BpEL` and the file's GNU build id, or when it has none the
 *   XOR of the first page of .text (FileID); the vDSO is `linux-gate.so`, identified from its
 *   image in memory; a library's name has its DT_SONAME as basename
 *   (GetMappingEffectiveNameAndPath).
 * - Exception: the signalled thread, ExceptionCode = si_signo, ExceptionFlags = si_code,
 *   ExceptionAddress = the siginfo's si_addr word as it lies, whatever the signal
 *   (LinuxDumper::SetCrashInfoFromSigInfo: for a signal sent by kill/tgkill such as abort's
 *   SIGABRT that word is si_pid | si_uid << 32), no parameters, and the crashing thread's context.
 * - SystemInfo: AMD64 (9), MD_OS_LINUX (0x8201), no OS version numbers, the CPU's family,
 *   model, stepping, count and vendor from /proc/cpuinfo, and `uname -s -r -v -m` as the CSD
 *   string.
 * - Linux streams are Breakpad's copies of /proc/<crashing tid>/{status,cmdline,environ,auxv,maps}:
 *   status says `Pid:` the crashing thread's id and `Tgid:` the process's; cmdline and environ are
 *   the argument and environment strings read from the core's copy of the initial stack (found
 *   through the auxiliary vector there), auxv is NT_AUXV, and maps is rebuilt from the PT_LOAD
 *   segments (permissions from p_flags) and NT_FILE (paths and offsets), with the device and inode
 *   of each file as stat gives them now and the kernel's names for the vDSO, vvar, stack, heap
 *   and vsyscall pages inferred from the auxiliary vector. LinuxDsoDebug is not written.
 *
 * Where the core lacks bytes that the live process had (text pages the kernel does not dump),
 * they are read from the mapped file; what neither holds is 0xab, the marker Breakpad's own
 * LinuxCoreDumper uses. The core is untrusted input: every count and length is bounded.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";

import { DumpFile, readElfCore, readElfHeader, type MappedFile } from "../../src/debuggers/dumpfile/index.js";
import { forEachNote, imageBuildId, PT_LOAD, PT_NOTE, programBuildId, readProgramHeaders, type ProgramHeader } from "../../src/debuggers/dumpfile/elf.js";
import { minidumpString, record, Writer } from "./dump-writers.js";

// ---- minidump_format.h ---------------------------------------------------------------------

const MD_HEADER_SIGNATURE = 0x504d444d; // "MDMP"
const MD_HEADER_VERSION = 0xa793;
const MD_THREAD_LIST_STREAM = 3;
const MD_MODULE_LIST_STREAM = 4;
const MD_MEMORY_LIST_STREAM = 5;
const MD_EXCEPTION_STREAM = 6;
const MD_SYSTEM_INFO_STREAM = 7;
const MD_LINUX_CPU_INFO = 0x47670003;
const MD_LINUX_PROC_STATUS = 0x47670004;
const MD_LINUX_LSB_RELEASE = 0x47670005;
const MD_LINUX_CMD_LINE = 0x47670006;
const MD_LINUX_ENVIRON = 0x47670007;
const MD_LINUX_AUXV = 0x47670008;
const MD_LINUX_MAPS = 0x47670009;
const MD_LINUX_DSO_DEBUG = 0x4767000a;
const MD_CPU_ARCHITECTURE_AMD64 = 9;
const MD_OS_LINUX = 0x8201;
const MD_CVINFOELF_SIGNATURE = 0x4270454c; // "BpEL"

const MD_CONTEXT_AMD64 = 0x00100000;
const MD_CONTEXT_AMD64_CONTROL = MD_CONTEXT_AMD64 | 0x1;
const MD_CONTEXT_AMD64_INTEGER = MD_CONTEXT_AMD64 | 0x2;
const MD_CONTEXT_AMD64_SEGMENTS = MD_CONTEXT_AMD64 | 0x4;
const MD_CONTEXT_AMD64_FLOATING_POINT = MD_CONTEXT_AMD64 | 0x8;
const MD_CONTEXT_AMD64_FULL = MD_CONTEXT_AMD64_CONTROL | MD_CONTEXT_AMD64_INTEGER | MD_CONTEXT_AMD64_FLOATING_POINT;
/** sizeof(MDRawContextAMD64) */
const CONTEXT_BYTES = 0x4d0;
const THREAD_BYTES = 48;
const MODULE_BYTES = 108;
const MEMORY_DESCRIPTOR_BYTES = 16;
const EXCEPTION_STREAM_BYTES = 168;
const SYSTEM_INFO_BYTES = 56;
const DIRECTORY_ENTRIES = 13;

/** LinuxDumper::GetStackInfo's kStackToCapture. */
const STACK_TO_CAPTURE = 32 * 1024;
/** WriteThreadListStream's kIPMemorySize. */
const IP_MEMORY_SIZE = 256n;
/** LinuxDumper's kLinuxGateLibraryName. */
const LINUX_GATE = "linux-gate.so";
/** Breakpad's marker for process memory the core does not hold (LinuxCoreDumper::CopyFromProcess). */
const MISSING_BYTE = 0xab;

// ---- the core ------------------------------------------------------------------------------

const ET_CORE = 4;
const EM_X86_64 = 62;
const NT_PRSTATUS = 1;
const NT_PRFPREG = 2;
const NT_PRPSINFO = 3;
const NT_AUXV = 6;
const NT_SIGINFO = 0x53494749;
const PRSTATUS_BYTES = 336;
const PRFPREG_BYTES = 512;
const PRPSINFO_BYTES = 136;
const SIGINFO_BYTES = 128;
const PR_REG = 112;
const PF_X = 1;
const PF_W = 2;
const PF_R = 4;
const PT_DYNAMIC = 2;
const DT_NULL = 0n;
const DT_STRTAB = 5n;
const DT_SONAME = 14n;
const AT_PAGESZ = 6;
const AT_ENTRY = 9;
const AT_RANDOM = 25;
const AT_EXECFN = 31;
const AT_SYSINFO_EHDR = 33;
const VSYSCALL = 0xffffffffff600000n;
const WORD_MASK = (1n << 64n) - 1n;

/** user_regs_struct, in order. */
const USER_REGS = ["r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs"] as const;
type Registers = Record<(typeof USER_REGS)[number], bigint>;
/** MDRawContextAMD64 from rax (0x78) to r15, then rip (0xf8). */
const CONTEXT_GPRS = ["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"] as const;

/** More than any test program runs; each thread costs up to 33 KiB of output. */
const MAX_THREADS = 4096;
const MAX_NOTE_BYTES = 64 * 1024 * 1024;
/** How far below the top of the initial stack the auxiliary vector, arguments and environment are looked for. */
const MAX_ARGUMENT_AREA = 4 * 1024 * 1024;
const MAX_ARGUMENTS = 100_000;
const MAX_NAME_BYTES = 4096;
const MAX_DYNAMIC_BYTES = 1024 * 1024;
const MAX_SECTIONS = 65_535;
const MAX_TEXT_FILE_BYTES = 256 * 1024;

interface Thread {
  lwp: number;
  registers: Registers;
  /** user_fpregs_struct (FXSAVE layout); null when the core has none for the thread. */
  fpregs: Buffer | null;
  sigpend: bigint;
  sighold: bigint;
}

/** One line of /proc/PID/maps. */
interface Vma {
  start: bigint;
  end: bigint;
  flags: number;
  offset: bigint;
  /** The mapped file's path, or a kernel name such as [stack], or "". */
  name: string;
  file: MappedFile | null;
  load: ProgramHeader;
}

/** LinuxDumper's MappingInfo. */
interface Mapping {
  start: bigint;
  size: bigint;
  offset: bigint;
  exec: boolean;
  name: string;
}

interface Location {
  size: number;
  rva: number;
}

/**
 * Writes to `out` the minidump Breakpad's Linux client would have written for the crash that
 * left `core`; `exe` is the executable the process ran (read for its build id, SONAME and code).
 */
export async function breakpadMinidumpFromCore(core: string, exe: string, out: string, options: WriterOptions = {}): Promise<void> {
  const process = CoreProcess.open(core, exe);
  try {
    writeFileSync(out, new BreakpadWriter(process, Math.floor(statSync(core).mtimeMs / 1000), options).write());
  } finally {
    process.close();
  }
}

// ---- reading the crashed process from its core ---------------------------------------------

class CoreProcess {
  readonly threads: Thread[] = [];
  /** The thread that got the signal: the kernel writes its notes first. */
  readonly crashed: Thread;
  readonly siginfo: Buffer;
  readonly prpsinfo: Buffer | null;
  readonly auxvNote: Buffer | null;
  readonly auxv = new Map<number, bigint>();
  readonly pid: number;
  readonly vmas: Vma[];
  readonly pageSize: bigint;
  /** The executable's path as the process mapped it. */
  readonly exePath: string | null;
  private readonly files = new Map<string, DumpFile | null>();

  static open(core: string, exe: string): CoreProcess {
    const file = DumpFile.open(core);
    try {
      return new CoreProcess(file, exe);
    } catch (error) {
      file.close();
      throw error;
    }
  }

  private constructor(
    private readonly core: DumpFile,
    private readonly exe: string,
  ) {
    const header = readElfHeader(core.read(0, Math.min(64, core.size), "the ELF header"));
    if (!header.is64 || !header.little || header.type !== ET_CORE || header.machine !== EM_X86_64) {
      throw new Error(`${exe}: its core is not a little-endian x86-64 ELF core`);
    }
    const facts = readElfCore(core);
    if (facts.problems.length > 0) throw new Error(`the core is malformed: ${facts.problems.join("; ")}`);
    const segments = readProgramHeaders(core, header);

    let siginfo: Buffer | null = null;
    let prpsinfo: Buffer | null = null;
    let auxvNote: Buffer | null = null;
    let noteBytes = 0;
    for (const segment of segments.filter((s) => s.type === PT_NOTE)) {
      noteBytes += segment.filesz;
      if (noteBytes > MAX_NOTE_BYTES) throw new Error(`the core's notes exceed ${MAX_NOTE_BYTES} bytes`);
      const problem = forEachNote(core.read(segment.offset, segment.filesz, "a note segment"), true, segment.align, (note) => {
        if (note.name !== "CORE") return;
        if (note.type === NT_PRSTATUS) {
          if (note.desc.length !== PRSTATUS_BYTES) throw new Error(`an NT_PRSTATUS note of ${note.desc.length} bytes`);
          if (this.threads.length === MAX_THREADS) throw new Error(`more than ${MAX_THREADS} threads`);
          const registers = Object.fromEntries(USER_REGS.map((name, i) => [name, note.desc.readBigUInt64LE(PR_REG + i * 8)])) as Registers;
          this.threads.push({ lwp: note.desc.readInt32LE(32), registers, fpregs: null, sigpend: note.desc.readBigUInt64LE(16), sighold: note.desc.readBigUInt64LE(24) });
        } else if (note.type === NT_PRFPREG) {
          // It follows its thread's NT_PRSTATUS (binfmt_elf.c's write_note_info).
          const thread = this.threads.at(-1);
          if (thread && note.desc.length === PRFPREG_BYTES) thread.fpregs = Buffer.from(note.desc);
        } else if (note.type === NT_SIGINFO && siginfo === null && note.desc.length === SIGINFO_BYTES) {
          siginfo = Buffer.from(note.desc);
        } else if (note.type === NT_PRPSINFO && prpsinfo === null && note.desc.length === PRPSINFO_BYTES) {
          prpsinfo = Buffer.from(note.desc);
        } else if (note.type === NT_AUXV && auxvNote === null) {
          auxvNote = Buffer.from(note.desc);
        }
      });
      if (problem) throw new Error(`the core's notes are cut: ${problem}`);
    }
    const crashed = this.threads[0];
    if (!crashed) throw new Error("the core has no thread");
    if (siginfo === null) throw new Error("the core has no NT_SIGINFO: it records no crash");
    this.crashed = crashed;
    this.siginfo = siginfo;
    this.prpsinfo = prpsinfo;
    this.auxvNote = auxvNote;
    for (const pair of facts.auxv?.pairs ?? []) if (!this.auxv.has(pair.type)) this.auxv.set(pair.type, BigInt(pair.value));
    this.pageSize = this.auxv.get(AT_PAGESZ) ?? 4096n;
    this.pid = facts.pid ?? crashed.lwp;

    const loads = segments.filter((s) => s.type === PT_LOAD).sort((a, b) => compare(a.vaddr, b.vaddr));
    const mapped = facts.mappedFiles;
    const fileAt = (address: bigint) => mapped.find((m) => m.start <= address && address < m.end) ?? null;
    this.vmas = loads.map((load) => {
      const file = fileAt(load.vaddr);
      return {
        start: load.vaddr,
        end: load.vaddr + load.memsz,
        flags: load.flags,
        offset: file ? file.fileOffset + (load.vaddr - file.start) : 0n,
        name: file?.path ?? "",
        file,
        load,
      };
    });
    const entry = this.auxv.get(AT_ENTRY);
    this.exePath = entry === undefined ? null : (this.vmaAt(entry)?.file?.path ?? null);
    this.nameSpecialMappings();
  }

  close(): void {
    this.core.close();
    for (const file of this.files.values()) file?.close();
  }

  vmaAt(address: bigint): Vma | null {
    let low = 0;
    let high = this.vmas.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const vma = this.vmas[middle] as Vma;
      if (address < vma.start) high = middle - 1;
      else if (address >= vma.end) low = middle + 1;
      else return vma;
    }
    return null;
  }

  /**
   * The kernel names some anonymous mappings in /proc/PID/maps; a core does not record those
   * names, so they are inferred: the vDSO from AT_SYSINFO_EHDR and the vvar pages right below it,
   * the initial stack from AT_EXECFN (or AT_RANDOM), the heap as the first writable anonymous
   * mapping within the 1 GiB of brk randomisation (x86-64 arch_randomize_brk) after the executable, and the vsyscall page.
   */
  private nameSpecialMappings(): void {
    const vdso = this.auxv.get(AT_SYSINFO_EHDR);
    const vdsoIndex = vdso === undefined ? -1 : this.vmas.findIndex((v) => v.start === vdso && v.file === null);
    if (vdsoIndex >= 0) {
      (this.vmas[vdsoIndex] as Vma).name = "[vdso]";
      const vvar: Vma[] = [];
      for (let i = vdsoIndex - 1; i >= 0 && vvar.length < 2; i--) {
        const vma = this.vmas[i] as Vma;
        const above = vvar[0] ?? (this.vmas[vdsoIndex] as Vma);
        if (vma.file !== null || vma.end !== above.start || vma.flags & (PF_W | PF_X)) break;
        vvar.unshift(vma);
      }
      vvar.forEach((vma, i) => (vma.name = i === 0 ? "[vvar]" : "[vvar_vclock]"));
    }
    const stackAddress = this.auxv.get(AT_EXECFN) ?? this.auxv.get(AT_RANDOM);
    const stack = stackAddress === undefined ? null : this.vmaAt(stackAddress);
    if (stack && stack.file === null) stack.name = "[stack]";
    const exeEnd = this.vmas.filter((v) => v.file !== null && v.file.path === this.exePath).reduce((end, v) => (v.end > end ? v.end : end), 0n);
    if (exeEnd > 0n) {
      const heap = this.vmas.find((v) => v.start >= exeEnd && v.start < exeEnd + 0x40001000n && v.file === null && v.name === "" && v.flags & PF_W);
      if (heap) heap.name = "[heap]";
    }
    const vsyscall = this.vmas.find((v) => v.start === VSYSCALL);
    if (vsyscall) vsyscall.name = "[vsyscall]";
  }

  /**
   * `length` bytes of the process's memory at `address`: from the core where it holds them, else
   * from the mapped file (pages the kernel did not dump, such as code), else the 0xab marker.
   */
  read(address: bigint, length: number): Buffer {
    const bytes = Buffer.alloc(length, MISSING_BYTE);
    const end = address + BigInt(length);
    for (let at = address; at < end; ) {
      const vma = this.vmaAt(at);
      if (!vma) {
        const next = this.vmas.find((v) => v.start > at);
        if (!next) break;
        at = next.start;
        continue;
      }
      const to = vma.end < end ? vma.end : end;
      const dumpedEnd = vma.start + BigInt(vma.load.filesz);
      if (at < dumpedEnd) {
        const stop = to < dumpedEnd ? to : dumpedEnd;
        const size = Number(stop - at);
        this.core.read(vma.load.offset + Number(at - vma.start), size, "a dumped segment").copy(bytes, Number(at - address));
        at = stop;
      }
      if (at < to && vma.file) {
        const file = this.openMapped(vma.file.path);
        const offset = vma.file.fileOffset + (at - vma.file.start);
        const wanted = Number(to - at);
        if (file) {
          const available = offset < BigInt(file.size) ? Math.min(wanted, file.size - Number(offset)) : 0;
          // Past the end of the file a mapping reads as zeros.
          bytes.fill(0, Number(at - address), Number(at - address) + wanted);
          if (available > 0) file.read(Number(offset), available, `${vma.file.path}`).copy(bytes, Number(at - address));
        }
      }
      at = to;
    }
    return bytes;
  }

  /** The file mapped at `path`, as it lies on disk now (the executable at `exe`); null when it cannot be opened. */
  openMapped(path: string): DumpFile | null {
    const onDisk = path === this.exePath ? this.exe : path;
    if (!this.files.has(onDisk)) {
      let file: DumpFile | null = null;
      try {
        if (!onDisk.startsWith("/dev/")) file = DumpFile.open(onDisk);
      } catch {
        file = null;
      }
      this.files.set(onDisk, file);
    }
    return this.files.get(onDisk) ?? null;
  }

  /** The core's copy of the argument and environment strings: /proc/PID/cmdline and environ. */
  argumentArea(): { cmdline: Buffer; environ: Buffer } | null {
    if (!this.auxvNote || this.auxvNote.length < 16) return null;
    const anchor = this.auxv.get(AT_EXECFN) ?? this.auxv.get(AT_RANDOM);
    const stack = anchor === undefined ? null : this.vmaAt(anchor);
    if (!stack) return null;
    const dumpedEnd = stack.start + BigInt(stack.load.filesz);
    const top = stack.end < dumpedEnd ? stack.end : dumpedEnd;
    const bottom = top - stack.start > BigInt(MAX_ARGUMENT_AREA) ? top - BigInt(MAX_ARGUMENT_AREA) : stack.start;
    const area = this.read(bottom, Number(top - bottom));
    // The kernel lays out argc, argv[], NULL, envp[], NULL, auxv[] and above them the strings;
    // copies a program made of its auxv lie deeper, below the real one.
    let found = area.lastIndexOf(this.auxvNote);
    while (found > 0 && found % 8 !== 0) found = area.lastIndexOf(this.auxvNote, found - 1);
    if (found < 16) return null;
    const word = (at: number) => (at >= 0 && at + 8 <= area.length ? area.readBigUInt64LE(at) : null);
    if (word(found - 8) !== 0n) return null;
    const envp: bigint[] = [];
    let at = found - 16;
    for (let value = word(at); value !== null && value !== 0n && envp.length < MAX_ARGUMENTS; value = word((at -= 8))) envp.unshift(value);
    if (word(at) !== 0n) return null;
    const argv: bigint[] = [];
    for (;;) {
      const value = word(at - 8 * (argv.length + 1));
      if (value === null || argv.length >= MAX_ARGUMENTS) return null;
      if (value === BigInt(argv.length)) break;
      argv.unshift(value);
    }
    const strings = (pointers: bigint[]): Buffer | null => {
      const first = pointers[0];
      const last = pointers.at(-1);
      if (first === undefined || last === undefined) return Buffer.alloc(0);
      if (first < bottom || last < first || last >= top) return null;
      const end = area.indexOf(0, Number(last - bottom));
      return end < 0 ? null : area.subarray(Number(first - bottom), end + 1);
    };
    const cmdline = strings(argv);
    const environ = strings(envp);
    return cmdline && environ ? { cmdline, environ } : null;
  }
}

// ---- writing the minidump --------------------------------------------------------------------

export interface WriterOptions {
  /**
   * Leave exception_flags 0 instead of the signal's si_code, as many clients in the field do
   * (their handlers record only the signal number and si_addr's word).
   */
  withoutSiCode?: boolean;
  /**
   * Record the exception as Crashpad's Linux client does instead (ExceptionSnapshotLinux::ReadSiginfo
   * and MinidumpExceptionWriter): si_code as the flags, si_addr as the address only for the signals
   * the CPU raises (SIGILL, SIGFPE, SIGSEGV, SIGBUS, SIGTRAP), and for the others that carry a sender
   * (SIGABRT, SIGTERM, ...) an address of 0 and three parameters: si_pid, si_uid and si_value.
   */
  crashpad?: boolean;
}

/** The signals whose si_addr Crashpad's Linux client records as the exception address. */
const CRASHPAD_FAULT_SIGNALS = new Set([4, 5, 7, 8, 11]);
/** The signals whose sender (si_pid, si_uid, si_value) it records as the parameters: ABRT, QUIT, XCPU, XFSZ, HUP, INT, PIPE, TERM, USR1, USR2, PWR, STKFLT. */
const CRASHPAD_SENDER_SIGNALS = new Set([6, 3, 24, 25, 1, 2, 13, 15, 10, 12, 30, 16]);

class BreakpadWriter {
  private readonly out = new Writer();
  private readonly memoryBlocks: { start: bigint; location: Location }[] = [];
  private readonly mappings: Mapping[];

  constructor(
    private readonly process: CoreProcess,
    private readonly time: number,
    private readonly options: WriterOptions = {},
  ) {
    this.mappings = enumerateMappings(process);
  }

  write(): Buffer {
    const header = this.allocate(Buffer.alloc(32));
    const directory = this.allocate(Buffer.alloc(DIRECTORY_ENTRIES * 12));
    const entries: [type: number, location: Location | null][] = [];
    const crashContext = this.writeThreadList(entries);
    entries.push([MD_MODULE_LIST_STREAM, this.writeModuleList()]);
    entries.push([MD_MEMORY_LIST_STREAM, this.writeMemoryList()]);
    entries.push([MD_EXCEPTION_STREAM, this.writeException(crashContext)]);
    entries.push([MD_SYSTEM_INFO_STREAM, this.writeSystemInfo()]);
    entries.push([MD_LINUX_CPU_INFO, this.writeFile(hostFile("/proc/cpuinfo"))]);
    entries.push([MD_LINUX_PROC_STATUS, this.writeFile(Buffer.from(this.procStatus()))]);
    entries.push([MD_LINUX_LSB_RELEASE, this.writeFile(hostFile("/etc/lsb-release"))]);
    const area = this.process.argumentArea();
    entries.push([MD_LINUX_CMD_LINE, this.writeFile(area?.cmdline ?? this.psargs())]);
    entries.push([MD_LINUX_ENVIRON, this.writeFile(area?.environ ?? null)]);
    entries.push([MD_LINUX_AUXV, this.writeFile(this.process.auxvNote)]);
    entries.push([MD_LINUX_MAPS, this.writeFile(Buffer.from(this.maps()))]);
    entries.push([MD_LINUX_DSO_DEBUG, null]);
    if (entries.length !== DIRECTORY_ENTRIES) throw new Error(`wrote ${entries.length} directory entries, not ${DIRECTORY_ENTRIES}`);

    const bytes = this.out.bytes();
    bytes.writeUInt32LE(MD_HEADER_SIGNATURE, header.rva);
    bytes.writeUInt32LE(MD_HEADER_VERSION, header.rva + 4);
    bytes.writeUInt32LE(DIRECTORY_ENTRIES, header.rva + 8);
    bytes.writeUInt32LE(directory.rva, header.rva + 12);
    bytes.writeUInt32LE(this.time >>> 0, header.rva + 20);
    entries.forEach(([type, location], i) => {
      // NullifyDirectoryEntry: a stream Breakpad could not write leaves an unused entry.
      const at = directory.rva + i * 12;
      bytes.writeUInt32LE(location ? type : 0, at);
      bytes.writeUInt32LE(location?.size ?? 0, at + 4);
      bytes.writeUInt32LE(location?.rva ?? 0, at + 8);
    });
    return bytes;
  }

  /** MinidumpFileWriter::Allocate: every allocation starts at, and is padded to, 8 bytes. */
  private allocate(bytes: Buffer): Location {
    const rva = this.out.append(bytes, 8);
    const pad = (8 - (bytes.length % 8)) % 8;
    if (pad > 0) this.out.append(Buffer.alloc(pad));
    if (this.out.length > 0xffffffff) throw new Error("the minidump would exceed 4 GiB");
    return { size: bytes.length, rva };
  }

  private writeThreadList(entries: [number, Location | null][]): Location {
    const threads = [...this.process.threads].sort((a, b) => a.lwp - b.lwp);
    const list = record(4 + threads.length * THREAD_BYTES, (b) => b.writeUInt32LE(threads.length, 0));
    entries.push([MD_THREAD_LIST_STREAM, this.allocate(list)]);
    let crashContext: Location | null = null;
    threads.forEach((thread, i) => {
      const at = 4 + i * THREAD_BYTES;
      const crashed = thread === this.process.crashed;
      const stack = this.fillThreadStack(thread.registers.rsp);
      if (crashed) this.writeIpMemory(thread.registers.rip);
      const context = this.allocate(amd64Context(thread, crashed));
      if (crashed) crashContext = context;
      list.writeUInt32LE(thread.lwp >>> 0, at);
      list.writeBigUInt64LE(stack.start, at + 24);
      list.writeUInt32LE(stack.location.size, at + 32);
      list.writeUInt32LE(stack.location.rva, at + 36);
      list.writeUInt32LE(context.size, at + 40);
      list.writeUInt32LE(context.rva, at + 44);
    });
    if (crashContext === null) throw new Error("the crashing thread is not in the thread list");
    return crashContext;
  }

  /** FillThreadStack with LinuxDumper::GetStackInfo: from rsp's page to the mapping's end, at most 32 KiB. */
  private fillThreadStack(rsp: bigint): { start: bigint; location: Location } {
    const page = rsp & ~(this.process.pageSize - 1n);
    const mapping = findMapping(this.mappings, page);
    if (!mapping) return { start: rsp, location: { size: 0, rva: this.out.length } };
    const toEnd = mapping.start + mapping.size - page;
    const length = toEnd > BigInt(STACK_TO_CAPTURE) ? STACK_TO_CAPTURE : Number(toEnd);
    const location = this.allocate(this.process.read(page, length));
    this.memoryBlocks.push({ start: page, location });
    return { start: page, location };
  }

  /** The 256 bytes around the crashing instruction, bounded to the mapping that holds it. */
  private writeIpMemory(ip: bigint): void {
    const mapping = this.mappings.find((m) => ip >= m.start && ip < m.start + m.size);
    if (!mapping) return;
    const half = IP_MEMORY_SIZE / 2n;
    const low = ip >= half && ip - half > mapping.start ? ip - half : mapping.start;
    const high = ip + half < mapping.start + mapping.size ? ip + half : mapping.start + mapping.size;
    const location = this.allocate(this.process.read(low, Number(high - low)));
    this.memoryBlocks.push({ start: low, location });
  }

  private writeModuleList(): Location {
    const included = this.mappings.filter((m) => m.name !== "" && (m.offset === 0n || m.exec) && m.size >= 4096n);
    const list = record(4 + included.length * MODULE_BYTES, (b) => b.writeUInt32LE(included.length, 0));
    const location = this.allocate(list);
    included.forEach((mapping, i) => {
      const at = 4 + i * MODULE_BYTES;
      list.writeBigUInt64LE(mapping.start, at);
      list.writeUInt32LE(Number(mapping.size & 0xffffffffn), at + 8);
      const identifier = this.identifier(mapping);
      if (identifier && identifier.length > 0) {
        const cv = this.allocate(Buffer.concat([record(4, (b) => b.writeUInt32LE(MD_CVINFOELF_SIGNATURE, 0)), identifier]));
        list.writeUInt32LE(cv.size, at + 76);
        list.writeUInt32LE(cv.rva, at + 80);
      }
      list.writeUInt32LE(this.allocate(minidumpString(this.effectivePath(mapping))).rva, at + 20);
    });
    return location;
  }

  /** LinuxDumper::ElfFileIdentifierForMapping: from the file on disk, or the vDSO's image in memory. */
  private identifier(mapping: Mapping): Buffer | null {
    if (mapping.name === LINUX_GATE) {
      const image = this.process.read(mapping.start, Number(mapping.size < 0x100000n ? mapping.size : 0x100000n));
      const id = imageBuildId(image);
      return id ? Buffer.from(id, "hex") : textHash((offset, length) => (offset + length <= image.length ? image.subarray(offset, offset + length) : null));
    }
    if (mapping.name.startsWith("/dev/")) return null;
    const file = this.process.openMapped(mapping.name);
    if (!file) return null;
    // Breakpad maps the file from the mapping's offset: only a mapping of the ELF header identifies it.
    if (mapping.offset !== 0n) return null;
    try {
      const id = programBuildId(file);
      return id ? Buffer.from(id, "hex") : textHash((offset, length) => (offset + length <= file.size ? file.read(offset, length, mapping.name) : null));
    } catch {
      return null;
    }
  }

  /** LinuxDumper::GetMappingEffectiveNameAndPath: a library's DT_SONAME replaces its basename. */
  private effectivePath(mapping: Mapping): string {
    const file = mapping.name === LINUX_GATE ? null : this.process.openMapped(mapping.name);
    const soname = file && mapping.offset === 0n ? sonameOf(file) : null;
    if (!soname) return mapping.name;
    if (mapping.exec && mapping.offset !== 0n) return `${mapping.name}/${soname}`;
    const slash = mapping.name.lastIndexOf("/");
    return slash < 0 ? soname : mapping.name.slice(0, slash + 1) + soname;
  }

  private writeMemoryList(): Location {
    return this.allocate(
      record(4 + this.memoryBlocks.length * MEMORY_DESCRIPTOR_BYTES, (b) => {
        b.writeUInt32LE(this.memoryBlocks.length, 0);
        this.memoryBlocks.forEach((block, i) => {
          const at = 4 + i * MEMORY_DESCRIPTOR_BYTES;
          b.writeBigUInt64LE(block.start, at);
          b.writeUInt32LE(block.location.size, at + 8);
          b.writeUInt32LE(block.location.rva, at + 12);
        });
      }),
    );
  }

  /**
   * LinuxDumper::SetCrashInfoFromSigInfo: signo, code and si_addr as they lie in the siginfo; or
   * Crashpad's reading of the same siginfo (WriterOptions.crashpad).
   */
  private writeException(context: Location): Location {
    const siginfo = this.process.siginfo;
    const signo = siginfo.readInt32LE(0);
    const crashpadSender = this.options.crashpad === true && CRASHPAD_SENDER_SIGNALS.has(signo);
    return this.allocate(
      record(EXCEPTION_STREAM_BYTES, (b) => {
        b.writeUInt32LE(this.process.crashed.lwp >>> 0, 0);
        b.writeUInt32LE(signo >>> 0, 8); // exception_code = si_signo
        b.writeUInt32LE(this.options.withoutSiCode ? 0 : siginfo.readInt32LE(8) >>> 0, 12); // exception_flags = si_code
        const faulted = CRASHPAD_FAULT_SIGNALS.has(signo);
        // exception_address = si_addr (Crashpad: only for a signal the CPU raised, else 0)
        b.writeBigUInt64LE(this.options.crashpad && !faulted ? 0n : siginfo.readBigUInt64LE(16), 24);
        if (crashpadSender) {
          // si_pid, si_uid (the union's first two ints) and si_value (at 24 in the union's sender layout)
          b.writeUInt32LE(3, 32); // number_parameters
          b.writeBigUInt64LE(BigInt(siginfo.readInt32LE(16)), 40);
          b.writeBigUInt64LE(BigInt(siginfo.readUInt32LE(20)), 48);
          b.writeBigUInt64LE(siginfo.readBigUInt64LE(24), 56);
        } else {
          b.writeUInt32LE(0, 32); // number_parameters
        }
        b.writeUInt32LE(context.size, 160);
        b.writeUInt32LE(context.rva, 164);
      }),
    );
  }

  /** WriteCPUInformation and WriteOSInformation. */
  private writeSystemInfo(): Location {
    const cpu = cpuInformation();
    const info = record(SYSTEM_INFO_BYTES, (b) => {
      b.writeUInt16LE(MD_CPU_ARCHITECTURE_AMD64, 0);
      if (cpu) {
        b.writeUInt16LE(cpu.family & 0xffff, 2);
        b.writeUInt16LE(((cpu.model << 8) | cpu.stepping) & 0xffff, 4);
        b.writeUInt8(cpu.processors & 0xff, 6);
        if (cpu.vendor) b.write(cpu.vendor.slice(0, 12), 32, "latin1");
      }
      b.writeUInt32LE(MD_OS_LINUX, 20);
    });
    const location = this.allocate(info);
    const uname = [os.type(), os.release(), os.version(), os.machine()].filter(Boolean).join(" ");
    info.writeUInt32LE(this.allocate(minidumpString(uname.slice(0, 511))).rva, 24);
    return location;
  }

  /** WriteFile: a file's bytes; an empty or missing one is no stream. */
  private writeFile(bytes: Buffer | null): Location | null {
    return bytes && bytes.length > 0 ? this.allocate(bytes) : null;
  }

  /**
   * /proc/<crashing tid>/status, as far as the core records it: for a thread other than the
   * main one, `Pid:` is that thread's id and `Tgid:` the process's.
   */
  private procStatus(): string {
    const info = this.process.prpsinfo;
    const sname = info ? String.fromCharCode(info.readUInt8(1)) : "R";
    const states: Record<string, string> = { R: "running", S: "sleeping", D: "disk sleep", T: "stopped", t: "tracing stop", X: "dead", Z: "zombie", P: "parked", I: "idle" };
    const uid = info ? info.readUInt32LE(16) : 0;
    const gid = info ? info.readUInt32LE(20) : 0;
    const crashed = this.process.crashed;
    const mask = (value: bigint) => value.toString(16).padStart(16, "0");
    return [
      `Name:\t${info ? cString(info.subarray(40, 56)) : ""}`,
      `State:\t${sname}${states[sname] ? ` (${states[sname]})` : ""}`,
      `Tgid:\t${this.process.pid}`,
      `Ngid:\t0`,
      `Pid:\t${crashed.lwp}`,
      `PPid:\t${info ? info.readInt32LE(28) : 0}`,
      `TracerPid:\t0`,
      `Uid:\t${uid}\t${uid}\t${uid}\t${uid}`,
      `Gid:\t${gid}\t${gid}\t${gid}\t${gid}`,
      `Threads:\t${this.process.threads.length}`,
      `SigPnd:\t${mask(crashed.sigpend)}`,
      `SigBlk:\t${mask(crashed.sighold)}`,
      "",
    ].join("\n");
  }

  /** When the initial stack cannot be read: the kernel's 80-character copy of the command line. */
  private psargs(): Buffer | null {
    const info = this.process.prpsinfo;
    const args = info ? cString(info.subarray(56, 136)).trim() : "";
    return args ? Buffer.from(`${args.split(" ").join("\0")}\0`, "utf8") : null;
  }

  /** /proc/PID/maps as show_map_vma prints it: the name, if any, from column 73. */
  private maps(): string {
    return this.process.vmas
      .map((vma) => {
        const perms = `${vma.flags & PF_R ? "r" : "-"}${vma.flags & PF_W ? "w" : "-"}${vma.flags & PF_X ? "x" : "-"}p`;
        const { major, minor, inode } = vma.file ? deviceOf(vma.file.path) : { major: 0, minor: 0, inode: 0n };
        const prefix = `${hex8(vma.start)}-${hex8(vma.end)} ${perms} ${hex8(vma.offset)} ${hex2(major)}:${hex2(minor)} ${inode} `;
        return vma.name ? `${prefix.padEnd(72)} ${vma.name}\n` : `${prefix}\n`;
      })
      .join("");
  }
}

/**
 * LinuxDumper::EnumerateMappings over the maps lines: a line names a module when it has a path
 * (or is the vDSO, named linux-gate.so); a line continuing the previous one's file is merged into
 * it when both are executable or neither, or when the previous one is not and this one is; the
 * mapping holding the entry point goes first.
 */
function enumerateMappings(process: CoreProcess): Mapping[] {
  const vdso = process.auxv.get(AT_SYSINFO_EHDR);
  const mappings: Mapping[] = [];
  for (const vma of process.vmas) {
    const exec = (vma.flags & PF_X) !== 0;
    const isGate = vma.file === null && vdso !== undefined && vma.start === vdso;
    const name = vma.file && vma.file.path.includes("/") ? vma.file.path.slice(vma.file.path.indexOf("/")) : isGate ? LINUX_GATE : null;
    const last = mappings.at(-1);
    if (name && last && vma.start === last.start + last.size && name === last.name && (exec === last.exec || (!last.exec && exec))) {
      last.size = vma.end - last.start;
      last.exec ||= exec;
      continue;
    }
    mappings.push({ start: vma.start, size: vma.end - vma.start, offset: isGate ? 0n : vma.offset, exec, name: name ?? "" });
  }
  const entry = process.auxv.get(AT_ENTRY);
  const first = entry === undefined ? -1 : mappings.findIndex((m) => entry >= m.start && entry < m.start + m.size);
  if (first > 0) mappings.unshift(...mappings.splice(first, 1));
  return mappings;
}

function findMapping(mappings: Mapping[], address: bigint): Mapping | null {
  return mappings.find((m) => address >= m.start && address - m.start < m.size) ?? null;
}

/**
 * An MDRawContextAMD64. The crashing thread's comes from the signal's ucontext
 * (UContextReader::FillCPUContext: CONTEXT_AMD64_FULL, cs and the sigcontext's gs and fs, which
 * the kernel writes as 0); another thread's from ptrace (ThreadInfo::FillCPUContext: FULL and
 * SEGMENTS, every segment register, debug registers that a core does not record: 0).
 */
function amd64Context(thread: Thread, fromSignal: boolean): Buffer {
  const r = thread.registers;
  const u16 = (value: bigint) => Number(value & 0xffffn);
  return record(CONTEXT_BYTES, (b) => {
    b.writeUInt32LE(fromSignal ? MD_CONTEXT_AMD64_FULL : MD_CONTEXT_AMD64_FULL | MD_CONTEXT_AMD64_SEGMENTS, 0x30);
    b.writeUInt16LE(u16(r.cs), 0x38);
    if (!fromSignal) {
      b.writeUInt16LE(u16(r.ds), 0x3a);
      b.writeUInt16LE(u16(r.es), 0x3c);
      b.writeUInt16LE(u16(r.fs), 0x3e);
      b.writeUInt16LE(u16(r.gs), 0x40);
      b.writeUInt16LE(u16(r.ss), 0x42);
    }
    b.writeUInt32LE(Number(r.eflags & 0xffffffffn), 0x44);
    CONTEXT_GPRS.forEach((name, i) => b.writeBigUInt64LE(r[name] & WORD_MASK, 0x78 + i * 8));
    const fp = thread.fpregs;
    if (fp) {
      // flt_save (MDXmmSaveArea32AMD64) from user_fpregs_struct, field by field as Breakpad copies it.
      const at = 0x100;
      b.writeUInt16LE(fp.readUInt16LE(0), at); // control_word = cwd
      b.writeUInt16LE(fp.readUInt16LE(2), at + 2); // status_word = swd
      b.writeUInt8(fp.readUInt8(4), at + 4); // tag_word = ftw
      b.writeUInt16LE(fp.readUInt16LE(6), at + 6); // error_opcode = fop
      b.writeUInt32LE(fp.readUInt32LE(8), at + 8); // error_offset = (uint32) rip
      b.writeUInt32LE(fp.readUInt32LE(16), at + 16); // data_offset = (uint32) rdp
      b.writeUInt32LE(fp.readUInt32LE(24), at + 24); // mx_csr
      b.writeUInt32LE(fp.readUInt32LE(28), at + 28); // mx_csr_mask
      fp.copy(b, at + 32, 32, 32 + 8 * 16); // float_registers = st_space
      fp.copy(b, at + 160, 160, 160 + 16 * 16); // xmm_registers = xmm_space
    }
  });
}

/**
 * FileID's fallback for an ELF file without a build id: the first page of .text XORed into 16
 * bytes. `read` gives `length` bytes at `offset` of the image, or null past its end.
 */
function textHash(read: (offset: number, length: number) => Buffer | null): Buffer | null {
  const header = read(0, 64);
  if (!header || header.subarray(0, 4).toString("latin1") !== "\x7fELF" || header[4] !== 2) return null;
  const shoff = header.readBigUInt64LE(40);
  const shentsize = header.readUInt16LE(58);
  const shnum = header.readUInt16LE(60);
  const shstrndx = header.readUInt16LE(62);
  if (shoff === 0n || shentsize < 64 || shnum === 0 || shnum > MAX_SECTIONS || shoff > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  const table = read(Number(shoff), shentsize * shnum);
  if (!table) return null;
  const section = (i: number) => ({
    name: table.readUInt32LE(i * shentsize),
    type: table.readUInt32LE(i * shentsize + 4),
    offset: table.readBigUInt64LE(i * shentsize + 24),
    size: table.readBigUInt64LE(i * shentsize + 32),
  });
  if (shstrndx >= shnum) return null;
  const names = section(shstrndx);
  if (names.size > BigInt(MAX_TEXT_FILE_BYTES) || names.offset > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  const strings = read(Number(names.offset), Number(names.size));
  if (!strings) return null;
  const SHT_PROGBITS = 1;
  for (let i = 0; i < shnum; i++) {
    const s = section(i);
    if (s.type !== SHT_PROGBITS || s.size === 0n || cString(strings.subarray(s.name)) !== ".text" || s.offset > BigInt(Number.MAX_SAFE_INTEGER)) continue;
    const length = Number(s.size < 4096n ? s.size : 4096n);
    const text = read(Number(s.offset), Math.ceil(length / 16) * 16) ?? read(Number(s.offset), length);
    if (!text) return null;
    const id = Buffer.alloc(16);
    for (let at = 0; at < length; at += 16) for (let i = 0; i < 16; i++) id[i] = (id[i] ?? 0) ^ (text[at + i] ?? 0);
    return id;
  }
  return null;
}

/** An ELF file's DT_SONAME, from its PT_DYNAMIC and the string table that DT_STRTAB locates. */
function sonameOf(file: DumpFile): string | null {
  try {
    const head = file.read(0, Math.min(64, file.size), "the ELF header");
    if (head.subarray(0, 4).toString("latin1") !== "\x7fELF" || head[4] !== 2 || head[5] !== 1) return null;
    const headers = readProgramHeaders(file, readElfHeader(head));
    const dynamic = headers.find((h) => h.type === PT_DYNAMIC);
    if (!dynamic || dynamic.filesz > MAX_DYNAMIC_BYTES || dynamic.offset + dynamic.filesz > file.size) return null;
    const entries = file.read(dynamic.offset, dynamic.filesz, "the dynamic section");
    let soname: bigint | null = null;
    let strtab: bigint | null = null;
    for (let at = 0; at + 16 <= entries.length; at += 16) {
      const tag = entries.readBigInt64LE(at);
      if (tag === DT_NULL) break;
      if (tag === DT_SONAME) soname = entries.readBigUInt64LE(at + 8);
      if (tag === DT_STRTAB) strtab = entries.readBigUInt64LE(at + 8);
    }
    if (soname === null || strtab === null) return null;
    const address = strtab + soname;
    const load = headers.find((h) => h.type === PT_LOAD && h.vaddr <= address && address < h.vaddr + BigInt(h.filesz));
    if (!load) return null;
    const offset = load.offset + Number(address - load.vaddr);
    return cString(file.read(offset, Math.min(MAX_NAME_BYTES, file.size - offset), "the SONAME")) || null;
  } catch {
    return null;
  }
}

/** /proc/cpuinfo as WriteCPUInformation reads it: the last processor number, family, model, stepping, vendor. */
function cpuInformation(): { processors: number; family: number; model: number; stepping: number; vendor: string | null } | null {
  const text = hostFile("/proc/cpuinfo")?.toString("latin1");
  if (!text) return null;
  const values = new Map<string, number>();
  let processor = -1;
  let vendor: string | null = null;
  for (const line of text.split("\n")) {
    const match = /^([^:]*?)\s*:\s*(.*)$/.exec(line);
    if (!match) continue;
    const [, field = "", value = ""] = match;
    if (field === "vendor_id" && value) vendor = value;
    const number = /^\d+/.exec(value);
    if (!number) continue;
    if (field === "processor") processor = Number(number[0]);
    else if (["model", "stepping", "cpu family"].includes(field) && !values.has(field)) values.set(field, Number(number[0]));
  }
  const family = values.get("cpu family");
  const model = values.get("model");
  const stepping = values.get("stepping");
  if (processor < 0 || family === undefined || model === undefined || stepping === undefined) return null;
  return { processors: processor + 1, family, model, stepping, vendor };
}

/** A file of this machine (the one the crash happened on), at most 1 MiB; null when it is missing. */
function hostFile(path: string): Buffer | null {
  try {
    if (!existsSync(path)) return null;
    const bytes = readFileSync(path);
    return bytes.subarray(0, 1024 * 1024);
  } catch {
    return null;
  }
}

/** The device and inode /proc/PID/maps shows for a file, from stat now: 00:00 0 when it is gone. */
function deviceOf(path: string): { major: number; minor: number; inode: bigint } {
  try {
    const stats = statSync(path, { bigint: true });
    const dev = stats.dev;
    // glibc's gnu_dev_major/gnu_dev_minor.
    const major = Number(((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn));
    const minor = Number((dev & 0xffn) | ((dev >> 12n) & ~0xffn));
    return { major, minor, inode: stats.ino };
  } catch {
    return { major: 0, minor: 0, inode: 0n };
  }
}

function hex8(value: bigint): string {
  return value.toString(16).padStart(8, "0");
}

function hex2(value: number): string {
  return value.toString(16).padStart(2, "0");
}

function cString(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end < 0 ? bytes.length : end).toString("utf8");
}

function compare(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

