/**
 * Forms hypotheses from the issue and the triage: the first few at the start, one more on each
 * pivot (when every hypothesis so far was rejected or stayed inconclusive).
 */
import { z } from "../../zod.js";
import prompt from "./prompt.md";
import type { Hypothesis, State, Update } from "../../state.js";
import { cleanCommands } from "../answer-checks.js";
import { hypothesesText, triageText } from "../prompt-text.js";
import { playbookOf } from "../playbooks/index.js";
import type { PlannedHypothesis } from "../playbooks/kit.js";
import { agentNode, notTaken, type NotTaken } from "../agent.js";
import { COMMANDS_PER_TEST, INITIAL_HYPOTHESES, type Runtime } from "../runtime.js";
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
  {
    name: "hypothesis",
    prompt,
    profile: { tier: "cloud", temperature: 0.0 },
    schema: Proposal,
    offline: ({ state, runtime }) => {
      const { wanted, candidates } = forming(state, runtime);
      return playbookHypotheses(candidates.slice(0, wanted), (n) => idOf(state, n));
    },
    check: (answer, { state, runtime }) => proposed(answer, state, runtime),
  },
  async (state, { runtime, decide }): Promise<[Update, string]> => {
    if (state.hypotheses.length >= runtime.limits.maxHypotheses) return [{}, "no room for more hypotheses"];
    const { wanted, candidates } = forming(state, runtime);
    const fresh = await decide({
      issue: state.issue ?? "(none given)",
      triage: triageText(state),
      tried: hypothesesText(state.hypotheses),
      candidates: candidates.map((h) => `${h.rule}: ${h.statement} — commands: ${(h.plan[0] ?? []).map((probe) => runtime.session.vocabulary.render(probe)).join("; ")}`).join("\n") || "(none)",
      debugger: runtime.session.backend,
      syntax: runtime.session.vocabulary.syntax,
      wanted: String(wanted),
    });
    const note = fresh.length === 0 ? "no new hypothesis" : `${fresh.length} hypothes${fresh.length === 1 ? "is" : "es"}: ${fresh.map((h) => `${h.id} ${h.statement}`).join("; ")}`;
    return [
      { hypotheses: fresh, current: fresh[0]?.id ?? null },
      note,
    ];
  },
);

/** What this step forms: how many hypotheses, and the playbook's candidates not formed yet. */
function forming(state: State, runtime: Runtime): { wanted: number; candidates: PlannedHypothesis[] } {
  const room = runtime.limits.maxHypotheses - state.hypotheses.length;
  const formed = new Set(state.hypotheses.map((h) => h.rule));
  return {
    wanted: Math.min(room, state.hypotheses.length === 0 ? INITIAL_HYPOTHESES : 1),
    candidates: playbookOf(state).hypotheses.filter((h) => !formed.has(h.rule)),
  };
}

/** The id of the n-th hypothesis formed in this step. */
function idOf(state: State, n: number): string {
  return `H${state.hypotheses.length + n + 1}`;
}

/** The model's proposals this step takes: new ones that say something testable, adopting a candidate's rule and later rounds where they name one. */
function proposed(answer: z.infer<typeof Proposal>, state: State, runtime: Runtime): Hypothesis[] | NotTaken<Hypothesis[]> {
  // A model that proposes again what was already tested would loop the graph to its limits.
  const seen = new Set(state.hypotheses.map((h) => sameStatement(h.statement)));
  // A statement that says nothing testable ("x", "a bug") is no hypothesis: the playbook's stand.
  const proposals = answer.hypotheses.filter((p) => !seen.has(sameStatement(p.statement)) && saysSomething(p.statement));
  if (proposals.length === 0) {
    return notTaken(answer.hypotheses.some((p) => seen.has(sameStatement(p.statement))) ? "the model only proposed hypotheses already tested" : "the model proposed no hypothesis that says something testable");
  }
  const { wanted, candidates } = forming(state, runtime);
  return proposals.slice(0, wanted).map((proposal, n) => {
    const adopted = candidates.find((h) => h.rule === proposal.rule);
    return {
      id: idOf(state, n),
      statement: proposal.statement,
      origin: "model",
      rule: adopted?.rule ?? null,
      plan: [cleanCommands(proposal.commands, COMMANDS_PER_TEST), ...(adopted?.plan.slice(1) ?? [])],
      rounds: 0,
      status: "untested",
      finding: null,
      evidenceIds: [],
    };
  });
}

/** Whether a statement claims something: a few words, at least one of them a name or a real word. */
function saysSomething(statement: string): boolean {
  const words = statement.trim().split(/\s+/).filter((word) => /[A-Za-z_]{2,}/.test(word));
  return words.length >= 4;
}

/** Two statements of the same hypothesis, whatever their case, spacing or final period. */
function sameStatement(statement: string): string {
  return statement.toLowerCase().replace(/\s+/g, " ").replace(/[.\s]+$/, "").trim();
}
