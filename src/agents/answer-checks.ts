/**
 * Checks on what a model answers, before it counts: the evidence it cites must exist (and, to
 * support a claim, have succeeded), and the commands it proposes become probes, trimmed and capped.
 */
import { probeKey, type Probe } from "../debuggers/probe.js";
import type { EvidenceStore } from "../evidence/store.js";

/** The ids a model cited that exist in the store: a model may cite evidence that never existed. */
export function existingIds(ids: string[], store: EvidenceStore): string[] {
  return [...new Set(ids.map((id) => id.trim()).filter((id) => /^E\d+$/.test(id) && store.get(id) !== null))];
}

/** Evidence ids a text names (E12) that the store does not hold: a model may invent them. */
export function unknownCitations(texts: string[], store: EvidenceStore): string[] {
  const named = new Set(texts.flatMap((t) => t.match(/\bE\d+\b/g) ?? []));
  return [...named].filter((id) => store.get(id) === null);
}

/** The ids that can support a claim: they exist and their command succeeded (a refusal proves nothing). */
export function supportingIds(ids: string[], store: EvidenceStore): string[] {
  return existingIds(ids, store).filter((id) => store.get(id)?.ok === true);
}

/** Commands a model proposed in the debugger's language, trimmed, without empty ones or repeats, at most `max`. */
export function cleanCommands(commands: string[], max: number): Probe[] {
  return [...new Set(commands.map((c) => c.trim()).filter((c) => c !== ""))].slice(0, max).map((text) => ({ kind: "command", text }));
}

/** Probes without repeats, at most `max`, in order. */
export function distinctProbes(probes: Probe[], max: number): Probe[] {
  const seen = new Set<string>();
  return probes.filter((probe) => !seen.has(probeKey(probe)) && seen.add(probeKey(probe))).slice(0, max);
}
