/** The reasoner's offline path: the playbook's conclusion over the evidence, tied to the user's words. */
import type { Conclusion, State } from "../../state.js";
import { evidenceOf } from "../evidence.js";
import { playbookOf } from "../playbooks/index.js";
import type { Runtime } from "../runtime.js";

export function offlineConclusion(state: State, runtime: Runtime): Conclusion {
  const draft = playbookOf(state).conclude(state.hypotheses, evidenceOf(state, runtime.store, runtime.session.vocabulary));
  return { ...draft, rootCause: [draft.rootCause, issueLink(state.issue, `${draft.summary} ${draft.rootCause}`)].filter(Boolean).join(" ") };
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
