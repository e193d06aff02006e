/**
 * Session folders under a sessions root (`.sessions/` by default):
 *
 *   <root>/<id>/session.json       what was analysed, with what, and how far it got
 *   <root>/<id>/transcript.jsonl   every command, model call and chat turn, as it happens
 *   <root>/<id>/evidence.db        the evidence store (and LangGraph's checkpoints)
 *   <root>/<id>/evidence/          outputs too big to keep in the database
 *   <root>/<id>/lock               the pid of the process using the session, while it does
 *
 * Every function takes the root, and nothing here reads or removes anything outside it.
 */

import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, isAbsolute, join, relative, sep } from "node:path";
import { z } from "../zod.js";
import type { Backend } from "../debuggers/session.js";
import { isAlive } from "../process-alive.js";
import { asStorageError, StorageError, writing } from "../storage-errors.js";

export type SessionState = "created" | "running" | "done" | "failed" | "interrupted";

export interface SessionMeta {
  id: string;
  dump: string;
  executable: string | null;
  debugger: { backend: Backend; path: string; version: string | null };
  issue: string | null;
  state: SessionState;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
  /** The report files written for this session (removed with it when they are still ours). */
  reports?: string[];
  /** The dump file's size and modification time when the session first read it: a chat or resume on a dump changed since is refused. */
  dumpFile?: { size: number; mtimeMs: number };
}

/** What the caller knows when a session starts; the rest is filled in here. */
export type NewSession = Pick<SessionMeta, "dump" | "executable" | "debugger" | "issue" | "dumpFile">;

/** What may change over a session's life; `updatedAt` is set on every update. */
export type SessionPatch = Partial<Pick<SessionMeta, "executable" | "debugger" | "issue" | "state" | "finishedAt" | "reports">>;

export interface SessionPaths {
  dir: string;
  meta: string;
  transcript: string;
  evidenceDb: string;
  evidenceDir: string;
  lock: string;
}

export class SessionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The id names no session folder under the root (or is not a valid id at all). */
export class SessionNotFound extends SessionError {
  constructor(
    readonly id: string,
    root: string,
  ) {
    super(`no session ${JSON.stringify(id)} in ${root}; run "dumpdbg sessions list" to see the sessions there`);
  }
}

/** Another live process holds the session's lock. */
export class SessionBusy extends SessionError {
  constructor(
    readonly id: string,
    readonly pid: number,
    lockPath: string,
  ) {
    const who = pid === process.pid ? "this process" : `process ${pid}`;
    super(
      `session ${id} is in use by ${who}; wait for it to finish or stop it (if it is not dumpdbg, delete ${lockPath})`,
    );
  }
}

/**
 * A session whose files were damaged (a crash while one was copied, a disk that filled up): what is
 * wrong, and what still works with it. Other sessions are not touched.
 */
export class SessionDamaged extends SessionError {
  constructor(
    readonly id: string,
    readonly file: string,
    readonly damage: string,
    stillWorks: string,
  ) {
    super(`session ${id} is damaged: ${file} ${damage}; ${stillWorks}`);
  }
}

/** A session folder whose session.json cannot be read: listed as damaged, and removable. */
export interface DamagedSession {
  id: string;
  dir: string;
  /** What is wrong, e.g. "session.json is cut short (Unexpected end of JSON input)". */
  damage: string;
  /** When its session.json was last written: what `cleanup --days` goes by. */
  updatedAt: string;
}

/** The report document a session keeps, from which `dumpdbg report` writes its reports. */
const REPORT_DOCUMENT = "report.json";

const sessionMetaSchema: z.ZodType<SessionMeta> = z.object({
  id: z.string(),
  dump: z.string(),
  executable: z.string().nullable(),
  debugger: z.object({ backend: z.enum(["gdb", "lldb", "cdb", "dlv"]), path: z.string(), version: z.string().nullable() }),
  issue: z.string().nullable(),
  state: z.enum(["created", "running", "done", "failed", "interrupted"]),
  createdAt: z.string(),
  updatedAt: z.string(),
  finishedAt: z.string().nullable(),
  reports: z.array(z.string()).max(64).optional(),
  dumpFile: z.object({ size: z.number(), mtimeMs: z.number() }).optional(),
});

/** Ids are folder names that stay one path segment: no separators, no `..`, nothing hidden. */
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
const DAY_MS = 24 * 60 * 60 * 1000;
/** The way out of a full or read-only sessions folder, after the cause's own. */
export const SESSIONS_ELSEWHERE = "or choose another --sessions-dir";

/** The files of a session; the id is checked, the file system is not touched. */
export function sessionPaths(root: string, id: string): SessionPaths {
  if (!isValidId(id)) throw new SessionNotFound(id, root);
  const dir = join(root, id);
  return {
    dir,
    meta: join(dir, "session.json"),
    transcript: join(dir, "transcript.jsonl"),
    evidenceDb: join(dir, "evidence.db"),
    evidenceDir: join(dir, "evidence"),
    lock: join(dir, "lock"),
  };
}

/** Creates the folder and session.json of a new session, with an id that sorts by time and names the dump. */
export function createSession(root: string, input: NewSession): { id: string; dir: string; meta: SessionMeta } {
  writing(root, () => mkdirSync(root, { recursive: true }), { verb: "create", elsewhere: SESSIONS_ELSEWHERE });
  const now = new Date();
  for (let attempt = 1; ; attempt++) {
    const id = sessionId(input.dump, now);
    const { dir, meta: metaPath } = sessionPaths(root, id);
    try {
      writing(dir, () => mkdirSync(dir), { verb: "create", elsewhere: SESSIONS_ELSEWHERE });
    } catch (error) {
      // The random suffix collided with a session started in the same second: draw again.
      if (isErrno(error, "EEXIST") && attempt < 20) continue;
      throw error;
    }
    const createdAt = now.toISOString();
    const meta: SessionMeta = { id, ...input, state: "created", createdAt, updatedAt: createdAt, finishedAt: null };
    writeJsonAtomically(metaPath, meta);
    return { id, dir, meta };
  }
}

export function loadSession(root: string, id: string): SessionMeta {
  const dir = sessionDir(root, id);
  const file = join(dir, "session.json");
  let parsed: SessionMeta;
  let text = "";
  try {
    text = readFileSync(file, "utf8");
    parsed = sessionMetaSchema.parse(JSON.parse(text));
  } catch (error) {
    if (!(error instanceof SyntaxError || error instanceof z.ZodError)) throw asStorageError(error, file, { verb: "read" });
    throw new SessionDamaged(id, file, metaDamage(error, text), stillWorks(root, id, null));
  }
  // The folder name is the id that every command uses, even if session.json says otherwise.
  return { ...parsed, id };
}

/** session.json is always written as one object and a newline: one that stops before its end was cut short. */
function metaDamage(error: SyntaxError | z.ZodError, text: string): string {
  if (error instanceof z.ZodError) return "has fields missing or wrong";
  return text.trimEnd().endsWith("}") ? `is not JSON (${error.message})` : "is cut short";
}

/**
 * What a damaged session still allows, said after its damage: its report re-rendered from the
 * document it saved, the analysis run again on its dump (when session.json still names it), and
 * its removal.
 */
export function stillWorks(root: string, id: string, dump: string | null): string {
  const ways: string[] = [];
  if (hasReportDocument(join(root, id, REPORT_DOCUMENT))) ways.push(`"dumpdbg report ${id}" still writes its report`);
  if (dump !== null) ways.push(`"dumpdbg analyze ${dump}" runs the analysis again`);
  ways.push(`"dumpdbg sessions rm ${id}" removes it`);
  return ways.join("; ");
}

function hasReportDocument(file: string): boolean {
  try {
    const doc = JSON.parse(readFileSync(file, "utf8")) as { report?: unknown };
    return typeof doc.report === "object" && doc.report !== null;
  } catch {
    return false;
  }
}

/** Applies `patch` and rewrites session.json atomically (temp file, then rename), so a reader never sees half of it. */
export function updateSession(root: string, id: string, patch: SessionPatch): SessionMeta {
  const meta: SessionMeta = { ...loadSession(root, id), ...patch, updatedAt: new Date().toISOString() };
  writeJsonAtomically(sessionPaths(root, id).meta, meta);
  return meta;
}

/** The ids of the session folders under `root`, oldest first (ids begin with their start time); none where there is no such folder. */
function sessionIds(root: string): string[] {
  try {
    return readdirSync(root).filter(isValidId).sort();
  } catch (error) {
    if (isErrno(error, "ENOENT")) return [];
    throw error;
  }
}

/**
 * The sessions under `root`, oldest first. Folders whose session.json cannot be read are left
 * out here; `listDamagedSessions` lists them.
 */
export function listSessions(root: string): SessionMeta[] {
  const sessions: SessionMeta[] = [];
  for (const id of sessionIds(root)) {
    try {
      sessions.push(loadSession(root, id));
    } catch (error) {
      if (!(error instanceof SessionError || error instanceof StorageError)) throw error;
    }
  }
  return sessions;
}

/** The session folders under `root` whose session.json is damaged, oldest first. */
export function listDamagedSessions(root: string): DamagedSession[] {
  const damaged: DamagedSession[] = [];
  for (const id of sessionIds(root)) {
    try {
      loadSession(root, id);
    } catch (error) {
      const damage = error instanceof SessionDamaged ? error.damage : error instanceof StorageError ? `cannot be read: ${error.reason}` : null;
      if (damage === null) continue;
      const dir = join(root, id);
      damaged.push({ id, dir, damage: `session.json ${damage}`, updatedAt: statSync(join(dir, "session.json")).mtime.toISOString() });
    }
  }
  return damaged;
}

/**
 * Deletes a session folder. A session in use by a live process is refused with SessionBusy. When
 * the entry is a symlink (to a folder inside the root), only the link is removed.
 */
export function removeSession(root: string, id: string): void {
  const dir = sessionDir(root, id);
  const holder = lockHolder(join(dir, "lock"));
  if (holder !== null) throw new SessionBusy(id, holder, join(dir, "lock"));
  const entry = join(root, id);
  if (lstatSync(entry).isSymbolicLink()) unlinkSync(entry);
  else rmSync(entry, { recursive: true });
}

/** What cleanup knows of a session, whole or damaged (one whose session.json is damaged has no reports to name). */
export type CleanedSession = Pick<SessionMeta, "id" | "createdAt" | "updatedAt" | "reports">;

export interface CleanupOptions {
  /** Remove sessions not updated for this many days. */
  days?: number;
  /** Always keep this many of the newest sessions. */
  keep?: number;
}

/**
 * Removes the sessions that are older than `days` (by last update) and not among the `keep`
 * newest (by creation). Sessions in use are skipped and reported as busy.
 */
export function cleanupSessions(
  root: string,
  options: CleanupOptions,
): { removed: CleanedSession[]; busy: CleanedSession[] } {
  const { days, keep } = options;
  if (days === undefined && keep === undefined) throw new RangeError("cleanup needs days, keep, or both");
  if (days !== undefined && !(Number.isFinite(days) && days >= 0)) {
    throw new RangeError(`days must be a number of at least 0, got ${days}`);
  }
  if (keep !== undefined && !(Number.isInteger(keep) && keep >= 0)) {
    throw new RangeError(`keep must be a whole number of at least 0, got ${keep}`);
  }
  const cutoff = days === undefined ? Infinity : Date.now() - days * DAY_MS;
  // A damaged session counts by when its session.json was last written, as a whole one by its update.
  const damaged = listDamagedSessions(root).map(({ id, updatedAt }): CleanedSession => ({ id, createdAt: updatedAt, updatedAt }));
  const newestFirst = [...listSessions(root), ...damaged].sort((a, b) => a.createdAt.localeCompare(b.createdAt)).reverse();
  const removed: CleanedSession[] = [];
  const busy: CleanedSession[] = [];
  for (const session of newestFirst.slice(keep ?? 0)) {
    if (!(Date.parse(session.updatedAt) < cutoff)) continue;
    try {
      removeSession(root, session.id);
      removed.push(session);
    } catch (error) {
      if (!(error instanceof SessionBusy)) throw error;
      busy.push(session);
    }
  }
  return { removed, busy };
}

/**
 * Takes the session's lock for this process, or throws SessionBusy if a live process holds it. A
 * lock left by a dead process is stale and taken over. Returns the function that releases it.
 */
export function acquireSessionLock(root: string, id: string): () => void {
  const lock = join(sessionDir(root, id), "lock");
  for (;;) {
    if (tryCreateLock(lock)) {
      return () => {
        if (readLockPid(lock) === process.pid) rmSync(lock, { force: true });
      };
    }
    const pid = readLockPid(lock);
    if (pid === undefined) continue;
    if (pid !== null && isAlive(pid)) throw new SessionBusy(id, pid, lock);
    breakStaleLock(lock, pid);
  }
}

export type TranscriptEvent = { type: "command" | "model" | "chat" } & Record<string, unknown>;

/**
 * The session's transcript.jsonl, appended one JSON line per event. Each line is written as the
 * event happens, so a killed dumpdbg loses none; the file is synced to disk once, when it closes
 * (a sync per event cost more than the commands it recorded).
 */
export class Transcript {
  static open(root: string, id: string): Transcript {
    const path = join(sessionDir(root, id), "transcript.jsonl");
    return new Transcript(path, writing(path, () => openSync(path, "a"), { elsewhere: SESSIONS_ELSEWHERE }));
  }

  private constructor(
    readonly path: string,
    private readonly fd: number,
  ) {}

  /** Writes the event with an `at` timestamp; it is in the file when this returns. */
  append(event: TranscriptEvent): void {
    writing(this.path, () => writeFileSync(this.fd, `${JSON.stringify({ at: new Date().toISOString(), ...event })}\n`), { elsewhere: SESSIONS_ELSEWHERE });
  }

  /** Closes the file whatever happens; a sync the disk refuses is said after it is closed. */
  close(): void {
    try {
      writing(this.path, () => fsyncSync(this.fd), { elsewhere: SESSIONS_ELSEWHERE });
    } finally {
      closeSync(this.fd);
    }
  }
}

/** `20261121-204512-core-null-deref-a1b2`: UTC time (so ids sort by time), the dump's name, a random suffix. */
function sessionId(dump: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const name =
    basename(dump)
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .slice(0, 40)
      .replace(/^-+|-+$/g, "") || "dump";
  return `${stamp}-${name}-${randomBytes(2).toString("hex")}`;
}

/**
 * A session id as the user typed it: the whole id, or any prefix of exactly one session's id
 * (`20261126-1430` for `20261126-143012-core-a1b2`). An unknown one is returned as given, for
 * `loadSession` to refuse; an ambiguous one is refused here, with the candidates.
 */
export function resolveSessionId(root: string, given: string): string {
  if (!isValidId(given) || existsSync(join(root, given, "session.json"))) return given;
  let entries: string[];
  try {
    entries = readdirSync(root);
  } catch {
    return given;
  }
  const matches = entries.filter((entry) => entry.startsWith(given) && isValidId(entry) && existsSync(join(root, entry, "session.json"))).sort();
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new SessionError(`"${given}" is the start of ${matches.length} sessions (${matches.slice(0, 3).join(", ")}${matches.length > 3 ? ", …" : ""}); give more of the id`);
  }
  return given;
}

function isValidId(id: string): boolean {
  return ID_PATTERN.test(id) && !id.includes("..");
}

/**
 * The folder of an existing session: a direct child of the root that holds a session.json file.
 * A symlinked entry is followed only when it points inside the root.
 */
function sessionDir(root: string, id: string): string {
  const { dir, meta } = sessionPaths(root, id);
  let entry;
  try {
    entry = lstatSync(dir);
    if (entry.isSymbolicLink()) {
      const target = realpathSync(dir);
      if (!isInside(realpathSync(root), target)) {
        throw new SessionError(`${dir} is a symlink to ${target}, outside ${root}; refusing to use it`);
      }
      entry = statSync(dir);
    }
    if (entry.isDirectory() && lstatSync(meta).isFile()) return dir;
  } catch (error) {
    if (!isErrno(error, "ENOENT") && !isErrno(error, "ENOTDIR")) throw error;
  }
  throw new SessionNotFound(id, root);
}

function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * Writes JSON whole or not at all: a temp file beside it, synced, then renamed over it. A file
 * that cannot be written (a full disk) leaves the old one as it was and no temp file behind.
 */
export function writeJsonAtomically(path: string, value: unknown): void {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  writing(
    path,
    () => {
      try {
        const fd = openSync(temp, "w");
        try {
          writeFileSync(fd, `${JSON.stringify(value, null, 2)}\n`);
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        renameSync(temp, path);
      } catch (error) {
        rmSync(temp, { force: true });
        throw error;
      }
    },
    { elsewhere: SESSIONS_ELSEWHERE },
  );
}

/**
 * Creates the lock with our pid already in it: written to a temp file, then hard-linked into
 * place, which fails if the lock exists (as O_EXCL would), and no reader ever sees an empty lock.
 */
function tryCreateLock(lock: string): boolean {
  const temp = `${lock}.${process.pid}.${randomBytes(4).toString("hex")}`;
  try {
    writing(lock, () => writeFileSync(temp, `${process.pid}\n`), { elsewhere: SESSIONS_ELSEWHERE });
    linkSync(temp, lock);
    return true;
  } catch (error) {
    if (isErrno(error, "EEXIST")) return false;
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
}

/** The pid in a lock file; null when it holds no pid, undefined when there is no lock file. */
function readLockPid(lock: string): number | null | undefined {
  let text;
  try {
    text = readFileSync(lock, "utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/**
 * The state as it is now: a session marked running whose process is gone (killed without a chance
 * to say so) is interrupted, and `dumpdbg resume` goes on with it.
 */
export function currentState(root: string, meta: SessionMeta): SessionState {
  if (meta.state !== "running") return meta.state;
  return lockHolder(sessionPaths(root, meta.id).lock) === null ? "interrupted" : "running";
}

/** The live process that holds the lock, or null when there is none. */
function lockHolder(lock: string): number | null {
  const pid = readLockPid(lock);
  return typeof pid === "number" && isAlive(pid) ? pid : null;
}

/**
 * Moves a stale lock aside instead of unlinking it: if another process broke it first and took
 * the lock, what we moved is that live lock, and we put it back.
 */
function breakStaleLock(lock: string, stalePid: number | null): void {
  const aside = `${lock}.stale.${process.pid}.${randomBytes(4).toString("hex")}`;
  try {
    renameSync(lock, aside);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return;
    throw error;
  }
  const moved = readLockPid(aside);
  if (moved !== stalePid && typeof moved === "number" && isAlive(moved)) {
    try {
      linkSync(aside, lock);
    } catch (error) {
      if (!isErrno(error, "EEXIST")) throw error;
    }
  }
  rmSync(aside, { force: true });
}

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}
