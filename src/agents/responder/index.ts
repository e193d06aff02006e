/**
 * Answers the critic's first round: runs the commands its issues name (and what a model adds), and
 * judges any hypothesis those commands tested, so the reasoner's second pass has the evidence.
 */
import { z } from "../../zod.js";
import prompt from "./prompt.md";
import type { Probe } from "../../debuggers/probe.js";
import type { Update } from "../../state.js";
import { cleanCommands, distinctProbes } from "../answer-checks.js";
import { evidenceIndex, evidenceOf } from "../evidence.js";
import { agentNode } from "../agent.js";
import { COMMANDS_PER_STEP, runCommands } from "../runtime.js";
import { judgeNowTested } from "./offline.js";

const Commands = z.object({
  commands: z.array(z.string().describe("one read-only command in the debugger's own syntax")).describe("commands not run yet that collect what the critic's issues ask for; empty when the dump cannot settle them"),
});

export const responder = agentNode(
  {
    name: "responder",
    prompt,
    profile: { tier: "local", temperature: 0.1 },
    schema: Commands,
    // Without a model the issues' own commands are all there is to run.
    offline: (): Probe[] => [],
    check: (answer) => cleanCommands(answer.commands, COMMANDS_PER_STEP),
  },
  async (state, { runtime, decide }): Promise<[Update, string]> => {
    const round = state.critique.at(-1);
    if (!round) throw new Error("the responder was reached before the critic's first round");
    const added = await decide({
      issues: round.issues.map((i) => `- ${i.text}${i.commands.length ? ` (suggested: ${i.commands.map((probe) => runtime.session.vocabulary.render(probe)).join("; ")})` : ""}`).join("\n") || "(none)",
      evidence: evidenceIndex(runtime.store),
      debugger: runtime.session.backend,
      syntax: runtime.session.vocabulary.syntax,
    });
    const evidence = evidenceOf(state, runtime.store, runtime.session.vocabulary);
    const wanted = distinctProbes([...round.issues.flatMap((i) => i.commands), ...added], COMMANDS_PER_STEP * 2);
    const commands = wanted.filter((command) => evidence.find(command) === null).slice(0, COMMANDS_PER_STEP);
    const observations = await runCommands(runtime, "responder", commands);

    const judged = judgeNowTested({ ...state, observations: [...state.observations, ...observations] }, runtime);
    return [
      { observations, hypotheses: judged },
      `${observations.length} command${observations.length === 1 ? "" : "s"} for ${round.issues.length} issue${round.issues.length === 1 ? "" : "s"}`,
    ];
  },
);
