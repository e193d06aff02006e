/**
 * Evidence taken away from a dump, one fact at a time, as dumps arrive from the field: the program
 * or its libraries are not on this machine, the program ships stripped, the crash handler could
 * not write a stream, the machine holds another build of libc. Each ablation makes, from a base
 * case (a dump and the arguments that triage it), a new case that lacks that one fact; nothing
 * else about the dump changes. The byte rewrites are pure functions; the ablations write their
 * copies in folders the caller makes and removes.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { inspectDump } from "../../src/debuggers/dump.js";
import { DumpFile } from "../../src/debuggers/dumpfile/index.js";
import { programBuildId } from "../../src/debuggers/dumpfile/elf.js";
import { hasStream, rewritePath, STREAM, withoutStreams } from "./dump-edits.js";

export type DumpFormat = "core" | "breakpad" | "crashpad" | "wine" | "macos" | "go" | "debian";

/** A dump and how `dumpdbg triage` is asked about it. */
export interface TriageCase {
  name: string;
  format: DumpFormat;
  dump: string;
  /** The arguments after the dump (`--exe`, `--symbols`, `--modules-path`, `--debugger`). */
  args: string[];
  /** The program's file on this machine, which the symbol ablations strip; null when the case has none. */
  program: string | null;
  /** Whether that program carries debug information (DWARF) to strip. */
  debugInfo: boolean;
}

export type AblationName =
  | "without-executable"
  | "without-libraries"
  | "without-debug-info"
  | "stripped"
  | "without-symbol-store"
  | "without-system-debug-info"
  | "without-memory-list"
  | "without-module-list"
  | "without-linux-maps"
  | "other-libc-build";

/** Makes a fresh folder under the system's temporary folder, named from `prefix`. */
export type Scratch = (prefix: string) => string;

export interface Ablation {
  name: AblationName;
  /** What the dump then lacks, for the report. */
  lacks: string;
  appliesTo(base: TriageCase): boolean;
  /** The case without that evidence, its files in folders `scratch(prefix)` makes (and the caller removes). */
  make(base: TriageCase, scratch: Scratch): TriageCase;
}

// ---- paths inside a dump ---------------------------------------------------------------------

/** Several rewrites, in order; throws when none of them found anything (the ablation would take nothing away). */
function rewritePaths(bytes: Buffer, pairs: [string, string][]): Buffer {
  let total = 0;
  for (const [from, to] of pairs) {
    const rewritten = rewritePath(bytes, from, to);
    bytes = rewritten.bytes;
    total += rewritten.replaced;
  }
  if (total === 0) throw new Error(`the dump names none of ${pairs.map(([from]) => from).join(", ")}`);
  return bytes;
}

/** A folder path of the same length that does not exist: its last character changed. */
function elsewhere(folder: string): string {
  const last = folder.at(-1) === "z" ? "y" : "z";
  return folder.slice(0, -1) + last;
}

/** The folder part of a path the dump recorded, a Linux or a Windows one. */
function folderOf(recorded: string): string {
  return recorded.slice(0, Math.max(recorded.lastIndexOf("/"), recorded.lastIndexOf("\\")));
}

interface DumpFacts {
  /** The program's path as the dump records it. */
  program: string | null;
  /** Every module's path as the dump records it. */
  modules: string[];
}

/** What the dump names, read as dumpdbg reads it (a core's program as its executable finding picks it). */
function readDumpFacts(dump: string): DumpFacts {
  const info = inspectDump(dump);
  if (info.facts.format === "minidump") {
    const modules = info.facts.modules.map((module) => module.path);
    return { program: modules[0] ?? null, modules };
  }
  return { program: info.executableFromNotes, modules: info.mappedFiles.map((mapped) => mapped.path) };
}

/** Where Debian keeps shared libraries, and a same-length place that does not exist (merged /usr: /lib is /usr/lib). */
const LIBRARY_FOLDERS: [string, string][] = [
  ["/usr/lib/", "/usr/lix/"],
  ["/lib/x86_64-linux-gnu/", "/lix/x86_64-linux-gnu/"],
  ["/lib64/", "/lix64/"],
];

// ---- arguments -------------------------------------------------------------------------------

/** `args` without `--flag VALUE`. */
function withoutFlag(args: string[], flag: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === flag) i++;
    else out.push(args[i] as string);
  }
  return out;
}

function withFlag(args: string[], flag: string, value: string): string[] {
  return [...withoutFlag(args, flag), flag, value];
}

const isMinidump = (base: TriageCase) => ["breakpad", "crashpad", "wine", "macos"].includes(base.format);
/** Cores gdb reads with this machine's shared libraries: the fixture programs' and Debian's (a Go program links none). */
const isGdbCore = (base: TriageCase) => base.format === "core" || base.format === "debian";

function copyDump(base: TriageCase, folder: string, bytes: Buffer = readFileSync(base.dump)): string {
  const dump = path.join(folder, path.basename(base.dump));
  writeFileSync(dump, bytes);
  return dump;
}

// ---- the ablations ---------------------------------------------------------------------------

/**
 * The program is absent from the path the dump names, and not beside the dump: the dump is
 * copied alone, the folder it names for the program renamed in it, and no `--exe` given.
 */
const withoutExecutable: Ablation = {
  name: "without-executable",
  lacks: "the program's file",
  // A Mac dump's program path (/Applications/…) is never this machine's: the base already lacks it.
  appliesTo: (base) => base.format !== "macos",
  make(base, scratch) {
    const program = readDumpFacts(base.dump).program;
    if (!program) throw new Error(`${base.dump} names no program`);
    const folder = folderOf(program);
    const dump = copyDump(base, scratch("dumpdbg-ablation-"), rewritePaths(readFileSync(base.dump), [[folder, elsewhere(folder)]]));
    return { ...base, dump, args: withoutFlag(base.args, "--exe"), program: null };
  },
};

/**
 * The shared libraries are absent from the paths the dump names (libc, the loader, libstdc++,
 * a Python extension): their folders renamed in the dump, the files' names kept. A Windows
 * minidump's system DLLs are never at the Windows paths it names: the base case hands them over
 * with `--modules-path`, and this case does not.
 */
const withoutLibraries: Ablation = {
  name: "without-libraries",
  lacks: "the shared libraries' files",
  // A Mac dump's libraries are at Mac paths, never this machine's; a Go program links none.
  appliesTo: (base) => base.format !== "macos" && base.format !== "go",
  make(base, scratch) {
    if (base.format === "wine") return { ...base, args: withoutFlag(base.args, "--modules-path") };
    const dump = copyDump(base, scratch("dumpdbg-ablation-"), rewritePaths(readFileSync(base.dump), LIBRARY_FOLDERS));
    return { ...base, dump };
  },
};

/**
 * The program stripped by `strip` with `options`, at a path as long as the one the dump names,
 * which the dump then names instead: only the symbols are taken away. (A program given with --exe
 * from another path than the dump's is read as a library missing here, another fact taken away.)
 */
function strippedCase(base: TriageCase, scratch: Scratch, options: string[]): TriageCase {
  const program = base.program as string;
  const stripped = path.join(scratch("dumpdbg-ablation-"), path.basename(program));
  copyFileSync(program, stripped);
  execFileSync(program.endsWith(".exe") ? "x86_64-w64-mingw32-strip" : "strip", [...options, stripped]);
  // A Windows minidump's program is found beside the dump (its recorded path is a Windows one).
  if (base.format === "wine") return { ...base, dump: copyDump(base, path.dirname(stripped)), program: stripped, debugInfo: false };
  const recorded = readDumpFacts(base.dump).program;
  if (!recorded) throw new Error(`${base.dump} names no program`);
  const placed = placeAtSameLength(recorded, readFileSync(stripped), scratch("p"));
  const dump = copyDump(base, scratch("dumpdbg-ablation-"), rewritePaths(readFileSync(base.dump), [[recorded, placed]]));
  return { ...base, dump, args: withoutFlag(base.args, "--exe"), program: placed, debugInfo: false };
}

const withoutDebugInfo: Ablation = {
  name: "without-debug-info",
  lacks: "the program's DWARF (strip -g: symbol table kept)",
  appliesTo: (base) => base.program !== null && base.debugInfo,
  make: (base, scratch) => strippedCase(base, scratch, ["-g"]),
};

const stripped: Ablation = {
  name: "stripped",
  lacks: "the program's DWARF and symbol table (strip)",
  appliesTo: (base) => base.program !== null && base.debugInfo,
  make: (base, scratch) => strippedCase(base, scratch, ["--strip-all"]),
};

const withoutSymbolStore: Ablation = {
  name: "without-symbol-store",
  lacks: "the --symbols store",
  appliesTo: (base) => base.args.includes("--symbols"),
  make: (base) => ({ ...base, args: withoutFlag(base.args, "--symbols") }),
};

/** gdb finds no separate debug files (libc6-dbg's, under /usr/lib/debug): an empty debug-file-directory. */
const withoutSystemDebugInfo: Ablation = {
  name: "without-system-debug-info",
  lacks: "the system's separate debug files (libc6-dbg)",
  appliesTo: isGdbCore,
  make(base, scratch) {
    return { ...base, args: withFlag(base.args, "--debug-file-directory", scratch("dumpdbg-no-debug-files-")) };
  },
};

function streamAblation(name: AblationName, lacks: string, types: number[]): Ablation {
  return {
    name,
    lacks,
    appliesTo: (base) => isMinidump(base) && types.some((type) => hasStream(readFileSync(base.dump), type)),
    make: (base, scratch) => ({ ...base, dump: copyDump(base, scratch("dumpdbg-ablation-"), withoutStreams(readFileSync(base.dump), types)) }),
  };
}

/**
 * The dump names its libc at a path where this machine holds another build of it: a copy of this
 * machine's libc with its GNU build id changed, in a folder whose path is as long as the one the
 * dump names, so that the path is rewritten in place. gdb loads it and reads another build's
 * code; LLDB, which checks a minidump module's id, refuses it.
 */
const otherLibcBuild: Ablation = {
  name: "other-libc-build",
  lacks: "the libc the process ran (another build is found)",
  appliesTo: (base) => isGdbCore(base) || base.format === "breakpad" || base.format === "crashpad",
  make(base, scratch) {
    const recorded = readDumpFacts(base.dump).modules.filter((module) => /\/libc\.so\.6$/.test(module));
    const libc = recorded[0];
    if (!libc) throw new Error(`${base.dump} maps no libc.so.6`);
    const other = withBuildIdChanged(realpathSync(libc));
    // The dynamic linker's list names libc by the path it opened (/lib/…), the kernel's by the real one (/usr/lib/…).
    const names = [...new Set([...recorded, ...recorded.map((name) => name.replace(/^\/usr\/lib\//, "/lib/"))])];
    // A short folder, so that a path of its own can be as long as the shortest of those.
    const folder = scratch("l");
    const pairs = names.map((name): [string, string] => [name, placeAtSameLength(name, other, folder)]);
    return { ...base, dump: copyDump(base, scratch("dumpdbg-ablation-"), rewritePaths(readFileSync(base.dump), pairs)) };
  },
};

/** An ELF file's bytes with the first byte of its GNU build id flipped: another build, as far as any reader can tell. */
export function withBuildIdChanged(elf: string): Buffer {
  const file = DumpFile.open(elf);
  const id = (() => {
    try {
      return programBuildId(file);
    } finally {
      file.close();
    }
  })();
  if (!id) throw new Error(`${elf} has no GNU build id`);
  const bytes = readFileSync(elf);
  const at = bytes.indexOf(Buffer.from(id, "hex"));
  bytes[at] = (bytes[at] ?? 0) ^ 0xff;
  return bytes;
}

/**
 * `contents` written as a file named as `recorded` is, at a path of as many characters as
 * `recorded`: in a folder under `folder` padded to the length.
 */
function placeAtSameLength(recorded: string, contents: Buffer, folder: string): string {
  const name = path.posix.basename(recorded);
  const padding = recorded.length - name.length - folder.length - 2;
  if (padding < 1) throw new Error(`the folder ${folder} is too long to stand for ${recorded}`);
  const padded = path.join(folder, "x".repeat(padding));
  mkdirSync(padded, { recursive: true });
  const placed = path.join(padded, name);
  writeFileSync(placed, contents);
  return placed;
}

export const ABLATIONS: Ablation[] = [
  withoutExecutable,
  withoutLibraries,
  withoutDebugInfo,
  stripped,
  withoutSymbolStore,
  withoutSystemDebugInfo,
  streamAblation("without-memory-list", "the memory list stream", [STREAM.memoryList, STREAM.memory64List]),
  streamAblation("without-module-list", "the module list stream", [STREAM.moduleList]),
  streamAblation("without-linux-maps", "Breakpad's Linux maps stream", [STREAM.linuxMaps]),
  otherLibcBuild,
];
