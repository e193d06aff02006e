/**
 * The session a chat runs in: the dump open in a debugger, the evidence store, the executor and the
 * transcript. A chat started from a session id (an earlier run, whose debugger is gone) takes the
 * session's lock and reopens the dump; `analyze --chat` hands over its own, still open.
 */
import { readFileSync } from "node:fs";
import { inspectDump, type DumpInfo } from "./debuggers/dump.js";
import { debuggerWarningsLine, type OpenDumpOptions } from "./debuggers/open.js";
import type { Vocabulary } from "./debuggers/probe.js";
import { reopenDump } from "./session-dump.js";
import { rebuildEvidence, rebuiltLine } from "./evidence/rebuild.js";
import { acquireSessionLock, loadSession, sessionPaths, Transcript, updateSession, type SessionMeta } from "./evidence/sessions.js";
import { evidenceDamage, EvidenceStore } from "./evidence/store.js";
import type { ChatExchange } from "./report/index.js";
import { CommandExecutor } from "./agents/executor.js";
import { Resources } from "./resources.js";

export interface ChatSession extends AsyncDisposable {
  meta: SessionMeta;
  /** The session's folder. */
  dir: string;
  store: EvidenceStore;
  executor: CommandExecutor;
  /** How the session's debugger says each probe and reads its output. */
  vocabulary: Vocabulary;
  /** What the dump file's own notes say (its process id among them); null when it cannot be read. */
  dump: DumpInfo | null;
  transcript: Transcript;
  /** One-line warnings from opening the dump. */
  warnings: string[];
  /** Releases what this chat opened, and only that. */
  [Symbol.asyncDispose](): Promise<void>;
}

export interface OpenChatSessionOptions {
  root: string;
  id: string;
  /** How to open the session's dump (its path comes from session.json); what it leaves out, the session says. */
  openOptions: (dump: string) => OpenDumpOptions;
  unsafe: boolean;
}

/** Opens a session from an earlier run: its lock, its dump in a new debugger, its store and transcript. */
export async function openChatSession(options: OpenChatSessionOptions): Promise<ChatSession> {
  const { root, id } = options;
  const meta = loadSession(root, id);
  const paths = sessionPaths(root, id);
  // Until the session is returned, a failure closes what was opened; then its caller owns them.
  await using opening = new Resources();
  opening.defer(acquireSessionLock(root, id));
  // A damaged store is rebuilt (the lock held), before the dump is opened, and the chat goes on with what it holds.
  const damage = evidenceDamage(paths.evidenceDb);
  const rebuilt = damage ? rebuiltLine(id, damage, rebuildEvidence(paths.dir, meta.debugger.backend), "a question that needs evidence it lost runs its command again") : null;
  const open = options.openOptions(meta.dump);
  const dump = await reopenDump(meta, open);
  opening.defer(() => dump.session.close());
  const store = opening.use(EvidenceStore.open(paths.evidenceDb));
  const transcript = opening.use(Transcript.open(root, id));
  const executor = new CommandExecutor({
    session: dump.session,
    store,
    transcript,
    unsafe: options.unsafe,
    dumpUnchanged: dump.unchanged,
    ...(open.timeoutMs !== undefined ? { timeoutMs: open.timeoutMs } : {}),
  });
  // A session chatted in is in use: `sessions cleanup --days` goes by this date.
  updateSession(root, id, {});
  const owned = opening.move();
  return {
    meta,
    dir: paths.dir,
    store,
    executor,
    vocabulary: dump.session.vocabulary,
    dump: dump.dump,
    transcript,
    warnings: [...(rebuilt ? [rebuilt] : []), ...dump.warnings, ...[debuggerWarningsLine(dump.session.backend, dump.debuggerWarnings)].filter((line): line is string => line !== null)],
    [Symbol.asyncDispose]: () => owned[Symbol.asyncDispose](),
  };
}

/** The session `analyze --chat` has open: used as it is, and left for the analysis to close. */
export function adoptChatSession(
  root: string,
  id: string,
  open: { store: EvidenceStore; executor: CommandExecutor; transcript: Transcript },
): ChatSession {
  const meta = loadSession(root, id);
  return {
    ...open,
    meta,
    dir: sessionPaths(root, id).dir,
    vocabulary: open.executor.vocabulary,
    dump: dumpNotes(meta.dump),
    warnings: [],
    [Symbol.asyncDispose]: async () => undefined,
  };
}

/** The dump's own notes; the analysis already opened the dump, so a failure here only loses them. */
function dumpNotes(path: string): DumpInfo | null {
  try {
    return inspectDump(path);
  } catch {
    return null;
  }
}

/** The questions answered in this session's earlier chats, from its transcript, oldest first. */
export function previousExchanges(transcriptFile: string): ChatExchange[] {
  let text: string;
  try {
    text = readFileSync(transcriptFile, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const exchanges: ChatExchange[] = [];
  for (const line of text.split("\n")) {
    if (!line.includes('"chat"')) continue;
    try {
      const event = JSON.parse(line) as Record<string, unknown>;
      if (event.type !== "chat" || event.event !== "answer") continue;
      if (typeof event.question !== "string" || typeof event.answer !== "string") continue;
      const ids = Array.isArray(event.evidenceIds) ? event.evidenceIds.filter((id): id is string => typeof id === "string") : [];
      exchanges.push({ question: event.question, answer: event.answer, evidenceIds: ids });
    } catch {
      // A line cut short by a crash of an earlier run: the turns before it are still good.
    }
  }
  return exchanges;
}
