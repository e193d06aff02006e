/** Composes the report document (report/document.ts) from the graph's state: the JSON contract, validated, and the details its renderers show. */
import { lockText } from "../../analyzers/deadlock.js";
import { normalizeFunctionName, type TriageResult } from "../../analyzers/index.js";
import type { ThreadSummary as DumpThread } from "../../debuggers/model.js";
import type { ReportDetails, StackFrame, ThreadSummary } from "../../report/index.js";
import { modelsDown } from "../../llm/index.js";
import { ReportSchema, type Report } from "../../report/schema.js";
import type { Spent, State } from "../../state.js";
import { evidenceOf } from "../evidence.js";
import { crashFacts } from "../playbooks/facts.js";
import { REGISTERS, THREADS } from "../playbooks/kit.js";
import { excerptOf } from "../playbooks/source.js";
import { requireTriage, type Runtime } from "../runtime.js";

const MAX_FRAMES = 30;
const MAX_THREADS = 64;
const EXCERPT_LINES = 15;

/** The report from the state as it stands; also used when a limit stopped the graph before its report node. */
export function composeReport(state: State, runtime: Runtime, ownSpend: Spent, questions: string[]): { report: Report; details: ReportDetails } {
  const triage = requireTriage(state);
  const conclusion = state.conclusion ?? {
    summary: "The analysis stopped before it reached a conclusion.",
    rootCause: "Not determined: the run hit its step limit first. The triage and the evidence below are what was established.",
    confidence: 0.2,
    recommendations: ["Run the analysis again with higher limits."],
    evidenceIds: [],
  };
  const total = {
    ms: state.spent.ms + ownSpend.ms,
    debuggerMs: state.spent.debuggerMs + ownSpend.debuggerMs,
    llmMs: state.spent.llmMs + ownSpend.llmMs,
  };
  const tokens = (a: { inputTokens: number; outputTokens: number }, b: { inputTokens: number; outputTokens: number }) => ({
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
  });
  const report: Report = ReportSchema.parse({
    schemaVersion: 1,
    session: { ...runtime.meta, finishedAt: new Date().toISOString() },
    issue: state.issue,
    crash: triage.crash,
    hypotheses: state.hypotheses.map((h) => ({
      id: h.id,
      statement: h.status === "untested" ? `${h.statement} (not tested: the analysis reached its limits)` : h.statement,
      status: h.status === "untested" ? "inconclusive" : h.status,
      evidenceIds: h.evidenceIds,
    })),
    conclusion: { summary: conclusion.summary, rootCause: conclusion.rootCause, confidence: conclusion.confidence, recommendations: conclusion.recommendations },
    critique: {
      rounds: state.critique.map((r) => ({ round: r.round, issues: r.issues.map((i) => i.text) })),
      unresolved: (state.critique.at(-1)?.issues ?? []).map((i) => i.text),
    },
    followUpQuestions: questions,
    evidence: runtime.store.list().map((e) => ({ id: e.id, command: e.command, summary: e.summary, bytes: e.bytes, path: e.path })),
    usage: {
      llmCalls: state.spent.llmCalls + ownSpend.llmCalls,
      local: tokens(state.spent.local, ownSpend.local),
      cloud: tokens(state.spent.cloud, ownSpend.cloud),
      modelsDown: modelsDown(runtime.models),
    },
    redactions: { count: Object.values(state.redactions).reduce((a, b) => a + b, 0), kinds: state.redactions },
    timings: { totalMs: Math.round(total.ms), debuggerMs: Math.round(total.debuggerMs), llmMs: Math.round(total.llmMs) },
  });
  return { report, details: detailsOf(state, runtime, triage, conclusion.evidenceIds) };
}

/** The deadlocked threads' stacks, from the backtraces the analysis took of them, without basename paths. */
function cycleStacksOf(evidence: ReturnType<typeof evidenceOf>, triage: TriageResult): { thread: number; frames: StackFrame[] }[] {
  const cycle = triage.crash.deadlock?.cycle ?? [];
  if (cycle.length < 2) return [];
  const threads = [...new Set(cycle.map((edge) => edge.thread))];
  const traces = evidence.find({ kind: "thread-backtraces", threads })?.reading ?? [];
  return threads.flatMap((thread) => {
    const trace = traces.find((t) => t.thread === thread);
    if (!trace) return [];
    const frames = trace.frames.map((f) => ({ level: f.level, function: f.function ? normalizeFunctionName(f.function) : null, file: f.file, line: f.line, module: null }));
    // From the program's frame that asked for the lock: the lock's own machinery is the same in every column.
    const waiting = frames.findIndex((f) => f.function !== null && f.function === cycle.find((e) => e.thread === thread)?.function);
    return [{ thread, frames: frames.slice(Math.max(0, waiting)) }];
  });
}

function detailsOf(state: State, runtime: Runtime, triage: TriageResult, concluded: string[]): ReportDetails {
  const evidence = evidenceOf(state, runtime.store, runtime.session.vocabulary);
  const registers = evidence.find(REGISTERS);
  const threads = evidence.find(THREADS);
  const { culprit } = triage.crash;
  // The culprit's source as the analysis read it when it started, not as the file is now.
  const source = crashFacts(state).source;
  const cited = [...new Set([...state.hypotheses.flatMap((h) => h.evidenceIds), ...concluded])];
  const excerpts: Record<string, string> = {};
  for (const id of cited) {
    const record = runtime.store.get(id);
    if (!record?.ok) continue;
    const lines = runtime.store.output(id).trimEnd().split("\n");
    excerpts[id] = lines.length > EXCERPT_LINES ? `${lines.slice(0, EXCERPT_LINES).join("\n")}\n… ${lines.length - EXCERPT_LINES} more lines` : lines.join("\n");
  }
  const kinds = state.redactions;
  return {
    frames: triage.frames.slice(0, MAX_FRAMES).map((f) => ({
      level: f.level,
      function: f.function ? normalizeFunctionName(f.function) : null,
      file: f.file,
      line: f.line,
      ...(f.column != null ? { column: f.column } : {}),
      module: f.module,
      ...(f.inlinedInto?.length ? { inlinedInto: f.inlinedInto } : {}),
      ...(f.found === "runtime" && f.language ? { runtimeLanguage: f.language } : {}),
    })),
    recursion: triage.recursion ? { frames: triage.recursion.depth, cycle: [...triage.recursion.cycle].reverse() } : null,
    faultPlace: triage.faultPlace ?? null,
    cycleStacks: cycleStacksOf(evidence, triage),
    registers: (registers?.reading ?? []).filter((r) => /^0x/.test(r.value)).map((r) => ({ name: r.name, value: r.value })),
    threads: threads?.reading ? threadSummaries(threads.reading, triage) : [],
    modules: triage.modules.flatMap((m) => (m.from && m.to ? [{ path: m.path, from: m.from, to: m.to }] : [])),
    sourceExcerpt: source && culprit.line !== null ? excerptOf(source, culprit.line) : null,
    evidenceExcerpts: excerpts,
    redactions: { count: Object.values(kinds).reduce((a, b) => a + b, 0), kinds },
    debuggerWarnings: runtime.debuggerWarnings,
    ...(runtime.dumpSource?.length ? { dumpSource: runtime.dumpSource } : {}),
    ...(runtime.symbols.length ? { symbols: runtime.symbols } : {}),
  };
}

/** The crashed thread and the threads of a deadlock first, then the rest, up to a readable number. */
function threadSummaries(listed: DumpThread[], triage: TriageResult): ThreadSummary[] {
  const edges = triage.crash.deadlock?.cycle ?? [];
  const first = new Set([triage.crash.thread.id, ...edges.map((e) => e.thread)]);
  const threads = [...listed].sort((a, b) => Number(first.has(b.id)) - Number(first.has(a.id)) || a.id - b.id);
  return threads.slice(0, MAX_THREADS).map((t) => {
    const fn = t.frame?.function ? normalizeFunctionName(t.frame.function) : null;
    const edge = edges.find((e) => e.thread === t.id);
    return { id: t.id, name: t.name, function: fn, state: edge ? `waiting for ${edge.lockName ? "" : "mutex "}${lockText(edge)} held by thread ${edge.heldByThread ?? "?"}` : stateOf(fn, t.id === triage.crash.thread.id) };
  });
}

function stateOf(fn: string | null, crashed: boolean): string | null {
  if (crashed) return "crashed";
  if (!fn) return null;
  if (/cond_(timed)?wait|futex_abstimed_wait|__futex_abstimed/.test(fn)) return "waiting (condition variable or futex)";
  if (/lll_lock_wait|mutex_lock|futex_wait/.test(fn)) return "waiting for a mutex";
  if (/nanosleep|sleep/.test(fn)) return "sleeping";
  if (/poll|select|epoll_wait|accept|recv|read|syscall/.test(fn)) return "blocked in a system call";
  return "running";
}
