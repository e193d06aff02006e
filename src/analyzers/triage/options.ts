/** What triage takes from the dump file as given, beside what it asks the debugger. */
import { abortMessageAddress, fileBuildId, goLinesOf, importsOf, type DumpInfo, type ImportLookup } from "../../debuggers/dump.js";
import { SortedRanges, type CoreCut, type GoLineTable, type MinidumpFacts } from "../../debuggers/dumpfile/index.js";
import type { Address, CrashpadInfo, MemoryRegion, Module, Platform, RecordedAssertion, StopReason } from "../../debuggers/model.js";
import { packageOf, type InstalledPackage } from "../../debuggers/packages.js";
import { cutText } from "../../report/cut.js";
import type { Cut } from "../../report/schema.js";
import { sourceLine } from "../../debuggers/source-files.js";
import { isCPython } from "../../runtimes/cpython/index.js";
import { nodeOf, type NodeCore } from "../../runtimes/node/index.js";
import { errorLogBeside, hotspotOf, type JvmCore } from "../../runtimes/jvm/index.js";
import type { BuildIdReader } from "../libraries.js";

export interface TriageOptions {
  /** The debugger's name as a user knows it (`gdb`): what it cannot show is pointed at another. */
  debugger?: string;
  /** Frames fetched from each end of the crashing thread's stack (default 40). */
  frameLimit?: number;
  /**
   * What the dump file itself records as the stop (an ELF core's NT_SIGINFO), read by dumpdbg: the
   * ground truth for the signal, its code, the fault address and the sender, whatever the debugger says.
   */
  stopReason?: StopReason | null;
  /** The dump's platform: Windows' calling convention differs from System V's. */
  platform?: Platform | null;
  /** The dumped process's pid, when the dump records it: tells a signal it sent itself from one sent to it. */
  pid?: number | null;
  /** The dump's memory regions as its file records them (segments of a core, a minidump's memory info). */
  regions?: MemoryRegion[];
  /**
   * The registers of the thread that received the signal, as the core's NT_PRSTATUS records them:
   * where a debugger shows a goroutine's registers instead (Delve), the thread's own frame pointer.
   */
  signalledThreadRegisters?: Record<string, string>;
  /** A Go program's own pc-line table (`.gopclntab`, from its file): its frames' names and lines, inlined calls included, with or without symbols. */
  goLines?: GoLineTable | null;
  /** Which DLL function a Windows program's import slot holds (from its import table). */
  imports?: ImportLookup | null;
  /** The modules the dump maps, with the build ids its copies of their first pages hold. */
  modules?: Module[];
  /** Reads a local file's build id: tells a library found here from the build the process ran. */
  buildIdOf?: BuildIdReader;
  /** Finds glibc's abort message in the dump's memory without symbols (the address of its text). */
  findAbortMessage?: () => Address | null;
  /** A failed check the dump's crash handler recorded (Breakpad's assertion stream). */
  assertion?: RecordedAssertion | null;
  /** What Crashpad's client kept beside the dump: ids and annotations. */
  annotations?: CrashpadInfo | null;
  /** A line of a source file on this machine, where the debugger cannot list it. */
  readLine?: (file: string, line: number) => string | null;
  /** What the dump file lacks that triage would have read, each said with what it would have shown. */
  missing?: string[];
  /** A core cut short: where its file ends and the memory it lost. */
  cut?: Cut | null;
  /** Whether an address lies in memory a core cut short lost: what was there is unknown. */
  lostMemory?: (address: bigint) => boolean;
  /** The installed package a file comes from, with its version (Debian's dpkg). */
  packageOf?: (path: string) => Promise<InstalledPackage | null>;
  /** A HotSpot JVM's core (libjvm.so among its modules), to read its Java frames with the JDK's jhsdb. */
  jvm?: JvmCore | null;
  /** The core of a CPython process (the interpreter among its files), whose Python frames are read from its memory. */
  python?: string | null;
  /** A Node.js process's core (`node` or libnode among its modules), whose JavaScript frames llnode reads. */
  node?: NodeCore | null;
  /** Keeps what another tool triage ran printed (jhsdb's answers) as evidence, by its command. */
  record?: (command: string, output: string, ms: number) => void;
}

/** What the dump file says that triage takes as given: its stop reason, platform, regions and the program's imports. */
export function triageOptionsOf(dump: DumpInfo | null, executable: string | null, hsErr: string | null = null): TriageOptions {
  if (!dump) return {};
  return {
    stopReason: dump.facts.stopReason,
    platform: dump.facts.platform,
    regions: dump.facts.regions,
    imports: importsOf(dump, executable),
    readLine: sourceLine,
    pid: dump.facts.format === "minidump" ? dump.facts.processId : dump.facts.pid,
    ...(dump.facts.format === "minidump" ? { assertion: dump.facts.assertion, annotations: dump.facts.crashpad, missing: missingStreams(dump.facts) } : {}),
    ...(dump.facts.format === "elf-core" && dump.facts.threads[0] ? { signalledThreadRegisters: dump.facts.threads[0].registers } : {}),
    ...(dump.facts.format === "elf-core" && dump.facts.cut ? cutCore(dump.facts.cut) : {}),
    ...(dump.format === "elf-core" ? { modules: dump.facts.modules, buildIdOf: fileBuildId, findAbortMessage: () => abortMessageAddress(dump), packageOf, goLines: goLinesOf(dump, executable), jvm: jvmOf(dump, executable, hsErr), python: dump.facts.format === "elf-core" && isCPython(dump.facts.modules) ? dump.path : null, node: nodeCoreOf(dump, executable) } : {}),
  };
}

/** A core of a Node.js process, with the program it ran (`--exe`, else the one the core names); null for another program's. */
function nodeCoreOf(dump: DumpInfo, executable: string | null): NodeCore | null {
  if (dump.facts.format !== "elf-core") return null;
  const runtime = nodeOf(dump.facts.modules);
  return runtime ? { core: dump.path, program: executable ?? dump.executableFromNotes, runtime, buildIdOf: fileBuildId, commandLine: dump.commandLine } : null;
}

/** A core of a HotSpot JVM, with the launcher it ran (`--exe`, else the one the core names); null for another program's. */
function jvmOf(dump: DumpInfo, executable: string | null, hsErr: string | null): JvmCore | null {
  if (dump.facts.format !== "elf-core") return null;
  const libjvm = hotspotOf(dump.facts.modules);
  const pid = dump.facts.pid;
  return libjvm ? { core: dump.path, java: executable ?? dump.executableFromNotes, libjvm, buildIdOf: fileBuildId, pid, hsErr: hsErr ?? errorLogBeside(dump.path, pid) } : null;
}

/** Segments of a cut core listed in the report; the rest are counted. */
const LISTED_LOST_SEGMENTS = 32;

/** A core cut short as the report holds it, and the note that says what its lost memory leaves unknown. */
export function cutCore(facts: CoreCut): { cut: Cut; missing: string[]; lostMemory: (address: bigint) => boolean } {
  const cut: Cut = {
    at: facts.fileBytes,
    expectedBytes: facts.expectedBytes,
    lostBytes: facts.lost.reduce((sum, segment) => sum + segment.lostBytes, 0),
    segments: facts.lost.slice(0, LISTED_LOST_SEGMENTS),
    moreSegments: Math.max(0, facts.lost.length - LISTED_LOST_SEGMENTS),
  };
  const note =
    `the core is ${cutText(cut)}, as RLIMIT_CORE or systemd-coredump's ProcessSizeMax cut it: the signal, the registers and the mappings come from its notes, ` +
    "the code from the program's and libraries' files; what the lost memory held (frames past the registers, variables, data) is unknown, not zeros, and is not shown";
  const lost = new SortedRanges(facts.unreadable, (range) => range.start, (range) => range.end);
  return { cut, missing: [note], lostMemory: (address) => lost.at(address) !== null };
}

/**
 * The streams a minidump lacks that triage reads, with what each would have shown: a writer that
 * could not write one leaves it out, and what it held is then unknown, not absent from the process.
 */
export function missingStreams(facts: Pick<MinidumpFacts, "streams" | "platform">): string[] {
  const has = (...names: string[]) => names.some((name) => facts.streams.includes(name));
  const missing: string[] = [];
  if (!has("ModuleListStream")) missing.push("the dump has no module list: which module an address lies in is unknown, so frames name no module and the program's code cannot be told from the system's");
  if (!has("MemoryListStream", "Memory64ListStream")) missing.push("the dump holds no memory (no memory list): the instruction at the pc, whether it read or wrote, and the stack past the registers are unknown");
  if (!has("MemoryInfoListStream", "LinuxMaps")) {
    missing.push(
      `the dump records no mappings (no ${facts.platform.os === "linux" ? "Linux maps stream or " : ""}memory info list): whether an address is code or writable is known only inside the modules the debugger has the files of`,
    );
  }
  return missing;
}
