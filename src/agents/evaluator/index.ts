/**
 * Judges the hypothesis just tested: confirmed, rejected or inconclusive, from what its commands
 * printed, and says what to test next (more of it, or the next one).
 */
import { z } from "../../zod.js";
import prompt from "./prompt.md";
import type { Hypothesis, Update } from "../../state.js";
import { existingIds, supportingIds, unknownCitations } from "../answer-checks.js";
import { triageText } from "../prompt-text.js";
import { outputsOf } from "../evidence.js";
import { nextToTest } from "../flow.js";
import type { Verdict } from "../playbooks/kit.js";
import { agentNode, notTaken, type NotTaken } from "../agent.js";
import { hypothesisById, type Runtime } from "../runtime.js";
import { offlineVerdict } from "./offline.js";

const Judgement = z.object({
  status: z.enum(["confirmed", "rejected", "inconclusive"]).describe("what the outputs show of the hypothesis: it holds, it does not, or they do not decide it"),
  finding: z.string().min(1).describe("why, in one or two sentences that quote the decisive values and cite their evidence ids, like (E4)"),
  evidenceIds: z.array(z.string().describe("an evidence id listed in the prompt, like E4")).describe("the evidence the finding rests on"),
});

export const evaluator = agentNode(
  {
    name: "evaluator",
    prompt,
    profile: { tier: "local", temperature: 0.1 },
    schema: Judgement,
    offline: ({ state, runtime }) => offlineVerdict(state, hypothesisById(state, state.current), runtime),
    check: (answer, { state, runtime, floor }) => {
      const current = hypothesisById(state, state.current);
      return floored(checked(answer, current, runtime), current, floor);
    },
  },
  async (state, { runtime, decide }): Promise<[Update, string]> => {
    const current = hypothesisById(state, state.current);
    const judged = await decide({
      hypothesis: `${current.id}: ${current.statement}`,
      outputs: outputsOf(runtime.store, current.evidenceIds),
      triage: triageText(state),
      debugger: runtime.session.backend,
    });
    const updated: Hypothesis = { ...current, status: judged.status, finding: judged.finding, evidenceIds: [...new Set([...judged.evidenceIds, ...current.evidenceIds])] };
    const after = { ...state, hypotheses: state.hypotheses.map((h) => (h.id === updated.id ? updated : h)) };
    return [
      { hypotheses: [updated], current: nextToTest(after, updated, runtime) },
      `${current.id} ${judged.status}: ${judged.finding}`,
    ];
  },
);

/**
 * A model's verdict is only as good as the evidence it cites: a decisive status needs at least one
 * cited output that exists and succeeded (a refused or failed command proves nothing), and its
 * finding may not name evidence that does not exist. Otherwise it is recorded as inconclusive.
 */
function checked(verdict: Verdict, hypothesis: Hypothesis, runtime: Runtime): Verdict {
  const cited = existingIds(verdict.evidenceIds, runtime.store);
  const invented = unknownCitations([verdict.finding], runtime.store);
  const support = supportingIds(cited, runtime.store);
  if (verdict.status !== "inconclusive" && (support.length === 0 || invented.length > 0)) {
    // The model's own words are not repeated: they would carry the invented ids into the report.
    const why = invented.length > 0 ? "cites evidence that does not exist" : "rests on no command that succeeded (refused or failed ones prove nothing)";
    return { status: "inconclusive", finding: `The model judged it ${verdict.status}, but its judgement ${why}.`, evidenceIds: cited.length > 0 ? cited : hypothesis.evidenceIds };
  }
  return { ...verdict, evidenceIds: cited.length > 0 ? cited : hypothesis.evidenceIds };
}

/**
 * The offline rule's verdict is the floor: where the model's (checked) verdict decides nothing but
 * the rule decides, the rule's stands, and the model's view is kept beside it. A verdict the check
 * downgraded stays the model's step: it says why the model's judgement did not count.
 */
async function floored(verdict: Verdict, hypothesis: Hypothesis, floor: () => Promise<Verdict>): Promise<Verdict | NotTaken<Verdict>> {
  if (verdict.status !== "inconclusive" || !hypothesis.rule) return verdict;
  const offline = await floor();
  if (offline.status === "inconclusive") return verdict;
  return notTaken("the model's verdict decides nothing where the playbook's rule does", {
    ...offline,
    finding: `${offline.finding} (The model found it inconclusive: ${verdict.finding.replace(/\.$/, "")}.)`,
  });
}
