/**
 * What a minidump says about itself, read from its streams: the exception, threads with their
 * names, registers and stacks, modules with their PDB or build ids, the system, the process,
 * and its address space; and the memory it holds, read by address. Windows minidumps and
 * Breakpad/Crashpad ones (Linux streams included) alike. Each stream is read on its own: a
 * malformed one is noted in `problems` and the others are still read.
 */
import type { Address, CrashpadInfo, ExceptionStop, MemoryRegion, Module, Platform, RecordedAssertion, SignalStop } from "../model.js";
import { readCrashpadInfo } from "./crashpad-info.js";
import { contextRegisters, contextRegistersBytes } from "./minidump-context.js";
import { checkedCount, DumpFile, DumpFileError, Fields, hex, partial, SortedRanges, toOffset } from "./file.js";
import { peCodeId, readCodeViewRecord, type CodeViewRecord } from "./pe.js";

export interface MinidumpThread {
  id: number;
  name: string | null;
  /** Where the dump was written, by lower-case names (`rip`, `rsp`, `x29`). */
  registers: Record<string, Address>;
  stack: { start: Address; size: number } | null;
}

/** A range of process memory whose bytes the dump holds. */
export interface DumpedMemory {
  start: Address;
  size: number;
  /** Where the bytes lie in the file. */
  rva: number;
}

export interface MinidumpFacts {
  format: "minidump";
  platform: Platform;
  /** `10.0.19045`, with the service pack or (Breakpad on Linux) `uname -srvmo` after it. */
  osVersion: string | null;
  /** A Windows exception; in a Breakpad/Crashpad dump of a Linux process, the signal it recorded. */
  stopReason: ExceptionStop | SignalStop | null;
  /** The faulting thread's registers when the exception was raised; its thread-list entry has them where the dump was written. */
  exceptionRegisters: Record<string, Address> | null;
  threads: MinidumpThread[];
  modules: Module[];
  /** From the memory info list (Windows) or the copy of /proc/PID/maps (Breakpad on Linux). */
  regions: MemoryRegion[];
  processId: number | null;
  /** When the process started (ISO 8601), from the misc info stream. */
  processCreateTime: string | null;
  /** argv joined by spaces (Breakpad's copy of /proc/PID/cmdline). */
  commandLine: string | null;
  /** Breakpad's assertion stream: the failed check an invalid-parameter or pure-call handler recorded. */
  assertion: RecordedAssertion | null;
  /** Crashpad's own stream: report and client ids, the process's and each module's annotations. */
  crashpad: CrashpadInfo | null;
  /** Every stream in the file by name (`ExceptionStream`, `LinuxMaps`), unknown ones in hex. */
  streams: string[];
  /** Read when first asked for (readMemoryList). */
  readonly memory: DumpedMemory[];
  /** What was malformed and skipped; the rest was still read. */
  problems: string[];
}

const STREAM_NAMES: Record<number, string> = {
  3: "ThreadListStream",
  4: "ModuleListStream",
  5: "MemoryListStream",
  6: "ExceptionStream",
  7: "SystemInfoStream",
  8: "ThreadExListStream",
  9: "Memory64ListStream",
  10: "CommentStreamA",
  11: "CommentStreamW",
  12: "HandleDataStream",
  13: "FunctionTableStream",
  14: "UnloadedModuleListStream",
  15: "MiscInfoStream",
  16: "MemoryInfoListStream",
  17: "ThreadInfoListStream",
  18: "HandleOperationListStream",
  19: "TokenStream",
  20: "JavaScriptDataStream",
  21: "SystemMemoryInfoStream",
  22: "ProcessVmCountersStream",
  23: "IptTraceStream",
  24: "ThreadNamesStream",
  0x47670001: "BreakpadInfo",
  0x47670002: "BreakpadAssertionInfo",
  0x47670003: "LinuxCpuInfo",
  0x47670004: "LinuxProcStatus",
  0x47670005: "LinuxLsbRelease",
  0x47670006: "LinuxCmdLine",
  0x47670007: "LinuxEnviron",
  0x47670008: "LinuxAuxv",
  0x47670009: "LinuxMaps",
  0x4767000a: "LinuxDsoDebug",
  0x43500001: "CrashpadInfo",
  // Wine's list of the Unix-side (ELF) modules of the process.
  0xfff0: "WineElfModuleList",
};

const THREAD_LIST = 3;
const MODULE_LIST = 4;
const MEMORY_LIST = 5;
const EXCEPTION = 6;
const SYSTEM_INFO = 7;
const MEMORY_64_LIST = 9;
const MISC_INFO = 15;
const MEMORY_INFO_LIST = 16;
const THREAD_NAMES = 24;
const BREAKPAD_ASSERTION_INFO = 0x47670002;
const CRASHPAD_INFO = 0x43500001;
const LINUX_PROC_STATUS = 0x47670004;
const LINUX_CMD_LINE = 0x47670006;
const LINUX_MAPS = 0x47670009;

const SIGNATURE = 0x504d444d;
const THREAD_BYTES = 48;
const MODULE_BYTES = 108;
const MEMORY_DESCRIPTOR_BYTES = 16;
const THREAD_NAME_BYTES = 12;
const MEMORY_INFO_BYTES = 48;
/** MDRawAssertionInfo: expression, function and file as 128 UTF-16 units each, then line and type. */
const ASSERTION_BYTES = 776;
const ASSERTION_TEXT_BYTES = 256;

const MAX_STREAMS = 10_000;
const MAX_ENTRIES = 100_000;
const MAX_REGIONS = 1_000_000;
const MAX_STRING_BYTES = 4096;
const MAX_CODEVIEW_BYTES = 4096 + 24;
/** A CONTEXT record of any architecture, extended state included, is a few KiB. */
const MAX_CONTEXT_BYTES = 64 * 1024;
const MAX_TEXT_STREAM_BYTES = 16 * 1024 * 1024;
const MAX_MEMORY_READ = 1024 * 1024;

const MEM_COMMIT = 0x1000;
const MEM_FREE = 0x10000;
const MEM_IMAGE = 0x1000000;
const PAGE_GUARD = 0x100;
const PROTECTIONS: Record<number, string> = {
  0x01: "---",
  0x02: "r--",
  0x04: "rw-",
  0x08: "rw-",
  0x10: "--x",
  0x20: "r-x",
  0x40: "rwx",
  0x80: "rwx",
};

const ARCHITECTURES: Record<number, { arch: Platform["arch"]; pointerSize: 4 | 8 }> = {
  0: { arch: "x86", pointerSize: 4 },
  5: { arch: "arm", pointerSize: 4 },
  9: { arch: "x86_64", pointerSize: 8 },
  12: { arch: "arm64", pointerSize: 8 },
  0x8003: { arch: "arm64", pointerSize: 8 },
};

interface Stream {
  type: number;
  size: number;
  rva: number;
}

/** Reads a minidump's facts; a DumpFileError only when its header or stream directory cannot be read. */
export function readMinidump(file: DumpFile): MinidumpFacts {
  const header = new Fields(file.read(0, 32, "the minidump header"), "the minidump header");
  if (header.u32(0) !== SIGNATURE) throw new DumpFileError("it does not start with the minidump signature MDMP");
  const count = checkedCount(header.u32(8), MAX_STREAMS, "the stream directory");
  const directory = new Fields(file.read(header.u32(12), count * 12, "the stream directory"), "the stream directory");
  const streams: Stream[] = [];
  for (let i = 0; i < count; i++) {
    streams.push({ type: directory.u32(i * 12), size: directory.u32(i * 12 + 4), rva: directory.u32(i * 12 + 8) });
  }
  const problems: string[] = [];
  // A stream type may appear more than once; as other readers do, the first one counts.
  const stream = (type: number): Fields | null => {
    const found = streams.find((s) => s.type === type);
    if (!found) return null;
    const name = STREAM_NAMES[type] ?? `stream 0x${type.toString(16)}`;
    return partial(problems, null, () => new Fields(file.read(found.rva, found.size, `the ${name}`), `the ${name}`));
  };
  const read = <T>(type: number, fallback: T, parse: (fields: Fields) => T): T => {
    const fields = stream(type);
    return fields ? partial(problems, fallback, () => parse(fields)) : fallback;
  };

  const system = read(SYSTEM_INFO, null, (fields) => readSystemInfo(file, fields));
  const platform = system?.platform ?? { os: "other", arch: "other", pointerSize: 8 };
  const misc = read(MISC_INFO, { processId: null, processCreateTime: null }, readMiscInfo);
  const names = read(THREAD_NAMES, new Map<number, string>(), (fields) => readThreadNames(file, fields, problems));
  const threads = read(THREAD_LIST, [], (fields) => readThreads(file, fields, platform, names, problems));
  const exception = read(EXCEPTION, null, (fields) => readException(file, fields, platform, problems));
  const modules = read(MODULE_LIST, [], (fields) => readModules(file, fields, platform, problems));
  const memoryInfo = read(MEMORY_INFO_LIST, [], (fields) => readMemoryInfo(fields, modules));
  const maps = memoryInfo.length > 0 ? [] : read(LINUX_MAPS, [], readLinuxMaps);
  const memoryList = read(MEMORY_LIST, null, readMemoryList);
  const memory64 = read(MEMORY_64_LIST, [], readMemory64List);
  let memory: DumpedMemory[] | undefined;

  return {
    format: "minidump",
    platform,
    osVersion: system?.osVersion ?? null,
    stopReason: exception ? (platform.os === "linux" ? signalOf(exception.stop) : exception.stop) : null,
    exceptionRegisters: exception?.registers ?? null,
    threads,
    modules,
    regions: memoryInfo.length > 0 ? memoryInfo : maps,
    processId: misc.processId ?? read(LINUX_PROC_STATUS, null, (fields) => procStatusPid(fields.bytes)),
    processCreateTime: misc.processCreateTime,
    commandLine: read(LINUX_CMD_LINE, null, (fields) => commandLineOf(fields.bytes)),
    assertion: read(BREAKPAD_ASSERTION_INFO, null, readAssertion),
    crashpad: read(CRASHPAD_INFO, null, (fields) => readCrashpadInfo(file, fields, modules.map((module) => module.path))),
    streams: streams.filter((s) => s.type !== 0).map((s) => STREAM_NAMES[s.type] ?? `0x${s.type.toString(16)}`),
    get memory() {
      return (memory ??= [...(memoryList?.() ?? []), ...memory64]);
    },
    problems,
  };
}

/**
 * Up to `length` bytes (at most 1 MiB) of process memory at `address`, as far as the dump holds
 * them without a gap; null when it holds nothing there. A range whose bytes lie outside the file
 * is a DumpFileError.
 */
export function readMinidumpMemory(file: DumpFile, facts: MinidumpFacts, address: Address, length: number): Buffer | null {
  const wanted = Math.min(length, MAX_MEMORY_READ);
  const ranges = dumpedRanges(facts);
  const parts: Buffer[] = [];
  let at = BigInt(address);
  let got = 0;
  while (got < wanted) {
    const range = ranges.at(at);
    if (!range) break;
    const skip = Number(at - BigInt(range.start));
    const take = Math.min(wanted - got, range.size - skip);
    parts.push(file.read(range.rva + skip, take, `dumped memory at ${hex(at)}`));
    got += take;
    at += BigInt(take);
  }
  return parts.length > 0 ? Buffer.concat(parts) : null;
}

const sortedMemory = new WeakMap<MinidumpFacts, SortedRanges<DumpedMemory>>();

function dumpedRanges(facts: MinidumpFacts): SortedRanges<DumpedMemory> {
  let ranges = sortedMemory.get(facts);
  if (!ranges) {
    ranges = new SortedRanges(facts.memory, (m) => BigInt(m.start), (m) => BigInt(m.start) + BigInt(m.size));
    sortedMemory.set(facts, ranges);
  }
  return ranges;
}

function readSystemInfo(file: DumpFile, fields: Fields): { platform: Platform; osVersion: string } {
  const architecture = ARCHITECTURES[fields.u16(0)] ?? { arch: "other" as const, pointerSize: 8 as const };
  const platformId = fields.u32(20);
  const csdRva = fields.u32(24);
  const detail = csdRva === 0 ? "" : readString(file, csdRva, "the OS version string");
  return {
    platform: { os: osOf(platformId), ...architecture },
    osVersion: [`${fields.u32(8)}.${fields.u32(12)}.${fields.u32(16)}`, detail].filter(Boolean).join(" "),
  };
}

/** Windows' own platform ids are below 4; Breakpad numbers the others from 0x8000. */
function osOf(platformId: number): Platform["os"] {
  if (platformId <= 3) return "windows";
  if (platformId === 0x8201 || platformId === 0x8203) return "linux";
  if (platformId === 0x8101 || platformId === 0x8102) return "macos";
  return "other";
}

function readMiscInfo(fields: Fields): { processId: number | null; processCreateTime: string | null } {
  const flags = fields.u32(4);
  const PROCESS_ID = 1;
  const PROCESS_TIMES = 2;
  return {
    processId: flags & PROCESS_ID && fields.has(8, 4) ? fields.u32(8) : null,
    processCreateTime: flags & PROCESS_TIMES && fields.has(12, 4) ? new Date(fields.u32(12) * 1000).toISOString() : null,
  };
}

function readThreadNames(file: DumpFile, fields: Fields, problems: string[]): Map<number, string> {
  const count = checkedCount(fields.u32(0), MAX_ENTRIES, "the thread names stream");
  const names = new Map<number, string>();
  for (let i = 0; i < count; i++) {
    const at = 4 + i * THREAD_NAME_BYTES;
    const id = fields.u32(at);
    const name = partial(problems, "", () => readString(file, toOffset(fields.u64(at + 4), "a thread name's location"), `the name of thread ${id}`));
    if (name) names.set(id, name);
  }
  return names;
}

function readThreads(file: DumpFile, fields: Fields, platform: Platform, names: Map<number, string>, problems: string[]): MinidumpThread[] {
  const count = checkedCount(fields.u32(0), MAX_ENTRIES, "the thread list");
  const first = listStart(fields, count, THREAD_BYTES);
  const threads: MinidumpThread[] = [];
  for (let i = 0; i < count; i++) {
    const at = first + i * THREAD_BYTES;
    const id = fields.u32(at);
    const stackSize = fields.u32(at + 32);
    threads.push({
      id,
      name: names.get(id) ?? null,
      registers: partial(problems, {}, () => readContext(file, fields.u32(at + 40), fields.u32(at + 44), platform, `the context of thread ${id}`)),
      stack: stackSize > 0 ? { start: hex(fields.u64(at + 24)), size: stackSize } : null,
    });
  }
  return threads;
}

function readException(file: DumpFile, fields: Fields, platform: Platform, problems: string[]): { stop: ExceptionStop; registers: Record<string, Address> | null } {
  const thread = fields.u32(0);
  const parameterCount = Math.min(fields.u32(32), 15);
  // A 32-bit process's addresses and ExceptionInformation are 32 bits wide in their 64-bit fields;
  // writers leave sign extension or garbage above them, so only the low half is the value.
  const word = (value: bigint) => (platform.pointerSize === 4 ? value & 0xffffffffn : value);
  const parameters = Array.from({ length: parameterCount }, (_, i) => hex(word(fields.u64(40 + i * 8))));
  const contextSize = fields.u32(160);
  return {
    stop: {
      type: "exception",
      code: `0x${fields.u32(8).toString(16).padStart(8, "0")}`,
      flags: fields.u32(12),
      address: hex(word(fields.u64(24))),
      parameters,
      thread,
    },
    registers: contextSize === 0 ? null : partial(problems, null, () => readContext(file, contextSize, fields.u32(164), platform, "the exception's context")),
  };
}

/** Crashpad's parameters of a signal a process sent: si_pid, si_uid, si_value. */
const CRASHPAD_SENDER_PARAMETERS = 3;
/** Signals whose si_addr is a fault address (for the others the writers copy si_addr's word as it is, sender ids). */
const FAULT_SIGNALS = new Set([4, 7, 8, 11]);

/**
 * Breakpad's and Crashpad's Linux writers put the signal in the exception record: its number as the
 * code, si_code as the flags. For a signal the record says was sent (a code of 0 or below) the
 * sender is si_pid and si_uid: Breakpad leaves them in the address (si_addr's word, the union they
 * share), Crashpad writes an address of 0 and them as the parameters (pid, uid, si_value;
 * ExceptionSnapshotLinux::ReadSiginfo). Many writers leave the flags 0, so triage weighs the
 * record's claim against the dump's evidence.
 */
function signalOf(exception: ExceptionStop): SignalStop {
  const signo = Number(exception.code);
  const code = exception.flags | 0;
  const sent = code <= 0;
  const word = BigInt(exception.address);
  const parameters = !FAULT_SIGNALS.has(signo) && exception.parameters.length === CRASHPAD_SENDER_PARAMETERS ? exception.parameters.map(BigInt) : null;
  const [pid = 0n, uid = 0n] = parameters ?? [word, word >> 32n];
  return {
    type: "signal",
    signo,
    code,
    errno: 0,
    address: FAULT_SIGNALS.has(signo) ? exception.address : null,
    senderPid: sent ? Number(pid & 0xffffffffn) : null,
    senderUid: sent ? Number(uid & 0xffffffffn) : null,
    thread: exception.thread,
    recordedBy: "crash-handler",
  };
}

function readModules(file: DumpFile, fields: Fields, platform: Platform, problems: string[]): Module[] {
  const count = checkedCount(fields.u32(0), MAX_ENTRIES, "the module list");
  const first = listStart(fields, count, MODULE_BYTES);
  const modules: Module[] = [];
  for (let i = 0; i < count; i++) {
    const at = first + i * MODULE_BYTES;
    const base = fields.u64(at);
    const size = fields.u32(at + 8);
    const path = partial(problems, "", () => readString(file, fields.u32(at + 20), `the name of the module at ${hex(base)}`));
    const cvSize = fields.u32(at + 76);
    const codeView = cvSize === 0 ? null : partial(problems, null, () => readCodeView(file, cvSize, fields.u32(at + 80), path));
    modules.push({
      path,
      start: hex(base),
      end: hex(base + BigInt(size)),
      buildId: codeView?.id ?? null,
      debugFile: codeView?.debugFile ?? null,
      // Breakpad's writers for other systems leave the PE header's TimeDateStamp 0: no symbol server id.
      codeId: platform.os === "windows" ? peCodeId(fields.u32(at + 16), size) : null,
      symbolsLoaded: null,
    });
  }
  return modules;
}

/**
 * The module's CodeView record: the id that symbol stores file its debug information under (a
 * PDB's GUID and age as Breakpad and symbol servers write them, `3F2504E04F8941D39A0C0305E82C33011`,
 * or an ELF build id) and the debug file it names.
 */
function readCodeView(file: DumpFile, size: number, rva: number, module: string): CodeViewRecord | null {
  const what = `the CodeView record of ${module}`;
  return readCodeViewRecord(new Fields(file.read(rva, Math.min(size, MAX_CODEVIEW_BYTES), what), what));
}

function readMemoryInfo(fields: Fields, modules: Module[]): MemoryRegion[] {
  const headerSize = fields.u32(0);
  const entrySize = fields.u32(4);
  if (entrySize < MEMORY_INFO_BYTES) throw new DumpFileError(`the MemoryInfoListStream has ${entrySize}-byte entries, too small`);
  const count = checkedCount(fields.u64(8), MAX_REGIONS, "the memory info list");
  const images = new SortedRanges(modules, (m) => BigInt(m.start ?? 0), (m) => BigInt(m.end ?? 0));
  const regions: MemoryRegion[] = [];
  for (let i = 0; i < count; i++) {
    const at = headerSize + i * entrySize;
    const state = fields.u32(at + 32);
    if (state === MEM_FREE) continue;
    const start = fields.u64(at);
    const protect = fields.u32(at + 36);
    // Reserved pages have no protection of their own until committed.
    const base = state === MEM_COMMIT ? PROTECTIONS[protect & 0xff] ?? null : "---";
    const image = fields.u32(at + 40) === MEM_IMAGE ? images.at(start) : null;
    regions.push({
      start: hex(start),
      end: hex(start + fields.u64(at + 24)),
      permissions: base !== null && protect & PAGE_GUARD ? `${base}g` : base,
      file: image?.path ?? null,
      offset: image ? hex(start - BigInt(image.start ?? 0)) : null,
    });
  }
  return regions;
}

/** Breakpad's copy of /proc/PID/maps: `start-end perms offset dev inode path`. */
function readLinuxMaps(fields: Fields): MemoryRegion[] {
  const text = textOf(fields.bytes);
  const regions: MemoryRegion[] = [];
  for (const line of text.split("\n")) {
    const match = /^([0-9a-f]+)-([0-9a-f]+)\s+(\S+)\s+([0-9a-f]+)\s+\S+\s+\d+\s*(.*)$/i.exec(line);
    if (!match) continue;
    checkedCount(regions.length + 1, MAX_REGIONS, "the LinuxMaps stream");
    const [, start = "0", end = "0", permissions = "", offset = "0", path = ""] = match;
    regions.push({ start: hex(BigInt(`0x${start}`)), end: hex(BigInt(`0x${end}`)), permissions, file: path || null, offset: path ? hex(BigInt(`0x${offset}`)) : null });
  }
  return regions;
}

/**
 * The memory list, checked now and its ranges read when first asked for: only a read of process
 * memory from the file needs them, and Wine lists ~7,000 for a small program (~8 ms to read them
 * all, more than the rest of the dump), while the debugger starts.
 */
function readMemoryList(fields: Fields): () => DumpedMemory[] {
  const count = checkedCount(fields.u32(0), MAX_REGIONS, "the memory list");
  const first = listStart(fields, count, MEMORY_DESCRIPTOR_BYTES);
  return () =>
    Array.from({ length: count }, (_, i) => {
      const at = first + i * MEMORY_DESCRIPTOR_BYTES;
      return { start: hex(fields.u64(at)), size: fields.u32(at + 8), rva: fields.u32(at + 12) };
    });
}

/** Full-memory dumps lay the ranges' bytes out one after another from one base. */
function readMemory64List(fields: Fields): DumpedMemory[] {
  const count = checkedCount(fields.u64(0), MAX_REGIONS, "the memory64 list");
  let rva = toOffset(fields.u64(8), "the memory64 list's base");
  const ranges: DumpedMemory[] = [];
  for (let i = 0; i < count; i++) {
    const at = 16 + i * MEMORY_DESCRIPTOR_BYTES;
    const size = toOffset(fields.u64(at + 8), "a memory range's size");
    ranges.push({ start: hex(fields.u64(at)), size, rva });
    rva += size;
  }
  return ranges;
}

/**
 * Only the general registers at the start of the record are read: the rest is floating-point
 * and vector state, and threads that all name one large record would otherwise each read it.
 */
function readContext(file: DumpFile, size: number, rva: number, platform: Platform, what: string): Record<string, Address> {
  if (size === 0) return {};
  if (size > MAX_CONTEXT_BYTES) throw new DumpFileError(`${what} claims ${size} bytes, more than the ${MAX_CONTEXT_BYTES} a CONTEXT record has`);
  file.checkRange(rva, size, what);
  const registers = Math.min(size, contextRegistersBytes(platform.arch));
  return contextRegisters(new Fields(file.read(rva, registers, what), what), platform.arch);
}

/** A MINIDUMP_STRING: a byte length, then that many bytes of UTF-16. */
function readString(file: DumpFile, rva: number, what: string): string {
  const bytes = new Fields(file.read(rva, 4, what), what).u32(0);
  if (bytes > MAX_STRING_BYTES) throw new DumpFileError(`${what} claims ${bytes} bytes, more than the ${MAX_STRING_BYTES} a name may have`);
  return file.read(rva + 4, bytes & ~1, what).toString("utf16le");
}

/**
 * Some writers pad a list's 4-byte count to 8 bytes; the stream's size tells which layout it is.
 * A list that fits neither way is refused.
 */
function listStart(fields: Fields, count: number, entryBytes: number): number {
  if (fields.length === 8 + count * entryBytes) return 8;
  if (fields.length >= 4 + count * entryBytes) return 4;
  throw new DumpFileError(`a list of ${count} entries of ${entryBytes} bytes does not fit its ${fields.length}-byte stream`);
}

/** Breakpad's MDRawAssertionInfo; its strings end at their first NUL or at 128 units. */
function readAssertion(fields: Fields): RecordedAssertion {
  if (!fields.has(0, ASSERTION_BYTES)) throw new DumpFileError(`the BreakpadAssertionInfo stream holds ${fields.bytes.length} bytes, not the ${ASSERTION_BYTES} of an assertion record`);
  const text = (at: number) => {
    const units = fields.bytes.subarray(at, at + ASSERTION_TEXT_BYTES).toString("utf16le");
    const end = units.indexOf("\0");
    return (end < 0 ? units : units.slice(0, end)) || null;
  };
  const type = fields.u32(772);
  return {
    expression: text(0),
    function: text(ASSERTION_TEXT_BYTES),
    file: text(2 * ASSERTION_TEXT_BYTES),
    line: fields.u32(768) || null,
    type: type === 1 ? "invalid-parameter" : type === 2 ? "pure-virtual-call" : "unknown",
  };
}

/** Breakpad copies the crashing thread's /proc/TID/status: `Tgid:` is the process, `Pid:` that thread. */
function procStatusPid(bytes: Buffer): number | null {
  const text = textOf(bytes);
  const match = /^Tgid:\s*(\d+)/m.exec(text) ?? /^Pid:\s*(\d+)/m.exec(text);
  return match ? Number(match[1]) : null;
}

function commandLineOf(bytes: Buffer): string | null {
  return textOf(bytes).split("\0").filter(Boolean).join(" ") || null;
}

function textOf(bytes: Buffer): string {
  return bytes.subarray(0, MAX_TEXT_STREAM_BYTES).toString("utf8");
}
