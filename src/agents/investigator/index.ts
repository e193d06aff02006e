/**
 * Goes deeper once a hypothesis is confirmed: where the bad value came from (the caller, the
 * assignment, the code that stores it), each step able to depend on what the last one printed.
 */
import { z } from "../../zod.js";
import prompt from "./prompt.md";
import type { Hypothesis, State, Update } from "../../state.js";
import { cleanCommands } from "../answer-checks.js";
import { hypothesesText, triageText } from "../prompt-text.js";
import { evidenceIndex } from "../evidence.js";
import { awaitingInvestigation } from "../flow.js";
import { agentNode } from "../agent.js";
import { COMMANDS_PER_STEP, runCommands } from "../runtime.js";
import { investigateOffline } from "./offline.js";

const Commands = z.object({
  commands: z.array(z.string().describe("one read-only command in the debugger's own syntax")).min(1).describe("commands not run yet that show where the bad value came from"),
});

export const investigator = agentNode(
  {
    name: "investigator",
    prompt,
    profile: { tier: "local", temperature: 0.1 },
    schema: Commands,
    offline: ({ state, runtime }) => {
      const rule = investigated(state).rule;
      return rule ? investigateOffline(state, rule, runtime) : [];
    },
    // A model's commands are taken as it proposed them, cleaned and capped, and run.
    check: (answer, { runtime }) => runCommands(runtime, "investigator", cleanCommands(answer.commands, COMMANDS_PER_STEP)),
  },
  async (state, { runtime, decide }): Promise<[Update, string]> => {
    const target = investigated(state);
    const observations = await decide({
      hypothesis: `${target.id}: ${target.statement} — ${target.finding ?? ""}`,
      hypotheses: hypothesesText(state.hypotheses),
      evidence: evidenceIndex(runtime.store),
      triage: triageText(state),
      debugger: runtime.session.backend,
      syntax: runtime.session.vocabulary.syntax,
    });
    return [
      { observations, investigated: [target.id] },
      `${target.id}: ${observations.length} command${observations.length === 1 ? "" : "s"}`,
    ];
  },
);

/** The confirmed hypothesis this step goes deeper into. */
function investigated(state: State): Hypothesis {
  const target = awaitingInvestigation(state);
  if (!target) throw new Error("the investigator was reached without a confirmed hypothesis to investigate");
  return target;
}
