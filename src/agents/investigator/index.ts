/**
 * Goes deeper once a hypothesis is confirmed: where the bad value came from (the caller, the
 * assignment, the code that stores it), each step able to depend on what the last one printed.
 */
import { z } from "zod";
import type { Observation, Update } from "../../state.js";
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
  { name: "investigator", prompt: "investigator", profile: { tier: "local", temperature: 0.1 }, schema: Commands },
  async (state, { runtime, ask }): Promise<[Update, string]> => {
    const target = awaitingInvestigation(state);
    if (!target) throw new Error("the investigator was reached without a confirmed hypothesis to investigate");
    const answer = await ask({
      hypothesis: `${target.id}: ${target.statement} — ${target.finding ?? ""}`,
      hypotheses: hypothesesText(state.hypotheses),
      evidence: evidenceIndex(runtime.store),
      triage: triageText(state),
      debugger: runtime.session.backend,
      syntax: runtime.session.vocabulary.syntax,
    });

    const observations: Observation[] = [];
    if (answer) {
      observations.push(...(await runCommands(runtime, "investigator", cleanCommands(answer.commands, COMMANDS_PER_STEP))));
    } else if (target.rule) {
      observations.push(...(await investigateOffline(state, target.rule, runtime)));
    }
    return [
      { observations, investigated: [target.id] },
      `${target.id}: ${observations.length} command${observations.length === 1 ? "" : "s"}`,
    ];
  },
);
