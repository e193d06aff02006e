/** What the agents' prompts say about the analysis so far. */
import { formatTriage } from "../analyzers/index.js";
import type { Hypothesis, State } from "../state.js";
import { requireTriage } from "./runtime.js";

export function triageText(state: State): string {
  return formatTriage(requireTriage(state)).trimEnd();
}

export function hypothesesText(hypotheses: Hypothesis[]): string {
  if (hypotheses.length === 0) return "(none yet)";
  return hypotheses
    .map((h) => `${h.id} [${h.status}] ${h.statement}${h.finding ? ` — ${h.finding}` : ""}${h.evidenceIds.length ? ` (evidence: ${h.evidenceIds.join(", ")})` : ""}`)
    .join("\n");
}
