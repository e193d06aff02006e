/** The investigator's offline path: the playbook's next probes for the confirmed rule, round after round. */
import type { Observation, State } from "../../state.js";
import { evidenceOf } from "../evidence.js";
import { playbookOf } from "../playbooks/index.js";
import { COMMANDS_PER_STEP, runCommands, type Runtime } from "../runtime.js";

export async function investigateOffline(state: State, rule: string, runtime: Runtime): Promise<Observation[]> {
  const playbook = playbookOf(state);
  const observations: Observation[] = [];
  // Each round sees what the previous printed: a heap walk reads one chunk header at a time.
  while (observations.length < COMMANDS_PER_STEP) {
    const evidence = evidenceOf({ ...state, observations: [...state.observations, ...observations] }, runtime.store, runtime.session.vocabulary);
    const next = playbook.investigate(rule, evidence).slice(0, COMMANDS_PER_STEP - observations.length);
    if (next.length === 0) break;
    observations.push(...(await runCommands(runtime, "investigator", next)));
  }
  return observations;
}
