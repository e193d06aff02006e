/**
 * What every playbook is made of: the shape of a playbook and its hypotheses, the probes they all
 * read, and the helpers that turn evidence into verdicts and cited prose.
 */
import type { Frame } from "../../debuggers/model.js";
import type { Probe } from "../../debuggers/probe.js";
import type { Hypothesis, HypothesisStatus } from "../../state.js";
import type { Evidence, Found } from "../evidence.js";
import type { Facts } from "./facts.js";

/** The crashing thread's backtrace every playbook reads (40 frames, which triage already asked for). */
export const BACKTRACE = { kind: "backtrace", limit: 40 } as const satisfies Probe;
/** The signal's record: code, fault address, sender. */
export const SIGNAL_INFO = { kind: "signal-info" } as const satisfies Probe;
/** The selected frame's registers. */
export const REGISTERS = { kind: "registers" } as const satisfies Probe;
/** The instruction at the selected frame's pc: the faulting one. */
export const FAULTING_INSTRUCTION = { kind: "instructions", count: 1 } as const satisfies Probe;
/** The C library's message when abort was called with one (assert, malloc's checks, the stack protector). */
export const ABORT_MESSAGE = { kind: "abort-message" } as const satisfies Probe;
/** Every thread with its innermost frame. */
export const THREADS = { kind: "threads" } as const satisfies Probe;
/** The program's and libraries' sections, and the dump's segments. */
export const SECTIONS = { kind: "sections" } as const satisfies Probe;
/** The process's memory mappings. */
export const MAPPINGS = { kind: "mappings" } as const satisfies Probe;

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
  /** Rounds of probes: the first tests it, the next gather more when the first was inconclusive. */
  plan: Probe[][];
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
   * Probes that go deeper once `rule` is confirmed. Called again after they ran, with their
   * outputs in `evidence`, until it returns nothing new: a step may depend on what the last printed.
   */
  investigate(rule: string, evidence: Evidence): Probe[];
  /** The offline reasoner's conclusion. */
  conclude(hypotheses: Hypothesis[], evidence: Evidence): Draft;
  openQuestions: OpenQuestion[];
}

/** That backtrace read, and the frame right above the culprit (what the culprit called last). */
export function backtraceOf(evidence: Evidence, facts: Facts): { found: Found | null; frames: Frame[]; above: Frame | null } {
  const found = evidence.find(BACKTRACE);
  const frames = found?.reading?.frames ?? [];
  const above = frames.find((f) => f.level === facts.culpritLevel - 1) ?? null;
  return { found, frames, above };
}

/**
 * Collects the evidence a piece of prose cites: `cite(found)` returns " (E4)" and remembers E4, so a
 * conclusion's `evidenceIds` are exactly the ids its text names (and those its hypothesis rests on).
 */
export class Citations {
  readonly ids: string[] = [];

  cite(...found: (Found | null | undefined)[]): string {
    const ids = found.filter((f): f is Found => f != null).map((f) => f.id);
    this.include(ids);
    return ids.length === 0 ? "" : ` (${ids.join(", ")})`;
  }

  /** Ids the prose rests on without naming them (those of the hypothesis it concludes from). */
  include(ids: string[]): void {
    for (const id of ids) if (!this.ids.includes(id)) this.ids.push(id);
  }
}

export function verdict(status: Verdict["status"], finding: string, ...found: (Found | null | undefined)[]): Verdict {
  const ids = [...new Set(found.filter((f): f is Found => f != null).map((f) => f.id))];
  return { status, finding, evidenceIds: ids };
}

/** The evidence of the first of `probes` that ran and succeeded. */
export function firstOk<P extends Probe>(evidence: Evidence, ...probes: (P | null)[]): Found<P> | null {
  for (const probe of probes) {
    if (probe === null) continue;
    const found = evidence.find(probe);
    if (found?.ok) return found;
  }
  return null;
}

/** Probes of `wanted` that have not run yet in this analysis. */
export function notYetRun(evidence: Evidence, wanted: (Probe | null)[]): Probe[] {
  return wanted.filter((probe): probe is Probe => probe !== null && evidence.find(probe) === null);
}

/** An `investigate` that asks for the same probes whichever hypothesis was confirmed, each once. */
export function deeperProbes(wanted: (Probe | null)[]): Playbook["investigate"] {
  return (_rule, evidence) => notYetRun(evidence, wanted);
}

/** The hypothesis confirmed for `rule`, if any. */
export function confirmed(hypotheses: Hypothesis[], rule: string): Hypothesis | null {
  return hypotheses.find((h) => h.rule === rule && h.status === "confirmed") ?? null;
}
