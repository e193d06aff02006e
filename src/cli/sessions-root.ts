/**
 * Where sessions live: `--sessions-dir` (or the config files' `sessionsDir`, filled in before the
 * command runs), else $DUMPDBG_SESSIONS_DIR, else the project's `.sessions`, one already in the
 * working directory, or dumpdbg's home ($DUMPDBG_HOME, else the XDG state folder).
 */
import { resolve } from "node:path";
import { defaultSessionsDir } from "./config.js";

export function sessionsRoot(flag: string | undefined): string {
  if (flag !== undefined) return resolve(flag);
  if (process.env.DUMPDBG_SESSIONS_DIR) return resolve(process.env.DUMPDBG_SESSIONS_DIR);
  return defaultSessionsDir().dir;
}
