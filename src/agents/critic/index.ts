/**
 * Reviews the conclusion (two rounds at most): does every claim cite evidence that exists, were
 * alternatives tested, were the culprit's and its caller's frames examined, is the confidence
 * earned. Round 1's issues send the responder to collect what is missing; what round 2 still finds
 * becomes the report's follow-up questions.
 */
import { z } from "../../zod.js";
import prompt from "./prompt.md";
import type { Issue, Update } from "../../state.js";
import { cleanCommands } from "../answer-checks.js";
import { hypothesesText, triageText } from "../prompt-text.js";
import { evidenceIndex, evidenceOf } from "../evidence.js";
import { crashFacts } from "../playbooks/facts.js";
import { agentNode } from "../agent.js";
import { COMMANDS_PER_TEST } from "../runtime.js";
import { mechanicalChecks, openIssues } from "./offline.js";

const Review = z.object({
  issues: z
    .array(
      z.object({
        issue: z.string().min(1).describe("what is missing or unsupported in the conclusion"),
        commands: z.array(z.string().describe("one read-only command in the debugger's own syntax")).describe("commands that would settle it; none when the dump cannot"),
        question: z.string().min(1).describe("the question to ask the user if it stays open"),
      }).describe("one problem and how to settle it"),
    )
    .describe("the conclusion's problems; empty when it is sound"),
});

export const critic = agentNode(
  {
    name: "critic",
    prompt,
    profile: { tier: "cloud", temperature: 0.5 },
    schema: Review,
    // Beyond the mechanical checks, which always run, a model raises its own issues, and the
    // offline critic what no dump of this kind can show.
    offline: ({ state }) => openIssues(crashFacts(state)),
    check: (answer) => answer.issues.map((i) => ({ text: i.issue, commands: cleanCommands(i.commands, COMMANDS_PER_TEST), question: i.question })),
  },
  async (state, { runtime, decide }): Promise<[Update, string]> => {
    const conclusion = state.conclusion;
    if (!conclusion) throw new Error("the critic was reached without a conclusion to review");
    const round = state.critique.length + 1;
    const judged = await decide({
      round: String(round),
      conclusion: `Summary: ${conclusion.summary}\nRoot cause: ${conclusion.rootCause}\nConfidence: ${conclusion.confidence}\nRecommendations:\n${conclusion.recommendations.map((r) => `- ${r}`).join("\n")}`,
      hypotheses: hypothesesText(state.hypotheses),
      evidence: evidenceIndex(runtime.store),
      triage: triageText(state),
      debugger: runtime.session.backend,
      syntax: runtime.session.vocabulary.syntax,
    });
    const checks = mechanicalChecks(state, crashFacts(state), evidenceOf(state, runtime.store, runtime.session.vocabulary));
    const issues = dedupe([...checks, ...judged]);
    return [
      { critique: [{ round, issues }] },
      `round ${round}: ${issues.length === 0 ? "no issues" : `${issues.length} issue${issues.length === 1 ? "" : "s"}: ${issues.map((i) => i.text).join(" | ")}`}`,
    ];
  },
);

function dedupe(issues: Issue[]): Issue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => !seen.has(issue.text) && seen.add(issue.text));
}
