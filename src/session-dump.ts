/**
 * Reopening the dump of an earlier session (`resume`, `chat`): its path and executable come from
 * session.json unless the user names others now, and so does the debugger: the backend the
 * session ran with and its binary, unless the user (a flag, or `DUMPDBG_GDB` and the like) names
 * another.
 */
import { BACKENDS } from "./debuggers/backends.js";
import { checkSessionDump } from "./debuggers/dump-identity.js";
import { openDump, type OpenDumpOptions, type OpenedDump } from "./debuggers/open.js";
import type { SessionMeta } from "./evidence/sessions.js";

export async function reopenDump(meta: SessionMeta, options: Omit<OpenDumpOptions, "dump">): Promise<OpenedDump> {
  checkSessionDump(meta.dump, meta.id, meta.dumpFile);
  const backend = options.debugger === undefined || options.debugger === "auto" ? meta.debugger.backend : options.debugger;
  const named = options.binaries?.[backend] ?? process.env[BACKENDS[backend].environment];
  return openDump({
    ...options,
    dump: meta.dump,
    ...(options.exe === undefined && meta.executable !== null ? { exe: meta.executable } : {}),
    debugger: backend,
    binaries: { ...options.binaries, [backend]: named ?? (backend === meta.debugger.backend ? meta.debugger.path : BACKENDS[backend].defaultBinary) },
  });
}
