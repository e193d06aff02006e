/**
 * The session's report with the chat appended: the analysis's document when there is one (its
 * evidence list extended by what the chat ran, its usage by what the chat spent), else a report
 * that holds the triage's crash facts and says the analysis never concluded.
 */
import type { SessionMeta } from "../../evidence/sessions.js";
import type { EvidenceStore } from "../../evidence/store.js";
import type { UsageReport } from "../../llm/index.js";
import type { ChatExchange, ReportDocument } from "../../report/index.js";
import type { Report } from "../../report/schema.js";
import { kindPhrase } from "./claims.js";
import type { Briefing } from "./briefing.js";

export interface ChatReportInput {
  briefing: Briefing;
  meta: SessionMeta;
  store: EvidenceStore;
  exchanges: ChatExchange[];
  /** What the chat itself spent (not the analysis before it), added to the report's totals. */
  spent: { usage: UsageReport; llmMs: number; debuggerMs: number };
}

export function reportWithChat(input: ChatReportInput): ReportDocument {
  const base = input.briefing.document ?? { report: triageOnlyReport(input), details: {} };
  const { report } = base;
  const listed = new Set(report.evidence.map((e) => e.id));
  const added = input.store
    .list()
    .filter((record) => !listed.has(record.id))
    .map((record) => ({ id: record.id, command: record.command, summary: record.summary, bytes: record.bytes, path: record.path }));
  const { spent } = input;
  const sum = (a: Report["usage"]["local"], b: Report["usage"]["local"]) => ({ inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens });
  return {
    report: {
      ...report,
      evidence: [...report.evidence, ...added],
      usage: {
        llmCalls: report.usage.llmCalls + spent.usage.llmCalls,
        local: sum(report.usage.local, spent.usage.local),
        cloud: sum(report.usage.cloud, spent.usage.cloud),
      },
      timings: { ...report.timings, debuggerMs: report.timings.debuggerMs + spent.debuggerMs, llmMs: report.timings.llmMs + spent.llmMs },
    },
    // Answers are written for a terminal, a line per fact or frame; the report keeps those lines
    // apart by making each its own paragraph.
    details: { ...base.details, chat: input.exchanges.map((e) => ({ ...e, answer: e.answer.split("\n").filter((line) => line.trim() !== "").join("\n\n") })) },
  };
}

function triageOnlyReport({ briefing, meta }: ChatReportInput): Report {
  const { crash } = briefing;
  const where = crash.culprit.function ? ` in ${crash.culprit.function}` : "";
  return {
    schemaVersion: 1,
    session: {
      id: meta.id,
      dump: meta.dump,
      executable: meta.executable,
      debugger: `${meta.debugger.backend} ${meta.debugger.version ?? ""}`.trim(),
      startedAt: meta.createdAt,
      finishedAt: meta.finishedAt,
    },
    issue: meta.issue,
    crash,
    hypotheses: [],
    conclusion: {
      summary: `Triage only: ${kindPhrase(crash.kind)}${where}. The analysis of this session did not finish, so there is no conclusion; the chat below used the evidence.`,
      rootCause: "",
      confidence: 0,
      recommendations: [],
    },
    critique: { rounds: [], unresolved: [] },
    followUpQuestions: [],
    evidence: [],
    usage: { llmCalls: 0, local: { inputTokens: 0, outputTokens: 0 }, cloud: { inputTokens: 0, outputTokens: 0 } },
    timings: { totalMs: 0, debuggerMs: 0, llmMs: 0 },
  };
}
