/** The tester's offline path: the hypothesis' next planned round of probes. */
import type { Probe } from "../../debuggers/probe.js";
import type { Hypothesis } from "../../state.js";

export function plannedRound(hypothesis: Hypothesis): Probe[] {
  return hypothesis.plan[hypothesis.rounds] ?? [];
}
