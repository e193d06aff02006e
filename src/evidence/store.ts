/**
 * The evidence store: every debugger command output of a session, in SQLite (WAL) with a full-text
 * index, and big outputs in files beside the database. Evidence is append-only: an analysis cites
 * evidence ids, so a row never changes once written (only the analyses of its chunks are filled in).
 */

import Database from "better-sqlite3";
import { closeSync, existsSync, fstatSync, fsyncSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import type { Backend, CommandErrorType } from "../debuggers/session.js";
import { asStorageError, writing } from "../storage-errors.js";
import { SESSIONS_ELSEWHERE } from "./sessions.js";
import { headAndTail, MIN_CHUNK_BYTES, splitAtLines } from "./chunking.js";

/** The debugger thread (its number, not the LWP) and frame a command ran in; null when unknown. */
export interface EvidenceContext {
  thread: number | null;
  frame: number | null;
}

export type EvidenceSource = "agent" | "chat" | "exec" | "triage" | "user";

export interface EvidenceInput {
  command: string;
  backend: Backend;
  context: EvidenceContext;
  output: string;
  ok: boolean;
  errorType?: CommandErrorType | null;
  summary: string;
  /** Key findings of the analyzers, stored as JSON. */
  findings: unknown;
  ms: number;
  source: EvidenceSource;
  /** A damaged store rebuilt (evidence/rebuild.ts): the id the evidence had, which the report cites. */
  id?: string;
}

export interface EvidenceRecord {
  /** "E1", "E2", ...: short and stable, for reports and models to cite. */
  id: string;
  command: string;
  backend: Backend;
  context: EvidenceContext;
  ok: boolean;
  errorType: CommandErrorType | null;
  summary: string;
  findings: unknown;
  /** Size of the output in UTF-8 bytes. */
  bytes: number;
  lines: number;
  /** Absolute path of the file holding the output when it was over the inline limit, else null. */
  path: string | null;
  /** The first lines of the output (the whole output when it is short; see headAndTail). */
  head: string;
  /** The last lines of the output; empty when `head` holds all of it. */
  tail: string;
  createdAt: string;
  ms: number;
  source: EvidenceSource;
}

/** A piece of one output, cut at line boundaries, with what an agent concluded from it. */
export interface Chunk {
  evidenceId: string;
  n: number;
  startByte: number;
  endByte: number;
  startLine: number;
  endLine: number;
  /** Set by setChunkAnalysis; null until then. */
  analysis: unknown;
}

export interface SearchHit {
  evidenceId: string;
  /** The chunk of the output that matched. */
  chunk: number;
  /** The line of the output the snippet comes from; null when the match is not in the output text. */
  line: number | null;
  command: string;
  summary: string;
  /** The matching line of the output, or the summary when the command, summary or findings matched. */
  snippet: string;
  /** Relevance (negated bm25): higher is better. */
  score: number;
}

export interface EvidenceStoreOptions {
  /** Outputs larger than this many bytes go to a file; default 64 KiB. */
  inlineLimit?: number;
  /** Largest chunk in bytes; default 16 KiB, a comfortable piece for a model to analyse. */
  chunkSize?: number;
  /** Where big outputs go; default `evidence/` beside the database. */
  evidenceDir?: string;
}

/** Asked for an evidence id that the store does not hold (a model may cite one that never existed). */
export class EvidenceNotFound extends Error {
  constructor(readonly id: string) {
    super(`no evidence ${id} in this session; list the evidence to see which ids exist`);
    this.name = "EvidenceNotFound";
  }
}

const PREVIEW_CHARS = 2000;
const SNIPPET_CHARS = 200;
/** Caps the OR-query built from user text, so a pasted page cannot make a pathological query. */
const MAX_SEARCH_TERMS = 32;
/** Failures that say nothing about the target, so running the command again may well succeed. */
const NOT_CACHEABLE: CommandErrorType[] = ["timeout", "session_dead", "not_allowed"];

// Table names carry an `evidence` prefix: LangGraph's checkpointer keeps `checkpoints` and
// `writes` in the same file. The full-text index is contentless (content='') so a big output is
// stored once, in its file, not again inside the database; its rows are chunks, so a hit points
// at the lines that matched, and the first chunk of each output also carries the command, summary
// and findings.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS evidence (
  seq INTEGER PRIMARY KEY,
  command TEXT NOT NULL,
  command_key TEXT NOT NULL,
  backend TEXT NOT NULL,
  thread INTEGER,
  frame INTEGER,
  ok INTEGER NOT NULL,
  error_type TEXT,
  summary TEXT NOT NULL,
  findings TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  lines INTEGER NOT NULL,
  output TEXT,
  path TEXT,
  head TEXT NOT NULL,
  tail TEXT NOT NULL,
  ms REAL NOT NULL,
  source TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS evidence_by_command ON evidence (command_key, backend);
CREATE TABLE IF NOT EXISTS evidence_chunks (
  id INTEGER PRIMARY KEY,
  evidence_seq INTEGER NOT NULL REFERENCES evidence (seq),
  n INTEGER NOT NULL,
  start_byte INTEGER NOT NULL,
  end_byte INTEGER NOT NULL,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  analysis TEXT,
  UNIQUE (evidence_seq, n)
);
CREATE VIRTUAL TABLE IF NOT EXISTS evidence_fts USING fts5 (command, summary, findings, output, content = '');
`;

/** The columns of an evidence row every reader of the table selects. */
export interface EvidenceColumns {
  seq: number;
  command: string;
  backend: Backend;
  thread: number | null;
  frame: number | null;
  ok: number;
  error_type: CommandErrorType | null;
  summary: string;
  findings: string;
  path: string | null;
  ms: number;
  source: EvidenceSource;
}

interface EvidenceRow extends EvidenceColumns {
  bytes: number;
  lines: number;
  head: string;
  tail: string;
  created_at: string;
}

interface ChunkRow {
  n: number;
  start_byte: number;
  end_byte: number;
  start_line: number;
  end_line: number;
  analysis: string | null;
}

interface OutputRow {
  output: string | null;
  path: string | null;
}

interface HitRow extends EvidenceRow {
  rank: number;
  n: number;
  start_byte: number;
  end_byte: number;
  start_line: number;
}

const RECORD_COLUMNS = `e.seq, e.command, e.backend, e.thread, e.frame, e.ok, e.error_type, e.summary, e.findings,
  e.bytes, e.lines, e.path, e.head, e.tail, e.ms, e.source, e.created_at`;
const CHUNK_COLUMNS = "n, start_byte, end_byte, start_line, end_line, analysis";

type Statement<Params extends unknown[], Result = unknown> = Database.Statement<Params, Result>;

export class EvidenceStore {
  private readonly selectOne: Statement<[number], EvidenceRow>;
  private readonly selectAll: Statement<[], EvidenceRow>;
  private readonly selectCached: Statement<
    [string, Backend, number | null, number | null, ...CommandErrorType[]],
    EvidenceRow
  >;
  private readonly selectOutput: Statement<[number], OutputRow>;
  private readonly selectChunks: Statement<[number], ChunkRow>;
  private readonly selectChunk: Statement<[number, number], ChunkRow>;
  private readonly updateAnalysis: Statement<[string, number, number]>;
  private readonly selectHits: Statement<[string, number], HitRow>;
  private readonly insert: Database.Transaction<(input: EvidenceInput) => number>;

  private constructor(
    private readonly db: Database.Database,
    /** Named in the error a full disk or a read-only folder gives. */
    private readonly dbPath: string,
    /** Output files are named relative to it, so a session folder can be moved whole. */
    private readonly dbDir: string,
    private readonly inlineLimit: number,
    private readonly chunkSize: number,
    private readonly evidenceDir: string,
  ) {
    this.selectOne = db.prepare(`SELECT ${RECORD_COLUMNS} FROM evidence e WHERE e.seq = ?`);
    this.selectAll = db.prepare(`SELECT ${RECORD_COLUMNS} FROM evidence e ORDER BY e.seq`);
    this.selectCached = db.prepare(
      `SELECT ${RECORD_COLUMNS} FROM evidence e
       WHERE e.command_key = ? AND e.backend = ? AND e.thread IS ? AND e.frame IS ?
         AND (e.error_type IS NULL OR e.error_type NOT IN (${NOT_CACHEABLE.map(() => "?").join(", ")}))
       ORDER BY e.seq DESC LIMIT 1`,
    );
    this.selectOutput = db.prepare("SELECT output, path FROM evidence WHERE seq = ?");
    this.selectChunks = db.prepare(`SELECT ${CHUNK_COLUMNS} FROM evidence_chunks WHERE evidence_seq = ? ORDER BY n`);
    this.selectChunk = db.prepare(`SELECT ${CHUNK_COLUMNS} FROM evidence_chunks WHERE evidence_seq = ? AND n = ?`);
    this.updateAnalysis = db.prepare("UPDATE evidence_chunks SET analysis = ? WHERE evidence_seq = ? AND n = ?");
    // A match in the command weighs most, then one in the summary: they say what the output is,
    // while a word deep in a backtrace may be incidental.
    this.selectHits = db.prepare(
      `SELECT f.rank, c.n, c.start_byte, c.end_byte, c.start_line, ${RECORD_COLUMNS}
       FROM (SELECT rowid, bm25(evidence_fts, 4.0, 2.0, 1.0, 1.0) AS rank FROM evidence_fts
             WHERE evidence_fts MATCH ? ORDER BY rank LIMIT ?) f
       JOIN evidence_chunks c ON c.id = f.rowid
       JOIN evidence e ON e.seq = c.evidence_seq
       ORDER BY f.rank`,
    );
    this.insert = this.prepareInsert();
  }

  static open(dbPath: string, options: EvidenceStoreOptions = {}): EvidenceStore {
    const inlineLimit = options.inlineLimit ?? 64 * 1024;
    const chunkSize = options.chunkSize ?? 16 * 1024;
    if (!Number.isInteger(inlineLimit) || inlineLimit < 0) {
      throw new RangeError(`inlineLimit must be a whole number of bytes, got ${inlineLimit}`);
    }
    if (!Number.isInteger(chunkSize) || chunkSize < MIN_CHUNK_BYTES) {
      throw new RangeError(`chunkSize must be a whole number of at least ${MIN_CHUNK_BYTES} bytes, got ${chunkSize}`);
    }
    return writing(dbPath, () => EvidenceStore.openAt(dbPath, inlineLimit, chunkSize, options), { elsewhere: SESSIONS_ELSEWHERE });
  }

  private static openAt(dbPath: string, inlineLimit: number, chunkSize: number, options: EvidenceStoreOptions): EvidenceStore {
    mkdirSync(dirname(dbPath), { recursive: true });
    const db = new Database(dbPath);
    try {
      db.pragma("journal_mode = WAL");
      // NORMAL in WAL mode: a commit survives the process being killed (the tests kill it mid-run)
      // but not a power cut, which the evidence does not need (it is read again from the dump);
      // FULL's fsync per commit cost more than the debugger command itself (bench/startup).
      db.pragma("synchronous = NORMAL");
      db.pragma("foreign_keys = ON");
      db.exec(SCHEMA);
      const evidenceDir = options.evidenceDir ?? join(dirname(dbPath), "evidence");
      return new EvidenceStore(db, dbPath, dirname(dbPath), inlineLimit, chunkSize, evidenceDir);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /**
   * Stores one command output in one transaction; a big output is in its file (synced) before its
   * row commits. On a full disk the transaction is rolled back and the store stays usable.
   */
  add(input: EvidenceInput): EvidenceRecord {
    const seq = writing(this.dbPath, () => this.insert.immediate(input), { elsewhere: SESSIONS_ELSEWHERE });
    return this.recordOf(this.existing(`E${seq}`).row);
  }

  get(id: string): EvidenceRecord | null {
    const seq = seqOf(id);
    const row = seq === null ? undefined : this.selectOne.get(seq);
    return row ? this.recordOf(row) : null;
  }

  /** The full output, from the row or from its file. */
  output(id: string): string {
    const { output, path } = this.outputOf(id);
    return path === null ? (output ?? "") : readFileSync(resolve(this.dbDir, path), "utf8");
  }

  /** The latest result of the same command (spacing aside) in the same context, unless it failed transiently. */
  findCached(command: string, backend: Backend, context: EvidenceContext): EvidenceRecord | null {
    const row = this.selectCached.get(commandKey(command), backend, context.thread, context.frame, ...NOT_CACHEABLE);
    return row ? this.recordOf(row) : null;
  }

  list(): EvidenceRecord[] {
    return this.selectAll.all().map((row) => this.recordOf(row));
  }

  chunks(id: string): Chunk[] {
    return this.selectChunks.all(this.existing(id).seq).map((row) => chunkOf(id, row));
  }

  /** The text of one chunk, read from its byte range alone, so a huge output need not be loaded whole. */
  chunkText(id: string, n: number): string {
    const row = this.selectChunk.get(this.existing(id).seq, n);
    if (!row) throw new RangeError(`evidence ${id} has no chunk ${n}`);
    return this.readRange(id, row.start_byte, row.end_byte);
  }

  setChunkAnalysis(id: string, n: number, analysis: unknown): void {
    const seq = this.existing(id).seq;
    const { changes } = writing(this.dbPath, () => this.updateAnalysis.run(JSON.stringify(analysis ?? null), seq, n), { elsewhere: SESSIONS_ELSEWHERE });
    if (changes === 0) throw new RangeError(`evidence ${id} has no chunk ${n}`);
  }

  /**
   * Full-text search, best first. Any text is accepted: each word becomes a quoted phrase, so FTS5
   * syntax in it is taken literally; words are OR-ed and bm25 ranks chunks that match more of them higher.
   */
  search(query: string, limit = 10): SearchHit[] {
    const words = query
      .split(/\s+/)
      .filter((word) => /[\p{L}\p{N}]/u.test(word))
      .slice(0, MAX_SEARCH_TERMS);
    const rows = Math.floor(limit);
    if (words.length === 0 || !(rows >= 1)) return [];
    const match = words.map((word) => `"${word.replaceAll('"', '""')}"`).join(" OR ");
    return this.selectHits.all(match, rows).map((row) => {
      const id = `E${row.seq}`;
      const found = findLine(this.readRange(id, row.start_byte, row.end_byte), words);
      return {
        evidenceId: id,
        chunk: row.n,
        line: found ? row.start_line + found.lineIndex : null,
        command: row.command,
        summary: row.summary,
        snippet: found ? found.snippet : row.summary,
        score: -row.rank,
      };
    });
  }

  close(): void {
    this.db.close();
  }

  private prepareInsert(): Database.Transaction<(input: EvidenceInput) => number> {
    const nextSeq = this.db.prepare<[], number>("SELECT coalesce(max(seq), 0) + 1 FROM evidence").pluck();
    const insertRow = this.db.prepare<[Record<string, unknown>]>(
      `INSERT INTO evidence (seq, command, command_key, backend, thread, frame, ok, error_type, summary, findings,
         bytes, lines, output, path, head, tail, ms, source, created_at)
       VALUES (@seq, @command, @commandKey, @backend, @thread, @frame, @ok, @errorType, @summary, @findings,
         @bytes, @lines, @output, @path, @head, @tail, @ms, @source, @createdAt)`,
    );
    const insertChunk = this.db.prepare<[number, number, number, number, number, number]>(
      `INSERT INTO evidence_chunks (evidence_seq, n, start_byte, end_byte, start_line, end_line)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    const indexChunk = this.db.prepare<[number | bigint, string, string, string, string]>(
      "INSERT INTO evidence_fts (rowid, command, summary, findings, output) VALUES (?, ?, ?, ?, ?)",
    );
    return this.db.transaction((input: EvidenceInput): number => {
      const text = Buffer.from(input.output, "utf8");
      const spans = splitAtLines(text, this.chunkSize);
      const findings = JSON.stringify(input.findings ?? null);
      // Taken inside the write transaction, so no other connection can claim the same number.
      const seq = (input.id !== undefined ? seqOf(input.id) : null) ?? nextSeq.get() ?? 1;
      const inline = text.length <= this.inlineLimit;
      const { head, tail } = headAndTail(input.output, PREVIEW_CHARS);
      insertRow.run({
        seq,
        command: input.command,
        commandKey: commandKey(input.command),
        backend: input.backend,
        thread: input.context.thread,
        frame: input.context.frame,
        ok: input.ok ? 1 : 0,
        errorType: input.errorType ?? null,
        summary: input.summary,
        findings,
        bytes: text.length,
        lines: text.length === 0 ? 0 : (spans.at(-1)?.endLine ?? 0),
        output: inline ? input.output : null,
        path: inline ? null : relative(this.dbDir, this.writeOutputFile(seq, text)),
        head,
        tail,
        ms: input.ms,
        source: input.source,
        createdAt: new Date().toISOString(),
      });
      for (const span of spans) {
        const chunk = insertChunk.run(seq, span.n, span.startByte, span.endByte, span.startLine, span.endLine);
        const chunkText = text.toString("utf8", span.startByte, span.endByte);
        if (span.n === 0) indexChunk.run(chunk.lastInsertRowid, input.command, input.summary, findings, chunkText);
        else indexChunk.run(chunk.lastInsertRowid, "", "", "", chunkText);
      }
      return seq;
    });
  }

  /** Writes and syncs the file, then its directory entry, so a committed row never names a missing file. */
  private writeOutputFile(seq: number, text: Buffer): string {
    const path = join(this.evidenceDir, `E${seq}.txt`);
    return writing(
      path,
      () => {
        mkdirSync(this.evidenceDir, { recursive: true });
        syncWrite(path, text);
        const dir = openSync(this.evidenceDir, "r");
        try {
          fsyncSync(dir);
        } finally {
          closeSync(dir);
        }
        return path;
      },
      { elsewhere: SESSIONS_ELSEWHERE },
    );
  }

  private existing(id: string): { seq: number; row: EvidenceRow } {
    const seq = seqOf(id);
    const row = seq === null ? undefined : this.selectOne.get(seq);
    if (seq === null || !row) throw new EvidenceNotFound(id);
    return { seq, row };
  }

  private outputOf(id: string): OutputRow {
    const seq = seqOf(id);
    const row = seq === null ? undefined : this.selectOutput.get(seq);
    if (!row) throw new EvidenceNotFound(id);
    return row;
  }

  private readRange(id: string, start: number, end: number): string {
    const { output, path } = this.outputOf(id);
    if (path === null) return Buffer.from(output ?? "", "utf8").toString("utf8", start, end);
    const buffer = Buffer.alloc(end - start);
    const fd = openSync(resolve(this.dbDir, path), "r");
    try {
      let read = 0;
      while (read < buffer.length) {
        const n = readSync(fd, buffer, read, buffer.length - read, start + read);
        if (n === 0) throw new Error(`${path} is shorter than evidence ${id} says: it was changed after it was stored`);
        read += n;
      }
    } finally {
      closeSync(fd);
    }
    return buffer.toString("utf8");
  }

  private recordOf(row: EvidenceRow): EvidenceRecord {
    return {
      id: `E${row.seq}`,
      command: row.command,
      backend: row.backend,
      context: { thread: row.thread, frame: row.frame },
      ok: row.ok === 1,
      errorType: row.error_type,
      summary: row.summary,
      findings: JSON.parse(row.findings) as unknown,
      bytes: row.bytes,
      lines: row.lines,
      path: row.path === null ? null : resolve(this.dbDir, row.path),
      head: row.head,
      tail: row.tail,
      createdAt: row.created_at,
      ms: row.ms,
      source: row.source,
    };
  }
}

function chunkOf(evidenceId: string, row: ChunkRow): Chunk {
  return {
    evidenceId,
    n: row.n,
    startByte: row.start_byte,
    endByte: row.end_byte,
    startLine: row.start_line,
    endLine: row.end_line,
    analysis: row.analysis === null ? null : (JSON.parse(row.analysis) as unknown),
  };
}

/**
 * What is wrong with an evidence store SQLite cannot read whole (a copy cut short, a file of
 * something else), or null when it is whole or not there yet. Read-only: checking changes nothing.
 */
export function evidenceDamage(dbPath: string): string | null {
  const cut = evidenceCutShort(dbPath);
  if (cut !== null || !existsSync(dbPath) || statSync(dbPath).size === 0) return cut;
  let db: Database.Database | null = null;
  try {
    db = new Database(dbPath, { readonly: true, fileMustExist: true });
    const result = db.pragma("quick_check(1)", { simple: true });
    return result === "ok" ? null : `is damaged (${String(result).split("\n")[0]})`;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "SQLITE_NOTADB") return "is not a database (the file holds something else)";
    if (code === "SQLITE_CORRUPT") return `is damaged (${(error as Error).message})`;
    throw asStorageError(error, dbPath, { verb: "read" });
  } finally {
    db?.close();
  }
}

/**
 * The cheap half of `evidenceDamage`, from the file's first 100 bytes alone (for listing many
 * sessions): not a SQLite file, or shorter than its header says it is (a copy cut short). The
 * header's page count is trusted only when SQLite marked it current (offset 92 equals the change
 * counter at 24), and only without a write-ahead log: pages the log holds may not be in the file
 * yet (a checkpoint a full disk stopped half-way), and SQLite reads them from the log.
 */
export function evidenceCutShort(dbPath: string): string | null {
  if (existsSync(`${dbPath}-wal`) && statSync(`${dbPath}-wal`).size > 0) return null;
  let fd: number;
  try {
    fd = openSync(dbPath, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw asStorageError(error, dbPath, { verb: "read" });
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return null;
    const header = Buffer.alloc(100);
    const read = readSync(fd, header, 0, 100, 0);
    if (read < 100 || header.toString("latin1", 0, 16) !== "SQLite format 3\0") return "is not a database (the file holds something else, or too little of one)";
    const pageSize = header.readUInt16BE(16) === 1 ? 65536 : header.readUInt16BE(16);
    const pages = header.readUInt32BE(28);
    if (header.readUInt32BE(92) !== header.readUInt32BE(24)) return null;
    return size < pages * pageSize ? `is cut short (${size} of its ${pages * pageSize} bytes)` : null;
  } finally {
    closeSync(fd);
  }
}

/** A file that could not be written whole is removed: no row will name it, and it holds the space. */
function syncWrite(path: string, data: Buffer): void {
  const fd = openSync(path, "w");
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
  } catch (error) {
    rmSync(path, { force: true });
    throw error;
  } finally {
    closeSync(fd);
  }
}

function seqOf(id: string): number | null {
  const match = /^E([1-9][0-9]{0,14})$/.exec(id);
  return match?.[1] === undefined ? null : Number(match[1]);
}

/**
 * The cache key of a command: the same command typed with different spacing is the same command,
 * but spacing inside a string or character literal is part of the value (`p "a  b"`).
 */
export function commandKey(command: string): string {
  return command
    .trim()
    .split(/("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/\s+/g, " ")))
    .join("");
}

/** The first line of `text` that contains one of the query words (or, failing that, a token of one). */
function findLine(text: string, words: string[]): { lineIndex: number; snippet: string } | null {
  const lower = text.toLowerCase();
  const needles = words.map((word) => word.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "").toLowerCase());
  const tokens = words.flatMap((word) => word.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
  const at = earliest(lower, needles) ?? earliest(lower, tokens);
  if (at === null) return null;
  // Line numbers come from `lower`: lower-casing keeps every newline, though it may change lengths.
  const lineStart = lower.lastIndexOf("\n", at.index - 1) + 1;
  const lineIndex = countChar(lower, "\n", lineStart);
  const line = text.split("\n", lineIndex + 1)[lineIndex] ?? "";
  const column = Math.min(at.index - lineStart, line.length);
  const from = Math.max(0, Math.min(column - SNIPPET_CHARS / 2, line.length - SNIPPET_CHARS));
  return { lineIndex, snippet: line.slice(from, from + SNIPPET_CHARS).trim() };
}

function earliest(text: string, needles: string[]): { index: number } | null {
  let best: number | null = null;
  for (const needle of needles) {
    if (needle === "") continue;
    const index = text.indexOf(needle);
    if (index !== -1 && (best === null || index < best)) best = index;
  }
  return best === null ? null : { index: best };
}

function countChar(text: string, char: string, end: number): number {
  let count = 0;
  for (let at = text.indexOf(char); at !== -1 && at < end; at = text.indexOf(char, at + 1)) count++;
  return count;
}
