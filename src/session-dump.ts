/**
 * Reopening the dump of an earlier session (`resume`, `chat`): its path and executable come from
 * session.json unless the user names others now, and so does the debugger, unless the user or
 * `DUMPDBG_GDB` names another.
 */
import { openDump, type OpenDumpOptions, type OpenedDump } from "./debuggers/open.js";
import type { SessionMeta } from "./evidence/sessions.js";

export function reopenDump(meta: SessionMeta, options: Omit<OpenDumpOptions, "dump">): Promise<OpenedDump> {
  return openDump({
    ...options,
    dump: meta.dump,
    ...(options.exe === undefined && meta.executable !== null ? { exe: meta.executable } : {}),
    gdb: options.gdb ?? process.env.DUMPDBG_GDB ?? meta.debugger.path,
  });
}
