/** `dumpdbg sessions list | show | rm | cleanup`: the sessions under one folder, never outside it. */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { cleanupSessions, currentState, listDamagedSessions, listSessions, loadSession, removeSession, resolveSessionId, SessionDamaged, sessionPaths, type SessionMeta } from "../evidence/sessions.js";
import { evidenceCutShort, evidenceDamage, EvidenceStore } from "../evidence/store.js";
import { REPORT_DOCUMENT, removeReports } from "../report/index.js";
import { ExitCode, ExitError } from "./exit.js";
import { sessionsRoot } from "./sessions-root.js";

export interface SessionsFlags {
  sessionsDir?: string;
  json?: boolean;
}

/** Whole sessions and damaged ones (state `damaged`, with what is wrong), oldest first. */
export function list(flags: SessionsFlags): void {
  const root = sessionsRoot(flags.sessionsDir);
  const whole = listSessions(root).map((meta) => {
    const damage = evidenceCutShort(sessionPaths(root, meta.id).evidenceDb);
    return damage ? { ...meta, state: "damaged" as const, damage: `evidence.db ${damage}` } : { ...meta, state: currentState(root, meta), verdict: verdictOf(root, meta) };
  });
  const damaged = listDamagedSessions(root).map(({ id, damage, updatedAt }) => ({ id, state: "damaged" as const, damage, updatedAt }));
  const sessions = [...whole, ...damaged].sort((a, b) => a.id.localeCompare(b.id));
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(sessions, null, 2)}\n`);
    return;
  }
  if (sessions.length === 0) {
    process.stdout.write(`no sessions in ${root}\n`);
    return;
  }
  const rows = [
    ["SESSION", "STATE", "VERDICT", "UPDATED", "DUMP"],
    ...sessions.map((s) => [s.id, s.state, "damage" in s ? s.damage : (s.verdict ?? "-"), s.updatedAt.slice(0, 16).replace("T", " "), "dump" in s ? s.dump : "-"]),
  ];
  process.stdout.write(table(rows));
}

/** Columns padded to their widest cell; the last column is not padded. */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join("  ")).join("\n") + "\n";
}

/** "null-dereference in send_to_client", from the session's saved report, when it has one. */
function verdictOf(root: string, meta: SessionMeta): string | null {
  try {
    const document = JSON.parse(readFileSync(join(sessionPaths(root, meta.id).dir, REPORT_DOCUMENT), "utf8")) as { report?: { crash?: { kind?: string; culprit?: { function?: string | null } } } };
    const crash = document.report?.crash;
    if (!crash?.kind) return null;
    return truncate(`${crash.kind}${crash.culprit?.function ? ` in ${crash.culprit.function}` : ""}`, 60);
  } catch {
    return null;
  }
}

export function show(given: string, flags: SessionsFlags): void {
  const root = sessionsRoot(flags.sessionsDir);
  const id = resolveSessionId(root, given);
  const meta = loadSession(root, id);
  const paths = sessionPaths(root, id);
  const damage = evidenceDamage(paths.evidenceDb);
  const evidence = damage ? `evidence.db ${damage}` : existsSync(paths.evidenceDb) ? countEvidence(paths.evidenceDb) : 0;
  const transcriptLines = existsSync(paths.transcript) ? readFileSync(paths.transcript, "utf8").split("\n").filter(Boolean).length : 0;
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ ...meta, dir: paths.dir, evidence, transcriptEvents: transcriptLines }, null, 2)}\n`);
    return;
  }
  const rows: Array<[string, string]> = [
    ["session", meta.id],
    ["folder", paths.dir],
    ["state", currentState(root, meta)],
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

export async function rm(ids: string[], flags: SessionsFlags): Promise<void> {
  const root = sessionsRoot(flags.sessionsDir);
  for (const given of ids) {
    const id = resolveSessionId(root, given);
    // A damaged session.json names no reports to remove with it; the session itself goes.
    const meta = loadOrDamaged(root, id);
    removeSession(root, id);
    const reports = removeReports(meta?.reports ?? []);
    process.stdout.write(`removed ${id}${reports.length ? ` and its ${reports.length} report ${reports.length === 1 ? "file" : "files"}` : ""}\n`);
  }
}

export async function cleanup(flags: SessionsFlags & { days?: number; keep?: number }): Promise<void> {
  const { days, keep } = flags;
  if (days === undefined && keep === undefined) throw new ExitError(ExitCode.usage, "cleanup needs --days N, --keep K, or both");
  const root = sessionsRoot(flags.sessionsDir);
  const { removed, busy } = cleanupSessions(root, { ...(days !== undefined ? { days } : {}), ...(keep !== undefined ? { keep } : {}) });
  const reports = removeReports(removed.flatMap((s) => s.reports ?? []));
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ removed: removed.map((s) => s.id), busy: busy.map((s) => s.id), reports }, null, 2)}\n`);
    return;
  }
  for (const s of removed) process.stdout.write(`removed ${s.id}\n`);
  if (reports.length > 0) process.stdout.write(`removed ${reports.length} report ${reports.length === 1 ? "file" : "files"} of those sessions\n`);
  for (const s of busy) process.stdout.write(`kept ${s.id} (in use)\n`);
  process.stdout.write(`${removed.length} removed, ${listSessions(root).length + listDamagedSessions(root).length} left in ${root}\n`);
}

function loadOrDamaged(root: string, id: string): SessionMeta | null {
  try {
    return loadSession(root, id);
  } catch (error) {
    if (error instanceof SessionDamaged) return null;
    throw error;
  }
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


