/** The hypothesis agent's offline path: the playbook's candidates for this crash, in its order. */
import type { Hypothesis } from "../../state.js";
import type { PlannedHypothesis } from "../playbooks/kit.js";
import { COMMANDS_PER_TEST } from "../runtime.js";

/** `id(n)`: the id of the n-th hypothesis formed in this step. */
export function playbookHypotheses(candidates: PlannedHypothesis[], id: (n: number) => string): Hypothesis[] {
  return candidates.map((planned, n) => ({
    id: id(n),
    statement: planned.statement,
    origin: "playbook",
    rule: planned.rule,
    plan: planned.plan.map((round) => round.slice(0, COMMANDS_PER_TEST)),
    rounds: 0,
    status: "untested",
    finding: null,
    evidenceIds: [],
  }));
}
