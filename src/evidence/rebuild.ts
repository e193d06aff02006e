/**
 * A session's evidence store that SQLite cannot read whole (a copy cut short, a full disk, a file
 * overwritten), rebuilt in its place so that `chat` and `resume` go on. The damaged file is kept
 * beside it, renamed; the new store holds, under the ids they had (the report cites them), every
 * piece of evidence that can still be had: the rows SQLite still reads from the damaged file, then,
 * for each command the transcript names, what it says of a failure (no output to lose) or the output
 * kept in `evidence/E<n>.txt`. The transcript keeps no output of its own, so an output that was in
 * a lost row is not had: the command runs again when a question needs it. The graph's checkpoints
 * are not rebuilt (a resumed analysis starts again from triage, its commands served from the store).
 */
import { copyFileSync, existsSync, readFileSync, renameSync, rmSync, statSync, truncateSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import Database from "better-sqlite3";
import type { Backend, CommandErrorType } from "../debuggers/session.js";
import { writing } from "../storage-errors.js";
import { SESSIONS_ELSEWHERE } from "./sessions.js";
import { EvidenceStore, type EvidenceColumns, type EvidenceInput, type EvidenceSource } from "./store.js";

export interface RebuiltEvidence {
  /** Pieces of evidence in the new store. */
  kept: number;
  /** Pieces of evidence the session had, as far as the damaged file and the transcript tell. */
  of: number;
  /** Where the damaged file now is. */
  damagedCopy: string;
}

/** Rebuilds `dir`'s evidence.db (the session's lock held); `backend` is the session's debugger, which the transcript does not repeat. */
export function rebuildEvidence(dir: string, backend: Backend): RebuiltEvidence {
  const db = join(dir, "evidence.db");
  const damagedCopy = `${db}.damaged-${new Date().toISOString().replace(/[-:.]/g, "")}`;
  // The write-ahead log goes with its database: SQLite pairs them by name.
  for (const suffix of ["", "-wal", "-shm"]) {
    if (existsSync(`${db}${suffix}`)) writing(db, () => renameSync(`${db}${suffix}`, `${damagedCopy}${suffix}`), { elsewhere: SESSIONS_ELSEWHERE });
  }
  const found = new Map<string, EvidenceInput>();
  for (const input of readableRows(damagedCopy, dir)) found.set(input.id!, input);
  const named = transcriptCommands(join(dir, "transcript.jsonl"));
  for (const [id, command] of named) {
    if (found.has(id)) continue;
    const input = fromTranscript(id, command, dir, backend);
    if (input) found.set(id, input);
  }
  const store = EvidenceStore.open(db);
  try {
    const ordered = [...found.values()].sort((a, b) => seq(a.id!) - seq(b.id!));
    for (const input of ordered) store.add(input);
  } finally {
    store.close();
  }
  const known = new Set([...found.keys(), ...named.keys()]);
  return { kept: found.size, of: known.size, damagedCopy };
}

/** What was damaged, what the rebuilt store holds and what happens now (`then`), in one line. */
export function rebuiltLine(id: string, damage: string, rebuilt: RebuiltEvidence, then: string): string {
  return `session ${id}'s evidence.db ${damage}: rebuilt with ${rebuilt.kept} of its ${rebuilt.of} pieces of evidence, from what SQLite still read, the transcript and the outputs kept in files; ${then}; the damaged file is kept as ${basename(rebuilt.damagedCopy)}`;
}

interface NamedCommand {
  command: string;
  source: EvidenceSource;
  ok: boolean;
  errorType: CommandErrorType | null;
  error: string | null;
  ms: number;
}

/** The commands the transcript names by evidence id, as each was first run (a cached answer is the same evidence). */
function transcriptCommands(path: string): Map<string, NamedCommand> {
  const named = new Map<string, NamedCommand>();
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return named;
  }
  for (const line of text.split("\n")) {
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(line) as Record<string, unknown>;
    } catch {
      // A line cut short by the same fault that damaged the store.
      continue;
    }
    if (event.type !== "command" || event.cached === true || typeof event.evidenceId !== "string" || typeof event.command !== "string") continue;
    if (named.has(event.evidenceId)) continue;
    named.set(event.evidenceId, {
      command: event.command,
      source: (typeof event.source === "string" ? event.source : "agent") as EvidenceSource,
      ok: event.ok !== false,
      errorType: typeof event.errorType === "string" ? (event.errorType as CommandErrorType) : null,
      error: typeof event.error === "string" ? event.error : null,
      ms: typeof event.ms === "number" ? event.ms : 0,
    });
  }
  return named;
}

/** A failure as the transcript says it, or an output kept in its own file; null when the output was only in a lost row. */
function fromTranscript(id: string, named: NamedCommand, dir: string, backend: Backend): EvidenceInput | null {
  const base = { id, command: named.command, backend, context: { thread: null, frame: null }, findings: [], ms: named.ms, source: named.source };
  if (!named.ok) return { ...base, output: "", ok: false, errorType: named.errorType, summary: `${named.errorType ?? "debugger_error"}: ${named.error ?? "failed"}` };
  const file = join(dir, "evidence", `${id}.txt`);
  if (!existsSync(file)) return null;
  const output = readFileSync(file, "utf8");
  return { ...base, output, ok: true, summary: output.split("\n").find((l) => l.trim() !== "")?.trim() ?? "(no output)" };
}

interface EvidenceRow extends EvidenceColumns {
  output: string | null;
}

/**
 * The rows SQLite still reads from the damaged file, in order, until the first it cannot; none when
 * it cannot open it. A file cut short is read from a copy zero-filled to the size its header says:
 * SQLite refuses a schema whose tables start past the end of the file, but reads the pages before
 * the cut.
 */
function readableRows(path: string, dir: string): EvidenceInput[] {
  const padded = paddedCopy(path);
  try {
    return rowsOf(padded ?? path, dir);
  } finally {
    if (padded) rmSync(padded, { force: true });
  }
}

/** A copy of a file cut short, zero-filled to its header's page count; null when it is not shorter than that (or not SQLite's). */
function paddedCopy(path: string): string | null {
  let header: Buffer;
  try {
    header = readFileSync(path).subarray(0, 100);
  } catch {
    return null;
  }
  if (header.length < 100 || header.toString("latin1", 0, 16) !== "SQLite format 3\0") return null;
  const pageSize = header.readUInt16BE(16) === 1 ? 65536 : header.readUInt16BE(16);
  const declared = pageSize * header.readUInt32BE(28);
  if (declared <= statSync(path).size) return null;
  const copy = `${path}.padded`;
  writing(copy, () => {
    copyFileSync(path, copy);
    truncateSync(copy, declared);
  }, { elsewhere: SESSIONS_ELSEWHERE });
  return copy;
}

function rowsOf(path: string, dir: string): EvidenceInput[] {
  const rows: EvidenceInput[] = [];
  let db: Database.Database | null = null;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const select = db.prepare<[], EvidenceRow>("SELECT seq, command, backend, thread, frame, ok, error_type, summary, findings, output, path, ms, source FROM evidence ORDER BY seq");
    for (const row of select.iterate()) {
      const output = row.path === null ? row.output : readKept(resolve(dir, row.path));
      if (output === null) continue;
      rows.push({
        id: `E${row.seq}`,
        command: row.command,
        backend: row.backend,
        context: { thread: row.thread, frame: row.frame },
        output,
        ok: row.ok === 1,
        errorType: row.error_type,
        summary: row.summary,
        findings: parsedFindings(row.findings),
        ms: row.ms,
        source: row.source,
      });
    }
  } catch {
    // SQLite stops at the damage: what it read before is kept.
  } finally {
    db?.close();
  }
  return rows;
}

function readKept(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

function parsedFindings(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return [];
  }
}

function seq(id: string): number {
  return Number(id.slice(1));
}
