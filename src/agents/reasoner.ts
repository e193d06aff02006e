/**
 * Reasons over all the evidence to a conclusion that names the variable, the function, the line
 * and the path that led there, citing evidence ids. It runs again after the responder collected
 * what the critic found missing.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { z } from "zod";
import type { Conclusion, State, Update } from "../state.js";
import { existingIds, hypothesesText, supportingIds, triageText, unknownCitations } from "./context.js";
import { evidenceIndex, evidenceOf, outputsOf } from "./evidence.js";
import { untested } from "./flow.js";
import { factsOf, playbookFor } from "./playbooks/index.js";
import { ask, requireTriage, step, type Runtime } from "./runtime.js";

const Answer = z.object({
  summary: z.string().min(1),
  rootCause: z.string().min(1),
  confidence: z.number().min(0).max(1),
  recommendations: z.array(z.string()),
  evidenceIds: z.array(z.string()),
});

export async function reasoner(state: State, config: LangGraphRunnableConfig): Promise<Update> {
  return step(config, "reasoner", async (runtime) => {
    const triage = requireTriage(state);
    const last = state.critique.at(-1);
    const cited = state.hypotheses.flatMap((h) => h.evidenceIds);
    const asked = await ask(runtime, "reasoner", "reasoner", {
      issue: state.issue ?? "(none given)",
      triage: triageText(state),
      hypotheses: hypothesesText(state.hypotheses),
      evidence: evidenceIndex(runtime.store),
      outputs: outputsOf(runtime.store, cited),
      critique: last ? last.issues.map((i) => `- ${i.text}`).join("\n") || "(no issues)" : "(not reviewed yet)",
    }, Answer);

    let conclusion: Conclusion;
    // A conclusion that cites evidence which does not exist cannot be trusted in any of its claims.
    const invented = asked.value ? unknownCitations([asked.value.summary, asked.value.rootCause, ...asked.value.recommendations], runtime.store) : [];
    const rejected = invented.length > 0 ? { agent: "reasoner", reason: `the model cited evidence that does not exist (${invented.join(", ")})` } : null;
    if (rejected) runtime.progress(`[reasoner] ${rejected.reason}; the offline path takes it`);
    if (asked.value && !rejected) {
      conclusion = { ...asked.value, evidenceIds: existingIds(asked.value.evidenceIds, runtime.store), confidence: earnedConfidence(asked.value, state, runtime) };
    } else {
      const draft = playbookFor(factsOf(triage, runtime.homeThread)).conclude(state.hypotheses, evidenceOf(state, runtime.store, runtime.session.vocabulary));
      conclusion = { ...draft, rootCause: [draft.rootCause, issueLink(state.issue, `${draft.summary} ${draft.rootCause}`)].filter(Boolean).join(" ") };
    }
    const skipped = untested(state);
    if (skipped.length > 0) {
      // The loop was cut short by a limit: say so rather than let the conclusion look complete.
      conclusion = {
        ...conclusion,
        rootCause: `${conclusion.rootCause} Not tested, because the analysis reached its limits: ${skipped.map((h) => `${h.id} (${h.statement})`).join("; ")}.`,
        confidence: Math.min(conclusion.confidence, 0.6),
      };
    }
    const fallback = asked.fallback ?? rejected;
    return [{ conclusion, ...(fallback ? { fallbacks: [fallback] } : {}) }, `confidence ${conclusion.confidence}: ${conclusion.summary}`];
  });
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

/**
 * Ties the user's words to the evidence: the function the conclusion names that shares the longest
 * word with the issue ("a client disconnects" → `client_disconnect`).
 */
function issueLink(issue: string | null, text: string): string {
  if (!issue) return "";
  const stems = (issue.toLowerCase().match(/[a-z]{5,}/g) ?? []).map((word) => word.replace(/(ing|ed|es|s)$/, ""));
  const named = [...new Set([...text.matchAll(/`([A-Za-z_][\w:]*)`/g)].map((m) => m[1] as string))];
  let best: { name: string; stem: string } | null = null;
  for (const name of named) {
    for (const stem of stems) {
      if (name.toLowerCase().includes(stem) && stem.length > (best?.stem.length ?? 0)) best = { name, stem };
    }
  }
  return best ? `This matches the reported issue ("${issue.trim()}"): the evidence leads to \`${best.name}\`.` : "";
}
