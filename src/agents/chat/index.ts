/**
 * The chat agent: one answer to one follow-up question. Claims in the question are checked against
 * measurements first and corrected at the top of the answer, whichever path answers: the model,
 * when one is configured and answers, else the offline engine.
 */
import type { Vocabulary } from "../../debuggers/probe.js";
import { ProviderError } from "../../llm/index.js";
import type { ChatExchange } from "../../report/index.js";
import type { Finding } from "./claims.js";
import { askModel, type ModelDeps } from "./model.js";
import { OfflineEngine } from "./offline.js";

export { loadBriefing, type Briefing } from "./briefing.js";
export { reportWithChat } from "./report-with-chat.js";

/** What the model path needs, and the session's vocabulary, in which the offline engine asks its probes. */
export type ChatDeps = ModelDeps & { vocabulary: Vocabulary };

export interface ChatAnswer {
  text: string;
  evidenceIds: string[];
  /** Who answered: the model, or the offline engine (also when the model could not). */
  mode: "model" | "offline";
}

/**
 * Answers one question. `history` is the conversation so far, for the model; `signal` cancels the
 * answer (Ctrl+C, the per-answer time limit) at the next model call or debugger command.
 */
export async function answerQuestion(deps: ChatDeps, question: string, history: ChatExchange[], signal: AbortSignal): Promise<ChatAnswer> {
  const offline = new OfflineEngine(deps, signal);
  const corrections = await offline.corrections(question);
  let fallback = "";
  if (deps.models.cloud !== null || deps.models.local !== null) {
    const answered = await askModelOrExplain(deps, question, history, corrections, signal);
    // The offline answer is the floor: a model's answer that rests on no evidence of this session,
    // or says nothing, does not replace it.
    const weak = answered.ok ? weakness(answered.finding) : null;
    if (answered.ok && weak === null) return compose(corrections, answered.finding, "model");
    fallback = answered.ok
      ? `(A model answered “${answered.finding.text.trim().slice(0, 200)}”, which ${weak}: this is the offline answer.)\n`
      : `(The model could not answer: ${answered.reason}. This is the offline answer.)\n`;
  }
  const finding = await offline.answer(question, corrections.length > 0);
  return compose(corrections, { ...finding, text: fallback + finding.text }, "offline");
}

/** Why a model's answer does not stand on its own, or null when it does. */
function weakness(finding: Finding): string | null {
  const words = finding.text.trim().split(/\s+/).filter((word) => /[A-Za-z]{2,}/.test(word));
  if (words.length < 3) return "says nothing";
  if (finding.evidenceIds.length === 0) return "cites no evidence of this session";
  return null;
}

/** A provider the user named that cannot be used ends that answer's model path, not the chat. */
async function askModelOrExplain(...args: Parameters<typeof askModel>): ReturnType<typeof askModel> {
  try {
    return await askModel(...args);
  } catch (error) {
    if (error instanceof ProviderError) return { ok: false, reason: error.message };
    throw error;
  }
}

function compose(corrections: Finding[], finding: Finding, mode: ChatAnswer["mode"]): ChatAnswer {
  const lead = corrections.map((c) => c.text);
  return {
    text: [...lead, finding.text].join("\n"),
    evidenceIds: [...new Set([...corrections.flatMap((c) => c.evidenceIds), ...finding.evidenceIds])],
    mode,
  };
}
