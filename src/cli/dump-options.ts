/** The flags shared by every command that opens a dump, as openDump wants them. */
import type { Command } from "commander";
import type { DebuggerChoice } from "../debuggers/backends.js";
import { delimiter } from "node:path";
import { numberFlag } from "./numbers.js";
import type { OpenDumpOptions } from "../debuggers/open.js";

export interface DumpFlags {
  exe?: string;
  sysroot?: string;
  solibSearchPath?: string;
  debugFileDirectory?: string;
  /** Folders holding the dump's modules (a minidump's DLLs, a core's shared libraries). */
  modulesPath?: string[];
  /** Where debug information is kept: stores, build-id trees, folders of debug files, symbol servers. */
  symbols?: string[];
  /** The config file's symbol places, `;`-separated, after the command line's. */
  symbolsConfig?: string;
  symbolsCache?: string;
  offline?: boolean;
  /** cdb's symbol path; may name a symbol server (`srv*C:\\symbols*https://...`). */
  symbolPath?: string;
  debugger?: DebuggerChoice;
  gdb?: string;
  lldb?: string;
  cdb?: string;
  dlv?: string;
  /** Seconds. */
  timeout: number;
  /** A JVM's fatal error log, `hs_err_pid<pid>.log`, where it is not beside the dump. */
  hsErr?: string;
}

/**
 * DUMPDBG_SYMBOLS: places separated by `;` or the path delimiter; a URL's own colons (its scheme's,
 * its port's) do not separate it.
 */
export function placesIn(value: string): string[] {
  const place = delimiter === ":" ? /https?:\/\/[^:;/\s]+(?::\d+)?[^:;\s]*|[^:;]+/gi : /[^;]+/g;
  return [...value.matchAll(place)].map((m) => m[0].trim()).filter(Boolean);
}

export function openOptions(dump: string, flags: DumpFlags): OpenDumpOptions {
  const options: OpenDumpOptions = { dump, timeoutMs: Math.round(flags.timeout * 1000) };
  if (flags.exe !== undefined) options.exe = flags.exe;
  if (flags.hsErr !== undefined) options.hsErr = flags.hsErr;
  if (flags.sysroot !== undefined) options.sysroot = flags.sysroot;
  if (flags.solibSearchPath !== undefined) options.solibSearchPath = flags.solibSearchPath;
  if (flags.debugFileDirectory !== undefined) options.debugFileDirectory = flags.debugFileDirectory;
  if (flags.modulesPath?.length) options.modulesPath = flags.modulesPath;
  const symbols = [...(flags.symbols ?? []), ...placesIn(process.env.DUMPDBG_SYMBOLS ?? ""), ...(flags.symbolsConfig ?? "").split(";").filter(Boolean)];
  if (symbols.length) options.symbols = symbols;
  if (flags.symbolsCache !== undefined) options.symbolsCache = flags.symbolsCache;
  if (flags.offline) options.offline = true;
  if (flags.symbolPath !== undefined) options.symbolPath = flags.symbolPath;
  if (flags.debugger !== undefined) options.debugger = flags.debugger;
  const binaries = { ...(flags.gdb !== undefined ? { gdb: flags.gdb } : {}), ...(flags.lldb !== undefined ? { lldb: flags.lldb } : {}), ...(flags.cdb !== undefined ? { cdb: flags.cdb } : {}), ...(flags.dlv !== undefined ? { dlv: flags.dlv } : {}) };
  if (Object.keys(binaries).length > 0) options.binaries = binaries;
  return options;
}

/** `--pid` and `--keep-dump`: a live process dumped for `triage` and `analyze` (cli/live-dump.ts). */
export interface LiveFlags {
  pid?: number;
  keepDump?: string;
}

/** Linux's largest pid (PID_MAX_LIMIT). */
const PID_MAX = 4_194_304;

/** Declares `--pid` and `--keep-dump` on a command that reads one dump. */
export function liveOptions(command: Command): Command {
  return command
    .option("--pid <pid>", "dump this live process with gcore and read that (it goes on running; the dump is removed after unless --keep-dump)", numberFlag("--pid", { whole: true, min: 1, max: PID_MAX }))
    .option("--keep-dump <path>", "with --pid: keep the process's dump at this new path (never overwritten)");
}
