/**
 * The chat with a model: the question, the crash facts, the conclusion and the evidence that
 * matches the question go to the model, which answers or asks for up to a few read-only commands
 * first. Its commands go through the executor (policy, store), and their outputs come back to it
 * as data. When the model cannot be used, the caller falls back to the offline engine.
 */
import { z } from "../../zod.js";
import { budget, callStructured, type ModelProfile, type Models, type Redactor, type Usage } from "../../llm/index.js";
import type { ChatExchange } from "../../report/index.js";
import type { EvidenceStore } from "../../evidence/store.js";
import type { CommandExecutor, ExecutedCommand } from "../executor.js";
import type { Finding } from "./claims.js";
import { relevantEvidence } from "./evidence-search.js";
import type { Briefing } from "./briefing.js";
import prompt from "./prompt.md";

export interface ModelDeps {
  executor: CommandExecutor;
  store: EvidenceStore;
  briefing: Briefing;
  models: Models;
  usage: Usage;
  redactor: Redactor;
}

const ChatStepSchema = z.object({
  needCommands: z.array(z.string().describe("one read-only command in the debugger's own syntax")).describe("read-only debugger commands to run before answering; empty when the answer is ready"),
  answer: z.string().nullable().describe("the answer, citing evidence ids inline like [E12]; null while commands are needed"),
  evidenceIds: z.array(z.string().describe("an evidence id of this session, like E12")).describe("the evidence ids the answer relies on"),
});

/** The chat's model profile: deep work, a little latitude in wording. */
const CHAT_PROFILE: ModelProfile = { tier: "cloud", temperature: 0.2 };

/** Rounds of commands a model may ask for in one answer, and commands per round. */
const MAX_COMMAND_ROUNDS = 3;
const MAX_COMMANDS_PER_ROUND = 3;
const EVIDENCE_HITS = 8;
const HISTORY_TURNS = 4;
const OUTPUT_TOKENS = 1_500;

export type ModelAnswer = { ok: true; finding: Finding } | { ok: false; reason: string };

export async function askModel(
  deps: ModelDeps,
  question: string,
  history: ChatExchange[],
  corrections: Finding[],
  signal: AbortSignal,
): Promise<ModelAnswer> {
  const ran: ExecutedCommand[] = [];
  const base = {
    question,
    crash: JSON.stringify(deps.briefing.crash, null, 1),
    conclusion: conclusionText(deps.briefing),
    corrections: corrections.map((c) => c.text).join("\n") || "none",
    evidence: relevantEvidence(deps.store, question, EVIDENCE_HITS).map((hit) => `[${hit.evidenceId}] ${hit.command}: ${hit.snippet}`).join("\n") || "none",
    history: history.slice(-HISTORY_TURNS).map((turn) => `Q: ${turn.question}\nA: ${turn.answer}`).join("\n\n") || "none",
    debugger: deps.executor.backend,
    syntax: deps.executor.vocabulary.syntax,
  };
  for (let round = 0; ; round++) {
    const left = MAX_COMMAND_ROUNDS - round;
    const values = {
      ...base,
      measured: ran.map((command) => measuredText(deps.store, command)).join("\n\n") || "none",
      rounds: left > 0 ? `You may ask for commands ${left} more time${left === 1 ? "" : "s"} for this answer.` : "You cannot ask for more commands: answer now with what you have.",
    };
    const result = await callStructured(deps.models, CHAT_PROFILE, { name: "chat", template: prompt, values }, ChatStepSchema, { usage: deps.usage, redactor: deps.redactor, signal });
    if (!result.ok) return { ok: false, reason: result.reason };
    const step = result.value;
    const commands = [...new Set(step.needCommands.map((c) => c.trim()).filter((c) => c !== "" && !ran.some((r) => r.command === c)))].slice(0, MAX_COMMANDS_PER_ROUND);
    const answer = step.answer?.trim() ?? "";
    if (commands.length === 0 || left === 0) {
      if (answer === "") return { ok: false, reason: "the model gave no answer" };
      return { ok: true, finding: cited(deps.store, answer, step.evidenceIds) };
    }
    for (const command of commands) {
      signal.throwIfAborted();
      ran.push(await deps.executor.run(command, "chat"));
    }
  }
}

function conclusionText(briefing: Briefing): string {
  const report = briefing.document?.report;
  if (!report) return "no analysis report for this session; only the crash facts above";
  const { conclusion, hypotheses } = report;
  const lines = [`Summary: ${conclusion.summary}`, `Root cause (${Math.round(conclusion.confidence * 100)}% confidence): ${conclusion.rootCause}`];
  for (const h of hypotheses) lines.push(`Hypothesis ${h.id} (${h.status}): ${h.statement}${h.evidenceIds.length ? ` [${h.evidenceIds.join(", ")}]` : ""}`);
  return lines.join("\n");
}

function measuredText(store: EvidenceStore, command: ExecutedCommand): string {
  const status = command.ok ? "" : command.errorType === "not_allowed" ? ` (refused: ${command.error})` : ` (failed: ${command.error})`;
  const output = command.ok ? budget(store.output(command.evidenceId), OUTPUT_TOKENS) : "";
  return `[${command.evidenceId}] ${command.command}${status}\n${output}`.trimEnd();
}

/**
 * The answer with the evidence it cites, inline or listed, kept to ids this session has; an id the
 * model made up is named, so the user does not go looking for it.
 */
function cited(store: EvidenceStore, answer: string, listed: string[]): Finding {
  const mentioned = [...listed, ...Array.from(answer.matchAll(/\bE\d+\b/g), (m) => m[0])];
  const ids = [...new Set(mentioned)];
  const known = ids.filter((id) => store.get(id) !== null);
  const unknown = ids.filter((id) => !known.includes(id));
  const note = unknown.length > 0 ? `\n(The model cited ${unknown.join(", ")}, which this session does not have.)` : "";
  return { text: `${answer}${note}`, evidenceIds: known };
}
