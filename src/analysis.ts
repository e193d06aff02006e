/**
 * One analysis, end to end: open the dump → session folder → evidence store → executor → triage →
 * the graph (checkpointed in the session's evidence.db) → reports. `resumeAnalysis` rebuilds the
 * same runtime around an interrupted session and lets the graph continue from its last checkpoint;
 * commands that already ran are served from the store, so nothing is run or stored twice.
 */
import { GraphRecursionError } from "@langchain/langgraph/web";
import Database from "better-sqlite3";
import { join } from "node:path";
import { readAheadTriage, readEnvironment, triage as runTriage, triageOptionsOf } from "./analyzers/index.js";
import { CommandExecutor } from "./agents/executor.js";
import { crashSiteOf } from "./agents/playbooks/crash-site.js";
import { composeReport } from "./agents/report-writer/compose.js";
import { followUpQuestions } from "./agents/report-writer/offline.js";
import { ensureLimits, uncheckpointedSpend, type Limits, type Runtime } from "./agents/runtime.js";
import { openingLines, describeDebugger, openDump, type OpenDumpOptions, type OpenedDump } from "./debuggers/open.js";
import { checkpointSaver } from "./evidence/checkpoints.js";
import { acquireSessionLock, createSession, loadSession, SessionError, SESSIONS_ELSEWHERE, sessionPaths, Transcript, updateSession, writeJsonAtomically } from "./evidence/sessions.js";
import type { Backend } from "./debuggers/session.js";
import { evidenceDamage, EvidenceStore } from "./evidence/store.js";
import { rebuildEvidence, rebuiltLine } from "./evidence/rebuild.js";
import { leavesMachine, Redactor, resolveModels, Usage, type ModelConfig, type ModelDown, type Models } from "./llm/index.js";
import { REPORT_DOCUMENT, writeReports, type WrittenReport } from "./report/index.js";
import { counted } from "./report/numbers.js";
import type { Report } from "./report/schema.js";
import { NOTHING_SPENT, type State, type Update } from "./state.js";
import { Resources } from "./resources.js";
import { asStorageError, StorageError } from "./storage-errors.js";
import { DebuggerError } from "./debuggers/errors.js";
import { sessionStamp } from "./debuggers/dump-identity.js";
import { reopenDump } from "./session-dump.js";
import { buildAnalysisGraph } from "./workflows.js";

export interface AnalysisOptions {
  /** How to open the dump; `dump` is ignored on resume (the session names it). */
  open: OpenDumpOptions;
  /**
   * The dump already being opened with `open` (the command line starts the debugger before it
   * loads this module, so the two overlap); else `analyze` opens it.
   */
  opening?: Promise<OpenedDump>;
  models: ModelConfig;
  sessionsDir: string;
  outDir: string;
  /** Lifts the command safety policy for commands models propose. */
  unsafe: boolean;
  limits?: Partial<Limits>;
  /** One progress line (stderr); `detail` marks one command's line, which a terminal collapses. */
  progress: (line: string, detail?: boolean) => void;
  /** Registers what to do on Ctrl+C (print the token usage, mark the session interrupted). */
  onInterrupt?: (hook: () => void) => void;
  /**
   * Runs once the reports are written, while the dump, store and executor are still open
   * (`analyze --chat`); they are closed when it returns.
   */
  afterReport?: (open: AfterReport) => Promise<void>;
  /**
   * The process ends with the analysis (the command line): its debugger is ended without waiting
   * for the kernel's teardown of it (see DebuggerSession.close).
   */
  exiting?: boolean;
}

/** What `afterReport` gets: the result, and the analysis's own open session, to be used and left open. */
export interface AfterReport {
  sessionId: string;
  report: Report;
  files: WrittenReport[];
  store: EvidenceStore;
  executor: CommandExecutor;
  transcript: Transcript;
  models: Models;
  redactor: Redactor;
}

export interface AnalysisResult {
  sessionId: string;
  report: Report;
  files: WrittenReport[];
  /** The graph's final state: the route taken, every hypothesis and observation. */
  state: State;
}

/** "the model at URL stopped answering after 2 calls (why); the rest ran offline". */
export function modelDownLine(down: ModelDown): string {
  const after = down.answered === 0 ? "never answered" : `stopped answering after ${down.answered} ${down.answered === 1 ? "call" : "calls"}`;
  return `the model ${down.provider} ${down.model} at ${down.url} ${after} (${down.reason.replace(/^\S+ \S+: /, "")}); the rest ran offline`;
}

export async function analyze(issue: string | null, options: AnalysisOptions): Promise<AnalysisResult> {
  const started = performance.now();
  const [models, opened] = await bothOrClose(resolveModels(options.models), options.opening ?? openDump(options.open));
  await using owned = new Resources();
  owned.defer(() => opened.session.close({ wait: !options.exiting }));
  // The debugger starts on triage's first questions while the session and its store are set up.
  await readAheadTriage(opened.session, triageOptionsOf(opened.dump, opened.executable, opened.hsErr), executorRunOptions(options));
  for (const line of openingLines(opened)) options.progress(line);
  const session = createSession(options.sessionsDir, {
    // The user's file: a resumed or chatted session decompresses it again.
    dump: opened.source.original,
    executable: opened.executable,
    debugger: { backend: opened.session.backend, path: opened.debuggerPath, version: opened.session.version() },
    issue,
    ...sessionStamp(opened.source.original),
  });
  options.progress(`session ${session.id}; models: ${models.describe()}`);
  return run(session.id, opened, owned.move(), models, options, started, (runtime) => startingState(runtime, issue));
}

/** The timeout the executor runs each command with. */
function executorRunOptions(options: AnalysisOptions): { timeoutMs?: number } {
  return options.open.timeoutMs ? { timeoutMs: options.open.timeoutMs } : {};
}

/** The models and the open dump, found at once; when either fails, the other's debugger is closed. */
async function bothOrClose(models: Promise<Models>, opening: Promise<OpenedDump>): Promise<[Models, OpenedDump]> {
  const [m, o] = await Promise.allSettled([models, opening]);
  if (m.status === "fulfilled" && o.status === "fulfilled") return [m.value, o.value];
  if (o.status === "fulfilled") await o.value.session.close();
  throw m.status === "rejected" ? m.reason : (o as PromiseRejectedResult).reason;
}

export async function resumeAnalysis(id: string, options: AnalysisOptions): Promise<AnalysisResult> {
  const started = performance.now();
  const meta = loadSession(options.sessionsDir, id);
  if (meta.state === "done") throw new SessionError(`session ${id} has already finished; its report is ${join(options.outDir, `${id}.md`)}`);
  const rebuilt = rebuildIfDamaged(options.sessionsDir, id, meta.debugger.backend);
  const models = await resolveModels(options.models);
  const opened = await reopenDump(meta, options.open);
  await using owned = new Resources();
  owned.defer(() => opened.session.close({ wait: !options.exiting }));
  if (rebuilt) options.progress(`warning: ${rebuilt}`);
  options.progress(`resuming session ${id}; models: ${models.describe()}`);
  return run(id, opened, owned.move(), models, options, started, async (runtime, graph, config) => {
    const saved = await graph.getState(config);
    const values = saved.values as State;
    // Killed before the first checkpoint: start over; triage's commands come from the store.
    if (!values.triage) return startingState(runtime, meta.issue);
    // Checkpointed by a dumpdbg that kept no crash site: its sources are read now.
    if (!values.crashSite) await graph.updateState(config, { crashSite: crashSiteOf(values.triage, runtime.homeThread) });
    runtime.unclaimedUsage = uncheckpointedSpend(sessionPaths(options.sessionsDir, id).transcript, values.spent);
    if (runtime.unclaimedUsage) runtime.progress(`[resume] ${runtime.unclaimedUsage.llmCalls} model calls of the interrupted step are counted in the usage`);
    return null;
  });
}

/** A session's damaged evidence store rebuilt, its lock held, before the dump is opened: the line saying so, or null when it was whole. */
function rebuildIfDamaged(root: string, id: string, backend: Backend): string | null {
  const paths = sessionPaths(root, id);
  const damage = evidenceDamage(paths.evidenceDb);
  if (!damage) return null;
  const release = acquireSessionLock(root, id);
  try {
    return rebuiltLine(id, damage, rebuildEvidence(paths.dir, backend), "its checkpoints were lost with it: the analysis starts again from triage");
  } finally {
    release();
  }
}

/**
 * The graph's input: the issue, the triage (run through the executor so its commands are evidence)
 * and its crash site, whose sources are read here: the agents and the chat reason from the copy
 * the checkpoint keeps.
 */
async function startingState(runtime: Runtime, issue: string | null): Promise<Update> {
  const triage = await runTriage(runtime.executor.asker("triage"), { ...runtime.triageOptions, record: runtime.executor.recorder("triage") });
  runtime.progress(`[triage] ${triage.crash.kind} in ${triage.crash.culprit.function ?? "?"} (${counted(triage.commands.length, "command")})`);
  const triageEvidence = runtime.executor.evidenceIdsOf(triage.commands);
  const crashSite = crashSiteOf(triage, runtime.homeThread);
  if (Object.keys(crashSite.sources).length > 0) readSourceNamesAhead(runtime);
  return { issue, triage, crashSite, triageEvidence };
}

/**
 * The crash site's sources are on this machine, so the analysis will list them: the debugger
 * reads the source file names it looks them up among now, while it would otherwise wait for the
 * hypotheses, rather than at the first listing. Nothing waits for it; its answer is no evidence.
 */
function readSourceNamesAhead(runtime: Runtime): void {
  const command = runtime.session.vocabulary.readSourceNames;
  if (command !== undefined) void runtime.session.run(command).catch(() => undefined);
}

type Graph = ReturnType<typeof buildAnalysisGraph>;
type RunConfig = { configurable: { thread_id: string }; context: { runtime: Runtime }; recursionLimit: number; durability: "sync" };

/**
 * The part analyze and resume share: the session's store, transcript, executor and checkpointer
 * around the open dump; the graph, from `start`'s input or (when it returns null) the last checkpoint;
 * the reports; and the session's final state. What it is handed (the open dump) and everything it
 * opens are closed when it ends.
 */
async function run(
  id: string,
  opened: OpenedDump,
  handed: Resources,
  models: Models,
  options: AnalysisOptions,
  started: number,
  start: (runtime: Runtime, graph: Graph, config: RunConfig) => Promise<Update | null>,
): Promise<AnalysisResult> {
  const root = options.sessionsDir;
  const paths = sessionPaths(root, id);
  await using resources = handed;
  // Released after the session folder's files below are closed, which it guards.
  resources.defer(acquireSessionLock(root, id));
  // Once the session is done, a report that cannot be written leaves it done: `dumpdbg report` writes it.
  let finished = false;
  try {
    const firstRun = loadSession(root, id).state === "created";
    updateSession(root, id, { state: "running" });
    const store = resources.use(EvidenceStore.open(paths.evidenceDb));
    const transcript = resources.use(Transcript.open(root, id));
    const executor = new CommandExecutor({ session: opened.session, store, transcript, unsafe: options.unsafe, dumpUnchanged: opened.unchanged, ...executorRunOptions(options) });
    const usage = new Usage();
    options.onInterrupt?.(() => {
      process.stderr.write(`dumpdbg: ${usage.format()}; resume with "dumpdbg resume ${id}"\n`);
      updateSession(root, id, { state: "interrupted" });
    });
    const envValues = models.redact && leavesMachine(models) ? await readEnvironment(executor.asker("triage")) : [];
    const meta = loadSession(root, id);
    const runtime: Runtime = {
      session: opened.session,
      executor,
      store,
      transcript,
      models,
      usage,
      redactor: new Redactor({ envValues }),
      limits: ensureLimits(options.limits),
      progress: options.progress,
      meta: {
        id,
        dump: meta.dump,
        executable: meta.executable,
        debugger: describeDebugger(opened.session.backend, opened.debuggerPath, opened.session.version()),
        // A fresh analysis started before its session existed (the dump was opened first); a
        // resumed one keeps the time it was first started.
        startedAt: firstRun ? new Date(performance.timeOrigin + started).toISOString() : meta.createdAt,
      },
      homeThread: opened.session.context().selectedThread?.id ?? null,
      triageOptions: { ...triageOptionsOf(opened.dump, opened.executable, opened.hsErr), debugger: opened.session.vocabulary.debugger },
      // The debugger that crashed on this dump before the one that read it is said with what the latter warned of.
      debuggerWarnings: [...(opened.crashedDebugger ? [opened.crashedDebugger] : []), ...opened.debuggerWarnings],
      dumpSource: opened.notes,
      symbols: (opened.symbols?.modules ?? []).map((m) => ({ module: m.module, status: m.status, detail: m.status === "found" || m.status === "fetched" ? `${m.file}${m.status === "fetched" ? ` (from ${m.from})` : ""}` : m.detail })),
      unclaimedMs: 0,
      unclaimedUsage: null,
    };
    const checkpoints = resources.use(new Database(paths.evidenceDb));
    // As the evidence store's connection: a checkpoint survives a killed process without an fsync each.
    checkpoints.pragma("synchronous = NORMAL");
    const graph = buildAnalysisGraph(checkpointSaver(checkpoints));
    const config: RunConfig = { configurable: { thread_id: id }, context: { runtime }, recursionLimit: runtime.limits.recursionLimit, durability: "sync" };
    const input = await start(runtime, graph, config);
    runtime.unclaimedMs = performance.now() - started;
    const state = await runGraph(graph, input, config, runtime);
    const document = state.document;
    if (!document) throw new Error("the analysis graph ended without a report");
    // First, so that `dumpdbg report` can write the reports again should writing them fail here.
    writeJsonAtomically(join(paths.dir, REPORT_DOCUMENT), document);
    updateSession(root, id, { state: "done", finishedAt: document.report.session.finishedAt });
    finished = true;
    const files = await writeReports(document, { outDir: options.outDir }).catch((error: unknown) => {
      throw error instanceof StorageError ? error.followedBy(`the analysis is saved: "dumpdbg report ${id} --out DIR" writes its report`) : error;
    });
    updateSession(root, id, { reports: files.map((f) => f.file) });
    // The report's usage, not this process's: a resumed run adds what earlier processes spent.
    const spent = Usage.of(document.report.usage, document.report.timings.llmMs);
    options.progress(`${models.cloud || models.local ? spent.format() : "offline (no model calls)"}; report: ${files.map((f) => f.file).join(", ")}`);
    for (const down of document.report.usage.modelsDown ?? []) options.progress(modelDownLine(down));
    await options.afterReport?.({ sessionId: id, report: document.report, files, store, executor, transcript, models, redactor: runtime.redactor });
    return { sessionId: id, report: document.report, files, state };
  } catch (error) {
    if (!finished) markFailed(root, id);
    throw finished ? error : sessionFault(error, id, paths.dir, paths.evidenceDb);
  }
}

/**
 * The session is marked failed where that can be written; where it cannot (the disk that failed
 * the run is full), it stays `running` with no process, which reads as interrupted and resumes.
 */
function markFailed(root: string, id: string): void {
  try {
    updateSession(root, id, { state: "failed" });
  } catch {
    // The error that ended the run is the one to tell.
  }
}

/**
 * A full or read-only sessions folder mid-run: the checkpoints before it are whole (SQLite rolled
 * back the step that failed), so the run goes on with `resume` once there is room. SQLite's errors
 * come from the two connections to the session's evidence.db: the store's and the checkpointer's.
 */
function sessionFault(error: unknown, id: string, dir: string, evidenceDb: string): unknown {
  // A debugger that could not be started again mid-run: what it gathered is in the store, and the checkpoints are whole.
  if (error instanceof DebuggerError) return new DebuggerError(`${error.message}; the evidence so far is kept: "dumpdbg resume ${id}" goes on from the last step saved`);
  const code = (error as { code?: unknown } | null)?.code;
  const fault = typeof code === "string" && code.startsWith("SQLITE_") ? asStorageError(error, evidenceDb, { elsewhere: SESSIONS_ELSEWHERE }) : error;
  if (!(fault instanceof StorageError) || !fault.path.startsWith(`${dir}/`)) return fault;
  return fault.followedBy(`then "dumpdbg resume ${id}" goes on from the last step saved`);
}

/**
 * Runs the graph to its end. If LangGraph's recursion limit stops it anyway (the routers wrap up
 * before it, unless the limit is set very low), the report is written from the last checkpoint.
 */
async function runGraph(graph: Graph, input: Update | null, config: RunConfig, runtime: Runtime): Promise<State> {
  try {
    return (await graph.invoke(input, config)) as State;
  } catch (error) {
    if (!(error instanceof GraphRecursionError)) throw error;
    const state = (await graph.getState(config)).values as State;
    runtime.progress(`[report] the step limit (${config.recursionLimit}) stopped the graph; reporting what was established`);
    return { ...state, document: composeReport(state, runtime, NOTHING_SPENT, followUpQuestions(state, [])) };
  }
}

