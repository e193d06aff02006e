/**
 * Reasons over all the evidence to a conclusion that names the variable, the function, the line
 * and the path that led there, citing evidence ids. It runs again after the responder collected
 * what the critic found missing.
 */
import { z } from "../../zod.js";
import prompt from "./prompt.md";
import type { Conclusion, State, Update } from "../../state.js";
import { existingIds, supportingIds, unknownCitations } from "../answer-checks.js";
import { hypothesesText, triageText } from "../prompt-text.js";
import { evidenceIndex, outputsOf } from "../evidence.js";
import { untested } from "../flow.js";
import { agentNode, notTaken } from "../agent.js";
import { requireTriage, type Runtime } from "../runtime.js";
import { offlineConclusion } from "./offline.js";

const Answer = z.object({
  summary: z.string().min(1).describe("what crashed and why, in two or three sentences that cite their evidence, like (E4)"),
  rootCause: z.string().min(1).describe("the variable, the function, the line and the path that led there, citing evidence"),
  confidence: z.number().min(0).max(1).describe("between 0 and 1; lower when no hypothesis was confirmed"),
  recommendations: z.array(z.string().describe("one concrete change to the code, naming the function or line")).describe("how to fix it"),
  evidenceIds: z.array(z.string().describe("an evidence id listed in the prompt, like E4")).describe("every id the text cites"),
});

export const reasoner = agentNode(
  {
    name: "reasoner",
    prompt,
    profile: { tier: "cloud", temperature: 0.2 },
    schema: Answer,
    offline: ({ state, runtime }) => offlineConclusion(state, runtime),
    // The offline conclusion is the floor: a model's is kept only when it cites evidence that
    // exists and says at least as much (the culprit, its line, the kind) as the offline one.
    check: async (answer, { state, runtime, floor }) => {
      const offline = await floor();
      const why = whyNotTaken(answer, offline, state, runtime);
      if (!why) return { ...answer, evidenceIds: existingIds(answer.evidenceIds, runtime.store), confidence: earnedConfidence(answer, state, runtime) };
      // The model's view is kept beside the conclusion, with why it was not taken, unless it invented evidence.
      const view = /does not exist/.test(why) ? "" : ` A model concluded: “${answer.summary.trim().slice(0, 300)}”; not taken, because ${why}.`;
      return notTaken(`the model's conclusion was not taken: ${why}`, { ...offline, rootCause: `${offline.rootCause}${view}` });
    },
  },
  async (state, { runtime, decide }): Promise<[Update, string]> => {
    const last = state.critique.at(-1);
    const cited = state.hypotheses.flatMap((h) => h.evidenceIds);
    let conclusion = await decide({
      issue: state.issue ?? "(none given)",
      triage: triageText(state),
      hypotheses: hypothesesText(state.hypotheses),
      evidence: evidenceIndex(runtime.store),
      outputs: outputsOf(runtime.store, cited),
      critique: last ? last.issues.map((i) => `- ${i.text}`).join("\n") || "(no issues)" : "(not reviewed yet)",
    });
    const skipped = untested(state);
    if (skipped.length > 0) {
      // The loop was cut short by a limit: say so rather than let the conclusion look complete.
      conclusion = {
        ...conclusion,
        rootCause: `${conclusion.rootCause} Not tested, because the analysis reached its limits: ${skipped.map((h) => `${h.id} (${h.statement})`).join("; ")}.`,
        confidence: Math.min(conclusion.confidence, 0.6),
      };
    }
    return [{ conclusion }, `confidence ${conclusion.confidence}: ${conclusion.summary}`];
  },
);

/**
 * The facts the offline conclusion states, each in words a model would use too: the culprit
 * function, its file:line, and the expression it blames (`session->client`).
 */
function statedFacts(offline: Conclusion, state: State): string[] {
  const { crash } = requireTriage(state);
  const culprit = crash.culprit.function?.split("::").at(-1) ?? null;
  const file = crash.culprit.file?.split("/").at(-1);
  const location = file && crash.culprit.line !== null ? `${file}:${crash.culprit.line}` : null;
  const expression = [...offline.summary.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "").find((name) => name !== culprit && /[A-Za-z_]/.test(name)) ?? null;
  return [culprit, location, expression].filter((fact): fact is string => fact !== null && offline.summary.includes(fact));
}

/** Why a model's conclusion is not taken over the offline one, or null when it is. */
function whyNotTaken(answer: z.infer<typeof Answer>, offline: Conclusion, state: State, runtime: Runtime): string | null {
  // A conclusion that cites evidence which does not exist cannot be trusted in any of its claims.
  const invented = unknownCitations([answer.summary, answer.rootCause, ...answer.recommendations], runtime.store);
  if (invented.length > 0) return `it cited evidence that does not exist (${invented.join(", ")})`;
  const text = `${answer.summary} ${answer.rootCause}`;
  const cites = existingIds([...answer.evidenceIds, ...(text.match(/\bE\d+\b/g) ?? [])], runtime.store);
  if (cites.length === 0) return "it cites no evidence";
  // Where the offline engine itself could not decide, any grounded conclusion is as good.
  if (offline.confidence < 0.5) return null;
  const missing = statedFacts(offline, state).filter((fact) => !text.includes(fact));
  if (missing.length > 0) return `it says less than the offline diagnosis: it does not name ${missing.map((fact) => `\`${fact}\``).join(", ")}`;
  return null;
}

/**
 * A model's confidence, capped when nothing backs it: no hypothesis confirmed on a successful
 * output, or a conclusion that names neither the culprit function nor the kind triage measured.
 */
function earnedConfidence(answer: z.infer<typeof Answer>, state: State, runtime: Runtime): number {
  const triage = requireTriage(state);
  const confirmed = state.hypotheses.some((h) => h.status === "confirmed" && supportingIds(h.evidenceIds, runtime.store).length > 0);
  const text = `${answer.summary} ${answer.rootCause}`.toLowerCase();
  const culprit = triage.crash.culprit.function?.split("::").at(-1)?.toLowerCase();
  const kindWords = triage.crash.kind.split("-").filter((w) => w.length > 3);
  const onTopic = (culprit !== undefined && text.includes(culprit)) || kindWords.every((w) => text.includes(w));
  return confirmed && onTopic ? answer.confidence : Math.min(answer.confidence, 0.5);
}
