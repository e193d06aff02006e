/**
 * Writes the report: the JSON contract (validated) and what the renderers show beside it. What the
 * critic's last round still found becomes 3–5 follow-up questions for the user: a model's, checked
 * against the evidence, topped up offline.
 */
import { z } from "../../zod.js";
import prompt from "./prompt.md";
import { counted } from "../../report/numbers.js";
import type { Update } from "../../state.js";
import { agentNode, notTaken } from "../agent.js";
import { unknownCitations } from "../answer-checks.js";
import { composeReport } from "./compose.js";
import { followUpQuestions } from "./offline.js";

const Questions = z.object({
  questions: z
    .array(z.string().min(1).describe("one specific question for the program's developers or operators, naming the function, variable or input"))
    .describe("3 to 5 questions, each able to confirm or change the diagnosis"),
});

export const reportWriter = agentNode(
  {
    name: "report",
    prompt,
    profile: { tier: "cloud", temperature: 0.2 },
    schema: Questions,
    offline: ({ state }) => followUpQuestions(state, []),
    check: (answer, { state, runtime }) => {
      // A question that cites evidence which does not exist would send the user looking for it.
      const proposed = answer.questions.filter((q) => unknownCitations([q], runtime.store).length === 0);
      if (proposed.length > 0) return followUpQuestions(state, proposed);
      return notTaken(answer.questions.length === 0 ? "the model asked no question" : "every question the model asked cites evidence that does not exist");
    },
  },
  async (state, { runtime, spentSoFar, decide }): Promise<[Update, string]> => {
    const unresolved = state.critique.at(-1)?.issues ?? [];
    const questions = unresolved.length === 0 ? [] : await decide({
      conclusion: state.conclusion ? `${state.conclusion.summary}\n${state.conclusion.rootCause}` : "(none)",
      unresolved: unresolved.map((i) => `- ${i.text}`).join("\n"),
    });
    const document = composeReport(state, runtime, spentSoFar(), questions);
    return [{ document }, `${counted(document.report.hypotheses.length, "hypothesis", "hypotheses")}, ${counted(document.report.evidence.length, "piece", "pieces")} of evidence, ${counted(questions.length, "follow-up question")}`];
  },
);
