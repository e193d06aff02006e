/** The flags shared by every command that opens a dump, as openDump wants them. */
import type { DebuggerChoice } from "../debuggers/backends.js";
import { delimiter } from "node:path";
import type { OpenDumpOptions } from "../debuggers/open.js";

export interface DumpFlags {
  exe?: string;
  sysroot?: string;
  solibSearchPath?: string;
  debugFileDirectory?: string;
  /** Folders holding the dump's modules (a minidump's DLLs, a core's shared libraries). */
  modulesPath?: string[];
  /** Where debug information is kept: Breakpad stores, build-id trees, folders of debug files. */
  symbols?: string[];
  /** cdb's symbol path; may name a symbol server (`srv*C:\\symbols*https://...`). */
  symbolPath?: string;
  debugger?: DebuggerChoice;
  gdb?: string;
  lldb?: string;
  cdb?: string;
  /** Seconds. */
  timeout: number;
}

export function openOptions(dump: string, flags: DumpFlags): OpenDumpOptions {
  const options: OpenDumpOptions = { dump, timeoutMs: Math.round(flags.timeout * 1000) };
  if (flags.exe !== undefined) options.exe = flags.exe;
  if (flags.sysroot !== undefined) options.sysroot = flags.sysroot;
  if (flags.solibSearchPath !== undefined) options.solibSearchPath = flags.solibSearchPath;
  if (flags.debugFileDirectory !== undefined) options.debugFileDirectory = flags.debugFileDirectory;
  if (flags.modulesPath?.length) options.modulesPath = flags.modulesPath;
  const symbols = [...(flags.symbols ?? []), ...(process.env.DUMPDBG_SYMBOLS ?? "").split(delimiter).filter(Boolean)];
  if (symbols.length) options.symbols = symbols;
  if (flags.symbolPath !== undefined) options.symbolPath = flags.symbolPath;
  if (flags.debugger !== undefined) options.debugger = flags.debugger;
  const binaries = { ...(flags.gdb !== undefined ? { gdb: flags.gdb } : {}), ...(flags.lldb !== undefined ? { lldb: flags.lldb } : {}), ...(flags.cdb !== undefined ? { cdb: flags.cdb } : {}) };
  if (Object.keys(binaries).length > 0) options.binaries = binaries;
  return options;
}
