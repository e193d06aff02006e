/**
 * The questions the routers ask of the state: is there a hypothesis left to test, can more be
 * gathered for this one, is a confirmation waiting to be investigated, are the limits near.
 * Pure functions of the state and the run's limits, so the routing can be read (and tested) apart.
 */
import type { Hypothesis, State } from "../state.js";
import { playbookOf } from "./playbooks/index.js";
import type { Runtime } from "./runtime.js";

/** Nodes from the evaluator to a finished report: reasoner, critic, responder, reasoner, critic, report. */
const STEPS_TO_FINISH = 6;
/** Test rounds a model may spend on one hypothesis before its evaluation stands. */
const MODEL_ROUNDS = 2;

function hasModel(runtime: Runtime): boolean {
  return runtime.models.cloud !== null || runtime.models.local !== null;
}

/** The step budget is nearly spent: go straight to reasoning so the run still ends in a report. */
export function mustWrapUp(state: State, runtime: Runtime): boolean {
  return state.trail.length + STEPS_TO_FINISH >= runtime.limits.recursionLimit || state.iterations >= runtime.limits.maxIterations;
}

export function untested(state: State): Hypothesis[] {
  return state.hypotheses.filter((h) => h.status === "untested");
}

/** An inconclusive hypothesis with another round of commands to try. */
export function canGatherMore(hypothesis: Hypothesis, runtime: Runtime): boolean {
  if (hypothesis.status !== "inconclusive") return false;
  if (hypothesis.rounds < hypothesis.plan.filter((round) => round.length > 0).length) return true;
  return hasModel(runtime) && hypothesis.rounds < MODEL_ROUNDS;
}

/** What to test after `judged` was evaluated: more of it, the next untested one, or nothing. */
export function nextToTest(state: State, judged: Hypothesis, runtime: Runtime): string | null {
  if (canGatherMore(judged, runtime)) return judged.id;
  return untested(state).find((h) => h.id !== judged.id)?.id ?? null;
}

/** A confirmed hypothesis the investigator has not gone into yet. */
export function awaitingInvestigation(state: State): Hypothesis | null {
  return state.hypotheses.find((h) => h.status === "confirmed" && !state.investigated.includes(h.id)) ?? null;
}

/** Whether a pivot can form a hypothesis that was not tried: from the playbook, or from a model. */
export function canFormMore(state: State, runtime: Runtime): boolean {
  if (state.hypotheses.length >= runtime.limits.maxHypotheses || state.triage === null) return false;
  if (hasModel(runtime)) return true;
  const formed = new Set(state.hypotheses.map((h) => h.rule));
  return playbookOf(state).hypotheses.some((h) => !formed.has(h.rule));
}
