/**
 * Reviews the conclusion (two rounds at most): does every claim cite evidence that exists, were
 * alternatives tested, were the culprit's and its caller's frames examined, is the confidence
 * earned. Round 1's issues send the responder to collect what is missing; what round 2 still finds
 * becomes the report's follow-up questions.
 */
import { z } from "zod";
import { probes } from "../debuggers/probe.js";
import type { Issue, State, Update } from "../state.js";
import { cleanCommands, hypothesesText, triageText } from "./context.js";
import { evidenceIndex, evidenceOf, type Evidence } from "./evidence.js";
import { untested } from "./flow.js";
import { crashFacts, type Facts } from "./playbooks/facts.js";
import { playbookFor } from "./playbooks/index.js";
import { agentNode } from "./agent.js";
import { COMMANDS_PER_TEST } from "./runtime.js";

const Review = z.object({
  issues: z
    .array(
      z.object({
        issue: z.string().min(1).describe("what is missing or unsupported in the conclusion"),
        commands: z.array(z.string().describe("one read-only command in the debugger's own syntax")).describe("commands that would settle it; none when the dump cannot"),
        question: z.string().min(1).describe("the question to ask the user if it stays open"),
      }),
    )
    .describe("the conclusion's problems; empty when it is sound"),
});

export const critic = agentNode(
  { name: "critic", prompt: "critic", profile: { tier: "cloud", temperature: 0.5 }, schema: Review },
  async (state, { runtime, ask }): Promise<[Update, string]> => {
    const conclusion = state.conclusion;
    if (!conclusion) throw new Error("the critic was reached without a conclusion to review");
    const round = state.critique.length + 1;
    const answer = await ask({
      round: String(round),
      conclusion: `Summary: ${conclusion.summary}\nRoot cause: ${conclusion.rootCause}\nConfidence: ${conclusion.confidence}\nRecommendations:\n${conclusion.recommendations.map((r) => `- ${r}`).join("\n")}`,
      hypotheses: hypothesesText(state.hypotheses),
      evidence: evidenceIndex(runtime.store),
      triage: triageText(state),
      debugger: runtime.session.backend,
      syntax: runtime.session.vocabulary.syntax,
    });

    const facts = crashFacts(state);
    const checks = mechanicalChecks(state, facts, evidenceOf(state, runtime.store, runtime.session.vocabulary));
    // The mechanical checks always run; beyond them a model raises its own issues, and the offline
    // critic what no dump of this kind can show.
    const judged = answer
      ? answer.issues.map((i) => ({ text: i.issue, commands: cleanCommands(i.commands, COMMANDS_PER_TEST), question: i.question }))
      : playbookFor(facts).openQuestions.map((q) => ({ ...q, commands: [] }));
    const issues = dedupe([...checks, ...judged]);
    return [
      { critique: [{ round, issues }] },
      `round ${round}: ${issues.length === 0 ? "no issues" : `${issues.length} issue${issues.length === 1 ? "" : "s"}: ${issues.map((i) => i.text).join(" | ")}`}`,
    ];
  },
);

/** Checks any reader of the report could make, from the state and the store alone. */
function mechanicalChecks(state: State, facts: Facts, evidence: Evidence): Issue[] {
  const issues: Issue[] = [];
  const conclusion = state.conclusion;
  if (!conclusion) return issues;
  const text = `${conclusion.summary} ${conclusion.rootCause}`;
  const cited = [...new Set(text.match(/\bE\d+\b/g) ?? [])];
  for (const [part, value] of [["summary", conclusion.summary], ["root cause", conclusion.rootCause]] as const) {
    if (!/\bE\d+\b/.test(value)) {
      issues.push({ text: `The ${part} cites no evidence: every claim must name the evidence it rests on.`, commands: [], question: `Which part of the ${part} can you confirm from the program's logs or code?` });
    }
  }
  const unknown = cited.filter((id) => !evidence.exists(id));
  if (unknown.length > 0) {
    issues.push({ text: `The conclusion cites evidence that does not exist: ${unknown.join(", ")}.`, commands: [], question: "Which evidence supports the claims that cite missing ids?" });
  }
  for (const h of state.hypotheses) {
    // A refused or failed command proves nothing: a decisive status needs an output that succeeded.
    if ((h.status === "confirmed" || h.status === "rejected") && !h.evidenceIds.some((id) => evidence.succeeded(id))) {
      issues.push({ text: `${h.id} is ${h.status} without evidence.`, commands: h.plan[0] ?? [], question: `What would confirm or rule out ${h.id} (${h.statement})?` });
    }
  }
  const confirmed = state.hypotheses.filter((h) => h.status === "confirmed");
  const tested = state.hypotheses.filter((h) => h.status !== "untested");
  if (confirmed.length > 0 && tested.length < 2) {
    const next = untested(state)[0];
    issues.push({
      text: `No alternative to ${confirmed[0]?.id} was tested, so nothing rules out another explanation.`,
      commands: next?.plan[0] ?? [],
      question: `Could something other than "${confirmed[0]?.statement}" explain this crash in your deployment?`,
    });
  }
  if (confirmed.length === 0 && conclusion.confidence > 0.5) {
    issues.push({ text: `The confidence (${conclusion.confidence}) is high although no hypothesis was confirmed.`, commands: [], question: "What else do you know about the failure that could confirm a cause?" });
  }
  if (facts.culprit) {
    const frame = [facts.inCulprit(probes.locals()), facts.inCulprit(probes.arguments())];
    const missing = frame.filter((probe) => evidence.find(probe) === null);
    if (missing.length > 0) {
      issues.push({
        text: `The culprit frame ${facts.fn ? `(\`${facts.fn}\`) ` : ""}was not fully examined: its ${missing.map((p) => (p.kind === "locals" ? "locals" : "arguments")).join(" and ")} are not in the evidence.`,
        commands: missing,
        question: `What values should ${facts.fn ?? "the culprit"}'s arguments and locals have at this point?`,
      });
    }
  }
  const caller = facts.inCaller(probes.locals());
  if (caller && evidence.find(caller) === null) {
    issues.push({
      text: "The caller's frame was not examined: where the bad values came from is not shown.",
      commands: [caller, facts.inCaller(probes.arguments())].filter((p) => p !== null),
      question: "How does the caller obtain the values it passes down?",
    });
  }
  return issues;
}

function dedupe(issues: Issue[]): Issue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => !seen.has(issue.text) && seen.add(issue.text));
}
