/**
 * The analysis graph's state. It is checkpointed after every node (in the session's evidence.db),
 * so it holds only what serialises: evidence ids and summaries, never raw outputs (those live in
 * the evidence store), and no live objects (the session, executor and models come in through the
 * run's context, see agents/runtime.ts).
 */
import { Annotation } from "@langchain/langgraph/web";
import type { CrashSite } from "./agents/playbooks/crash-site.js";
import type { TriageResult } from "./analyzers/index.js";
import type { Probe } from "./debuggers/probe.js";
import type { CommandErrorType } from "./debuggers/session.js";
import type { TokenCount } from "./llm/index.js";
import type { Report } from "./report/schema.js";
import type { ReportDetails } from "./report/index.js";

export type HypothesisStatus = "untested" | "confirmed" | "rejected" | "inconclusive";

export interface Hypothesis {
  /** "H1", "H2", ... in the order they were formed. */
  id: string;
  statement: string;
  origin: "playbook" | "model";
  /** The playbook entry that tests and judges it offline; null for a hypothesis a model formed. */
  rule: string | null;
  /**
   * Probes that test it, in rounds: the first tests it, the next gather more when it is inconclusive.
   * A model's commands are `command` probes in the debugger's own language.
   */
  plan: Probe[][];
  /** Rounds of the plan run so far. */
  rounds: number;
  status: HypothesisStatus;
  /** Why it has its status, citing evidence ids. */
  finding: string | null;
  evidenceIds: string[];
}

export type CommandAgent = "tester" | "investigator" | "responder";

/** One command an agent had run, as the executor reported it. */
export interface Observation {
  evidenceId: string;
  /** The command as the debugger ran it (a probe rendered in its syntax). */
  command: string;
  agent: CommandAgent;
  /** The hypothesis it tested, for the tester's commands. */
  hypothesis: string | null;
  ok: boolean;
  errorType: CommandErrorType | null;
  summary: string;
  /** Served from the store: the same command had already run in the same context. */
  cached: boolean;
}

export interface Conclusion {
  summary: string;
  rootCause: string;
  confidence: number;
  recommendations: string[];
  /** Every evidence id the conclusion rests on. */
  evidenceIds: string[];
}

export interface Issue {
  /** What is missing or unsupported. */
  text: string;
  /** Probes that would settle it; empty when a post-mortem cannot. */
  commands: Probe[];
  /** The question to put to the user if it stays open. */
  question: string;
}

export interface CritiqueRound {
  round: number;
  issues: Issue[];
}

/** A model step the offline path took, and why: the call failed, or its answer was not taken. */
export interface Fallback {
  agent: string;
  reason: string;
}

/** What the run spent, summed over the processes that worked on it (a resumed run adds to it). */
export interface Spent {
  ms: number;
  debuggerMs: number;
  llmMs: number;
  llmCalls: number;
  local: TokenCount;
  cloud: TokenCount;
}

export const NOTHING_SPENT: Spent = {
  ms: 0,
  debuggerMs: 0,
  llmMs: 0,
  llmCalls: 0,
  local: { inputTokens: 0, outputTokens: 0 },
  cloud: { inputTokens: 0, outputTokens: 0 },
};

export const AnalysisState = Annotation.Root({
  /** The user's description of the problem (`--issue`). */
  issue: Annotation<string | null>({ reducer: (_, next) => next, default: () => null }),
  /** The deterministic verdict the graph starts from; set once, before the first node. */
  triage: Annotation<TriageResult | null>({ reducer: (_, next) => next, default: () => null }),
  /** The source files the playbooks read, taken from disk once with the triage. */
  crashSite: Annotation<CrashSite | null>({ reducer: (_, next) => next, default: () => null }),
  /** Evidence id of each command triage ran, for citing its facts. */
  triageEvidence: Annotation<Record<string, string>>({ reducer: (_, next) => next, default: () => ({}) }),
  /** Every hypothesis formed so far; an update replaces the hypotheses with the same id. */
  hypotheses: Annotation<Hypothesis[]>({ reducer: upsertById, default: () => [] }),
  /** The hypothesis being tested. */
  current: Annotation<string | null>({ reducer: (_, next) => next, default: () => null }),
  /** Every command the agents had run, in order. */
  observations: Annotation<Observation[]>({ reducer: (all, more) => [...all, ...more], default: () => [] }),
  /** Test rounds run, over all hypotheses. */
  iterations: Annotation<number>({ reducer: (total, more) => total + more, default: () => 0 }),
  /** Confirmed hypotheses the investigator has gone deeper into. */
  investigated: Annotation<string[]>({ reducer: (all, more) => [...all, ...more], default: () => [] }),
  /** The reasoner's latest conclusion. */
  conclusion: Annotation<Conclusion | null>({ reducer: (_, next) => next, default: () => null }),
  /** The critic's rounds, in order. */
  critique: Annotation<CritiqueRound[]>({ reducer: (all, more) => [...all, ...more], default: () => [] }),
  /** Model steps the offline path took over. */
  fallbacks: Annotation<Fallback[]>({ reducer: (all, more) => [...all, ...more], default: () => [] }),
  /** The nodes run, in order: the route the analysis took. */
  trail: Annotation<string[]>({ reducer: (all, more) => [...all, ...more], default: () => [] }),
  /** Time and tokens spent, summed from each node's share. */
  spent: Annotation<Spent>({ reducer: addSpent, default: () => NOTHING_SPENT }),
  /** Values masked before reaching a cloud model, per kind (the largest count any process saw). */
  redactions: Annotation<Record<string, number>>({ reducer: maxPerKey, default: () => ({}) }),
  /** The finished report and what its renderers show beside it. */
  document: Annotation<{ report: Report; details: ReportDetails } | null>({ reducer: (_, next) => next, default: () => null }),
});

export type State = typeof AnalysisState.State;
export type Update = typeof AnalysisState.Update;

function upsertById(all: Hypothesis[], changed: Hypothesis[]): Hypothesis[] {
  const next = [...all];
  for (const hypothesis of changed) {
    const at = next.findIndex((h) => h.id === hypothesis.id);
    if (at < 0) next.push(hypothesis);
    else next[at] = hypothesis;
  }
  return next;
}

function addSpent(a: Spent, b: Spent): Spent {
  const tokens = (x: TokenCount, y: TokenCount) => ({ inputTokens: x.inputTokens + y.inputTokens, outputTokens: x.outputTokens + y.outputTokens });
  return {
    ms: a.ms + b.ms,
    debuggerMs: a.debuggerMs + b.debuggerMs,
    llmMs: a.llmMs + b.llmMs,
    llmCalls: a.llmCalls + b.llmCalls,
    local: tokens(a.local, b.local),
    cloud: tokens(a.cloud, b.cloud),
  };
}

/**
 * A resumed run starts a fresh redactor that meets the same values again, so counts are not added
 * up across processes: the largest is the closest to the number of distinct values.
 */
function maxPerKey(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const merged = { ...a };
  for (const [key, n] of Object.entries(b)) merged[key] = Math.max(merged[key] ?? 0, n);
  return merged;
}
