/**
 * The one executor between everything that wants a command run and the debugger:
 * policy → debugger → evidence store → analyzers, and an evidence id with a summary back.
 * The same command in the same thread/frame context is served from the store, not re-run.
 */
import { analyzeOutput } from "../analyzers/registry.js";
import { runGuarded } from "../debuggers/guard.js";
import { answerOf, type Ask } from "../debuggers/inspector.js";
import type { Probe, Vocabulary } from "../debuggers/probe.js";
import type { Backend, CommandErrorType, CommandResult, DebuggerSession, SessionContext } from "../debuggers/session.js";
import type { Transcript } from "../evidence/sessions.js";
import { commandKey, type EvidenceSource, type EvidenceStore } from "../evidence/store.js";

export interface ExecutedCommand {
  evidenceId: string;
  command: string;
  ok: boolean;
  errorType: CommandErrorType | null;
  error: string | null;
  /** The analyzers' one-line summary, or the first line of output when none knows the command. */
  summary: string;
  findings: string[];
  /** True when the answer came from the store instead of the debugger. */
  cached: boolean;
  ms: number;
  context: SessionContext;
}

export interface ExecutorOptions {
  session: DebuggerSession;
  store: EvidenceStore;
  transcript?: Transcript;
  /** Lifts the safety policy (`--unsafe`). */
  unsafe?: boolean;
  timeoutMs?: number;
  /** Throws once the dump file is no longer the one the debugger opened: checked before and after each command run. */
  dumpUnchanged?: () => void;
}

export class CommandExecutor {
  /** Total time spent waiting for the debugger, for the report's timings. */
  debuggerMs = 0;
  private readonly lastIds = new Map<string, string>();
  /** Refusals are not served from the store (a later --unsafe run may allow them), but once is enough per run. */
  private readonly refusals = new Map<string, string>();

  constructor(private readonly options: ExecutorOptions) {}

  /** Which debugger runs the commands. */
  get backend(): Backend {
    return this.options.session.backend;
  }

  /** How the session's debugger says each probe and reads its output. */
  get vocabulary(): Vocabulary {
    return this.options.session.vocabulary;
  }

  /** Where the debugger stands now: its selected thread and frame. */
  context(): SessionContext {
    return this.options.session.context();
  }

  /**
   * Runs (or recalls) one step an agent, the chat or the user asked for: a probe of our own, or a
   * command in the debugger's language that a model or user proposed, which passes the policy.
   */
  async run(step: Probe | string, source: EvidenceSource): Promise<ExecutedCommand> {
    const probe: Probe = typeof step === "string" ? { kind: "command", text: step } : step;
    const command = this.options.session.vocabulary.render(probe);
    const { record, result, cached } = await this.execute(command, probe, source, probe.kind === "command");
    const findings = Array.isArray(record.findings) ? (record.findings as string[]) : [];
    return {
      evidenceId: record.id,
      command,
      ok: record.ok,
      errorType: record.errorType,
      error: result?.error ?? (record.ok ? null : record.summary),
      summary: record.summary,
      findings,
      cached,
      ms: result?.ms ?? 0,
      context: result?.context ?? this.options.session.context(),
    };
  }

  /**
   * Asks our own probes (triage's): they skip the policy, which guards what models, the chat and
   * users propose, but are stored as evidence like everything else.
   */
  asker(source: EvidenceSource): Ask {
    return async (probe) => {
      const command = this.options.session.vocabulary.render(probe);
      const { record, result } = await this.execute(command, probe, source, false);
      const output = result?.output ?? this.options.store.output(record.id);
      return answerOf(this.options.session.vocabulary, probe, command, {
        ok: record.ok,
        output,
        errorType: record.errorType,
        error: result?.error ?? (record.ok ? null : record.summary),
      });
    };
  }

  /**
   * Stores what another post-mortem tool printed (the JDK's jhsdb over a JVM's core, which triage
   * runs beside the debugger) as evidence like a debugger's output, citable by its command.
   */
  recorder(source: EvidenceSource): (command: string, output: string, ms: number) => void {
    return (command, output, ms) => {
      const record = this.options.store.add({
        command,
        backend: this.options.session.backend,
        context: { thread: null, frame: null },
        output,
        ok: true,
        summary: firstLine(output) ?? "(no output)",
        findings: [],
        ms,
        source,
      });
      this.lastIds.set(commandKey(command), record.id);
      this.options.transcript?.append({ type: "command", command, source, evidenceId: record.id, ok: true, ms });
    };
  }

  /** The evidence id of the most recent run or recall of a command, for citing triage's findings. */
  evidenceFor(command: string): string | null {
    return this.lastIds.get(commandKey(command)) ?? null;
  }

  /** The commands that have a run or recall, each with the evidence id of its latest (triage's, to cite its findings). */
  evidenceIdsOf(commands: string[]): Record<string, string> {
    return Object.fromEntries(
      commands.flatMap((command) => {
        const id = this.evidenceFor(command);
        return id ? [[command, id]] : [];
      }),
    );
  }

  private async execute(command: string, probe: Probe, source: EvidenceSource, guarded: boolean) {
    const { session, store } = this.options;
    const before = session.context();
    const evidenceContext = { thread: before.selectedThread?.id ?? null, frame: before.selectedFrame?.level ?? null };
    // A command that moves the selection is re-run: moving it is the point.
    if (!session.vocabulary.movesSelection(command)) {
      const hit = store.findCached(command, session.backend, evidenceContext);
      // The store keeps out transient failures (timeouts, a dead debugger, refusals); a gdb error
      // on the same command in the same place is as deterministic as its output.
      if (hit) {
        this.lastIds.set(commandKey(command), hit.id);
        this.options.transcript?.append({ type: "command", command, source, evidenceId: hit.id, cached: true });
        return { record: hit, result: null, cached: true };
      }
    }

    const refusedBefore = this.refusals.get(commandKey(command));
    const earlier = refusedBefore ? store.get(refusedBefore) : null;
    if (earlier) {
      this.lastIds.set(commandKey(command), earlier.id);
      return { record: earlier, result: null, cached: true };
    }

    this.options.dumpUnchanged?.();
    const result: CommandResult = guarded
      ? await runGuarded(session, command, { unsafe: this.options.unsafe ?? false, ...(this.options.timeoutMs ? { timeoutMs: this.options.timeoutMs } : {}) })
      : await session.run(command, this.options.timeoutMs ? { timeoutMs: this.options.timeoutMs } : {});
    this.debuggerMs += result.ms;
    // An answer read while the dump changed is not kept: it may be the other file's.
    this.options.dumpUnchanged?.();

    // A command typed in the debugger's language is read as the probe it is, when it is one.
    const known = probe.kind === "command" ? session.vocabulary.recognise(command) : probe;
    const analysis = result.ok && known ? analyzeOutput(known, session.vocabulary, result.output) : null;
    const summary = result.ok
      ? analysis?.summary ?? firstLine(result.output) ?? "(no output)"
      : `${result.errorType}: ${result.error ?? "failed"}`;
    const record = store.add({
      command,
      backend: session.backend,
      context: evidenceContext,
      output: result.output,
      ok: result.ok,
      errorType: result.errorType ?? null,
      summary,
      findings: analysis?.findings ?? [],
      ms: result.ms,
      source,
    });
    this.lastIds.set(commandKey(command), record.id);
    if (result.errorType === "not_allowed") this.refusals.set(commandKey(command), record.id);
    this.options.transcript?.append({
      type: "command",
      command,
      source,
      evidenceId: record.id,
      ok: result.ok,
      ...(result.errorType ? { errorType: result.errorType, error: result.error } : {}),
      ms: result.ms,
      ...(result.reopened ? { reopened: true } : {}),
    });
    return { record, result, cached: false };
  }
}

function firstLine(output: string): string | null {
  const line = output.split("\n").find((l) => l.trim() !== "");
  return line ? line.trim().slice(0, 200) : null;
}
