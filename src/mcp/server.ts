/**
 * `dumpdbg mcp`: a Model Context Protocol server on stdio, for coding agents that debug through
 * MCP. An agent opens dumps (several at once, each a session id), runs debugger commands through
 * the same safety policy and evidence store as everything else, asks for the triage, searches the
 * evidence, runs the whole analysis and reads its report. Every result carries where the debugger
 * stands and when. Failures are results with a typed `errorType`, never a crashed server; idle
 * sessions close their debugger, and so does the client going away.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "../zod.js";
import { CommandExecutor } from "../agents/executor.js";
import { analyze } from "../analysis.js";
import { triage, triageOptionsOf } from "../analyzers/index.js";
import { killAllDebuggers } from "../debuggers/live.js";
import { openingLines, openDump, type OpenedDump } from "../debuggers/open.js";
import type { SessionContext } from "../debuggers/session.js";
import { sessionStamp } from "../debuggers/dump-identity.js";
import { createSession, sessionPaths, Transcript, updateSession } from "../evidence/sessions.js";
import { EvidenceStore } from "../evidence/store.js";
import { ReportSchema } from "../report/schema.js";
import { Resources } from "../resources.js";

export interface McpOptions {
  sessionsDir: string;
  outDir: string;
  /** A session unused this long closes its debugger. */
  idleMs: number;
  /** Output above this many characters is returned as its head and tail, the whole kept as evidence. */
  maxOutputChars: number;
}

interface OpenSession {
  id: string;
  opened: OpenedDump;
  store: EvidenceStore;
  executor: CommandExecutor;
  lastUsed: number;
  /** The debugger, the store and the transcript, closed together when the session ends. */
  resources: Resources;
}

type ErrorType = "unknown_session" | "bad_input" | "debugger_error" | "not_allowed" | "timeout" | "internal";

const VERSION = "0.1.0";
/** How long the sessions get to close their debuggers when the client goes away. */
const SHUTDOWN_GRACE_MS = 2_000;

export async function serveMcp(options: McpOptions): Promise<void> {
  const sessions = new Map<string, OpenSession>();
  const server = new McpServer({ name: "dumpdbg", version: VERSION }, { capabilities: { logging: {} } });

  const where = (session: OpenSession | null, context?: SessionContext) => {
    const ctx = context ?? session?.opened.session.context() ?? null;
    return {
      sessionId: session?.id ?? null,
      debugger: session?.opened.session.backend ?? null,
      dump: session?.opened.source.original ?? null,
      threadCount: ctx?.threadCount ?? null,
      selectedThread: ctx?.selectedThread ?? null,
      selectedFrame: ctx?.selectedFrame ?? null,
      timestamp: new Date().toISOString(),
    };
  };
  /** A result: structured content and its short text rendering. */
  const result = (text: string, structured: Record<string, unknown>, isError = false) => ({
    content: [{ type: "text" as const, text }],
    structuredContent: structured,
    ...(isError ? { isError: true } : {}),
  });
  const failure = (errorType: ErrorType, error: string, session: OpenSession | null = null) =>
    result(`${errorType}: ${error}`, { ok: false, errorType, error, context: where(session) }, true);
  const sessionOf = (id: string) => {
    const session = sessions.get(id) ?? null;
    if (session) session.lastUsed = Date.now();
    return session;
  };
  const close = async (session: OpenSession) => {
    sessions.delete(session.id);
    // A debugger that does not close politely is killed at shutdown; the session is over either way.
    await session.resources[Symbol.asyncDispose]().catch(() => undefined);
    updateSession(options.sessionsDir, session.id, { state: "done", finishedAt: new Date().toISOString() });
  };

  server.registerTool(
    "open_dump",
    {
      description:
        "Open a crash dump (an ELF core file or a Windows/Breakpad minidump) in a real debugger and keep it open as a session. Returns the session id to pass to the other tools, which debugger reads it, and where it stands: the thread that crashed and its innermost frame. Give the crashed program with `exe` when it is not where the dump says; `modulesPath` names folders of the dump's shared libraries or DLLs, `symbols` folders of debug information.",
      inputSchema: {
        path: z.string().describe("the dump file"),
        exe: z.string().optional().describe("the crashed program"),
        debugger: z.enum(["auto", "gdb", "lldb", "cdb"]).optional(),
        modulesPath: z.array(z.string()).optional(),
        symbols: z.array(z.string()).optional(),
        symbolPath: z.string().optional().describe("cdb's symbol path; a symbol server only when it names one"),
      },
    },
    async ({ path, exe, debugger: choice, modulesPath, symbols, symbolPath }) => {
      // Until the session is kept, a failure closes what was opened; then the session owns them.
      await using opening = new Resources();
      let opened: OpenedDump;
      try {
        opened = await openDump({
          dump: resolve(path),
          ...(exe ? { exe } : {}),
          ...(choice ? { debugger: choice } : {}),
          ...(modulesPath?.length ? { modulesPath } : {}),
          ...(symbols?.length ? { symbols } : {}),
          ...(symbolPath ? { symbolPath } : {}),
          onMismatch: "warn",
        });
      } catch (error) {
        return failure("bad_input", (error as Error).message);
      }
      opening.defer(() => opened.session.close());
      const meta = createSession(options.sessionsDir, {
        dump: opened.source.original,
        executable: opened.executable,
        debugger: { backend: opened.session.backend, path: opened.debuggerPath, version: opened.session.version() },
        issue: null,
        ...sessionStamp(opened.source.original),
      });
      const paths = sessionPaths(options.sessionsDir, meta.id);
      const store = opening.use(EvidenceStore.open(paths.evidenceDb));
      const transcript = opening.use(Transcript.open(options.sessionsDir, meta.id));
      const executor = new CommandExecutor({ session: opened.session, store, transcript, dumpUnchanged: opened.unchanged });
      const session: OpenSession = { id: meta.id, opened, store, executor, lastUsed: Date.now(), resources: opening.move() };
      sessions.set(meta.id, session);
      updateSession(options.sessionsDir, meta.id, { state: "running" });
      const warnings = openingLines(opened);
      const context = where(session);
      const frame = context.selectedFrame;
      const text = `opened ${opened.source.original} with ${opened.session.backend} as session ${meta.id}; thread ${context.selectedThread?.id ?? "?"} of ${context.threadCount ?? "?"}${frame?.function ? ` in ${frame.function}${frame.file ? ` at ${frame.file}:${frame.line ?? "?"}` : ""}` : ""}`;
      return result(text, { ok: true, sessionId: meta.id, format: opened.dump.format, executable: opened.executable, warnings, context });
    },
  );

  server.registerTool(
    "run_command",
    {
      description:
        "Run one read-only debugger command in an open session, in the debugger's own language (gdb: `bt 20`, `p session->client`, `info locals`; lldb: `bt 20`, `frame variable`; cdb: `kn 0x14`, `dv /i /t /v`, `!analyze -v`, and SOS's `!pe`, `!clrstack -a` on .NET dumps). Commands that could change the program or the machine are refused (errorType `not_allowed`) and never reach the debugger. Long output comes back as its head and tail with the evidence id that keeps all of it; the result says where the debugger stands afterwards.",
      inputSchema: { sessionId: z.string(), command: z.string().min(1) },
    },
    async ({ sessionId, command }) => {
      const session = sessionOf(sessionId);
      if (!session) return failure("unknown_session", `no open session ${sessionId}`);
      try {
        const ran = await session.executor.run(command, "user");
        const output = session.store.output(ran.evidenceId);
        const long = output.length > options.maxOutputChars;
        const half = Math.floor(options.maxOutputChars / 2);
        const shown = long ? `${output.slice(0, half)}\n… (${output.length - 2 * half} characters more in ${ran.evidenceId}) …\n${output.slice(-half)}` : output;
        const structured = {
          ok: ran.ok,
          command: ran.command,
          evidenceId: ran.evidenceId,
          output: shown,
          truncated: long,
          summary: ran.summary,
          errorType: ran.errorType,
          error: ran.error,
          cached: ran.cached,
          ms: ran.ms,
          context: where(session, ran.context),
        };
        // This server has no --unsafe: a refusal is final here.
        const error = ran.error?.replace(/\s*\(use --unsafe to allow\)/, "") ?? null;
        return result(ran.ok ? shown : `${ran.errorType}: ${error ?? "failed"}`, { ...structured, error }, !ran.ok);
      } catch (error) {
        return failure("internal", (error as Error).message, session);
      }
    },
  );

  server.registerTool(
    "triage",
    {
      description:
        "The crash verdict of an open dump in a few facts, without a model: the kind (null-dereference, stack-overflow, deadlock, …), the signal or exception, the fault address and access, the culprit function with file and line, the message (abort, assertion, exception type), the thread, a signature stable across builds, and lock cycles for hangs.",
      inputSchema: { sessionId: z.string() },
    },
    async ({ sessionId }) => {
      const session = sessionOf(sessionId);
      if (!session) return failure("unknown_session", `no open session ${sessionId}`);
      try {
        const verdict = await triage(session.executor.asker("triage"), triageOptionsOf(session.opened.dump, session.opened.executable));
        const { crash } = verdict;
        const at = crash.culprit.function ? `${crash.culprit.function}${crash.culprit.file ? ` at ${crash.culprit.file}:${crash.culprit.line ?? "?"}` : ""}` : "no culprit frame";
        return result(`${crash.kind} in ${at}${crash.message ? `: ${crash.message}` : ""}`, { ok: true, crash, notes: verdict.notes, context: where(session) });
      } catch (error) {
        return failure("internal", (error as Error).message, session);
      }
    },
  );

  server.registerTool(
    "search_evidence",
    {
      description: "Search everything the debugger printed in a session (its evidence) for words; returns the matching lines with their evidence ids and commands.",
      inputSchema: { sessionId: z.string(), query: z.string().min(1), limit: z.number().int().min(1).max(50).optional() },
    },
    async ({ sessionId, query, limit }) => {
      const open = sessionOf(sessionId);
      await using reading = new Resources();
      const store = open?.store ?? closedSessionStore(options, sessionId, reading);
      if (!store) return failure("unknown_session", `no session ${sessionId}`);
      const hits = store.search(query, limit ?? 10);
      const text = hits.length ? hits.map((hit) => `[${hit.evidenceId}] ${hit.command}: ${hit.snippet}`).join("\n") : "no match";
      return result(text, { ok: true, hits, context: where(open) });
    },
  );

  server.registerTool(
    "analyze",
    {
      description:
        "Run dumpdbg's whole analysis of a dump (hypotheses tested with debugger commands, a reasoned and critiqued conclusion, follow-up questions) and return its JSON report. Offline by default; `provider` uses a model configured in the environment. Returns the session id for get_report and search_evidence. Takes seconds offline, longer with a model; progress is sent as notifications.",
      inputSchema: {
        path: z.string(),
        exe: z.string().optional(),
        issue: z.string().optional().describe("what went wrong, in the user's words"),
        provider: z.enum(["offline", "auto", "openai", "anthropic", "ollama"]).optional(),
        modulesPath: z.array(z.string()).optional(),
      },
    },
    async ({ path, exe, issue, provider, modulesPath }, extra) => {
      const token = extra._meta?.progressToken;
      let step = 0;
      try {
        const analysis = await analyze(issue ?? null, {
          open: { dump: resolve(path), ...(exe ? { exe } : {}), ...(modulesPath?.length ? { modulesPath } : {}) },
          models: { provider: provider ?? "offline", redact: true },
          sessionsDir: options.sessionsDir,
          outDir: options.outDir,
          unsafe: false,
          progress: (line) => {
            step += 1;
            if (token !== undefined) void extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: step, message: line.slice(0, 300) } });
          },
        });
        const report = analysis.report;
        return result(`${report.conclusion.summary}\n(session ${analysis.sessionId}; reports: ${analysis.files.map((f) => f.file).join(", ")})`, { ok: true, sessionId: analysis.sessionId, report, files: analysis.files.map((f) => f.file), context: where(null) });
      } catch (error) {
        return failure("bad_input", (error as Error).message);
      }
    },
  );

  server.registerTool(
    "get_report",
    {
      description: "The JSON report of a session's analysis (kind, culprit, hypotheses with their evidence, conclusion, critique, questions, usage).",
      inputSchema: { sessionId: z.string() },
    },
    async ({ sessionId }) => {
      const file = join(sessionPaths(options.sessionsDir, sessionId).dir, "report.json");
      if (!/^[\w.-]+$/.test(sessionId) || !existsSync(file)) return failure("unknown_session", `no report for session ${sessionId}`);
      try {
        const document = JSON.parse(readFileSync(file, "utf8")) as { report: unknown };
        const report = ReportSchema.parse(document.report);
        return result(report.conclusion.summary, { ok: true, sessionId, report, context: where(sessionOf(sessionId)) });
      } catch (error) {
        return failure("internal", `the report of ${sessionId} cannot be read: ${(error as Error).message}`);
      }
    },
  );

  server.registerTool(
    "close_dump",
    { description: "Close an open session and its debugger. Its evidence stays searchable.", inputSchema: { sessionId: z.string() } },
    async ({ sessionId }) => {
      const session = sessions.get(sessionId);
      if (!session) return failure("unknown_session", `no open session ${sessionId}`);
      await close(session);
      return result(`closed ${sessionId}`, { ok: true, sessionId, context: where(null) });
    },
  );

  // Idle sessions close their debugger.
  const idle = setInterval(() => {
    for (const session of sessions.values()) if (Date.now() - session.lastUsed > options.idleMs) void close(session);
  }, Math.min(options.idleMs, 10_000));
  idle.unref();

  const shutdown = async () => {
    clearInterval(idle);
    // Closing politely gets a moment; then no debugger outlives the server, whatever state it is in.
    await Promise.race([Promise.all([...sessions.values()].map((session) => close(session))), new Promise((done) => setTimeout(done, SHUTDOWN_GRACE_MS).unref())]);
    killAllDebuggers();
  };
  const transport = new StdioServerTransport();
  await server.connect(transport);
  await new Promise<void>((done) => {
    const stop = () => void shutdown().then(done);
    process.stdin.once("end", stop);
    process.stdin.once("close", stop);
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
    transport.onclose = stop;
  });
}

/** A closed session's evidence store, opened for one search and closed with `resources`. */
function closedSessionStore(options: McpOptions, sessionId: string, resources: Resources): EvidenceStore | null {
  if (!/^[\w.-]+$/.test(sessionId)) return null;
  const db = sessionPaths(options.sessionsDir, sessionId).evidenceDb;
  if (!existsSync(db)) return null;
  return resources.use(EvidenceStore.open(db));
}
