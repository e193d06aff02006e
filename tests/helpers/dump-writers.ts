/**
 * Small dump files built byte by byte, for tests that need a dump with exactly the records they
 * name, or one whose fields lie: a 64-bit x86-64 ELF core (the notes Linux and gdb write, and
 * PT_LOAD segments) and an x86-64 minidump (the streams Windows' dbghelp writes). Each builder
 * says where its fields lie, so that a test can corrupt one of them.
 *
 * Layouts: <linux/elfcore.h>, <asm/signal.h>, the kernel's fill_files_note, and Microsoft's
 * minidumpapiset.h and winnt.h.
 */

/** Bytes appended in order, each record at an offset the writer remembers. */
export class Writer {
  private readonly parts: Buffer[] = [];
  length = 0;

  append(bytes: Buffer, align = 1): number {
    const pad = (align - (this.length % align)) % align;
    if (pad > 0) this.push(Buffer.alloc(pad));
    const at = this.length;
    this.push(bytes);
    return at;
  }

  private push(bytes: Buffer): void {
    this.parts.push(bytes);
    this.length += bytes.length;
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts);
  }
}

export function record(size: number, fill: (b: Buffer) => void): Buffer {
  const b = Buffer.alloc(size);
  fill(b);
  return b;
}

// ---- ELF cores ------------------------------------------------------------------------------

export const NT_PRSTATUS = 1;
export const NT_PRPSINFO = 3;
export const NT_AUXV = 6;
export const NT_SIGINFO = 0x53494749;
export const NT_FILE = 0x46494c45;
const NT_GNU_BUILD_ID = 3;
const PT_LOAD = 1;
const PT_NOTE = 4;
const EM_X86_64 = 62;
const ET_CORE = 4;
const ET_DYN = 3;

export const AT_PHDR = 3;
export const AT_ENTRY = 9;
export const AT_PLATFORM = 15;
export const AT_EXECFN = 31;

/** x86-64 user_regs_struct, in order. */
export const X86_64_REGISTERS = ["r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs"];

export interface CoreThreadSpec {
  lwp: number;
  signal: number;
  registers: Partial<Record<string, bigint>>;
}

export interface CoreSpec {
  threads: CoreThreadSpec[];
  /** siginfo of the first thread: a fault address, or the sender's pid and uid. */
  siginfo: { signo: number; code: number; address?: bigint; pid?: number; uid?: number };
  process: { pid: number; uid: number; name: string; args: string };
  auxv: [type: number, value: bigint][];
  files: { start: bigint; end: bigint; pageOffset: bigint; path: string }[];
  pageSize: bigint;
  /** PT_LOAD segments with the bytes the core holds of them. */
  loads: { vaddr: bigint; flags: number; data: Buffer }[];
  /** Notes to add after the standard ones (name, type, desc). */
  extraNotes?: { name: string; type: number; desc: Buffer }[];
  /** How many PT_NOTE program headers point at the one note segment (a real core has one). */
  noteHeaders?: number;
}

export interface BuiltCore {
  bytes: Buffer;
  /** Where each note's header (namesz) lies in the file, in note order. */
  notes: { type: number; at: number; descAt: number }[];
  phoff: number;
  phnum: number;
  noteSegment: { offset: number; size: number };
}

function note(name: string, type: number, desc: Buffer): Buffer {
  const nameBytes = Buffer.from(`${name}\0`, "latin1");
  const pad = (n: number) => Math.ceil(n / 4) * 4;
  return record(12 + pad(nameBytes.length) + pad(desc.length), (b) => {
    b.writeUInt32LE(nameBytes.length, 0);
    b.writeUInt32LE(desc.length, 4);
    b.writeUInt32LE(type, 8);
    nameBytes.copy(b, 12);
    desc.copy(b, 12 + pad(nameBytes.length));
  });
}

function prstatus(thread: CoreThreadSpec): Buffer {
  return record(336, (b) => {
    b.writeInt16LE(thread.signal, 12);
    b.writeInt32LE(thread.lwp, 32);
    X86_64_REGISTERS.forEach((name, i) => b.writeBigUInt64LE(thread.registers[name] ?? 0n, 112 + i * 8));
  });
}

function siginfo(spec: CoreSpec["siginfo"]): Buffer {
  return record(128, (b) => {
    b.writeInt32LE(spec.signo, 0);
    b.writeInt32LE(spec.code, 8);
    if (spec.address !== undefined) b.writeBigUInt64LE(spec.address, 16);
    if (spec.pid !== undefined) b.writeInt32LE(spec.pid, 16);
    if (spec.uid !== undefined) b.writeUInt32LE(spec.uid, 20);
  });
}

function prpsinfo(spec: CoreSpec["process"]): Buffer {
  return record(136, (b) => {
    b.writeUInt32LE(spec.uid, 16);
    b.writeInt32LE(spec.pid, 24);
    b.write(spec.name.slice(0, 15), 40, "latin1");
    b.write(spec.args.slice(0, 79), 56, "latin1");
  });
}

export function fileNote(files: CoreSpec["files"], pageSize: bigint, count = BigInt(files.length)): Buffer {
  const table = record(16 + files.length * 24, (b) => {
    b.writeBigUInt64LE(count, 0);
    b.writeBigUInt64LE(pageSize, 8);
    files.forEach((f, i) => {
      b.writeBigUInt64LE(f.start, 16 + i * 24);
      b.writeBigUInt64LE(f.end, 24 + i * 24);
      b.writeBigUInt64LE(f.pageOffset, 32 + i * 24);
    });
  });
  return Buffer.concat([table, Buffer.from(files.map((f) => `${f.path}\0`).join(""), "utf8")]);
}

function auxv(pairs: CoreSpec["auxv"]): Buffer {
  return record((pairs.length + 1) * 16, (b) => {
    pairs.forEach(([type, value], i) => {
      b.writeBigUInt64LE(BigInt(type), i * 16);
      b.writeBigUInt64LE(value, i * 16 + 8);
    });
  });
}

function elfHeader(type: number, phoff: number, phnum: number): Buffer {
  return record(64, (b) => {
    b.write("\x7fELF", 0, "latin1");
    b[4] = 2; // ELFCLASS64
    b[5] = 1; // little-endian
    b[6] = 1; // EV_CURRENT
    b.writeUInt16LE(type, 16);
    b.writeUInt16LE(EM_X86_64, 18);
    b.writeUInt32LE(1, 20);
    b.writeBigUInt64LE(BigInt(phoff), 32);
    b.writeUInt16LE(64, 52);
    b.writeUInt16LE(56, 54);
    b.writeUInt16LE(phnum, 56);
  });
}

function programHeader(type: number, flags: number, offset: number, vaddr: bigint, filesz: number, memsz: bigint, align: number): Buffer {
  return record(56, (b) => {
    b.writeUInt32LE(type, 0);
    b.writeUInt32LE(flags, 4);
    b.writeBigUInt64LE(BigInt(offset), 8);
    b.writeBigUInt64LE(vaddr, 16);
    b.writeBigUInt64LE(BigInt(filesz), 32);
    b.writeBigUInt64LE(memsz, 40);
    b.writeBigUInt64LE(BigInt(align), 48);
  });
}

/**
 * The first page of an ELF shared object as a core holds it: the file header, one PT_NOTE
 * program header, and the GNU build-id note it points to.
 */
export function elfImagePage(buildId: Buffer, size = 4096): Buffer {
  const page = Buffer.alloc(size);
  elfHeader(ET_DYN, 64, 1).copy(page, 0);
  const idNote = note("GNU", NT_GNU_BUILD_ID, buildId);
  programHeader(PT_NOTE, 4, 120, 120n, idNote.length, BigInt(idNote.length), 4).copy(page, 64);
  idNote.copy(page, 120);
  return page;
}

/** An x86-64 ELF core: the header, program headers, one note segment, then the PT_LOAD data. */
export function buildElfCore(spec: CoreSpec): BuiltCore {
  const notes = [
    ...spec.threads.flatMap((thread, i) => [
      { name: "CORE", type: NT_PRSTATUS, desc: prstatus(thread) },
      ...(i === 0 ? [{ name: "CORE", type: NT_SIGINFO, desc: siginfo(spec.siginfo) }] : []),
    ]),
    { name: "CORE", type: NT_PRPSINFO, desc: prpsinfo(spec.process) },
    { name: "CORE", type: NT_AUXV, desc: auxv(spec.auxv) },
    { name: "CORE", type: NT_FILE, desc: fileNote(spec.files, spec.pageSize) },
  ].concat(spec.extraNotes ?? []);

  const noteHeaders = spec.noteHeaders ?? 1;
  const phnum = noteHeaders + spec.loads.length;
  const phoff = 64;
  const noteOffset = phoff + phnum * 56;
  const encoded = notes.map((n) => note(n.name, n.type, n.desc));
  const noteSize = encoded.reduce((sum, b) => sum + b.length, 0);
  const where: BuiltCore["notes"] = [];
  let at = noteOffset;
  notes.forEach((n, i) => {
    where.push({ type: n.type, at, descAt: at + 12 + Math.ceil((n.name.length + 1) / 4) * 4 });
    at += encoded[i]?.length ?? 0;
  });

  const out = new Writer();
  out.append(elfHeader(ET_CORE, phoff, phnum));
  let dataOffset = noteOffset + noteSize;
  const loadOffsets = spec.loads.map((load) => {
    dataOffset = Math.ceil(dataOffset / 16) * 16;
    const offset = dataOffset;
    dataOffset += load.data.length;
    return offset;
  });
  for (let i = 0; i < noteHeaders; i++) out.append(programHeader(PT_NOTE, 4, noteOffset, 0n, noteSize, 0n, 4));
  spec.loads.forEach((load, i) => out.append(programHeader(PT_LOAD, load.flags, loadOffsets[i] ?? 0, load.vaddr, load.data.length, BigInt(load.data.length), 1)));
  encoded.forEach((b) => out.append(b));
  spec.loads.forEach((load) => out.append(load.data, 16));
  return { bytes: out.bytes(), notes: where, phoff, phnum, noteSegment: { offset: noteOffset, size: noteSize } };
}

// ---- minidumps ------------------------------------------------------------------------------

export const THREAD_LIST = 3;
export const MODULE_LIST = 4;
export const MEMORY_LIST = 5;
export const EXCEPTION = 6;
export const SYSTEM_INFO = 7;
export const MISC_INFO = 15;
export const MEMORY_INFO_LIST = 16;
export const THREAD_NAMES = 24;

/** An AMD64 CONTEXT record is 1232 bytes; its general registers lie from 0x78 on, in this order, then rip. */
const AMD64_CONTEXT_BYTES = 0x4d0;
export const AMD64_GENERAL_REGISTERS = ["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"];

/** rip, rsp and, when given, the other general registers. */
export type Amd64Registers = { rip: bigint; rsp: bigint } & Partial<Record<string, bigint>>;

export interface MinidumpThreadSpec {
  id: number;
  name?: string;
  registers: Amd64Registers;
  stackStart: bigint;
  stack: Buffer;
}

export interface MinidumpSpec {
  /** The process's architecture: x86-64 (the default) or 32-bit x86, whose CONTEXT takes eip, esp and the e-registers from `rip`, `rsp` and the r-names. */
  arch?: "x86_64" | "x86";
  processId: number;
  version: [major: number, minor: number, build: number];
  threads: MinidumpThreadSpec[];
  /** None in a hang dump, taken of a process that raised nothing. */
  exception?: { thread: number; code: number; flags: number; address: bigint; parameters: bigint[]; registers: Amd64Registers };
  modules: { path: string; base: bigint; size: number; pdbGuid: Buffer; pdbAge: number }[];
  /** Regions for the memory info list: base, size, protection (PAGE_*), state (MEM_*), type (MEM_*). */
  regions: { base: bigint; size: bigint; protect: number; state: number; type: number }[];
}

export interface BuiltMinidump {
  bytes: Buffer;
  /** Each stream's directory entry (its type, size and rva fields) and where its data lies. */
  streams: Map<number, { entry: number; at: number; size: number }>;
  /** Per thread: where its MINIDUMP_THREAD entry lies. */
  threads: number[];
  /** Per module: where its MINIDUMP_MODULE entry and its name's length field lie. */
  modules: { entry: number; name: number }[];
}

/** A MINIDUMP_STRING: its byte length, UTF-16 text, and a NUL the length does not count. */
export function minidumpString(text: string): Buffer {
  const utf16 = Buffer.from(text, "utf16le");
  return record(4 + utf16.length + 2, (b) => {
    b.writeUInt32LE(utf16.length, 0);
    utf16.copy(b, 4);
  });
}

function amd64Context(registers: Amd64Registers): Buffer {
  return record(AMD64_CONTEXT_BYTES, (b) => {
    b.writeUInt32LE(0x10001f, 0x30); // CONTEXT_AMD64 | CONTEXT_FULL
    b.writeUInt16LE(0x33, 0x38); // cs
    b.writeUInt16LE(0x2b, 0x42); // ss
    b.writeUInt32LE(0x10246, 0x44); // eflags
    AMD64_GENERAL_REGISTERS.forEach((name, i) => b.writeBigUInt64LE(registers[name] ?? 0n, 0x78 + i * 8));
  });
}

/** An x86 CONTEXT record is 716 bytes; CONTEXT_i386 | CONTEXT_FULL, then the integer and control registers. */
const X86_CONTEXT_BYTES = 0x2cc;
const X86_REGISTERS: [string, number][] = [["rdi", 0x9c], ["rsi", 0xa0], ["rbx", 0xa4], ["rdx", 0xa8], ["rcx", 0xac], ["rax", 0xb0], ["rbp", 0xb4], ["rip", 0xb8], ["rsp", 0xc4]];

function x86Context(registers: Amd64Registers): Buffer {
  return record(X86_CONTEXT_BYTES, (b) => {
    b.writeUInt32LE(0x10007, 0);
    b.writeUInt32LE(0x23, 0xbc); // cs
    b.writeUInt32LE(0x246, 0xc0); // eflags
    b.writeUInt32LE(0x2b, 0xc8); // ss
    for (const [name, at] of X86_REGISTERS) b.writeUInt32LE(Number((registers[name] ?? 0n) & 0xffffffffn), at);
  });
}

/** A minidump with the streams Windows writes for a crash (x86-64, or 32-bit x86): the stream bodies first, then the directory. */
export function buildMinidump(spec: MinidumpSpec): BuiltMinidump {
  const x86 = spec.arch === "x86";
  const context = (registers: Amd64Registers) => (x86 ? x86Context(registers) : amd64Context(registers));
  const contextBytes = x86 ? X86_CONTEXT_BYTES : AMD64_CONTEXT_BYTES;
  const out = new Writer();
  const streamCount = spec.exception ? 8 : 7;
  out.append(Buffer.alloc(32));
  const directory = out.append(Buffer.alloc(streamCount * 12));
  const bodies: { type: number; at: number; size: number }[] = [];
  const stream = (type: number, body: Buffer) => {
    const at = out.append(body, 4);
    bodies.push({ type, at, size: body.length });
    return at;
  };

  const csd = out.append(minidumpString(""), 4);
  stream(
    SYSTEM_INFO,
    record(56, (b) => {
      b.writeUInt16LE(x86 ? 0 : 9, 0); // PROCESSOR_ARCHITECTURE_INTEL or _AMD64
      b[6] = 4; // processors
      b[7] = 1; // VER_NT_WORKSTATION
      b.writeUInt32LE(spec.version[0], 8);
      b.writeUInt32LE(spec.version[1], 12);
      b.writeUInt32LE(spec.version[2], 16);
      b.writeUInt32LE(2, 20); // VER_PLATFORM_WIN32_NT
      b.writeUInt32LE(csd, 24);
    }),
  );
  stream(
    MISC_INFO,
    record(24, (b) => {
      b.writeUInt32LE(24, 0);
      b.writeUInt32LE(1, 4); // MINIDUMP_MISC1_PROCESS_ID
      b.writeUInt32LE(spec.processId, 8);
    }),
  );

  const stacks = spec.threads.map((t) => out.append(t.stack, 16));
  const contexts = spec.threads.map((t) => out.append(context(t.registers), 16));
  const threadList = stream(
    THREAD_LIST,
    record(4 + spec.threads.length * 48, (b) => {
      b.writeUInt32LE(spec.threads.length, 0);
      spec.threads.forEach((t, i) => {
        const at = 4 + i * 48;
        b.writeUInt32LE(t.id, at);
        b.writeBigUInt64LE(0x7ff000000000n + BigInt(i) * 0x2000n, at + 16); // TEB
        b.writeBigUInt64LE(t.stackStart, at + 24);
        b.writeUInt32LE(t.stack.length, at + 32);
        b.writeUInt32LE(stacks[i] ?? 0, at + 36);
        b.writeUInt32LE(contextBytes, at + 40);
        b.writeUInt32LE(contexts[i] ?? 0, at + 44);
      });
    }),
  );

  const named = spec.threads.filter((t) => t.name !== undefined);
  const names = named.map((t) => out.append(minidumpString(t.name ?? ""), 4));
  stream(
    THREAD_NAMES,
    record(4 + named.length * 12, (b) => {
      b.writeUInt32LE(named.length, 0);
      named.forEach((t, i) => {
        b.writeUInt32LE(t.id, 4 + i * 12);
        b.writeBigUInt64LE(BigInt(names[i] ?? 0), 8 + i * 12);
      });
    }),
  );

  const exception = spec.exception;
  if (exception) {
    const exceptionContext = out.append(context(exception.registers), 16);
    stream(
      EXCEPTION,
      record(168, (b) => {
        b.writeUInt32LE(exception.thread, 0);
        b.writeUInt32LE(exception.code, 8);
        b.writeUInt32LE(exception.flags, 12);
        b.writeBigUInt64LE(exception.address, 24);
        b.writeUInt32LE(exception.parameters.length, 32);
        exception.parameters.forEach((p, i) => b.writeBigUInt64LE(p, 40 + i * 8));
        b.writeUInt32LE(contextBytes, 160);
        b.writeUInt32LE(exceptionContext, 164);
      }),
    );
  }

  const moduleNames = spec.modules.map((m) => out.append(minidumpString(m.path), 4));
  const codeViews = spec.modules.map((m) =>
    out.append(
      record(24 + 9, (b) => {
        b.write("RSDS", 0, "latin1");
        m.pdbGuid.copy(b, 4);
        b.writeUInt32LE(m.pdbAge, 20);
        b.write("chat.pdb\0", 24, "latin1");
      }),
      4,
    ),
  );
  const moduleList = stream(
    MODULE_LIST,
    record(4 + spec.modules.length * 108, (b) => {
      b.writeUInt32LE(spec.modules.length, 0);
      spec.modules.forEach((m, i) => {
        const at = 4 + i * 108;
        b.writeBigUInt64LE(m.base, at);
        b.writeUInt32LE(m.size, at + 8);
        b.writeUInt32LE(moduleNames[i] ?? 0, at + 20);
        b.writeUInt32LE(33, at + 76);
        b.writeUInt32LE(codeViews[i] ?? 0, at + 80);
      });
    }),
  );

  stream(
    MEMORY_LIST,
    record(4 + spec.threads.length * 16, (b) => {
      b.writeUInt32LE(spec.threads.length, 0);
      spec.threads.forEach((t, i) => {
        b.writeBigUInt64LE(t.stackStart, 4 + i * 16);
        b.writeUInt32LE(t.stack.length, 12 + i * 16);
        b.writeUInt32LE(stacks[i] ?? 0, 16 + i * 16);
      });
    }),
  );
  stream(
    MEMORY_INFO_LIST,
    record(16 + spec.regions.length * 48, (b) => {
      b.writeUInt32LE(16, 0);
      b.writeUInt32LE(48, 4);
      b.writeBigUInt64LE(BigInt(spec.regions.length), 8);
      spec.regions.forEach((r, i) => {
        const at = 16 + i * 48;
        b.writeBigUInt64LE(r.base, at);
        b.writeBigUInt64LE(r.base, at + 8);
        b.writeUInt32LE(r.protect, at + 16);
        b.writeBigUInt64LE(r.size, at + 24);
        b.writeUInt32LE(r.state, at + 32);
        b.writeUInt32LE(r.protect, at + 36);
        b.writeUInt32LE(r.type, at + 40);
      });
    }),
  );

  const bytes = out.bytes();
  bytes.writeUInt32LE(0x504d444d, 0); // "MDMP"
  bytes.writeUInt32LE(0xa793, 4);
  bytes.writeUInt32LE(streamCount, 8);
  bytes.writeUInt32LE(directory, 12);
  const streams: BuiltMinidump["streams"] = new Map();
  bodies.forEach((s, i) => {
    const entry = directory + i * 12;
    bytes.writeUInt32LE(s.type, entry);
    bytes.writeUInt32LE(s.size, entry + 4);
    bytes.writeUInt32LE(s.at, entry + 8);
    streams.set(s.type, { entry, at: s.at, size: s.size });
  });
  if (bodies.length !== streamCount) throw new Error(`wrote ${bodies.length} streams, the header says ${streamCount}`);
  return {
    bytes,
    streams,
    threads: spec.threads.map((_, i) => threadList + 4 + i * 48),
    modules: spec.modules.map((_, i) => ({ entry: moduleList + 4 + i * 108, name: moduleNames[i] ?? 0 })),
  };
}
