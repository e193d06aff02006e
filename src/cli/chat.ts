/**
 * `dumpdbg chat <session-id>` and the chat after `analyze --chat`: a readline REPL over one
 * session. Questions go to the chat agent; /commands inspect the evidence, run debugger commands
 * through the policy, and write the report with the chat appended. Ctrl+C cancels the answer in
 * progress, not the chat; Ctrl+D (or /exit) leaves. Piped questions work too, one per line.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { readEnvironment } from "../analyzers/index.js";
import { answerQuestion, loadBriefing, reportWithChat, type Briefing, type ChatDeps } from "../agents/chat/index.js";
import { adoptChatSession, openChatSession, previousExchanges, type ChatSession } from "../chat-session.js";
import type { CommandExecutor } from "../agents/executor.js";
import { resolveSessionId, sessionPaths, writeJsonAtomically, type Transcript } from "../evidence/sessions.js";
import type { EvidenceStore } from "../evidence/store.js";
import { leavesMachine, Redactor, resolveModels, Usage, type Models } from "../llm/index.js";
import { REPORT_DOCUMENT, REPORT_FORMATS, writeReports, type ChatExchange, type ReportFormat } from "../report/index.js";
import { openOptions, type DumpFlags } from "./dump-options.js";
import { modelConfig, type ModelFlags } from "./model-options.js";
import { sessionsRoot } from "./sessions-root.js";
import { noteCodeUse } from "../code-cache.js";

export interface ChatFlags extends DumpFlags, ModelFlags {
  sessionsDir?: string;
  out: string;
  maxTurns?: number;
  maxSeconds?: number;
  unsafe?: boolean;
}

export interface RunChatOptions {
  /** The sessions root (`--sessions-dir`). */
  root: string;
  sessionId: string;
  /**
   * `analyze --chat`: the analysis's store, executor (over its open debugger) and transcript, used
   * as they are and left open. Without it, the chat takes the session's lock and reopens the dump.
   */
  open?: { store: EvidenceStore; executor: CommandExecutor; transcript: Transcript };
  /** How to reopen the dump (without `open`); the dump and executable default to the session's. */
  dumpFlags?: DumpFlags;
  unsafe?: boolean;
  models: Models;
  /** `analyze --chat`: the analysis's redactor, which knows the dump's environment. */
  redactor?: Redactor;
  /** Where /report writes (`--out`). */
  outDir: string;
  /** Questions answered before the chat stops taking more; default 50. */
  maxTurns?: number;
  /** Seconds one answer may take before it is given up; default 120. */
  maxSeconds?: number;
}

const DEFAULT_MAX_TURNS = 50;
const DEFAULT_MAX_SECONDS = 120;

/** `dumpdbg chat <session-id>`. */
export async function chat(sessionId: string, flags: ChatFlags): Promise<void> {
  if (flags.unsafe) process.stderr.write("dumpdbg: WARNING: --unsafe lifts the command safety policy for /exec and the model's commands\n");
  const models = await resolveModels(modelConfig(flags));
  const root = sessionsRoot(flags.sessionsDir);
  await runChat({
    root,
    sessionId: resolveSessionId(root, sessionId),
    dumpFlags: flags,
    unsafe: flags.unsafe ?? false,
    models,
    outDir: resolve(flags.out),
    ...(flags.maxTurns !== undefined ? { maxTurns: flags.maxTurns } : {}),
    ...(flags.maxSeconds !== undefined ? { maxSeconds: flags.maxSeconds } : {}),
  });
}

/** The chat over one session, until the user leaves; from a session id, or over `analyze`'s open session. */
export async function runChat(options: RunChatOptions): Promise<void> {
  noteCodeUse("chat");
  await using session = options.open
    ? adoptChatSession(options.root, options.sessionId, options.open)
    : await openChatSession({
        root: options.root,
        id: options.sessionId,
        openOptions: (dump) => (options.dumpFlags ? openOptions(dump, options.dumpFlags) : { dump }),
        unsafe: options.unsafe ?? false,
      });
  for (const warning of session.warnings) process.stderr.write(`dumpdbg: warning: ${warning}\n`);
  const briefing = await loadBriefing(
    { sessionDir: session.dir, evidenceDb: sessionPaths(options.root, options.sessionId).evidenceDb, reportsDir: options.outDir, sessionId: options.sessionId },
    session.executor,
    session.dump,
  );
  for (const warning of briefing.warnings) process.stderr.write(`dumpdbg: warning: ${warning}\n`);
  // A chat on its own (not after an analysis) learns the dump's environment values itself, so
  // they are masked before a question's context leaves the machine.
  const redactor =
    options.redactor ??
    new Redactor({ envValues: options.models.redact && leavesMachine(options.models) ? await readEnvironment(session.executor.asker("chat")) : [] });
  await new ChatRepl(session, briefing, { ...options, redactor }).run();
}

const PROMPT = "dumpdbg> ";
const HISTORY_SIZE = 500;
/** A second Ctrl+C at the prompt within this time leaves. */
const DOUBLE_INTERRUPT_MS = 2_000;
/** /exec shows this much output; the whole of it is in the evidence. */
const MAX_EXEC_LINES = 400;
const MAX_LISTED_EVIDENCE = 60;
const MAX_QUESTION_CHARS = 4_000;

const HELP = `Ask about the crash in your own words, for example:
  why did it crash?                 show thread 3's stack          what were all threads doing?
  locals in frame 1                 what was in rax?               what does the fault address point into?
  which pointer was null?           what is \`session->client\`?     who holds which lock?
Answers cite evidence ids like [E12]; /evidence E12 shows where one comes from.
Commands:
  /help                  this list
  /history               the questions and answers of this session so far
  /evidence [query]      the session's evidence, or the evidence that matches the query
  /exec CMD              run a debugger command (read-only commands only, unless --unsafe)
  /report [md|html|json] write the report with this chat appended (all three by default)
  /exit                  leave (Ctrl+D does too)
Ctrl+C cancels an answer in progress.`;

type Outcome<T> = { ok: true; value: T } | { ok: false; reason: "cancelled" | "timeout" };

class ChatRepl {
  private readonly deps: ChatDeps;
  private readonly exchanges: ChatExchange[];
  private readonly historyFile: string;
  private readonly tty = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  /** The chat's own model spending, printed when it ends and added to the report's. */
  private readonly usage = new Usage();
  /** The executor's debugger time when the chat began: `analyze --chat` hands over a used one. */
  private readonly debuggerMsBefore: number;
  private readonly maxTurns: number;
  private readonly maxSeconds: number;
  private turns = 0;
  /** The answer or /exec in progress, which Ctrl+C cancels. */
  private current: AbortController | null = null;
  private lastInterrupt = 0;

  constructor(
    private readonly session: ChatSession,
    private readonly briefing: Briefing,
    private readonly options: RunChatOptions,
  ) {
    this.debuggerMsBefore = session.executor.debuggerMs;
    this.maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
    this.maxSeconds = options.maxSeconds ?? DEFAULT_MAX_SECONDS;
    this.deps = {
      executor: session.executor,
      store: session.store,
      vocabulary: session.vocabulary,
      briefing,
      models: options.models,
      usage: this.usage,
      redactor: options.redactor ?? new Redactor(),
    };
    this.exchanges = previousExchanges(sessionPaths(options.root, options.sessionId).transcript);
    this.historyFile = join(session.dir, "chat_history");
  }

  async run(): Promise<void> {
    const rl = createInterface({
      input: process.stdin,
      output: process.stdout,
      terminal: this.tty,
      prompt: PROMPT,
      history: this.loadHistory(),
      historySize: HISTORY_SIZE,
      removeHistoryDuplicates: true,
    });
    const lines = lineQueue(rl, () => {
      // Ctrl+D at the prompt leaves at once, even while an answer is being worked on.
      if (this.tty) this.current?.abort();
    });
    rl.on("history", (history: string[]) => this.saveHistory(history));
    rl.on("SIGINT", () => this.interrupt(rl));
    // A closed terminal leaves like Ctrl+D: the debugger, in its own process group, would not get
    // the hangup and would outlive a process killed by it.
    const hangup = () => rl.close();
    process.once("SIGHUP", hangup);

    this.greet();
    this.session.transcript.append({ type: "chat", event: "start", models: this.options.models.describe() });
    for (;;) {
      if (this.tty) rl.prompt();
      const line = await lines.next();
      if (line === null) break;
      try {
        if ((await this.handle(line.trim())) === "exit") break;
      } catch (error) {
        // Whatever went wrong with this line, the chat goes on.
        this.say(`error: ${(error as Error).message.split("\n")[0]}`);
      }
    }
    process.off("SIGHUP", hangup);
    rl.close();
    // Ctrl+D leaves the cursor after the prompt; the shell's prompt goes on a line of its own.
    if (this.tty) process.stdout.write("\n");
    this.session.transcript.append({ type: "chat", event: "end", questions: this.turns });
    if (this.usage.llmCalls > 0) process.stderr.write(`dumpdbg: ${this.usage.format()}\n`);
  }

  private greet(): void {
    const { crash } = this.briefing;
    const where = crash.culprit.function ? ` in ${crash.culprit.function}${crash.culprit.file ? ` (${basename(crash.culprit.file)}:${crash.culprit.line ?? "?"})` : ""}` : "";
    const thread = crash.kind !== "deadlock" && crash.thread.id !== null ? `, thread ${crash.thread.id}` : "";
    const earlier = this.exchanges.length > 0 ? `; ${this.exchanges.length} earlier question${this.exchanges.length === 1 ? "" : "s"} (/history)` : "";
    process.stderr.write(
      `dumpdbg chat: session ${this.options.sessionId}\n` +
        `crash: ${crash.kind}${where}${thread} (from ${this.briefing.source})\n` +
        `model: ${this.options.models.describe()}${earlier}\n` +
        "Ask about the crash in your own words; /help lists the commands, Ctrl+D leaves.\n",
    );
  }

  private async handle(line: string): Promise<"exit" | void> {
    if (line === "") return;
    if (!line.startsWith("/")) return this.ask(line);
    const [, name = "", rest = ""] = /^\/(\S*)\s*(.*)$/s.exec(line) ?? [];
    switch (name) {
      case "help":
        return this.say(HELP);
      case "exit":
      case "quit":
        return "exit";
      case "history":
        return this.history();
      case "evidence":
        return this.evidence(rest.trim());
      case "exec":
        return this.exec(rest.trim());
      case "report":
        return this.report(rest.trim());
      default:
        return this.say(`unknown command /${name}; /help lists the commands`);
    }
  }

  private async ask(question: string): Promise<void> {
    // A question is a sentence or a paragraph; a pasted megabyte is a mistake, and would stall the
    // claim matching that reads it.
    if (question.length > MAX_QUESTION_CHARS) {
      return this.say(`That question is ${question.length} characters long; keep it under ${MAX_QUESTION_CHARS} (paste outputs into /exec or /evidence instead).`);
    }
    if (this.turns >= this.maxTurns) {
      return this.say(`This chat has reached its limit of ${this.maxTurns} question${this.maxTurns === 1 ? "" : "s"} (--max-turns); /report, /history and /exit still work.`);
    }
    this.turns += 1;
    const started = performance.now();
    const outcome = await this.cancellable((signal) => answerQuestion(this.deps, question, this.exchanges, signal));
    const ms = Math.round(performance.now() - started);
    if (!outcome.ok) {
      this.session.transcript.append({ type: "chat", event: "cancelled", question, reason: outcome.reason, ms });
      return this.say(this.stopped(outcome.reason, "answer"));
    }
    const answer = outcome.value;
    const uncited = answer.evidenceIds.filter((id) => !answer.text.includes(id));
    const text = uncited.length > 0 ? `${answer.text}\n[${uncited.join(", ")}]` : answer.text;
    this.exchanges.push({ question, answer: text, evidenceIds: answer.evidenceIds });
    this.session.transcript.append({ type: "chat", event: "answer", question, answer: text, evidenceIds: answer.evidenceIds, mode: answer.mode, ms });
    this.say(text);
  }

  private async exec(command: string): Promise<void> {
    if (command === "") return this.say("usage: /exec CMD, e.g. /exec bt 5 or /exec info registers rip");
    const outcome = await this.cancellable(() => this.session.executor.run(command, "chat"));
    if (!outcome.ok) return this.say(this.stopped(outcome.reason, "command"));
    const result = outcome.value;
    this.session.transcript.append({ type: "chat", event: "exec", command, evidenceId: result.evidenceId, ok: result.ok, errorType: result.errorType });
    if (result.errorType === "not_allowed") return this.say(`refused: ${command}: ${result.error ?? "not allowed"} [${result.evidenceId}]`);
    if (!result.ok) return this.say(`${result.errorType === "debugger_error" ? "" : `${result.errorType}: `}${result.error ?? "failed"} [${result.evidenceId}]`);
    const output = this.session.store.output(result.evidenceId).replace(/\n$/, "").split("\n");
    const shown = output.length > MAX_EXEC_LINES ? [...output.slice(0, MAX_EXEC_LINES), `... ${output.length - MAX_EXEC_LINES} more lines in ${result.evidenceId}`] : output;
    this.say(`${shown.join("\n")}\n[${result.evidenceId}]${result.cached ? " (from the store)" : ""}`);
  }

  private history(): void {
    if (this.exchanges.length === 0) return this.say("No questions yet.");
    this.say(this.exchanges.map((e, i) => `Q${i + 1}: ${e.question}\n${e.answer}`).join("\n\n"));
  }

  private evidence(query: string): void {
    const { store } = this.session;
    if (query === "") {
      const all = store.list();
      if (all.length === 0) return this.say("No evidence yet.");
      const shown = all.slice(-MAX_LISTED_EVIDENCE);
      const earlier = all.length > shown.length ? [`... ${all.length - shown.length} earlier; /evidence QUERY searches them all`] : [];
      return this.say([...earlier, ...shown.map((e) => `${e.id.padEnd(5)} ${e.command}  - ${oneLine(e.summary)}`)].join("\n"));
    }
    const byId = /^E\d+$/.test(query) ? store.get(query) : null;
    if (byId) {
      const head = byId.head.replace(/\n$/, "");
      return this.say(`${byId.id} ${byId.command} (${byId.source}, ${byId.ok ? "ok" : byId.errorType})\n${head}${byId.tail ? `\n...\n${byId.tail}` : ""}`);
    }
    const hits = store.search(query, 10);
    if (hits.length === 0) return this.say(`No evidence matches "${query}".`);
    this.say(hits.map((hit) => `${hit.evidenceId.padEnd(5)} ${hit.command}  - ${hit.line !== null ? `line ${hit.line + 1}: ` : ""}${oneLine(hit.snippet)}`).join("\n"));
  }

  private async report(args: string): Promise<void> {
    const asked = args.split(/[\s,]+/).filter(Boolean);
    const unknown = asked.filter((format) => !(REPORT_FORMATS as readonly string[]).includes(format));
    if (unknown.length > 0) return this.say(`unknown report format ${unknown.join(", ")}; use ${REPORT_FORMATS.join(", ")}`);
    const formats = asked.length > 0 ? (asked as ReportFormat[]) : REPORT_FORMATS;
    const doc = reportWithChat({
      briefing: this.briefing,
      meta: this.session.meta,
      store: this.session.store,
      exchanges: this.exchanges,
      spent: { usage: this.usage.toJSON(), llmMs: this.usage.llmMs, debuggerMs: this.session.executor.debuggerMs - this.debuggerMsBefore },
    });
    const written = await writeReports(doc, { outDir: this.options.outDir, formats });
    // The analysis's document, now with the chat, is what a later rendering should start from. A
    // bare JSON report or a triage lacks the analysis's details, so it does not replace anything.
    if (this.briefing.origin === "document") writeJsonAtomically(join(this.session.dir, REPORT_DOCUMENT), doc);
    this.session.transcript.append({ type: "chat", event: "report", files: written.map((w) => w.file) });
    const questions = `${this.exchanges.length} question${this.exchanges.length === 1 ? "" : "s"} in its Chat section`;
    const lacking = this.briefing.origin === "document" ? "" : "\nThe session has no saved report document (report.json), so this report lacks the analysis's technical details (frames, registers, threads).";
    this.say(`Wrote ${written.map((w) => w.file).join(", ")} (${questions}).${lacking}`);
  }

  /** Runs `work` until it finishes, Ctrl+C cancels it, or the per-answer time runs out. */
  private async cancellable<T>(work: (signal: AbortSignal) => Promise<T>): Promise<Outcome<T>> {
    const controller = new AbortController();
    const timeout = AbortSignal.timeout(this.maxSeconds * 1000);
    const signal = AbortSignal.any([controller.signal, timeout]);
    this.current = controller;
    // The prompt comes back at once; a debugger command in flight finishes in the background
    // (the session runs one at a time) and what the cancelled work does after it is discarded.
    const stopped = new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
    const running = work(signal);
    running.catch(() => undefined);
    stopped.catch(() => undefined);
    try {
      return { ok: true, value: await Promise.race([running, stopped]) };
    } catch (error) {
      if (signal.aborted) return { ok: false, reason: controller.signal.aborted ? "cancelled" : "timeout" };
      throw error;
    } finally {
      this.current = null;
    }
  }

  private stopped(reason: "cancelled" | "timeout", what: "answer" | "command"): string {
    return reason === "cancelled"
      ? `(${what} cancelled)`
      : `(no ${what} within ${this.maxSeconds} s; ask something narrower, or raise --max-seconds)`;
  }

  /** Ctrl+C: cancel the answer in progress; at the prompt, clear the line, or hint, or leave when pressed twice. */
  private interrupt(rl: Interface): void {
    if (this.current) {
      this.current.abort();
      return;
    }
    if (rl.line.length > 0) {
      rl.write(null, { ctrl: true, name: "e" });
      rl.write(null, { ctrl: true, name: "u" });
      return;
    }
    const now = Date.now();
    if (now - this.lastInterrupt < DOUBLE_INTERRUPT_MS) {
      rl.close();
      return;
    }
    this.lastInterrupt = now;
    process.stdout.write("\n(press Ctrl+D or type /exit to leave; Ctrl+C again leaves too)\n");
    rl.prompt();
  }

  private say(text: string): void {
    process.stdout.write(`${text}\n\n`);
  }

  /** Up-arrow history across runs: `chat_history` in the session folder, oldest line first. */
  private loadHistory(): string[] {
    try {
      return readFileSync(this.historyFile, "utf8").split("\n").filter(Boolean).reverse().slice(0, HISTORY_SIZE);
    } catch {
      return [];
    }
  }

  private saveHistory(history: string[]): void {
    try {
      writeFileSync(this.historyFile, `${[...history].reverse().join("\n")}\n`);
    } catch (error) {
      this.say(`warning: could not save the chat history: ${(error as Error).message}`);
    }
  }
}

/** Lines as they come, then null at the end of input (Ctrl+D, end of a pipe, or the chat closing). */
function lineQueue(rl: Interface, onClose: () => void): { next(): Promise<string | null> } {
  const pending: string[] = [];
  let closed = false;
  let wake: (() => void) | null = null;
  rl.on("line", (line) => {
    pending.push(line);
    wake?.();
  });
  rl.on("close", () => {
    closed = true;
    onClose();
    wake?.();
  });
  return {
    async next() {
      while (pending.length === 0 && !closed) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
      return pending.shift() ?? null;
    },
  };
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= 120 ? flat : `${flat.slice(0, 119)}…`;
}

