/**
 * The process as the debugger shows it: its threads, the libraries and sections it loaded, the
 * crashing thread's registers, and where its stack and the rest of its memory lie. Every later step
 * reads the dump through these facts.
 */
import type { ImportLookup } from "../../debuggers/dump.js";
import type { Inspector } from "../../debuggers/inspector.js";
import { toBigInt, type MemoryRegion, type Platform, type Register, type ThreadSummary } from "../../debuggers/model.js";
import type { SharedLibrary, TargetFiles } from "../../debuggers/probe.js";
import { codeAt, coreSegmentAt, holds, type AddressSpace } from "../address-space.js";
import { isRuntimeModule, moduleLocator, normalizeFunctionName, type ModuleLocator, type PlacedFrame } from "../culprit.js";
import type { Range } from "../fault.js";
import { foreignAt, foreignLibraries, foreignNote, type ForeignLibrary } from "../libraries.js";
import { keyRegisters } from "../registers.js";
import { isForeign } from "../../debuggers/architectures.js";
import type { TriageOptions } from "./options.js";
import type { LineReader } from "./scan.js";
import type { ThreadGroup } from "./result.js";

export interface Target {
  threads: ThreadSummary[];
  /** The thread the debugger selects when it opens a dump: the one that received the signal. */
  selected: ThreadSummary | null;
  libraries: SharedLibrary[];
  files: TargetFiles;
  /** The crashing thread's registers, all of them. */
  registers: Register[];
  keyRegisters: { pc: string | null; sp: string | null; fp: string | null };
  pc: bigint | null;
  sp: bigint | null;
  /** Libraries of the dumped process missing here, or here in another build (a core from another machine). */
  foreign: ForeignLibrary[];
  /** The foreign library the pc is in: its code is not in the dump as it ran. */
  pcForeign: ForeignLibrary | null;
  /** The memory holding the stack pointer: where a stack ran out, or a write ran off it. */
  stack: Range | null;
  /** Memory the process had. */
  mapped: Range[];
  /** The memory regions the dump file records, with their protections where it has them. */
  regions: MemoryRegion[];
  moduleAt: ModuleLocator;
  /** Whether an address is code of the program's own modules (not the system's or a runtime's) loaded here. */
  isOwnCode: (address: bigint) => boolean;
  /**
   * Whether an address is code of one of the program's own modules that the dump maps but this
   * machine lacks (`_ctypes….so`): its return addresses are frames, named by their module only.
   */
  isAbsentOwnCode: (address: bigint) => boolean;
  os: Platform["os"] | undefined;
  /** The processor the dump is of, where its file says (an ELF core's e_machine, a minidump's system info). */
  arch: Platform["arch"] | undefined;
  /** The size of a pointer (4 in a 32-bit process); null when the dump file does not say. */
  pointerBytes: Platform["pointerSize"] | null;
  /** Which DLL function a Windows program's import slot holds. */
  imports: ImportLookup | null;
  /** A line of a source file here, where the debugger cannot list it. */
  readLine: LineReader | null;
}

export async function readTarget(q: Inspector, options: TriageOptions): Promise<Target> {
  // Asked together, answered in this order: the session may hand the debugger the next while it answers one.
  const [threads, libraries, files, registers] = await Promise.all([q.threads(), q.sharedLibraries(), q.sections(), q.registers()]);
  const key = keyRegisters(registers);
  const pc = toBigInt(key.pc);
  const sp = toBigInt(key.sp);
  // A module whose first page a cut core lost has no build id to compare, and the debugger's list of
  // libraries may have gone with the dynamic linker's memory: whether it is here is unknown, not "missing".
  const lost = options.lostMemory;
  const modules = lost && options.modules ? options.modules.filter((module) => module.start === null || !lost(BigInt(module.start))) : options.modules;
  const foreign = modules && options.buildIdOf ? foreignLibraries(modules, libraries, files.executable, options.buildIdOf) : [];
  const foreignSaid = foreignNote(foreign);
  if (foreignSaid) q.problems.push(foreignSaid);
  if (lost && libraries.length === 0 && (options.modules ?? []).some((module) => /\.so(\.|$)/.test(module.path))) {
    q.problems.push("the dynamic linker's list of loaded libraries was in the memory the cut lost: the debugger loaded none of the libraries the core maps, so frames inside them are not named and the unwind may stop at them");
  }
  const absentSaid = foreignSaid ? null : absentModuleNote(files, pc);
  if (absentSaid) q.problems.push(absentSaid);
  const unloadedSaid = foreignSaid || absentSaid ? null : unloadedNote(libraries, options.platform?.arch);
  if (unloadedSaid) q.problems.push(unloadedSaid);
  return {
    threads,
    selected: threads.find((thread) => thread.current) ?? threads[0] ?? null,
    libraries,
    files,
    registers,
    keyRegisters: key,
    pc,
    sp,
    foreign,
    pcForeign: foreignAt(foreign, pc),
    stack: stackOf(files, options.regions ?? [], sp),
    mapped: mappedRanges(files, options.regions ?? []),
    regions: options.regions ?? [],
    moduleAt: locatedWithForeign(moduleLocator(files, libraries), foreign),
    isOwnCode: ownCode(files),
    isAbsentOwnCode: absentOwnCode(foreign, options.regions ?? []),
    os: options.platform?.os,
    arch: options.platform?.arch,
    pointerBytes: options.platform?.pointerSize ?? null,
    imports: options.imports ?? null,
    readLine: options.readLine ?? null,
  };
}

/**
 * Whether the debugger lost the thread's unwind at its innermost frame: code it knows nothing of
 * (no symbol, no line) in a module, typically a system DLL a minidump's machine had and this one
 * lacks. What it shows past such a frame is a guess.
 */
export function unwindLost(frames: PlacedFrame[], files: TargetFiles, foreign: ForeignLibrary[] = [], libraries: SharedLibrary[] = []): boolean {
  const top = frames[0];
  const pc = toBigInt(top?.address ?? null);
  if (!top || pc === null || top.function !== null || top.file !== null) return false;
  if (foreignAt(foreign, pc) !== null) return true;
  if (files.sections.some((section) => section.loaded === false && holds(section, pc))) return true;
  // A core with no NT_FILE (qemu's) names no library's extent: the pc in none of the files the
  // debugger loaded, while it could not load some library, is in one of those.
  return libraries.some((library) => library.from === null) && !files.sections.some((section) => section.source !== "core" && holds(section, pc));
}

/**
 * The libraries the debugger could not load (not on this machine, or not where the core says),
 * said once when no reading of the dump's own module list said it already: their frames are
 * unnamed and unwound by guess, and the program's own frames are then found by the stack scan.
 */
function unloadedNote(libraries: SharedLibrary[], arch: Platform["arch"] | undefined): string | null {
  const unloaded = libraries.filter((library) => library.from === null).map((library) => library.path);
  if (unloaded.length === 0) return null;
  const shown = unloaded.slice(0, 4).join(", ") + (unloaded.length > 4 ? ` and ${unloaded.length - 4} more` : "");
  const cross = arch !== undefined && isForeign(arch) ? ` (for an ${arch} core, its machine's root; Debian's cross libraries for ${arch === "arm64" ? "aarch64 are in /usr/aarch64-linux-gnu" : "it are under /usr/<triplet>"})` : "";
  return `the debugger could not load ${unloaded.length === 1 ? "a library" : `${unloaded.length} libraries`} the process had: ${shown}. Their frames are unnamed; pass --sysroot DIR${cross} or --solib-search-path DIR to read them`;
}

/**
 * What the dump cannot show when the module the pc lies in is known only by its extent (a minidump
 * read without the module's file): said, so that a verdict without names reads as less known, not as different.
 */
function absentModuleNote(files: TargetFiles, pc: bigint | null): string | null {
  const image = pc === null ? undefined : files.sections.find((section) => section.loaded === false && holds(section, pc));
  if (!image) return null;
  const module = image.source === "exec" ? `the program${files.executable ? ` (${files.executable})` : ""}` : image.source;
  return (
    `the pc lies in ${module}, whose file is not here: its instructions are read only where the dump holds their bytes, ` +
    `and its frames are named only from symbol files. Pass the file (--exe, or --modules-path DIR for a library) or its symbols (--symbols DIR) for its names, lines and unwind tables`
  );
}

/** Whether the pc lies in code, as far as the dump shows (`codeAt`); null when it cannot tell. */
export function pcInCode(target: Target): boolean | null {
  return target.pc === null ? null : codeAt(addressSpaceOf(target), target.pc);
}

/** What triage knows of the process's memory, for `codeAt`. */
export function addressSpaceOf(target: Target): AddressSpace {
  const absentImages = target.foreign.flatMap((lib) => (lib.start !== null && lib.end !== null ? [{ start: lib.start, end: lib.end }] : []));
  return { files: target.files, regions: target.regions, absentImages };
}

/** Threads grouped by the function they are in, the biggest group first. */
export function groupThreads(threads: ThreadSummary[]): ThreadGroup[] {
  const groups = new Map<string, number[]>();
  for (const thread of threads) {
    const name = thread.frame?.function ? normalizeFunctionName(thread.frame.function) : "??";
    groups.set(name, [...(groups.get(name) ?? []), thread.id]);
  }
  return [...groups.entries()]
    .map(([fn, ids]) => ({ function: fn, threads: ids }))
    .sort((a, b) => b.threads.length - a.threads.length);
}

function ownCode(files: TargetFiles): (address: bigint) => boolean {
  // A module known only from the dump and its symbols is one image with no sections of its own.
  const code = (section: TargetFiles["sections"][number]) => /^\.text$|^\.init$|^\.fini$/.test(section.name) || (section.name === ".module_image" && section.loaded === false);
  const sections = files.sections.filter((section) => section.source !== "core" && code(section) && (section.source === "exec" || !isRuntimeModule(section.source)));
  return (address) => sections.some((section) => holds(section, address));
}

/** A module locator that also knows the libraries the dump maps and this machine lacks, by the dump's extent of them. */
function locatedWithForeign(located: ModuleLocator, foreign: ForeignLibrary[]): ModuleLocator {
  return (address) => located(address) ?? foreignAt(foreign, address)?.path ?? null;
}

/**
 * The code of libraries of the program's own (not a runtime's) that are missing here: where their
 * program headers in the dump put it, else the executable regions the dump records inside them.
 */
function absentOwnCode(foreign: ForeignLibrary[], regions: MemoryRegion[]): (address: bigint) => boolean {
  const missing = foreign.filter((lib) => lib.status === "missing" && !isRuntimeModule(lib.path));
  const code = [
    ...missing.flatMap((lib) => lib.code),
    ...regions.filter((region) => region.permissions?.[2] === "x" && foreignAt(missing, BigInt(region.start)) !== null).map((region) => ({ start: BigInt(region.start), end: BigInt(region.end) })),
  ];
  return (address) => code.some((range) => range.start <= address && address < range.end);
}

/** Memory the process had: the debugger's sections and segments, and the regions the dump file records. */
function mappedRanges(files: TargetFiles, regions: MemoryRegion[]): Range[] {
  return [
    ...files.sections.map((section) => ({ start: BigInt(section.start), end: BigInt(section.end) })),
    ...regions.filter((region) => region.permissions === null || !region.permissions.startsWith("---")).map((region) => ({ start: BigInt(region.start), end: BigInt(region.end) })),
  ];
}

/**
 * The memory that holds the stack pointer: the core segment the debugger lists, else the region the
 * dump file records (LLDB lists no core segments).
 */
export function stackOf(files: TargetFiles, regions: MemoryRegion[], sp: bigint | null): Range | null {
  if (sp === null) return null;
  const segment = coreSegmentAt(files, sp);
  if (segment) return { start: BigInt(segment.start), end: BigInt(segment.end) };
  const region = regions.find((r) => holds(r, sp));
  return region ? { start: BigInt(region.start), end: BigInt(region.end) } : null;
}
