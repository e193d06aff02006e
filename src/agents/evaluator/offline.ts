/** The evaluator's offline path: the playbook rule that judges the hypothesis, over the evidence. */
import type { Hypothesis, State } from "../../state.js";
import { evidenceOf } from "../evidence.js";
import { playbookOf } from "../playbooks/index.js";
import type { Verdict } from "../playbooks/kit.js";
import type { Runtime } from "../runtime.js";

export function offlineVerdict(state: State, hypothesis: Hypothesis, runtime: Runtime): Verdict {
  const planned = hypothesis.rule ? playbookOf(state).hypotheses.find((h) => h.rule === hypothesis.rule) : undefined;
  if (!planned) {
    return { status: "inconclusive", finding: "No offline rule judges this hypothesis, and the model could not; its evidence is listed for a human to read.", evidenceIds: hypothesis.evidenceIds };
  }
  return planned.judge(evidenceOf(state, runtime.store, runtime.session.vocabulary));
}
