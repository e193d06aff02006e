/** Where sessions live: `--sessions-dir`, else $DUMPDBG_SESSIONS_DIR, else `.sessions` here. */
import { resolve } from "node:path";

export function sessionsRoot(flag: string | undefined): string {
  return resolve(flag ?? process.env.DUMPDBG_SESSIONS_DIR ?? ".sessions");
}
