/**
 * The dump-file parsers on hand-built files, whole and corrupted: a truncated core, notes and
 * counts that claim gigabytes, minidump streams and lists that point past the end, and a seeded
 * loop of byte flips. Whatever a file says, a parse ends in facts (with what was malformed noted
 * in `problems`) or in a DumpFileError, and it reads a bounded amount of the file.
 */
import { mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { DumpError, inspectDump } from "../../src/debuggers/dump.js";
import { withCrashpadInfo } from "../helpers/crashpad-info.js";
import { DumpFile, DumpFileError, programBuildId, readElfCore, readMinidump, readMinidumpMemory, type ElfCoreFacts, type MinidumpFacts } from "../../src/debuggers/dumpfile/index.js";
import {
  AT_ENTRY,
  AT_EXECFN,
  AT_PHDR,
  AT_PLATFORM,
  AMD64_GENERAL_REGISTERS,
  buildElfCore,
  buildMinidump,
  elfImagePage,
  EXCEPTION,
  fileNote,
  MEMORY_INFO_LIST,
  MEMORY_LIST,
  MODULE_LIST,
  NT_FILE,
  NT_PRPSINFO,
  NT_PRSTATUS,
  THREAD_LIST,
  THREAD_NAMES,
  type CoreSpec,
  type MinidumpSpec,
  X86_64_REGISTERS,
} from "../helpers/dump-writers.js";

/** More than any parse of these files needs, far less than a runaway one reads: reading past it fails the test at once. */
const READ_BUDGET_BYTES = 256 * 1024 * 1024;
const READ_BUDGET_CALLS = 1_000_000;

class ReadBudgetExceeded extends Error {}

/** A DumpFile that counts its reads, and stops a parse that reads more than the budget. */
class CountingDumpFile extends DumpFile {
  reads = 0;
  bytesRead = 0;

  override read(offset: number, length: number, what: string): Buffer {
    const bytes = super.read(offset, length, what);
    this.reads++;
    this.bytesRead += bytes.length;
    if (this.bytesRead > READ_BUDGET_BYTES || this.reads > READ_BUDGET_CALLS) {
      throw new ReadBudgetExceeded(`${this.reads} reads of ${this.bytesRead} bytes, the last one ${what}`);
    }
    return bytes;
  }
}

let dir: string;
let serial = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "dumpdbg-bounds-"));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function save(bytes: Buffer): string {
  const path = join(dir, `dump-${serial++}`);
  writeFileSync(path, bytes);
  return path;
}

/** Parses `bytes` as written to a file: the facts, or the error the parse threw, and what it read. */
function parse<T>(bytes: Buffer, reader: (file: DumpFile) => T): { facts: T | null; error: unknown; reads: number; bytesRead: number } {
  const file = new CountingDumpFile(openSync(save(bytes), "r"));
  try {
    return { facts: reader(file), error: null, reads: file.reads, bytesRead: file.bytesRead };
  } catch (error) {
    return { facts: null, error, reads: file.reads, bytesRead: file.bytesRead };
  } finally {
    file.close();
  }
}

function parsed<T>(bytes: Buffer, reader: (file: DumpFile) => T): T {
  const { facts, error } = parse(bytes, reader);
  if (error) throw error;
  return facts as T;
}

function parseError<T>(bytes: Buffer, reader: (file: DumpFile) => T): unknown {
  const { error } = parse(bytes, reader);
  if (!error) throw new Error("the parse succeeded");
  return error;
}

const hex = (value: bigint | number) => `0x${value.toString(16)}`;

/** Every general register with a value of its own, so that one read at the wrong offset shows. */
function distinctRegisters(names: string[], seed: bigint): Record<string, bigint> {
  return Object.fromEntries(names.map((name, i) => [name, (seed << 16n) + BigInt(i + 1)]));
}

// ---- ELF cores ------------------------------------------------------------------------------

const EXE = "/usr/bin/chat-server";
const LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6";
const EXE_ID = Buffer.from("4f1c2a9be0d35e7a8b6c1d2e3f405162738495a6", "hex");
const LIBC_ID = Buffer.from("93ac61ec5a8eb1396f9fbd350e3169a558528a40", "hex");
const STACK = 0x7ffc0000e000n;
const STACK_STRINGS = { execfn: 0x40, platform: 0x80 };

function stackPage(): Buffer {
  const stack = Buffer.alloc(512);
  stack.write(`${EXE}\0`, STACK_STRINGS.execfn, "latin1");
  stack.write("x86_64\0", STACK_STRINGS.platform, "latin1");
  return stack;
}

const WORKER_REGISTERS = { ...distinctRegisters(X86_64_REGISTERS, 0x4243n), rip: 0x401136n, rsp: STACK + 0x100n };

/** A chat server's worker (LWP 4243) that wrote at 0x40 through NULL; main (4242) waits. */
function coreSpec(): CoreSpec {
  return {
    threads: [
      { lwp: 4243, signal: 11, registers: WORKER_REGISTERS },
      { lwp: 4242, signal: 0, registers: { rip: 0x7f0000012345n, rsp: STACK + 0x180n } },
    ],
    siginfo: { signo: 11, code: 1, address: 0x40n },
    process: { pid: 4242, uid: 1000, name: "chat-server", args: `${EXE} --port 8080` },
    auxv: [
      [AT_PHDR, 0x400040n],
      [AT_ENTRY, 0x401020n],
      [AT_EXECFN, STACK + BigInt(STACK_STRINGS.execfn)],
      [AT_PLATFORM, STACK + BigInt(STACK_STRINGS.platform)],
    ],
    files: [
      { start: 0x400000n, end: 0x401000n, pageOffset: 0n, path: EXE },
      { start: 0x401000n, end: 0x402000n, pageOffset: 1n, path: EXE },
      { start: 0x7f0000000000n, end: 0x7f0000026000n, pageOffset: 0n, path: LIBC },
    ],
    pageSize: 4096n,
    loads: [
      { vaddr: 0x400000n, flags: 4, data: elfImagePage(EXE_ID, 256) },
      { vaddr: 0x401000n, flags: 5, data: Buffer.alloc(64, 0x90) },
      { vaddr: 0x7f0000000000n, flags: 4, data: elfImagePage(LIBC_ID, 256) },
      { vaddr: STACK, flags: 6, data: stackPage() },
    ],
  };
}

function noteAt(core: ReturnType<typeof buildElfCore>, type: number): { at: number; descAt: number } {
  const found = core.notes.find((n) => n.type === type);
  if (!found) throw new Error(`no note of type ${type}`);
  return found;
}

describe("readElfCore on a hand-built core", () => {
  it("reads what was written: signal, threads, process, files, modules, auxv and regions", () => {
    const facts = parsed(buildElfCore(coreSpec()).bytes, readElfCore);
    expect(facts.problems).toEqual([]);
    expect(facts.platform).toEqual({ os: "linux", arch: "x86_64", pointerSize: 8 });
    expect(facts.stopReason).toEqual({ type: "signal", signo: 11, code: 1, errno: 0, address: "0x40", senderPid: null, senderUid: null, thread: 4243, recordedBy: "kernel" });
    expect(facts.threads[0]?.registers).toEqual(Object.fromEntries(Object.entries(WORKER_REGISTERS).map(([name, value]) => [name, hex(value)])));
    expect(facts.threads.map((t) => [t.lwp, t.signal, t.registers.rip, t.registers.rsp])).toEqual([
      [4243, 11, "0x401136", hex(STACK + 0x100n)],
      [4242, 0, "0x7f0000012345", hex(STACK + 0x180n)],
    ]);
    expect(facts).toMatchObject({ pid: 4242, uid: 1000, programName: "chat-server", commandLine: `${EXE} --port 8080` });
    expect(facts.mappedFiles.map((m) => [m.path, m.fileOffset])).toEqual([
      [EXE, 0n],
      [EXE, 4096n],
      [LIBC, 0n],
    ]);
    expect(facts.modules.map((m) => [m.path, m.start, m.end, m.buildId])).toEqual([
      [EXE, "0x400000", "0x402000", EXE_ID.toString("hex")],
      [LIBC, "0x7f0000000000", "0x7f0000026000", LIBC_ID.toString("hex")],
    ]);
    expect(facts.auxv).toMatchObject({ phdr: "0x400040", entry: "0x401020", execfnPath: EXE, platformName: "x86_64" });
    expect(facts.regions.map((r) => [r.start, r.permissions, r.file, r.offset])).toEqual([
      ["0x400000", "r--", EXE, "0x0"],
      ["0x401000", "r-x", EXE, "0x1000"],
      ["0x7f0000000000", "r--", LIBC, "0x0"],
      [hex(STACK), "rw-", null, null],
    ]);
  });
});

describe("readElfCore on a core that lies", () => {
  it("ends a core cut short in a DumpFileError, or in facts that show it is cut short; only one cut in its notes is refused", () => {
    const core = buildElfCore(coreSpec());
    const full = core.bytes.length;
    const notesEnd = core.noteSegment.offset + core.noteSegment.size;
    const cuts = [0, 10, 40, 63, 64, core.phoff + 30, core.noteSegment.offset + 5, core.noteSegment.offset + core.noteSegment.size / 2, notesEnd + 40, full - 1];
    for (const cut of cuts) {
      const bytes = core.bytes.subarray(0, cut);
      const { facts, error } = parse(bytes, readElfCore);
      if (error) expect(error, `cut at ${cut}`).toBeInstanceOf(DumpFileError);
      else expect([facts?.expectedBytes, facts?.cut?.fileBytes], `cut at ${cut}`).toEqual([full, cut]);
      if (cut < notesEnd) expect(() => inspectDump(save(bytes)), `cut at ${cut}`).toThrow(DumpError);
      else expect(inspectDump(save(bytes)).facts.stopReason, `cut at ${cut}`).toMatchObject({ signo: 11, address: "0x40" });
    }
    const insideNotes = parsed(core.bytes.subarray(0, core.noteSegment.offset + 5), readElfCore);
    expect(insideNotes.problems.join("\n")).toMatch(/note segment.*runs past the end of the file/);
    expect(() => inspectDump(save(core.bytes.subarray(0, core.noteSegment.offset + 5)))).toThrow(/is truncated inside its notes/);
  });

  it("stops at a note whose name claims gigabytes, keeping the notes before it", () => {
    const core = buildElfCore(coreSpec());
    const bytes = Buffer.from(core.bytes);
    bytes.writeUInt32LE(0xfffffff0, noteAt(core, NT_PRPSINFO).at);
    const facts = parsed(bytes, readElfCore);
    expect(facts.problems).toEqual([expect.stringMatching(/a note of type 0x3 .* runs past the end of its segment/)]);
    expect(facts.threads.map((t) => t.lwp)).toEqual([4243, 4242]);
    expect(facts.stopReason?.address).toBe("0x40");
    expect(facts.pid).toBeNull();
    expect(facts.mappedFiles).toEqual([]);
  });

  it("stops at a note whose description claims gigabytes", () => {
    const core = buildElfCore(coreSpec());
    const bytes = Buffer.from(core.bytes);
    bytes.writeUInt32LE(0xffffffff, noteAt(core, NT_FILE).at + 4);
    const facts = parsed(bytes, readElfCore);
    expect(facts.problems).toEqual([expect.stringMatching(/runs past the end of its segment/)]);
    expect(facts).toMatchObject({ pid: 4242, programName: "chat-server", mappedFiles: [], modules: [] });
    expect(facts.auxv?.entry).toBe("0x401020");
  });

  it("notes an NT_FILE count beyond any process, and reads the rest", () => {
    for (const count of [1n << 62n, 0xffffffffn, 100_000n]) {
      const core = buildElfCore(coreSpec());
      const bytes = Buffer.from(core.bytes);
      bytes.writeBigUInt64LE(count, noteAt(core, NT_FILE).descAt);
      const facts = parsed(bytes, readElfCore);
      expect(facts.problems, `count ${count}`).toEqual([expect.stringMatching(/the NT_FILE note/)]);
      expect(facts.mappedFiles).toEqual([]);
      expect(facts.threads).toHaveLength(2);
      expect(facts.pid).toBe(4242);
    }
  });

  it("notes a thread whose NT_PRSTATUS is too short, and reads the other", () => {
    const spec = coreSpec();
    const core = buildElfCore({ ...spec, threads: spec.threads, extraNotes: [{ name: "CORE", type: NT_PRSTATUS, desc: Buffer.alloc(20) }] });
    const facts = parsed(core.bytes, readElfCore);
    expect(facts.problems).toEqual([expect.stringMatching(/NT_PRSTATUS note is too short/)]);
    expect(facts.threads.map((t) => t.lwp)).toEqual([4243, 4242]);
  });

  it("refuses program headers outside the file, too small, or counted in a section header past the end", () => {
    const core = buildElfCore(coreSpec());
    const pastEnd = Buffer.from(core.bytes);
    pastEnd.writeBigUInt64LE(BigInt(core.bytes.length), 32);
    const tooSmall = Buffer.from(core.bytes);
    tooSmall.writeUInt16LE(8, 54);
    const extended = Buffer.from(core.bytes);
    extended.writeUInt16LE(0xffff, 56);
    extended.writeBigUInt64LE(1n << 40n, 40);
    const hugeOffset = Buffer.from(core.bytes);
    hugeOffset.writeBigUInt64LE(0xffffffffffffff00n, 32);
    for (const bytes of [pastEnd, tooSmall, extended, hugeOffset]) {
      expect(parseError(bytes, readElfCore)).toBeInstanceOf(DumpFileError);
      expect(() => inspectDump(save(bytes))).toThrow(/is truncated or corrupt/);
    }
  });

  it("notes a note segment that claims a terabyte, and still names the regions", () => {
    const core = buildElfCore(coreSpec());
    const bytes = Buffer.from(core.bytes);
    bytes.writeBigUInt64LE(1n << 40n, core.phoff + 32);
    const { facts, bytesRead } = parse(bytes, readElfCore);
    expect(facts?.problems).toEqual([expect.stringMatching(/the note segment claims \d+ bytes/)]);
    expect(facts?.threads).toEqual([]);
    expect(facts?.regions).toHaveLength(4);
    expect(bytesRead).toBeLessThan(bytes.length);
  });

  it("reads a bounded amount when thousands of program headers name the same large note segment", () => {
    const filler = { name: "CORE", type: 0x4e4f4953, desc: Buffer.alloc(1024 * 1024) };
    const core = buildElfCore({ ...coreSpec(), extraNotes: [filler], noteHeaders: 20_000 });
    const { facts, error, bytesRead } = parse(core.bytes, readElfCore);
    expect(error).toBeNull();
    expect(bytesRead).toBeLessThan(READ_BUDGET_BYTES);
    expect(facts?.problems.join("\n")).toMatch(/note segments/);
    expect(facts?.stopReason?.thread).toBe(4243);
  });

  it("reads a bounded number of threads from a quarter of a million NT_PRSTATUS notes too short to hold one", () => {
    const broken = { name: "CORE", type: NT_PRSTATUS, desc: Buffer.alloc(4) };
    const count = 250_000;
    const core = buildElfCore({ ...coreSpec(), extraNotes: Array.from({ length: count }, () => broken) });
    const { facts, error } = parse(core.bytes, readElfCore);
    expect(error).toBeNull();
    expect(facts?.threads.map((t) => t.lwp)).toEqual([4243, 4242]);
    expect(facts?.problems.length).toBeLessThan(count / 2);
    expect(facts?.problems.at(-1)).toMatch(/^more than \d+ threads: the rest were not read$/);
  });

  it("reads a bounded amount when NT_FILE names a different file at every few bytes of a dumped segment", () => {
    const spec = coreSpec();
    const segment = 0x10000000n;
    const files = Array.from({ length: 200_000 }, (_, i) => ({ start: segment + BigInt(i * 4), end: segment + BigInt(i * 4 + 4), pageOffset: 0n, path: `/l/${i}` }));
    const core = buildElfCore({
      ...spec,
      files: [],
      extraNotes: [{ name: "CORE", type: NT_FILE, desc: fileNote(files, 4096n) }],
      loads: [...spec.loads, { vaddr: segment, flags: 6, data: Buffer.alloc(1024 * 1024) }],
    });
    // The note this test adds comes after the empty one the spec writes; read it first.
    const bytes = Buffer.from(core.bytes);
    bytes.writeUInt32LE(0x4e4f4e45, noteAt(core, NT_FILE).at + 8);
    const { facts, error, bytesRead } = parse(bytes, readElfCore);
    expect(error).toBeNull();
    expect(facts?.mappedFiles).toHaveLength(files.length);
    expect(bytesRead).toBeLessThan(READ_BUDGET_BYTES);
    expect(facts?.problems.join("\n")).toMatch(/first page/);
  });
});

describe("programBuildId on a program that lies", () => {
  it("reads a bounded amount when thousands of program headers name the same note segment", () => {
    const filler = { name: "GNU", type: 0x4e4f4953, desc: Buffer.alloc(1000 * 1024) };
    const program = buildElfCore({ ...coreSpec(), extraNotes: [filler], noteHeaders: 20_000 });
    const { facts, error, bytesRead } = parse(program.bytes, programBuildId);
    expect(error).toBeNull();
    expect(facts).toBeNull();
    expect(bytesRead).toBeLessThan(READ_BUDGET_BYTES);
  });

  it("finds the build id of a program whose one note segment holds it", () => {
    const program = buildElfCore({ ...coreSpec(), extraNotes: [{ name: "GNU", type: 3, desc: EXE_ID }] });
    expect(parsed(program.bytes, programBuildId)).toBe(EXE_ID.toString("hex"));
  });
});

// ---- minidumps ------------------------------------------------------------------------------

/** A GUID as Windows prints it, and its bytes in a CodeView record: the first three fields little-endian. */
const PDB_GUID = "3F2504E0-4F89-41D3-9A0C-0305E82C3301";
function guidBytes(guid: string): Buffer {
  const [d1 = "", d2 = "", d3 = "", d4 = "", d5 = ""] = guid.split("-");
  const b = Buffer.alloc(16);
  b.writeUInt32LE(Number.parseInt(d1, 16), 0);
  b.writeUInt16LE(Number.parseInt(d2, 16), 4);
  b.writeUInt16LE(Number.parseInt(d3, 16), 6);
  Buffer.from(d4 + d5, "hex").copy(b, 8);
  return b;
}

const CHAT_EXE = "C:\\Program Files\\Chat\\chat.exe";
const MAIN_STACK = 0xd2c8f0e000n;
const REASON = "198.51.100.7:50122 hung up";

const MAIN_REGISTERS = { ...distinctRegisters(AMD64_GENERAL_REGISTERS, 0xa11n), rip: 0x14000169dn, rsp: MAIN_STACK + 0x40n };

function minidumpSpec(): MinidumpSpec {
  const mainStack = Buffer.alloc(512);
  mainStack.write(`${REASON}\0`, 0x100, "latin1");
  return {
    processId: 4242,
    version: [10, 0, 19045],
    threads: [
      { id: 4711, name: "main", registers: MAIN_REGISTERS, stackStart: MAIN_STACK, stack: mainStack },
      { id: 4712, name: "io-worker", registers: { rip: 0x7ffb0000ebe4n, rsp: 0xd2c910e040n }, stackStart: 0xd2c910e000n, stack: Buffer.alloc(256, 0xcc) },
    ],
    exception: { thread: 4711, code: 0xc0000005, flags: 0, address: 0x14000169dn, parameters: [1n, 0x10n], registers: MAIN_REGISTERS },
    modules: [
      { path: CHAT_EXE, base: 0x140000000n, size: 0x43000, pdbGuid: guidBytes(PDB_GUID), pdbAge: 1 },
      { path: "C:\\Windows\\System32\\ntdll.dll", base: 0x7ffb00000000n, size: 0x1f8000, pdbGuid: guidBytes("0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8F9"), pdbAge: 0x1a },
    ],
    regions: [
      { base: 0x140000000n, size: 0x1000n, protect: 0x02, state: 0x1000, type: 0x1000000 },
      { base: 0x140001000n, size: 0x1000n, protect: 0x20, state: 0x1000, type: 0x1000000 },
      { base: 0x150000000n, size: 0x10000n, protect: 0x01, state: 0x10000, type: 0 },
      { base: MAIN_STACK, size: 0x2000n, protect: 0x104, state: 0x1000, type: 0x20000 },
    ],
  };
}

function streamOf(dump: ReturnType<typeof buildMinidump>, type: number): { entry: number; at: number; size: number } {
  const stream = dump.streams.get(type);
  if (!stream) throw new Error(`no stream of type ${type}`);
  return stream;
}

describe("readMinidump on a hand-built minidump", () => {
  it("reads what was written: system, process, threads with names, exception, modules with PDB ids, regions", () => {
    const facts = parsed(buildMinidump(minidumpSpec()).bytes, readMinidump);
    expect(facts.problems).toEqual([]);
    expect(facts.platform).toEqual({ os: "windows", arch: "x86_64", pointerSize: 8 });
    expect(facts.osVersion).toBe("10.0.19045");
    expect(facts.processId).toBe(4242);
    const mainRegisters = Object.fromEntries(Object.entries(MAIN_REGISTERS).map(([name, value]) => [name, hex(value)]));
    expect(facts.threads[0]?.registers).toEqual({ ...mainRegisters, eflags: "0x10246", cs: "0x33", ss: "0x2b" });
    expect(facts.exceptionRegisters).toEqual(facts.threads[0]?.registers);
    expect(facts.threads.map((t) => [t.id, t.name, t.registers.rip, t.registers.rsp, t.stack])).toEqual([
      [4711, "main", "0x14000169d", hex(MAIN_STACK + 0x40n), { start: hex(MAIN_STACK), size: 512 }],
      [4712, "io-worker", "0x7ffb0000ebe4", "0xd2c910e040", { start: "0xd2c910e000", size: 256 }],
    ]);
    expect(facts.stopReason).toEqual({ type: "exception", code: "0xc0000005", flags: 0, address: "0x14000169d", parameters: ["0x1", "0x10"], thread: 4711 });
    // The writer leaves TimeDateStamp 0 and names chat.pdb in every CodeView record.
    expect(facts.modules.map((m) => [m.path, m.start, m.end, m.buildId, m.debugFile, m.codeId])).toEqual([
      [CHAT_EXE, "0x140000000", "0x140043000", `${PDB_GUID.replaceAll("-", "")}1`, "chat.pdb", "0000000043000"],
      ["C:\\Windows\\System32\\ntdll.dll", "0x7ffb00000000", "0x7ffb001f8000", "0A1B2C3D4E5F60718293A4B5C6D7E8F91A", "chat.pdb", "000000001f8000"],
    ]);
    expect(facts.regions).toEqual([
      { start: "0x140000000", end: "0x140001000", permissions: "r--", file: CHAT_EXE, offset: "0x0" },
      { start: "0x140001000", end: "0x140002000", permissions: "r-x", file: CHAT_EXE, offset: "0x1000" },
      { start: hex(MAIN_STACK), end: hex(MAIN_STACK + 0x2000n), permissions: "rw-g", file: null, offset: null },
    ]);
  });

  it("reads process memory by address from the memory list", () => {
    const path = save(buildMinidump(minidumpSpec()).bytes);
    const file = DumpFile.open(path);
    try {
      const facts = readMinidump(file);
      expect(readMinidumpMemory(file, facts, hex(MAIN_STACK + 0x100n), REASON.length)?.toString("latin1")).toBe(REASON);
      expect(readMinidumpMemory(file, facts, hex(MAIN_STACK + 500n), 100)?.length).toBe(12);
      expect(readMinidumpMemory(file, facts, "0x1000", 16)).toBeNull();
    } finally {
      file.close();
    }
  });
});

describe("readMinidump on a minidump that lies", () => {
  it("refuses a stream directory with a count beyond any dump, or past the end of the file", () => {
    const counted = Buffer.from(buildMinidump(minidumpSpec()).bytes);
    counted.writeUInt32LE(0xffffffff, 8);
    const moved = Buffer.from(counted);
    moved.writeUInt32LE(8, 8);
    moved.writeUInt32LE(moved.length - 20, 12);
    const beyond = Buffer.from(moved);
    beyond.writeUInt32LE(0xfffffff0, 12);
    for (const bytes of [counted, moved, beyond, counted.subarray(0, 20)]) {
      expect(parseError(bytes, readMinidump)).toBeInstanceOf(DumpFileError);
      expect(() => inspectDump(save(bytes))).toThrow(/is truncated or corrupt/);
    }
  });

  it("notes a thread list that counts 2^31 threads, and reads the other streams", () => {
    const dump = buildMinidump(minidumpSpec());
    const bytes = Buffer.from(dump.bytes);
    bytes.writeUInt32LE(2 ** 31, streamOf(dump, THREAD_LIST).at);
    const facts = parsed(bytes, readMinidump);
    expect(facts.problems).toEqual([expect.stringMatching(/the thread list: a count of 2147483648 exceeds/)]);
    expect(facts.threads).toEqual([]);
    expect(facts.stopReason?.thread).toBe(4711);
    expect(facts.modules).toHaveLength(2);
    expect(facts.processId).toBe(4242);
  });

  it("notes a module name that claims gigabytes, and keeps the module's range and id", () => {
    const dump = buildMinidump(minidumpSpec());
    const bytes = Buffer.from(dump.bytes);
    bytes.writeUInt32LE(0xfffffff0, dump.modules[0]?.name ?? 0);
    const facts = parsed(bytes, readMinidump);
    expect(facts.problems).toEqual([expect.stringMatching(/the name of the module at 0x140000000 claims 4294967280 bytes/)]);
    expect(facts.modules[0]).toMatchObject({ path: "", start: "0x140000000", buildId: `${PDB_GUID.replaceAll("-", "")}1` });
    expect(facts.modules[1]?.path).toBe("C:\\Windows\\System32\\ntdll.dll");
  });

  it("notes a CONTEXT that claims gigabytes, for a thread and for the exception, and reads the rest", () => {
    const dump = buildMinidump(minidumpSpec());
    const bytes = Buffer.from(dump.bytes);
    bytes.writeUInt32LE(0xffffffff, (dump.threads[0] ?? 0) + 40);
    bytes.writeUInt32LE(0xffffffff, streamOf(dump, EXCEPTION).at + 160);
    const { facts, bytesRead } = parse(bytes, readMinidump);
    expect(facts?.problems).toEqual([expect.stringMatching(/the context of thread 4711 claims 4294967295 bytes/), expect.stringMatching(/the exception's context claims 4294967295 bytes/)]);
    expect(facts?.threads.map((t) => Object.keys(t.registers).length > 0)).toEqual([false, true]);
    expect(facts?.stopReason?.code).toBe("0xc0000005");
    expect(facts?.exceptionRegisters).toBeNull();
    expect(bytesRead).toBeLessThan(bytes.length);
  });

  it("notes streams and lists that claim more than the file holds, each on its own", () => {
    const cases: [string, (bytes: Buffer, dump: ReturnType<typeof buildMinidump>) => void, RegExp][] = [
      ["a stream of 4 GiB", (b, d) => b.writeUInt32LE(0xffffffff, streamOf(d, MODULE_LIST).entry + 4), /the ModuleListStream claims 4294967295 bytes/],
      ["a stream past the end", (b, d) => b.writeUInt32LE(b.length - 4, streamOf(d, MODULE_LIST).entry + 8), /the ModuleListStream .* runs past the end of the file/],
      ["a memory list of 2^32-1 ranges", (b, d) => b.writeUInt32LE(0xffffffff, streamOf(d, MEMORY_LIST).at), /the memory list: a count of 4294967295 exceeds/],
      ["memory info entries of 0 bytes", (b, d) => b.writeUInt32LE(0, streamOf(d, MEMORY_INFO_LIST).at + 4), /0-byte entries, too small/],
      ["a memory info list of 2^63 regions", (b, d) => b.writeBigUInt64LE(1n << 63n, streamOf(d, MEMORY_INFO_LIST).at + 8), /the memory info list: a count of 9223372036854775808 exceeds/],
      ["memory info entries of 4 GiB", (b, d) => b.writeUInt32LE(0xffffffff, streamOf(d, MEMORY_INFO_LIST).at + 4), /MemoryInfoListStream is too short/],
      ["2^32-1 thread names", (b, d) => b.writeUInt32LE(0xffffffff, streamOf(d, THREAD_NAMES).at), /the thread names stream: a count of 4294967295 exceeds/],
      ["a thread name past the end", (b, d) => b.writeBigUInt64LE(1n << 40n, streamOf(d, THREAD_NAMES).at + 8), /the name of thread 4711 \(4 bytes at offset 1099511627776\) runs past the end/],
    ];
    for (const [name, corrupt, problem] of cases) {
      const dump = buildMinidump(minidumpSpec());
      const bytes = Buffer.from(dump.bytes);
      corrupt(bytes, dump);
      const facts = parsed(bytes, readMinidump);
      expect(facts.problems, name).toEqual([expect.stringMatching(problem)]);
      expect(facts.stopReason?.code, name).toBe("0xc0000005");
      expect(facts.processId, name).toBe(4242);
    }
  });

  it("refuses to read memory whose bytes the memory list places past the end of the file", () => {
    const dump = buildMinidump(minidumpSpec());
    const bytes = Buffer.from(dump.bytes);
    bytes.writeUInt32LE(bytes.length - 8, streamOf(dump, MEMORY_LIST).at + 16);
    const path = save(bytes);
    const file = DumpFile.open(path);
    try {
      const facts = readMinidump(file);
      expect(() => readMinidumpMemory(file, facts, hex(MAIN_STACK), 64)).toThrow(DumpFileError);
      expect(readMinidumpMemory(file, facts, hex(MAIN_STACK), 8)?.length).toBe(8);
    } finally {
      file.close();
    }
  });

  it("ends a minidump cut short in a DumpFileError or in facts with the problems noted", () => {
    const bytes = buildMinidump(minidumpSpec()).bytes;
    for (const cut of [0, 4, 31, 40, 200, 600, 1500, bytes.length / 2, bytes.length - 1]) {
      const { facts, error } = parse(bytes.subarray(0, cut), readMinidump);
      if (error) expect(error, `cut at ${cut}`).toBeInstanceOf(DumpFileError);
      else expect(facts?.problems.length, `cut at ${cut}`).toBeGreaterThan(0);
    }
  });

  it("reads a bounded amount when 100,000 threads share one large CONTEXT", () => {
    const dump = buildMinidump(minidumpSpec());
    const count = 100_000;
    const context = Buffer.alloc(64 * 1024);
    const contextAt = dump.bytes.length;
    const listAt = contextAt + context.length;
    const list = Buffer.alloc(4 + count * 48);
    list.writeUInt32LE(count, 0);
    for (let i = 0; i < count; i++) {
      list.writeUInt32LE(i + 1, 4 + i * 48);
      list.writeUInt32LE(context.length, 4 + i * 48 + 40);
      list.writeUInt32LE(contextAt, 4 + i * 48 + 44);
    }
    const bytes = Buffer.concat([dump.bytes, context, list]);
    bytes.writeUInt32LE(list.length, streamOf(dump, THREAD_LIST).entry + 4);
    bytes.writeUInt32LE(listAt, streamOf(dump, THREAD_LIST).entry + 8);
    const { facts, error, bytesRead } = parse(bytes, readMinidump);
    expect(error).toBeNull();
    expect(facts?.threads).toHaveLength(count);
    expect(bytesRead).toBeLessThan(READ_BUDGET_BYTES);
  });
});

// ---- byte flips -----------------------------------------------------------------------------

/** mulberry32: a small seeded generator, so that every run flips the same bytes. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Flips 1 to 4 bytes at seeded positions, 2,000 times, and parses each result: it must end in
 * facts or a DumpFileError, within a bounded number of reads.
 */
function flipBytes<T>(
  original: Buffer,
  seed: number,
  reader: (file: DumpFile) => T,
  afterParse: (file: DumpFile, facts: T) => void = () => {},
  /** Where the flips may land from: the bytes a test is about (an appended stream). */
  from = 0,
): { parsed: number; refused: number; maxReads: number; maxBytes: number } {
  const random = seeded(seed);
  const path = join(dir, `flipped-${seed}`);
  const stats = { parsed: 0, refused: 0, maxReads: 0, maxBytes: 0 };
  for (let round = 0; round < 2000; round++) {
    const bytes = Buffer.from(original);
    const flips = 1 + Math.floor(random() * 4);
    const positions: number[] = [];
    for (let i = 0; i < flips; i++) {
      const at = from + Math.floor(random() * (bytes.length - from));
      bytes[at] = (bytes[at] ?? 0) ^ (1 + Math.floor(random() * 255));
      positions.push(at);
    }
    writeFileSync(path, bytes);
    const file = new CountingDumpFile(openSync(path, "r"));
    try {
      const facts = reader(file);
      afterParse(file, facts);
      stats.parsed++;
    } catch (error) {
      if (!(error instanceof DumpFileError)) throw new Error(`flipping bytes ${positions.join(", ")} (round ${round}) threw ${String(error)}`, { cause: error });
      stats.refused++;
    } finally {
      file.close();
    }
    stats.maxReads = Math.max(stats.maxReads, file.reads);
    stats.maxBytes = Math.max(stats.maxBytes, file.bytesRead);
  }
  return stats;
}

/** A file of a few KiB is read in a few dozen reads, a few times over at most, however it is corrupted. */
const FLIPPED_MAX_READS = 100;
const FLIPPED_MAX_TIMES_READ = 4;

describe("byte flips", () => {
  it("leave readElfCore with facts or a DumpFileError, after a bounded number of reads", () => {
    // Its PT_LOAD data is kept small, so that most flips land in headers and notes.
    const core = buildElfCore(coreSpec()).bytes;
    const stats = flipBytes(core, 0x5eed, (file) => readElfCore(file) satisfies ElfCoreFacts);
    expect(stats.parsed + stats.refused).toBe(2000);
    expect(stats.parsed).toBeGreaterThan(0);
    expect(stats.refused).toBeGreaterThan(0);
    expect(stats.maxReads).toBeLessThanOrEqual(FLIPPED_MAX_READS);
    expect(stats.maxBytes).toBeLessThanOrEqual(FLIPPED_MAX_TIMES_READ * core.length);
  });

  it("leave readMinidump and readMinidumpMemory with facts or a DumpFileError, after a bounded number of reads", () => {
    const dump = buildMinidump(minidumpSpec()).bytes;
    const readEveryRange = (file: DumpFile, facts: MinidumpFacts) => {
      for (const range of facts.memory) readMinidumpMemory(file, facts, range.start, 64);
    };
    const stats = flipBytes(dump, 0xd0d0, readMinidump, readEveryRange);
    expect(stats.parsed + stats.refused).toBe(2000);
    expect(stats.parsed).toBeGreaterThan(0);
    expect(stats.maxReads).toBeLessThanOrEqual(FLIPPED_MAX_READS);
    expect(stats.maxBytes).toBeLessThanOrEqual(FLIPPED_MAX_TIMES_READ * dump.length);
  });
});

describe("Crashpad's stream, bounded like the others", () => {
  const annotated = () =>
    withCrashpadInfo(buildMinidump(minidumpSpec()).bytes, {
      clientId: Buffer.alloc(16, 0xab),
      simple: { prod: "chat" },
      modules: [{ index: 0, list: ["abort() called"], simple: { build: "42" } }],
    });
  /** Where the CrashpadInfo stream lies, from the directory's last entry. */
  const infoAt = (bytes: Buffer) => bytes.readUInt32LE(bytes.readUInt32LE(12) + (bytes.readUInt32LE(8) - 1) * 12 + 8);

  it("reads the ids, the process's pairs and the module's annotations, its module by index", () => {
    const facts = parsed(annotated(), readMinidump);
    expect(facts.problems).toEqual([]);
    expect(facts.crashpad).toEqual({
      reportId: null,
      clientId: "abababab-abab-abab-abab-abababababab",
      simple: { prod: "chat" },
      modules: [{ module: CHAT_EXE, list: ["abort() called"], simple: { build: "42" }, objects: {} }],
    });
  });

  it("leaves readMinidump with facts or a DumpFileError when the stream's own bytes are flipped, after a bounded number of reads", () => {
    const plain = buildMinidump(minidumpSpec()).bytes;
    const dump = annotated();
    const stats = flipBytes(dump, 0xc4a5, readMinidump, () => {}, plain.length);
    expect(stats.parsed + stats.refused).toBe(2000);
    expect(stats.parsed).toBeGreaterThan(0);
    expect(stats.maxReads).toBeLessThanOrEqual(FLIPPED_MAX_READS);
    expect(stats.maxBytes).toBeLessThanOrEqual(FLIPPED_MAX_TIMES_READ * dump.length);
  });

  it("refuses a module list that claims four billion modules, and reads the rest of the dump", () => {
    const bytes = annotated();
    bytes.writeUInt32LE(0xffffffff, bytes.readUInt32LE(infoAt(bytes) + 48));
    const facts = parsed(bytes, readMinidump);
    expect(facts.crashpad).toBeNull();
    expect(facts.problems.join("\n")).toMatch(/the Crashpad module list: a count of 4294967295 exceeds the limit/);
    expect(facts.threads).toHaveLength(2);
  });

  it("refuses an annotation that claims a gigabyte, and a stream shorter than its version 1", () => {
    const bytes = annotated();
    // The process's dictionary: its first key's string length.
    const dictionary = bytes.readUInt32LE(infoAt(bytes) + 40);
    bytes.writeUInt32LE(1 << 30, bytes.readUInt32LE(dictionary + 4));
    expect(parsed(bytes, readMinidump).problems.join("\n")).toMatch(/the process's simple annotations: a string of 1073741824 bytes, more than 65536/);
    const short = annotated();
    short.writeUInt32LE(20, short.readUInt32LE(12) + (short.readUInt32LE(8) - 1) * 12 + 4);
    expect(parsed(short, readMinidump).problems.join("\n")).toMatch(/the CrashpadInfo stream holds 20 bytes, fewer than the 52 of its version 1/);
  });
});
