/**
 * The responder's offline path: an alternative the critic asked for, whose planned probes the
 * responder's commands have now run, judged by its playbook rule.
 */
import type { Hypothesis, State } from "../../state.js";
import { evidenceOf } from "../evidence.js";
import { playbookOf } from "../playbooks/index.js";
import type { Runtime } from "../runtime.js";

/** `after`: the state with the responder's observations added. */
export function judgeNowTested(after: State, runtime: Runtime): Hypothesis[] {
  const playbook = playbookOf(after);
  const now = evidenceOf(after, runtime.store, runtime.session.vocabulary);
  const judged: Hypothesis[] = [];
  const testable = (h: Hypothesis) => h.status === "untested" && h.rule !== null && (h.plan[0] ?? []).length > 0 && (h.plan[0] ?? []).every((c) => now.find(c) !== null);
  for (const h of after.hypotheses.filter(testable)) {
    const verdict = playbook.hypotheses.find((p) => p.rule === h.rule)?.judge(now);
    if (verdict) judged.push({ ...h, rounds: 1, status: verdict.status, finding: verdict.finding, evidenceIds: verdict.evidenceIds });
  }
  return judged;
}
