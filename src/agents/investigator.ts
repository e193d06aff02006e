/**
 * Goes deeper once a hypothesis is confirmed: where the bad value came from (the caller, the
 * assignment, the code that stores it), each step able to depend on what the last one printed.
 */
import { z } from "zod";
import type { Observation, State, Update } from "../state.js";
import { cleanCommands, hypothesesText, triageText } from "./context.js";
import { evidenceIndex, evidenceOf } from "./evidence.js";
import { awaitingInvestigation } from "./flow.js";
import { playbookOf } from "./playbooks/index.js";
import { ask, COMMANDS_PER_STEP, runCommands, step, type NodeConfig } from "./runtime.js";

const Commands = z.object({ commands: z.array(z.string()).min(1) });

export async function investigator(state: State, config: NodeConfig): Promise<Update> {
  return step(config, "investigator", async (runtime) => {
    const target = awaitingInvestigation(state);
    if (!target) throw new Error("the investigator was reached without a confirmed hypothesis to investigate");
    const asked = await ask(runtime, "investigator", "investigator", {
      hypothesis: `${target.id}: ${target.statement} — ${target.finding ?? ""}`,
      hypotheses: hypothesesText(state.hypotheses),
      evidence: evidenceIndex(runtime.store),
      triage: triageText(state),
      debugger: runtime.session.backend,
      syntax: runtime.session.vocabulary.syntax,
    }, Commands);

    const observations: Observation[] = [];
    if (asked.value) {
      observations.push(...(await runCommands(runtime, "investigator", cleanCommands(asked.value.commands, COMMANDS_PER_STEP))));
    } else if (target.rule) {
      const playbook = playbookOf(state);
      // Each round sees what the previous printed: a heap walk reads one chunk header at a time.
      while (observations.length < COMMANDS_PER_STEP) {
        const evidence = evidenceOf({ ...state, observations: [...state.observations, ...observations] }, runtime.store, runtime.session.vocabulary);
        const next = playbook.investigate(target.rule, evidence).slice(0, COMMANDS_PER_STEP - observations.length);
        if (next.length === 0) break;
        observations.push(...(await runCommands(runtime, "investigator", next)));
      }
    }
    return [
      { observations, investigated: [target.id], ...(asked.fallback ? { fallbacks: [asked.fallback] } : {}) },
      `${target.id}: ${observations.length} command${observations.length === 1 ? "" : "s"}`,
    ];
  });
}
