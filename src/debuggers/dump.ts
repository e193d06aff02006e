/**
 * Recognising a dump by its content and checking an executable against it by build-id. What the
 * dump says about itself is read by `dumpfile/`; this module turns that into the one-line
 * `DumpError`s a user sees. Pure file reads: no debugger is involved, so bad input is caught
 * before one is started.
 */
import { fstatSync, statSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";

import { readPeImports, type PeImport } from "./dumpfile/pe.js";
import { checkInputFile, CONTROL_CHARACTER, MIN_DUMP_BYTES, shownPath, unreadableReason } from "./input-files.js";
import { toBigInt } from "./model.js";
import { DumpFile, DumpFileError, ET_CORE, findAbortMessage, isElf, isGoProgram, openRegularFile, programBuildId, readElfCore, readElfHeader, readGoLineTable, readMinidump, type DumpFileFacts, type GoLineTable, type MappedFile } from "./dumpfile/index.js";

export type { MappedFile } from "./dumpfile/index.js";
export type DumpFormat = DumpFileFacts["format"];

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
  /** Everything else the file says about itself: signal or exception, threads, modules, regions. */
  facts: DumpFileFacts;
}

/** Bad input: the dump or executable is missing, unreadable, not a dump, or does not match. */
export class DumpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DumpError";
  }
}

/**
 * Checks a dump path (and `--exe`) before anything opens it, without blocking the main thread:
 * throws DumpError naming what the path is when it cannot be a dump ("is a FIFO (named pipe)").
 */
export async function checkDumpPaths(dump: string, exe?: string, hsErr?: string): Promise<void> {
  const checked = await checkInputFile(dump, { minBytes: MIN_DUMP_BYTES });
  if (!checked.ok) {
    const shown = shownPath(dump);
    if (checked.reason === "does not exist") throw new DumpError(`dump not found: ${shown}`);
    if (/^cannot be read|crash dump|control character/.test(checked.reason)) throw new DumpError(`${shown} ${checked.reason}`);
    throw new DumpError(`${shown} ${checked.reason}, not a crash dump`);
  }
  if (hsErr !== undefined) {
    const log = await checkInputFile(hsErr);
    if (!log.ok) throw new DumpError(log.reason === "does not exist" ? `JVM error log not found: ${shownPath(hsErr)}` : `--hs-err ${shownPath(hsErr)} ${log.reason}`);
  }
  if (exe === undefined) return;
  const program = await checkInputFile(exe);
  if (!program.ok) {
    const shown = shownPath(exe);
    if (program.reason === "does not exist") throw new DumpError(`executable not found: ${shown}`);
    throw new DumpError(`--exe ${shown} ${program.reason}${/^cannot|control character/.test(program.reason) ? "" : ", not an executable"}`);
  }
}

/**
 * The last dump recognised, by the path asked and the file's identity: a command's early start
 * (cli/early-debugger.ts) and its session both ask, and the second is answered without a re-read.
 */
let lastInspected: { key: string; info: DumpInfo } | null = null;

/** Opens and recognises a dump; throws DumpError with a one-line reason when it is not one. */
export function inspectDump(path: string): DumpInfo {
  const full = resolve(path);
  const file = openChecked(full, "dump");
  const stats = fstatSync(file.fd);
  const key = [path, full, stats.dev, stats.ino, stats.size, stats.mtimeMs, stats.ctimeMs].join("\0");
  if (lastInspected?.key === key) {
    file.close();
    return lastInspected.info;
  }
  try {
    const info = recognise(path, full, file);
    lastInspected = { key, info };
    return info;
  } finally {
    file.close();
  }
}

function recognise(path: string, full: string, file: DumpFile): DumpInfo {
  const size = file.size;
  if (size === 0) throw new DumpError(`${path} is empty, not a crash dump`);
  const head = file.read(0, Math.min(64, size), "the file's first bytes");
  if (head.subarray(0, 4).toString("latin1") === "MDMP") {
    const facts = readFacts(path, () => readMinidump(file));
    return { path: full, format: "minidump", bytes: size, programName: null, commandLine: null, mappedFiles: [], executableFromNotes: null, facts };
  }
  if (!isElf(head)) {
    throw new DumpError(`${path} is not a crash dump (expected an ELF core file or a Windows minidump)`);
  }
  const type = readFacts(path, () => readElfHeader(head).type);
  if (type !== ET_CORE) {
    throw new DumpError(`${path} is an ELF ${type === 2 || type === 3 ? "program" : "file"}, not a core dump; pass the core file (and this file with --exe)`);
  }
  const facts = readFacts(path, () => readElfCore(file));
  // A core cut short is read as far as it goes (dumpfile/core-cut.ts); without its notes nothing of the crash is left.
  if (facts.cut?.notesLost) {
    throw new DumpError(`${path} is truncated inside its notes (the file ends at byte ${size}, its notes at ${facts.cut.notesEnd}): the threads' registers and the signal are lost; copy the whole core again`);
  }
  const { programName, commandLine, mappedFiles } = facts;
  return { path: full, format: "elf-core", bytes: size, programName, commandLine, mappedFiles, executableFromNotes: executableFromNotes(facts), facts };
}

/**
 * The executable to load: `--exe` when given (checked to be an ELF program), else the one the core
 * names in its notes, there or in `folder` (the dump's own, or the folder of the file it was
 * decompressed from). Throws DumpError naming what was looked for when there is none.
 */
export function resolveExecutable(dump: DumpInfo, exe: string | undefined, folder = dirname(dump.path)): string | null {
  if (exe !== undefined) {
    const full = resolve(exe);
    const file = openChecked(full, "executable");
    try {
      const head = file.read(0, Math.min(64, file.size), "the file's first bytes");
      if (dump.facts.format === "minidump" && dump.facts.platform.os === "windows") {
        // A Windows program starts with the DOS header's "MZ".
        if (head.subarray(0, 2).toString("latin1") !== "MZ") throw new DumpError(`--exe ${exe} is not a Windows executable (PE)`);
      } else if (!isElf(head) || readFacts(exe, () => readElfHeader(head).type) === ET_CORE) {
        throw new DumpError(`--exe ${exe} is not an ELF executable`);
      }
    } finally {
      file.close();
    }
    return full;
  }
  if (dump.format === "minidump") return programBesideMinidump(dump, folder);
  const named = dump.executableFromNotes;
  if (!named) {
    throw new DumpError(`${dump.path} does not name its executable in its notes; pass it with --exe PATH`);
  }
  const candidates = [named, resolve(folder, basename(named))];
  for (const candidate of candidates) {
    // The notes are the dump's word: a name with a control character is never given to a debugger.
    if (!CONTROL_CHARACTER.test(candidate) && isFile(candidate)) return candidate;
  }
  throw new DumpError(`the executable of this core was not found: looked for ${candidates.map(shownPath).join(" and ")}; pass it with --exe PATH`);
}

/** Which imported function a program's import slot holds once loaded (by the slot's address). */
export type ImportLookup = (slot: bigint) => { dll: string; name: string } | null;

/**
 * A Windows program's imports, at the addresses of the slots where the dump's process had them:
 * its import table (read from the program's file) placed at the base the dump records for it.
 * Null when the dump is not a Windows minidump or the program cannot be read.
 */
export function importsOf(dump: DumpInfo, executable: string | null): ImportLookup | null {
  if (dump.facts.format !== "minidump" || dump.facts.platform.os !== "windows" || executable === null) return null;
  const base = toBigInt(dump.facts.modules[0]?.start ?? null);
  if (base === null) return null;
  let table: PeImport[];
  try {
    table = readPeImports(executable);
  } catch {
    return null;
  }
  const bySlot = new Map(table.map((entry) => [base + BigInt(entry.slot), { dll: entry.dll, name: entry.name }]));
  return (slot) => bySlot.get(slot) ?? null;
}

/**
 * A Go program's own pc-line table, read from its file and placed where the core's process ran it:
 * names, lines and inlined calls even where the program has no symbols. Null for any other dump or program.
 */
export function goLinesOf(dump: DumpInfo, executable: string | null): GoLineTable | null {
  if (dump.facts.format !== "elf-core" || executable === null || !isGoProgram(executable)) return null;
  return readGoLineTable(executable, toBigInt(dump.facts.auxv?.entry ?? null));
}

/**
 * A minidump's first module is the program, named by its path on the machine that wrote the dump
 * (`C:\\app\\server.exe`): the file of that name next to the dump, if there is one. Without it the
 * debugger still reads the dump, with the program's symbols only if it finds the file itself.
 */
function programBesideMinidump(dump: DumpInfo, folder: string): string | null {
  if (dump.facts.format !== "minidump") return null;
  const program = dump.facts.modules[0]?.path;
  if (!program) return null;
  const name = program.split(/[\\/]/).at(-1) ?? "";
  // A Breakpad dump of a Linux process names the program by its path on that machine, maybe this one.
  const candidates = [resolve(folder, name), ...(program.startsWith("/") ? [program] : [])];
  return name === "" ? null : (candidates.find(isFile) ?? null);
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

/** Where glibc's abort message lies in a core's memory, found without symbols; null when none is found or the core cannot be read. */
export function abortMessageAddress(dump: DumpInfo): string | null {
  if (dump.format !== "elf-core") return null;
  try {
    const file = DumpFile.open(dump.path);
    try {
      return findAbortMessage(file);
    } finally {
      file.close();
    }
  } catch {
    return null;
  }
}

/** A local ELF file's build id; null when it has none or cannot be read (never throws). */
export function fileBuildId(path: string): string | null {
  try {
    const file = DumpFile.open(path);
    try {
      return programBuildId(file);
    } finally {
      file.close();
    }
  } catch {
    return null;
  }
}

function executableBuildId(exe: string): string | null {
  const file = DumpFile.open(exe);
  try {
    return readFacts(exe, () => programBuildId(file));
  } finally {
    file.close();
  }
}

/** The build id in the core's copy of the executable's first page. */
function coreBuildId(dump: DumpInfo, exe: string): string | null {
  if (dump.facts.format !== "elf-core") return null;
  const { modules } = dump.facts;
  const module = modules.find((m) => m.path === exe) ?? modules.find((m) => m.path === dump.executableFromNotes);
  return module?.buildId ?? null;
}

function executableFromNotes(facts: { programName: string | null; commandLine: string | null; mappedFiles: MappedFile[] }): string | null {
  const firstMappings = facts.mappedFiles.filter((m) => m.fileOffset === 0n);
  const { programName } = facts;
  const byName = programName ? firstMappings.find((m) => basename(m.path).startsWith(programName)) : undefined;
  const chosen = byName ?? firstMappings[0];
  if (chosen) return chosen.path.replace(/ \(deleted\)$/, "");
  const argv0 = facts.commandLine?.split(" ")[0];
  return argv0 ? argv0 : null;
}

/** A file the dump parser found malformed is bad input like any other: a one-line DumpError. */
function readFacts<T>(path: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof DumpFileError) throw new DumpError(`${path} is truncated or corrupt: ${error.message}`);
    throw error;
  }
}

/** Opens a dump or executable that must be a regular file; never blocks on a FIFO or a device. */
function openChecked(path: string, what: string): DumpFile {
  try {
    return new DumpFile(openRegularFile(path));
  } catch (error) {
    if (error instanceof DumpFileError) throw new DumpError(`${error.message}, not a ${what} file`);
    const code = (error as NodeJS.ErrnoException).code;
    throw new DumpError(code === "ENOENT" ? `${what} not found: ${path}` : `${what} ${path} ${unreadableReason(error)}`);
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
