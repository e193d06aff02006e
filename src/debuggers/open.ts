/**
 * From a dump path to a live debugger session: recognise the dump, find and check its executable,
 * choose the backend, load it. Everything that can be wrong with the input is reported here,
 * before any analysis starts.
 */
import { DebuggerError } from "./errors.js";
import { buildIdMismatch, DumpError, inspectDump, resolveExecutable, type DumpInfo } from "./dump.js";
import { GdbSession } from "./gdb/gdb-session.js";
import type { DebuggerSession } from "./session.js";

export interface OpenDumpOptions {
  dump: string;
  exe?: string;
  gdb?: string;
  timeoutMs?: number;
  sysroot?: string;
  solibSearchPath?: string;
  debugFileDirectory?: string;
  /**
   * An executable whose build-id differs from the core's gives wrong symbols and lines. `exec` only
   * warns (a script may know what it does); an analysis refuses, rather than explain the wrong code.
   */
  onMismatch?: "warn" | "refuse";
}

export interface OpenedDump {
  session: DebuggerSession;
  dump: DumpInfo;
  executable: string | null;
  /** One-line warnings for the user (a mismatched executable, gdb's own load warnings). */
  warnings: string[];
  /** The debugger binary in use. */
  debuggerPath: string;
}

export async function openDump(options: OpenDumpOptions): Promise<OpenedDump> {
  const dump = inspectDump(options.dump);
  if (dump.format === "minidump") {
    throw new DebuggerError(`${options.dump} is a Windows minidump; reading minidumps needs the LLDB or CDB backend, which this version does not have yet`);
  }
  const executable = resolveExecutable(dump, options.exe);
  const warnings: string[] = [];
  const mismatch = executable ? buildIdMismatch(dump, executable) : null;
  if (mismatch && (options.onMismatch ?? "refuse") === "refuse") {
    const named = dump.executableFromNotes ? ` (the core names ${dump.executableFromNotes})` : "";
    throw new DumpError(`${mismatch.replace(/; symbols.*$/, "")}; pass the executable that produced the core${named}`);
  }
  if (mismatch) warnings.push(mismatch);

  const debuggerPath = options.gdb ?? process.env.DUMPDBG_GDB ?? "gdb";
  const session = new GdbSession({
    dump: dump.path,
    executable,
    gdbPath: debuggerPath,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.sysroot !== undefined ? { sysroot: options.sysroot } : {}),
    ...(options.solibSearchPath !== undefined ? { solibSearchPath: options.solibSearchPath } : {}),
    ...(options.debugFileDirectory !== undefined ? { debugFileDirectory: options.debugFileDirectory } : {}),
  });
  await session.open();
  for (const warning of session.loadWarnings) {
    // Our own build-id check already said this, more precisely.
    if (mismatch && /may not match/.test(warning)) continue;
    if (/reg-xstate.*too small/.test(warning)) continue;
    warnings.push(warning.replace(/^warning:\s*/, ""));
  }
  return { session, dump, executable, warnings, debuggerPath };
}
