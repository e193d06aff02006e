/**
 * From a dump path to a live debugger session: recognise the dump, find and check its executable,
 * choose the backend, load it. Everything that can be wrong with the input is reported here,
 * before any analysis starts.
 */
import { architectureName, architectureSupport } from "./architectures.js";
import { BACKENDS, canRun, chooseBackend, isInstalled, startSession, type DebuggerChoice } from "./backends.js";
import { binaryOf, isNamed, namedBinary } from "./binaries.js";
import { endEarly } from "./early-start.js";
import { DebuggerError, SessionDead } from "./errors.js";
import { homedir } from "node:os";

import { hasDwarf, isGoProgram } from "./dumpfile/index.js";

import type { SymbolPlan } from "./symbols/locate.js";
import { symbolSources } from "./symbols/sources.js";
import { buildIdMismatch, checkDumpPaths, DumpError, inspectDump, resolveExecutable, type DumpInfo } from "./dump.js";
import { executableOfSource, prepareDump, sourceLines, type DumpSource, type PreparedDump } from "./dump-source.js";
import { dirname } from "node:path";
import { unchangedCheck } from "./dump-identity.js";
import type { Backend, DebuggerSession } from "./session.js";

export interface OpenDumpOptions {
  dump: string;
  exe?: string;
  /** Which debugger reads the dump; `auto` (the default) chooses by the dump's format and what is installed. */
  debugger?: DebuggerChoice;
  /** The debugger binaries (`--gdb`, `--lldb`, `--cdb`); else `DUMPDBG_GDB` and the like, else their usual names. */
  binaries?: Partial<Record<Backend, string>>;
  timeoutMs?: number;
  sysroot?: string;
  solibSearchPath?: string;
  debugFileDirectory?: string;
  /** Folders holding the dump's modules, searched by file name (a minidump's DLLs, a core's libraries). */
  modulesPath?: string[];
  /** Where debug information is kept (`--symbols`: folders, stores, symbol servers): matched to the dump's modules by their ids. */
  symbols?: string[];
  /** Where downloaded symbols are kept (`--symbols-cache`); else `$XDG_CACHE_HOME/dumpdbg/symbols`. */
  symbolsCache?: string;
  /** Nothing is downloaded (`--offline`): the cache and folders only. */
  offline?: boolean;
  /** List every module's symbols even when no place to look was named (`dumpdbg symbols`). */
  listSymbols?: boolean;
  /** cdb's symbol path (`--symbol-path`, else `_NT_SYMBOL_PATH`): only it may name a symbol server. */
  symbolPath?: string;
  /**
   * An executable whose build-id differs from the core's gives wrong symbols and lines. `exec` only
   * warns (a script may know what it does); an analysis refuses, rather than explain the wrong code.
   */
  onMismatch?: "warn" | "refuse";
  /** A JVM's fatal error log (`--hs-err`), where it is not beside the dump. */
  hsErr?: string;
  /** A batch's dumps, one after another: the debugger is kept from one to the next where it can be (gdb/kept-gdb.ts). */
  keepDebugger?: boolean;
}

export interface OpenedDump {
  session: DebuggerSession;
  dump: DumpInfo;
  executable: string | null;
  /** One-line warnings of dumpdbg's own for the user (a mismatched executable, unused symbols). */
  warnings: string[];
  /** What the debugger warned about while loading the dump, as it said it: kept for the report, summarised for the user. */
  debuggerWarnings: string[];
  /** The debugger binary in use. */
  debuggerPath: string;
  /** Throws a DumpError once the dump file the debugger reads is deleted, replaced or changed. */
  unchanged: () => void;
  /** The debugger that died twice opening this dump before the one in use read it; null when the first one did. */
  crashedDebugger: string | null;
  /** Where each module's symbols came from, when the user named anywhere to look; else null. */
  symbols: SymbolPlan | null;
  /** The JVM's fatal error log the user named (`--hs-err`); null when none was. */
  hsErr: string | null;
  /** The user's file and what was done to it (decompressed, taken out of an apport report), with what its source recorded. */
  source: DumpSource;
  /** The same, in lines for the user and the report (`sourceLines`). */
  notes: string[];
}

export async function openDump(options: OpenDumpOptions): Promise<OpenedDump> {
  await checkDumpPaths(options.dump, options.exe, options.hsErr);
  const prepared = await prepareDump(options.dump);
  try {
    const opened = await openPrepared(options, prepared);
    // A decompressed copy lives as long as the debugger that reads it (which may reopen it).
    const close = opened.session.close.bind(opened.session);
    opened.session.close = async (how) => {
      try {
        await close(how);
      } finally {
        prepared.release();
      }
    };
    return opened;
  } catch (error) {
    prepared.release();
    throw error;
  }
}

async function openPrepared(options: OpenDumpOptions, prepared: PreparedDump): Promise<OpenedDump> {
  const { source } = prepared;
  const dump = inspectUnpacked(prepared);
  const unchanged = unchangedCheck(dump.path);
  const folder = dirname(source.original);
  // What systemd or apport recorded of the program, when the user names none and it is here.
  const exe = options.exe ?? executableOfSource(source) ?? undefined;
  const binaries = options.binaries ?? {};
  const go = dump.format === "elf-core" ? goProgram(dump, exe, folder) : null;
  const choiceInput: Parameters<typeof chooseBackend>[0] = {
    format: dump.format,
    // Delve loads no program without DWARF: a stripped Go program's core is gdb's to read.
    goProgram: go?.dwarf === true,
    requested: options.debugger ?? "auto",
    host: process.platform,
    installed: (backend) => isInstalled(backend, binaries),
    named: (backend) => isNamed(backend, binaries),
    binary: (backend) => namedBinary(backend, binaries) ?? backend,
    // A core from another processor needs a debugger built for it (gdb-multiarch, LLDB).
    architecture: {
      name: architectureName(dump.facts.platform.arch),
      support: architectureSupport(dump.facts.platform.arch, { named: (backend) => isNamed(backend, binaries), canRun: (binary) => canRun(binary) }),
    },
  };
  const choice = chooseBackend(choiceInput);
  if ("error" in choice) throw new DebuggerError(`${options.dump}: ${choice.error}`);
  // A debugger started early for this command is taken by a gdb or LLDB session; Delve's and cdb's
  // never take it, so it is ended now rather than run (or load the dump) beside theirs.
  if (choice.backend === "dlv" || choice.backend === "cdb") void endEarly();
  const executable = resolveExecutable(dump, exe, folder);
  const warnings: string[] = choice.fallback ? [choice.fallback] : [];
  const noted: string[] = sourceLines(source);
  if (go && !go.dwarf && (options.debugger ?? "auto") === "auto" && isInstalled("dlv", binaries)) {
    warnings.push(`the Go program has no DWARF debug information (built with -ldflags=-w, or stripped), which Delve needs: reading its core with ${choice.backend}`);
  }
  const mismatch = executable ? buildIdMismatch(dump, executable) : null;
  if (mismatch && (options.onMismatch ?? "refuse") === "refuse") {
    const named = dump.executableFromNotes ? ` (the core names ${dump.executableFromNotes})` : "";
    throw new DumpError(`${mismatch.replace(/; symbols.*$/, "")}; pass the executable that produced the core${named}`);
  }
  if (mismatch) warnings.push(mismatch);

  // cdb reads its own symbol path (`--symbol-path`, `_NT_SYMBOL_PATH`), servers included.
  const sources = symbolSources({ symbols: options.symbols ?? [], cacheDir: options.symbolsCache, env: process.env, home: homedir() });
  const symbols = choice.backend === "cdb" ? null : await planSymbols(options, dump, source.original, executable, sources);
  if (symbols) warnings.push(...symbols.notes);
  const gdbWithoutSym = symbols?.symbolFiles.length && choice.backend === "gdb";
  if (gdbWithoutSym) warnings.push(`gdb cannot read Breakpad .sym files or PDBs: dumpdbg names frames from the .sym files itself, but gdb unwinds and reads variables without them; --debugger lldb reads them`);
  // dumpdbg reads the .sym files itself too: a frame the debugger leaves unnamed is named from them.
  const frameNames = symbols ? await (await import("./symbols/frame-names.js")).readNamedModules(symbols.modules, dump.facts.modules) : null;
  if (frameNames) warnings.push(...frameNames.notes);
  const debugDirectories = [...(options.debugFileDirectory ? [options.debugFileDirectory] : []), ...(symbols?.debugDirectories ?? [])];
  const modulesPath = [...(options.modulesPath ?? []), ...(symbols?.modulesPath ?? [])];
  const start = (backend: Backend, binary: string) => openRestartingOnce(backend, dump.path, warnings, () => startSession(backend, {
    dump: dump.path,
    executable,
    binary,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.sysroot !== undefined ? { sysroot: options.sysroot } : {}),
    ...(options.solibSearchPath !== undefined ? { solibSearchPath: options.solibSearchPath } : {}),
    ...(debugDirectories.length ? { debugFileDirectory: debugDirectories.join(":") } : {}),
    ...(modulesPath.length ? { modulesPath } : {}),
    ...(options.symbolPath !== undefined ? { symbolPath: options.symbolPath } : {}),
    ...(symbols?.symbolFiles.length ? { symbolFiles: symbols.symbolFiles } : {}),
    ...(frameNames?.named.length ? { frameNames: frameNames.named } : {}),
    ...(dump.facts.format === "elf-core" && dump.facts.cut ? { unreadable: dump.facts.cut.unreadable } : {}),
    ...(options.keepDebugger ? { keep: true } : {}),
  }));
  let debuggerPath = choice.binary ?? binaryOf(choice.backend, binaries);
  const debuggerWarnings: string[] = [];
  let session: DebuggerSession;
  let crashedDebugger: string | null = null;
  try {
    session = await start(choice.backend, debuggerPath);
  } catch (error) {
    // A debugger that crashes on this dump every time: under auto, the next one that reads it is tried, and the report says why.
    const other = error instanceof CrashesOnDump && (options.debugger ?? "auto") === "auto" ? chooseBackend({ ...choiceInput, installed: (b) => b !== choice.backend && isInstalled(b, binaries), named: (b) => b !== choice.backend && isNamed(b, binaries) }) : null;
    if (!other || "error" in other || other.backend === choice.backend || other.backend === "cdb") throw error;
    const crashed = (error as CrashesOnDump).crash;
    if (gdbWithoutSym) warnings.pop();
    debuggerPath = other.binary ?? binaryOf(other.backend, binaries);
    try {
      session = await start(other.backend, debuggerPath);
    } catch (second) {
      if (second instanceof CrashesOnDump) throw new DebuggerError(`${crashed}; then ${second.crash}`);
      throw second;
    }
    warnings.push(`${crashed}: read with ${other.backend} instead`);
    crashedDebugger = `${crashed}: dumpdbg read it with ${other.backend} instead`;
  }
  const noise = BACKENDS[session.backend].noise;
  for (const warning of session.loadWarnings) {
    // Our own build-id check already said this, more precisely.
    if (mismatch && /may not match/.test(warning)) continue;
    if (noise?.test(warning)) continue;
    debuggerWarnings.push(warning.replace(/^warning:\s*/, ""));
  }
  return { session, dump, executable, warnings, debuggerWarnings, debuggerPath, unchanged, crashedDebugger, symbols, hsErr: options.hsErr ?? null, source, notes: noted };
}

/** The plain dump recognised; what it says of itself is said of the user's file. */
function inspectUnpacked(prepared: PreparedDump): DumpInfo {
  try {
    return inspectDump(prepared.path);
  } catch (error) {
    const { original, unpacked } = prepared.source;
    if (!(error instanceof DumpError) || !unpacked) throw error;
    throw new DumpError(error.message.replaceAll(prepared.path, `${original} (${unpacked.form === "apport" ? "its core" : `${unpacked.form}-decompressed`})`));
  }
}

/**
 * The session, open. A debugger that dies while it opens the dump (killed, or crashed on it) is
 * started once more, and the first death is a warning; one that dies again is named as crashing
 * on this dump, with both deaths and what it was doing.
 */
async function openRestartingOnce(backend: Backend, dumpPath: string, warnings: string[], start: () => Promise<DebuggerSession>): Promise<DebuggerSession> {
  let first: SessionDead | null = null;
  for (;;) {
    const session = await start();
    try {
      await session.open();
      if (first) warnings.push(`${first.message}; it was started again`);
      return session;
    } catch (error) {
      if (!(error instanceof SessionDead)) throw error;
      if (first) throw new CrashesOnDump(`${backend} died twice opening ${dumpPath} (${first.message}; then ${error.message}): it may crash on this dump every time`, otherBackend(backend));
      first = error;
    }
  }
}

/** A debugger that died twice opening the dump: `crash` says so, the message adds where else it is read. */
class CrashesOnDump extends DebuggerError {
  constructor(
    readonly crash: string,
    advice: string,
  ) {
    super(`${crash}${advice}`);
  }
}

/** Where another debugger reads the same dumps, for a user who chose this one. */
function otherBackend(backend: Backend): string {
  if (backend === "gdb") return "; --debugger lldb reads it too";
  if (backend === "lldb") return "; --debugger gdb reads a Linux core too";
  return "";
}

/** Whether the core's program was built by Go, and with DWARF; null for another program, or one that cannot be found (reported below). */
function goProgram(dump: DumpInfo, exe: string | undefined, folder: string): { dwarf: boolean } | null {
  try {
    const executable = resolveExecutable(dump, exe, folder);
    return executable !== null && isGoProgram(executable) ? { dwarf: hasDwarf(executable) } : null;
  } catch {
    return null;
  }
}

/**
 * Where each module's symbols are, when there is anywhere to look: a place the user named, or a
 * PDB beside a minidump or its program. Symbol finding is loaded only then.
 */
async function planSymbols(options: OpenDumpOptions, dump: DumpInfo, dumpPath: string, executable: string | null, sources: ReturnType<typeof symbolSources>): Promise<SymbolPlan | null> {
  const named = sources.sources.length > 0 || options.listSymbols === true;
  if (!named && dump.format !== "minidump") return null;
  const { hasPdbBeside, locateSymbols } = await import("./symbols/locate.js");
  if (!named && !hasPdbBeside(dump.facts.modules, dumpPath, executable)) return null;
  return locateSymbols({ modules: dump.facts.modules, dumpPath, executable, sources, offline: options.offline ?? false });
}

/** What a command tells the user once the dump is open: its warnings, where symbols came from, what the debugger warned about. */
export function openingLines(opened: OpenedDump): string[] {
  const debuggerLine = debuggerWarningsLine(opened.session.backend, opened.debuggerWarnings);
  return [...opened.notes, ...opened.warnings.map((w) => `warning: ${w}`), ...(opened.symbols?.summary ? [opened.symbols.summary] : []), ...(debuggerLine ? [`warning: ${debuggerLine}`] : [])];
}

/**
 * The debugger's load warnings in one line for a terminal (`gdb warned 3 times while loading the
 * dump: "…"`), or null when it warned about nothing: the lines themselves go to the report.
 */
export function debuggerWarningsLine(backend: Backend, warnings: string[]): string | null {
  if (warnings.length === 0) return null;
  const first = warnings[0] ?? "";
  const shown = first.length > 120 ? `${first.slice(0, 117)}...` : first;
  const times = warnings.length === 1 ? "once" : `${warnings.length} times`;
  return `${backend} warned ${times} while loading the dump ("${shown}")`;
}

/** How a report names the debugger that ran: its version line (or name) and the binary. */
export function describeDebugger(backend: Backend, path: string, version: string | null): string {
  return `${version ?? backend} (${path})`;
}
