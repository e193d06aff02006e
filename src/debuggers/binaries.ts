/**
 * Which program runs each debugger: the one its flag names (`--gdb PATH`), else its environment
 * variable (`DUMPDBG_GDB`), else its usual name; LLDB through its DAP server. Apart from backends.ts
 * so that the early start (cli/early-debugger.ts) names the same binary without loading anything of
 * the sessions.
 */
import { resolveAdapter } from "./lldb/adapter.js";
import type { Backend } from "./session.js";

export interface BackendBinary {
  /** The binary run when neither its flag nor its environment variable names one. */
  defaultBinary: string;
  /** The environment variable that names the binary (`DUMPDBG_GDB`). */
  environment: string;
  /** The program to run for the binary a flag or the environment named (undefined: none named). */
  resolve?: (named: string | undefined) => string;
}

export const BINARIES: Record<Backend, BackendBinary> = {
  gdb: { defaultBinary: "gdb", environment: "DUMPDBG_GDB" },
  // LLDB is driven through its DAP server, found on PATH or beside the lldb that --lldb names.
  lldb: { defaultBinary: "lldb", environment: "DUMPDBG_LLDB", resolve: (named) => resolveAdapter(named) },
  cdb: { defaultBinary: "cdb", environment: "DUMPDBG_CDB" },
  dlv: { defaultBinary: "dlv", environment: "DUMPDBG_DLV" },
};

/**
 * The binary of a backend: its flag, else its environment variable, else its usual name; for LLDB
 * the DAP server that goes with it. Throws DebuggerMissing when a named lldb has no such server.
 */
export function binaryOf(backend: Backend, flags: Partial<Record<Backend, string>>, env: NodeJS.ProcessEnv = process.env): string {
  const definition = BINARIES[backend];
  const named = namedBinary(backend, flags, env);
  return definition.resolve ? definition.resolve(named) : (named ?? definition.defaultBinary);
}

/** Whether the user named a backend's binary, by its flag or its environment variable. */
export function isNamed(backend: Backend, flags: Partial<Record<Backend, string>>, env: NodeJS.ProcessEnv = process.env): boolean {
  return namedBinary(backend, flags, env) !== undefined;
}

/** The binary the user named for a backend (its flag, else its environment variable); undefined when none. */
export function namedBinary(backend: Backend, flags: Partial<Record<Backend, string>>, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return flags[backend] || env[BINARIES[backend].environment] || undefined;
}
