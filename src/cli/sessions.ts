/** `dumpdbg sessions list | show | rm | cleanup`: the sessions under one folder, never outside it. */
import { existsSync, readFileSync, statSync } from "node:fs";
import { cleanupSessions, listSessions, loadSession, removeSession, sessionPaths } from "../evidence/sessions.js";
import { EvidenceStore } from "../evidence/store.js";
import { ExitCode, ExitError } from "./exit.js";
import { sessionsRoot } from "./sessions-root.js";

export interface SessionsFlags {
  sessionsDir?: string;
  json?: boolean;
}

/** `--sessions-dir`, else `DUMPDBG_SESSIONS_DIR`, else `.sessions/` in the working directory. */

export function list(flags: SessionsFlags): void {
  const sessions = listSessions(sessionsRoot(flags.sessionsDir));
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(sessions, null, 2)}\n`);
    return;
  }
  if (sessions.length === 0) {
    process.stdout.write(`no sessions in ${sessionsRoot(flags.sessionsDir)}\n`);
    return;
  }
  for (const s of sessions) {
    process.stdout.write(`${s.id}  ${s.state.padEnd(11)}  ${s.dump}${s.issue ? `  "${truncate(s.issue, 60)}"` : ""}\n`);
  }
}

export function show(id: string, flags: SessionsFlags): void {
  const root = sessionsRoot(flags.sessionsDir);
  const meta = loadSession(root, id);
  const paths = sessionPaths(root, id);
  const evidence = existsSync(paths.evidenceDb) ? countEvidence(paths.evidenceDb) : 0;
  const transcriptLines = existsSync(paths.transcript) ? readFileSync(paths.transcript, "utf8").split("\n").filter(Boolean).length : 0;
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ ...meta, dir: paths.dir, evidence, transcriptEvents: transcriptLines }, null, 2)}\n`);
    return;
  }
  const rows: Array<[string, string]> = [
    ["session", meta.id],
    ["folder", paths.dir],
    ["state", meta.state],
    ["dump", meta.dump],
    ["executable", meta.executable ?? "-"],
    ["debugger", `${meta.debugger.backend} ${meta.debugger.version ?? ""} (${meta.debugger.path})`.trim()],
    ["issue", meta.issue ?? "-"],
    ["created", meta.createdAt],
    ["updated", meta.updatedAt],
    ["finished", meta.finishedAt ?? "-"],
    ["evidence", String(evidence)],
    ["transcript", `${transcriptLines} events`],
  ];
  for (const [key, value] of rows) process.stdout.write(`${key.padEnd(11)} ${value}\n`);
}

export function rm(ids: string[], flags: SessionsFlags): void {
  const root = sessionsRoot(flags.sessionsDir);
  for (const id of ids) {
    removeSession(root, id);
    process.stdout.write(`removed ${id}\n`);
  }
}

export function cleanup(flags: SessionsFlags & { days?: string; keep?: string }): void {
  const days = flags.days === undefined ? undefined : Number(flags.days);
  const keep = flags.keep === undefined ? undefined : Number(flags.keep);
  if (days === undefined && keep === undefined) throw new ExitError(ExitCode.usage, "cleanup needs --days N, --keep K, or both");
  if (days !== undefined && !(Number.isFinite(days) && days >= 0)) throw new ExitError(ExitCode.usage, `--days must be a number of at least 0, got "${flags.days}"`);
  if (keep !== undefined && !(Number.isInteger(keep) && keep >= 0)) throw new ExitError(ExitCode.usage, `--keep must be a whole number of at least 0, got "${flags.keep}"`);
  const root = sessionsRoot(flags.sessionsDir);
  const { removed, busy } = cleanupSessions(root, { ...(days !== undefined ? { days } : {}), ...(keep !== undefined ? { keep } : {}) });
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ removed: removed.map((s) => s.id), busy: busy.map((s) => s.id) }, null, 2)}\n`);
    return;
  }
  for (const s of removed) process.stdout.write(`removed ${s.id}\n`);
  for (const s of busy) process.stdout.write(`kept ${s.id} (in use)\n`);
  process.stdout.write(`${removed.length} removed, ${listSessions(root).length} left in ${root}\n`);
}

function countEvidence(db: string): number {
  if (statSync(db).size === 0) return 0;
  const store = EvidenceStore.open(db);
  try {
    return store.list().length;
  } finally {
    store.close();
  }
}

function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ");
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}


