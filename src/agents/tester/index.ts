/** Tests the current hypothesis with 2–3 targeted commands: its next planned round, or what a model picks. */
import { z } from "../../zod.js";
import prompt from "./prompt.md";
import type { Update } from "../../state.js";
import { cleanCommands } from "../answer-checks.js";
import { triageText } from "../prompt-text.js";
import { outputsOf } from "../evidence.js";
import { agentNode, notTaken } from "../agent.js";
import { COMMANDS_PER_TEST, hypothesisById, runCommands } from "../runtime.js";
import { plannedRound } from "./offline.js";

const Commands = z.object({
  commands: z.array(z.string().describe("one read-only command in the debugger's own syntax")).min(1).describe("the 1–3 commands that best confirm or reject the hypothesis now"),
});

export const tester = agentNode(
  {
    name: "tester",
    prompt,
    profile: { tier: "local", temperature: 0.1 },
    schema: Commands,
    offline: ({ state }) => plannedRound(hypothesisById(state, state.current)),
    check: (answer) => {
      const proposed = cleanCommands(answer.commands, COMMANDS_PER_TEST);
      return proposed.length > 0 ? proposed : notTaken("the model proposed only blank commands");
    },
  },
  async (state, { runtime, decide }): Promise<[Update, string]> => {
    const current = hypothesisById(state, state.current);
    const commands = await decide({
      hypothesis: `${current.id}: ${current.statement}`,
      planned: plannedRound(current).map((probe) => runtime.session.vocabulary.render(probe)).join("\n") || "(none)",
      debugger: runtime.session.backend,
      syntax: runtime.session.vocabulary.syntax,
      evidence: outputsOf(runtime.store, current.evidenceIds),
      triage: triageText(state),
    });
    const observations = await runCommands(runtime, "tester", commands, current.id);
    const tested = {
      ...current,
      rounds: current.rounds + 1,
      evidenceIds: [...new Set([...current.evidenceIds, ...observations.filter((o) => o.hypothesis === current.id).map((o) => o.evidenceId)])],
    };
    return [
      { hypotheses: [tested], observations, iterations: 1 },
      `${current.id} round ${tested.rounds}: ${commands.length} command${commands.length === 1 ? "" : "s"}`,
    ];
  },
);
