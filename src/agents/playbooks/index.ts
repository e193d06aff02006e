/**
 * The offline brain: for each crash kind, the hypotheses worth testing and the 2–3 commands that
 * test each, the rules that judge them from what the commands printed, the commands that go
 * deeper once one is confirmed, and the conclusion a senior engineer would write from it all.
 *
 * A playbook is rebuilt from the same facts whenever an agent needs it, so the graph's state keeps
 * only each hypothesis' `rule` name and the closures never need to be checkpointed.
 */
import { parseBacktrace, type Frame } from "../../analyzers/index.js";
import type { CrashKind } from "../../report/schema.js";
import type { Hypothesis, HypothesisStatus } from "../../state.js";
import type { Evidence, Found } from "../evidence.js";
import { abortPlaybook, assertionPlaybook, fortifyPlaybook, stackProtectorPlaybook } from "./aborts.js";
import { divisionPlaybook, illegalInstructionPlaybook } from "./arithmetic.js";
import { pureVirtualPlaybook, uncaughtExceptionPlaybook } from "./cpp.js";
import { deadlockPlaybook } from "./deadlock.js";
import type { Facts } from "./facts.js";
import { unknownPlaybook } from "./unknown.js";
import { doubleFreePlaybook, heapCorruptionPlaybook } from "./heap.js";
import { badJumpPlaybook, busErrorPlaybook, invalidAccessPlaybook, nullDereferencePlaybook } from "./memory.js";
import { panicPlaybook } from "./panic.js";
import { stackOverflowPlaybook } from "./stack-overflow.js";

export { factsOf, type Facts } from "./facts.js";

/** The crashing thread's backtrace every playbook reads (`bt 40`, which triage already ran). */
export const BACKTRACE = "bt 40";

/** That backtrace parsed, and the frame right above the culprit (what the culprit called last). */
export function backtraceOf(evidence: Evidence, facts: Facts): { found: Found | null; frames: Frame[]; above: Frame | null } {
  const found = evidence.find(BACKTRACE);
  const frames = found?.ok ? parseBacktrace(found.output).frames : [];
  const above = frames.find((f) => f.level === (facts.culprit?.level ?? 0) - 1) ?? null;
  return { found, frames, above };
}

export interface Verdict {
  status: Exclude<HypothesisStatus, "untested">;
  /** One or two sentences saying why, citing the evidence ids. */
  finding: string;
  evidenceIds: string[];
}

export interface PlannedHypothesis {
  /** Names the hypothesis within its playbook; stored in the state as `Hypothesis.rule`. */
  rule: string;
  statement: string;
  /** Rounds of commands: the first tests it, the next gather more when the first was inconclusive. */
  plan: string[][];
  judge(evidence: Evidence): Verdict;
}

export interface Draft {
  summary: string;
  rootCause: string;
  confidence: number;
  recommendations: string[];
  evidenceIds: string[];
}

/** Something a post-mortem of this kind cannot settle, and what to ask whoever knows the program. */
export interface OpenQuestion {
  text: string;
  question: string;
}

export interface Playbook {
  /** In the order worth testing; the first few are formed at once, the rest on a pivot. */
  hypotheses: PlannedHypothesis[];
  /**
   * Commands that go deeper once `rule` is confirmed. Called again after they ran, with their
   * outputs in `evidence`, until it returns nothing new: a step may depend on what the last printed.
   */
  investigate(rule: string, evidence: Evidence): string[];
  /** The offline reasoner's conclusion. */
  conclude(hypotheses: Hypothesis[], evidence: Evidence): Draft;
  openQuestions: OpenQuestion[];
}

const PLAYBOOKS: Record<CrashKind, (facts: Facts) => Playbook> = {
  "null-dereference": nullDereferencePlaybook,
  "invalid-memory-access": invalidAccessPlaybook,
  "bad-jump": badJumpPlaybook,
  "bus-error": busErrorPlaybook,
  "stack-overflow": stackOverflowPlaybook,
  "stack-buffer-overflow": stackProtectorPlaybook,
  "fortify-failure": fortifyPlaybook,
  "double-free": doubleFreePlaybook,
  "heap-corruption": heapCorruptionPlaybook,
  "assertion-failure": assertionPlaybook,
  abort: abortPlaybook,
  "uncaught-exception": uncaughtExceptionPlaybook,
  "pure-virtual-call": pureVirtualPlaybook,
  "division-by-zero": divisionPlaybook,
  "illegal-instruction": illegalInstructionPlaybook,
  panic: panicPlaybook,
  deadlock: deadlockPlaybook,
  unknown: unknownPlaybook,
};

export function playbookFor(facts: Facts): Playbook {
  return PLAYBOOKS[facts.crash.kind](facts);
}

/**
 * Collects the evidence a piece of prose cites: `cite(found)` returns " (E4)" and remembers E4, so a
 * conclusion's `evidenceIds` are exactly the ids its text names.
 */
export class Citations {
  readonly ids: string[] = [];

  cite(...found: (Found | null | undefined)[]): string {
    const ids = found.filter((f): f is Found => f != null).map((f) => f.id);
    for (const id of ids) if (!this.ids.includes(id)) this.ids.push(id);
    return ids.length === 0 ? "" : ` (${ids.join(", ")})`;
  }
}

export function verdict(status: Verdict["status"], finding: string, ...found: (Found | null | undefined)[]): Verdict {
  const ids = [...new Set(found.filter((f): f is Found => f != null).map((f) => f.id))];
  return { status, finding, evidenceIds: ids };
}

/** The evidence of the first of `commands` that ran and succeeded. */
export function firstOk(evidence: Evidence, ...commands: (string | null)[]): Found | null {
  for (const command of commands) {
    if (command === null) continue;
    const found = evidence.find(command);
    if (found?.ok) return found;
  }
  return null;
}

/** Commands of `wanted` that have not run yet in this analysis. */
export function notYetRun(evidence: Evidence, wanted: (string | null)[]): string[] {
  return wanted.filter((command): command is string => command !== null && evidence.find(command) === null);
}

/** The hypothesis confirmed for `rule`, if any. */
export function confirmed(hypotheses: Hypothesis[], rule: string): Hypothesis | null {
  return hypotheses.find((h) => h.rule === rule && h.status === "confirmed") ?? null;
}

/** "H2 (use-after-free) was rejected: ..." sentences for the alternatives, for conclusions. */
export function alternativesText(hypotheses: Hypothesis[], except: string | null): string {
  const others = hypotheses.filter((h) => h.id !== except && h.status !== "untested" && h.finding);
  return others.map((h) => `${h.id} (${h.statement}) is ${h.status}: ${h.finding}`).join(" ");
}
