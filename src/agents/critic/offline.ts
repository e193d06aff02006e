/**
 * The critic's offline path: the checks any reader of the report could make, which run with a model
 * too, and the questions no dump of this kind can settle, which stand in for a model's own issues.
 */
import { probes } from "../../debuggers/probe.js";
import type { Issue, State } from "../../state.js";
import type { Evidence } from "../evidence.js";
import { untested } from "../flow.js";
import type { Facts } from "../playbooks/facts.js";
import { playbookFor } from "../playbooks/index.js";

export /** Checks any reader of the report could make, from the state and the store alone. */
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
  // A runtime's frame (a Java method) has no locals a debugger can print: its runtime's tools read it.
  if (facts.culprit && facts.culprit.found !== "runtime") {
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

/** What no dump of this kind can show, as issues without commands. */
export function openIssues(facts: Facts): Issue[] {
  return playbookFor(facts).openQuestions.map((q) => ({ ...q, commands: [] }));
}
