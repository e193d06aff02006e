/** Tests the current hypothesis with 2–3 targeted commands: its next planned round, or what a model picks. */
import { z } from "zod";
import type { State, Update } from "../state.js";
import { cleanCommands, triageText } from "./context.js";
import { outputsOf } from "./evidence.js";
import { ask, COMMANDS_PER_TEST, hypothesisById, runCommands, step, type NodeConfig } from "./runtime.js";

const Commands = z.object({ commands: z.array(z.string()).min(1) });

export async function tester(state: State, config: NodeConfig): Promise<Update> {
  return step(config, "tester", async (runtime) => {
    const current = hypothesisById(state, state.current);
    const planned = current.plan[current.rounds] ?? [];
    const asked = await ask(runtime, "tester", "tester", {
      hypothesis: `${current.id}: ${current.statement}`,
      planned: planned.map((probe) => runtime.session.vocabulary.render(probe)).join("\n") || "(none)",
      debugger: runtime.session.backend,
      syntax: runtime.session.vocabulary.syntax,
      evidence: outputsOf(runtime.store, current.evidenceIds),
      triage: triageText(state),
    }, Commands);
    const proposed = asked.value ? cleanCommands(asked.value.commands, COMMANDS_PER_TEST) : [];
    const commands = proposed.length > 0 ? proposed : planned;
    const observations = await runCommands(runtime, "tester", commands, current.id);
    const tested = {
      ...current,
      rounds: current.rounds + 1,
      evidenceIds: [...new Set([...current.evidenceIds, ...observations.filter((o) => o.hypothesis === current.id).map((o) => o.evidenceId)])],
    };
    return [
      { hypotheses: [tested], observations, iterations: 1, ...(asked.fallback ? { fallbacks: [asked.fallback] } : {}) },
      `${current.id} round ${tested.rounds}: ${commands.length} command${commands.length === 1 ? "" : "s"}`,
    ];
  });
}
