/**
 * Forms hypotheses from the issue and the triage: the first few at the start, one more on each
 * pivot (when every hypothesis so far was rejected or stayed inconclusive).
 */
import { z } from "zod";
import type { Hypothesis, Update } from "../../state.js";
import { cleanCommands } from "../answer-checks.js";
import { hypothesesText, triageText } from "../prompt-text.js";
import { playbookOf } from "../playbooks/index.js";
import { agentNode } from "../agent.js";
import { COMMANDS_PER_TEST, INITIAL_HYPOTHESES } from "../runtime.js";
import { playbookHypotheses } from "./offline.js";

const Proposal = z.object({
  hypotheses: z
    .array(
      z.object({
        statement: z.string().min(1).describe("a specific, testable cause that names the pointer, lock or value and the function and line it concerns"),
        rule: z.string().optional().describe("the playbook candidate's rule name, when the hypothesis adopts one"),
        commands: z.array(z.string().describe("one read-only command in the debugger's own syntax")).describe("2–3 commands that would confirm or reject it"),
      }).describe("one hypothesis and how to test it"),
    )
    .min(1)
    .describe("new hypotheses, none already formed"),
});

export const hypothesis = agentNode(
  { name: "hypothesis", prompt: "hypothesis", profile: { tier: "cloud", temperature: 0.0 }, schema: Proposal },
  async (state, { runtime, ask, notTaken }): Promise<[Update, string]> => {
    const room = runtime.limits.maxHypotheses - state.hypotheses.length;
    if (room <= 0) return [{}, "no room for more hypotheses"];
    const wanted = Math.min(room, state.hypotheses.length === 0 ? INITIAL_HYPOTHESES : 1);
    const playbook = playbookOf(state);
    const formed = new Set(state.hypotheses.map((h) => h.rule));
    const candidates = playbook.hypotheses.filter((h) => !formed.has(h.rule));

    const answer = await ask({
      issue: state.issue ?? "(none given)",
      triage: triageText(state),
      tried: hypothesesText(state.hypotheses),
      candidates: candidates.map((h) => `${h.rule}: ${h.statement} — commands: ${(h.plan[0] ?? []).map((probe) => runtime.session.vocabulary.render(probe)).join("; ")}`).join("\n") || "(none)",
      debugger: runtime.session.backend,
      syntax: runtime.session.vocabulary.syntax,
      wanted: String(wanted),
    });

    const next = (n: number) => `H${state.hypotheses.length + n + 1}`;
    // A model that proposes again what was already tested would loop the graph to its limits.
    const seen = new Set(state.hypotheses.map((h) => sameStatement(h.statement)));
    // A statement that says nothing testable ("x", "a bug") is no hypothesis: the playbook's stand.
    const proposals = answer?.hypotheses.filter((p) => !seen.has(sameStatement(p.statement)) && saysSomething(p.statement)) ?? [];
    const repeated = answer !== null && answer.hypotheses.some((p) => seen.has(sameStatement(p.statement))) && proposals.length === 0;
    const empty = answer !== null && proposals.length === 0 && !repeated;
    const fresh: Hypothesis[] = proposals.length > 0
      ? proposals.slice(0, wanted).map((proposal, n) => {
          const adopted = candidates.find((h) => h.rule === proposal.rule);
          return {
            id: next(n),
            statement: proposal.statement,
            origin: "model",
            rule: adopted?.rule ?? null,
            plan: [cleanCommands(proposal.commands, COMMANDS_PER_TEST), ...(adopted?.plan.slice(1) ?? [])],
            rounds: 0,
            status: "untested",
            finding: null,
            evidenceIds: [],
          };
        })
      : playbookHypotheses(candidates.slice(0, wanted), next);
    if (repeated) notTaken("the model only proposed hypotheses already tested");
    if (empty) notTaken("the model proposed no hypothesis that says something testable");
    const note = fresh.length === 0 ? "no new hypothesis" : `${fresh.length} hypothes${fresh.length === 1 ? "is" : "es"}: ${fresh.map((h) => `${h.id} ${h.statement}`).join("; ")}`;
    return [
      { hypotheses: fresh, current: fresh[0]?.id ?? null },
      note,
    ];
  },
);

/** Whether a statement claims something: a few words, at least one of them a name or a real word. */
function saysSomething(statement: string): boolean {
  const words = statement.trim().split(/\s+/).filter((word) => /[A-Za-z_]{2,}/.test(word));
  return words.length >= 4;
}

/** Two statements of the same hypothesis, whatever their case, spacing or final period. */
function sameStatement(statement: string): string {
  return statement.toLowerCase().replace(/\s+/g, " ").replace(/[.\s]+$/, "").trim();
}
