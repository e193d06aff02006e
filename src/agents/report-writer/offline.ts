/** The report writer's offline path: the follow-up questions without a model, or beyond its few. */
import type { State } from "../../state.js";
import { playbookOf } from "../playbooks/index.js";

const MIN_QUESTIONS = 3;
const MAX_QUESTIONS = 5;
/** Asked when the playbook's own questions run out; true of every crash. */
const GENERAL_QUESTIONS = [
  "Can you share the program's log (stderr) from the minutes before the crash?",
  "Does it reproduce with the same input, and since which release or configuration change?",
];

/** 3–5 questions: the model's, else the unresolved issues' own, topped up from the playbook. */
export function followUpQuestions(state: State, proposed: string[]): string[] {
  const unresolved = state.critique.at(-1)?.issues ?? [];
  const playbook = state.triage && state.crashSite ? playbookOf(state).openQuestions.map((q) => q.question) : [];
  const all = [...proposed, ...unresolved.map((i) => i.question), ...playbook, ...GENERAL_QUESTIONS].map((q) => q.trim()).filter(Boolean);
  const unique = [...new Set(all)];
  return unique.slice(0, Math.max(MIN_QUESTIONS, Math.min(MAX_QUESTIONS, proposed.length || unresolved.length)));
}
