/**
 * An arm64 Linux minidump made from a real aarch64 core, as Breakpad's Linux client would have
 * written it for the same crash (there is no Breakpad or Crashpad on this machine): the core's
 * threads (NT_PRSTATUS: x0–x30, sp, pc, pstate), each thread's stack (its sp rounded down to a
 * page, up to the end of its mapping, at most 32 KiB, as LinuxDumper::GetStackInfo takes it) and
 * the 256 bytes around the crashing pc, the executable as the one module (qemu's cores carry no
 * NT_FILE to name the libraries: its base and size from its PT_LOAD segments, its CodeView record
 * `BpEL` and its GNU build id), SystemInfo with PROCESSOR_ARCHITECTURE_ARM64 (12) and Linux
 * (0x8201), and the exception as Breakpad records a Linux signal: ExceptionCode the signal number,
 * ExceptionFlags si_code, ExceptionAddress si_addr. The context is Breakpad's MDRawContextARM64
 * (minidump_cpu_arm64.h): context_flags MD_CONTEXT_ARM64 | CONTROL | INTEGER (0x00400003), cpsr,
 * iregs[33] (x0–x28, fp, lr, sp, pc), then the floating-point area, 912 bytes in all.
 *
 * qemu's cores carry no NT_SIGINFO: the signal record is what qemu itself handed the guest, read
 * from its `-strace` line (`--- SIGSEGV {si_signo=SIGSEGV, si_code=1, si_addr=0x…} ---`) by the
 * caller. Options take streams away, to test what is said without them.
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";

import { DumpFile, readElfHeader } from "../../src/debuggers/dumpfile/index.js";
import { forEachNote, programBuildId, PT_LOAD, PT_NOTE, readProgramHeaders, type ProgramHeader } from "../../src/debuggers/dumpfile/elf.js";
import { AARCH64_SYSROOT, buildAarch64Core } from "./aarch64-cores.js";
import { minidumpString, record, Writer } from "./dump-writers.js";

const EM_AARCH64 = 183;
const ET_CORE = 4;
const NT_PRSTATUS = 1;
/** elf_prstatus on aarch64: pr_pid at 32, pr_reg (34 words) at 112. */
const PRSTATUS_BYTES = 392;
const PR_REG = 112;

const THREAD_LIST = 3;
const MODULE_LIST = 4;
const MEMORY_LIST = 5;
const EXCEPTION = 6;
const SYSTEM_INFO = 7;
const MD_CPU_ARCHITECTURE_ARM64 = 12;
const MD_OS_LINUX = 0x8201;
const MD_CONTEXT_ARM64_FULL = 0x00400003;
const CONTEXT_BYTES = 912;
const MD_CVINFOELF_SIGNATURE = 0x4270454c; // "BpEL"
const STACK_TO_CAPTURE = 32n * 1024n;
const IP_MEMORY_SIZE = 256n;
const PAGE = 4096n;

/** The signal record Breakpad's handler gets from the kernel. */
export interface SignalFacts {
  signo: number;
  code: number;
  address: bigint;
}

export interface Arm64MinidumpOptions {
  /** Leave the exception stream out (a dump written on request, or by a client that failed to add it). */
  withoutException?: boolean;
  /** Leave every memory range out: no stacks, no code. */
  withoutMemory?: boolean;
}

interface Thread {
  lwp: number;
  registers: bigint[];
}

/** qemu's `-strace` line for the signal it delivered; null when the output has none. */
function qemuSignal(strace: string): SignalFacts | null {
  const line = /--- SIG\w+ \{si_signo=\w+, si_code=(-?\d+), si_addr=(0x[0-9a-f]+)\} ---/.exec(strace);
  const signo = /--- SIG(\w+) \{/.exec(strace)?.[1];
  const numbers: Record<string, number> = { SEGV: 11, BUS: 7, ILL: 4, FPE: 8, TRAP: 5 };
  if (!line || !signo || numbers[signo] === undefined) return null;
  return { signo: numbers[signo]!, code: Number(line[1]), address: BigInt(line[2]!) };
}

/** Writes to `out` the minidump of the crash that left `core` (aarch64), the process having run `exe`. */
export function arm64MinidumpFromCore(core: string, exe: string, signal: SignalFacts, out: string, options: Arm64MinidumpOptions = {}): void {
  const file = DumpFile.open(core);
  const program = DumpFile.open(exe);
  try {
    const header = readElfHeader(file.read(0, Math.min(64, file.size), "the ELF header"));
    if (!header.is64 || !header.little || header.type !== ET_CORE || header.machine !== EM_AARCH64) throw new Error(`${core} is not a little-endian aarch64 ELF core`);
    const segments = readProgramHeaders(file, header);
    const threads: Thread[] = [];
    for (const segment of segments.filter((s) => s.type === PT_NOTE)) {
      forEachNote(file.read(segment.offset, segment.filesz, "a note segment"), true, segment.align, (note) => {
        if (note.name !== "CORE" || note.type !== NT_PRSTATUS || note.desc.length !== PRSTATUS_BYTES) return;
        threads.push({ lwp: note.desc.readInt32LE(32), registers: Array.from({ length: 34 }, (_, i) => note.desc.readBigUInt64LE(PR_REG + i * 8)) });
      });
    }
    const crashed = threads[0];
    if (!crashed) throw new Error(`${core} has no thread`);
    const programHeader = readElfHeader(program.read(0, 64, "the executable's ELF header"));
    const programLoads = readProgramHeaders(program, programHeader).filter((s) => s.type === PT_LOAD);
    const memory = new ProcessMemory(file, segments.filter((s) => s.type === PT_LOAD), program, programLoads);
    writeFileSync(out, minidump(threads, crashed, memory, signal, exe, program, programLoads, options));
  } finally {
    program.close();
    file.close();
  }
}

/** The process's memory: the core's segments where they hold bytes, else the executable's file (code a core leaves out). */
class ProcessMemory {
  constructor(
    private readonly core: DumpFile,
    private readonly loads: ProgramHeader[],
    private readonly program: DumpFile,
    private readonly programLoads: ProgramHeader[],
  ) {}

  mappingAt(address: bigint): ProgramHeader | null {
    return this.loads.find((s) => s.vaddr <= address && address < s.vaddr + s.memsz) ?? null;
  }

  read(address: bigint, length: number): Buffer {
    const bytes = Buffer.alloc(length);
    for (let i = 0; i < length; i++) {
      const at = address + BigInt(i);
      const load = this.mappingAt(at);
      if (load && at < load.vaddr + BigInt(load.filesz)) {
        bytes[i] = this.core.read(load.offset + Number(at - load.vaddr), 1, "a dumped segment")[0]!;
        continue;
      }
      const image = this.programLoads.find((s) => s.vaddr <= at && at < s.vaddr + BigInt(s.filesz));
      if (image) bytes[i] = this.program.read(image.offset + Number(at - image.vaddr), 1, "the executable")[0]!;
    }
    return bytes;
  }
}

/** MDRawContextARM64: flags, cpsr, x0–x28, fp, lr, sp, pc; the floating-point area left zero. */
function arm64Context(registers: bigint[]): Buffer {
  return record(CONTEXT_BYTES, (b) => {
    b.writeUInt32LE(MD_CONTEXT_ARM64_FULL, 0);
    b.writeUInt32LE(Number(registers[33]! & 0xffffffffn), 4);
    for (let i = 0; i < 33; i++) b.writeBigUInt64LE(registers[i]!, 8 + i * 8);
  });
}

function minidump(threads: Thread[], crashed: Thread, memory: ProcessMemory, signal: SignalFacts, exe: string, program: DumpFile, programLoads: ProgramHeader[], options: Arm64MinidumpOptions): Buffer {
  const out = new Writer();
  const types = [THREAD_LIST, MODULE_LIST, MEMORY_LIST, ...(options.withoutException ? [] : [EXCEPTION]), SYSTEM_INFO];
  out.append(Buffer.alloc(32));
  const directory = out.append(Buffer.alloc(types.length * 12));
  const bodies = new Map<number, { at: number; size: number }>();
  const stream = (type: number, body: Buffer) => bodies.set(type, { at: out.append(body, 8), size: body.length });

  const ranges: { start: bigint; bytes: Buffer; rva: number }[] = [];
  const stacks = threads.map((thread) => {
    const sp = thread.registers[31]!;
    const mapping = memory.mappingAt(sp);
    if (!mapping || options.withoutMemory) return null;
    const start = sp & ~(PAGE - 1n);
    const end = mapping.vaddr + mapping.memsz < start + STACK_TO_CAPTURE ? mapping.vaddr + mapping.memsz : start + STACK_TO_CAPTURE;
    const bytes = memory.read(start, Number(end - start));
    const range = { start, bytes, rva: out.append(bytes, 8) };
    ranges.push(range);
    return range;
  });
  const contexts = threads.map((thread) => out.append(arm64Context(thread.registers), 8));
  stream(
    THREAD_LIST,
    record(4 + threads.length * 48, (b) => {
      b.writeUInt32LE(threads.length, 0);
      threads.forEach((thread, i) => {
        const at = 4 + i * 48;
        b.writeUInt32LE(thread.lwp, at);
        b.writeBigUInt64LE(stacks[i]?.start ?? 0n, at + 24);
        b.writeUInt32LE(stacks[i]?.bytes.length ?? 0, at + 32);
        b.writeUInt32LE(stacks[i]?.rva ?? 0, at + 36);
        b.writeUInt32LE(CONTEXT_BYTES, at + 40);
        b.writeUInt32LE(contexts[i]!, at + 44);
      });
    }),
  );

  // The bytes around the crashing pc, bounded to its mapping (MinidumpWriter::WriteThreadListStream).
  const pc = crashed.registers[32]!;
  const code = memory.mappingAt(pc);
  if (code && !options.withoutMemory) {
    const low = pc - IP_MEMORY_SIZE / 2n < code.vaddr ? code.vaddr : pc - IP_MEMORY_SIZE / 2n;
    const high = low + IP_MEMORY_SIZE > code.vaddr + code.memsz ? code.vaddr + code.memsz : low + IP_MEMORY_SIZE;
    const bytes = memory.read(low, Number(high - low));
    ranges.push({ start: low, bytes, rva: out.append(bytes, 8) });
  }

  const base = programLoads.reduce((low, s) => (s.vaddr < low ? s.vaddr : low), programLoads[0]?.vaddr ?? 0n) & ~(PAGE - 1n);
  const end = programLoads.reduce((high, s) => (s.vaddr + s.memsz > high ? s.vaddr + s.memsz : high), 0n);
  const buildId = Buffer.from(programBuildId(program) ?? "", "hex");
  const name = out.append(minidumpString(exe), 4);
  const codeView = out.append(
    record(8 + buildId.length, (b) => {
      b.writeUInt32LE(MD_CVINFOELF_SIGNATURE, 0);
      buildId.copy(b, 4);
    }),
    4,
  );
  stream(
    MODULE_LIST,
    record(4 + 108, (b) => {
      b.writeUInt32LE(1, 0);
      b.writeBigUInt64LE(base, 4);
      b.writeUInt32LE(Number(end - base), 12);
      b.writeUInt32LE(name, 24);
      b.writeUInt32LE(4 + buildId.length, 80);
      b.writeUInt32LE(codeView, 84);
    }),
  );

  stream(
    MEMORY_LIST,
    record(4 + ranges.length * 16, (b) => {
      b.writeUInt32LE(ranges.length, 0);
      ranges.forEach((range, i) => {
        b.writeBigUInt64LE(range.start, 4 + i * 16);
        b.writeUInt32LE(range.bytes.length, 12 + i * 16);
        b.writeUInt32LE(range.rva, 16 + i * 16);
      });
    }),
  );

  if (!options.withoutException) {
    const context = out.append(arm64Context(crashed.registers), 8);
    stream(
      EXCEPTION,
      record(168, (b) => {
        b.writeUInt32LE(crashed.lwp, 0);
        b.writeUInt32LE(signal.signo, 8);
        b.writeUInt32LE(signal.code >>> 0, 12);
        b.writeBigUInt64LE(signal.address, 24);
        b.writeUInt32LE(CONTEXT_BYTES, 160);
        b.writeUInt32LE(context, 164);
      }),
    );
  }

  const csd = out.append(minidumpString("Linux 6.1.0 #1 SMP aarch64"), 4);
  stream(
    SYSTEM_INFO,
    record(56, (b) => {
      b.writeUInt16LE(MD_CPU_ARCHITECTURE_ARM64, 0);
      b[6] = 1; // processors
      b.writeUInt32LE(MD_OS_LINUX, 20);
      b.writeUInt32LE(csd, 24);
    }),
  );

  const bytes = out.bytes();
  bytes.writeUInt32LE(0x504d444d, 0); // "MDMP"
  bytes.writeUInt32LE(0xa793, 4);
  bytes.writeUInt32LE(types.length, 8);
  bytes.writeUInt32LE(directory, 12);
  types.forEach((type, i) => {
    const body = bodies.get(type)!;
    bytes.writeUInt32LE(type, directory + i * 12);
    bytes.writeUInt32LE(body.size, directory + i * 12 + 4);
    bytes.writeUInt32LE(body.at, directory + i * 12 + 8);
  });
  return bytes;
}

/**
 * The minidump of fixture program `name`'s arm64 crash, at `out`: its core built as the arm64 core
 * tests build it, and the signal qemu delivered read from a second run under `-strace` (the crash is
 * deterministic; that run writes no core).
 */
export async function arm64Minidump(name: string, out: string, options: Arm64MinidumpOptions = {}): Promise<{ exe: string; core: string; source: string; signal: SignalFacts }> {
  const built = await buildAarch64Core(name);
  const { stderr } = await run("sh", ["-c", `ulimit -c 0; exec qemu-aarch64 -L ${AARCH64_SYSROOT} -strace "$0"`, built.exe]);
  const signal = qemuSignal(stderr);
  if (!signal) throw new Error(`qemu's -strace output of ${name} names no signal: ${stderr.slice(-400)}`);
  arm64MinidumpFromCore(built.core, built.exe, signal, out, options);
  return { ...built, signal };
}

function run(command: string, args: string[]): Promise<{ stderr: string }> {
  return new Promise((resolve) => execFile(command, args, { timeout: 60_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, LC_ALL: "C" } }, (_error, _stdout, stderr) => resolve({ stderr })));
}
