/**
 * How a playbook's conclusion is written: one builder that ends every root cause the same way (what
 * the caller's frame held and what the other threads did, where they matter, then what became of
 * the other hypotheses), the conclusion when nothing was confirmed, and the open questions several
 * kinds of crash share.
 */
import type { Variable } from "../../debuggers/model.js";
import { probes, type Probe } from "../../debuggers/probe.js";
import type { Hypothesis } from "../../state.js";
import type { Evidence, Found } from "../evidence.js";
import type { Facts } from "./facts.js";
import { BACKTRACE, Citations, confirmed, firstOk, THREADS, type Draft, type OpenQuestion, type Playbook } from "./kit.js";
import { callPath, where } from "./prose.js";

/** What a conclusion rests on. */
export interface Grounds {
  facts: Facts;
  evidence: Evidence;
  hypotheses: Hypothesis[];
  /** The confirmed hypothesis; null when the conclusion rests on none. */
  hit: Hypothesis | null;
}

/** What a playbook says in its conclusion; the builder adds the ending every conclusion shares. */
export interface Findings {
  summary: string;
  /** The root cause's own sentences (empty ones are dropped). */
  cause: string[];
  /** The caller frame's locals and arguments belong in the root cause. */
  withCaller?: boolean;
  /** What the other threads were doing belongs in it (they might have touched the data). */
  withOtherThreads?: boolean;
  confidence: number;
  recommendations: string[];
}

/**
 * The conclusion: the root cause is `cause`, then what the caller held and what the other threads
 * did (when asked for), then what became of the alternatives; it cites what `c` collected and the
 * evidence of the hypothesis it rests on.
 */
export function conclusion({ facts, evidence, hypotheses, hit }: Grounds, c: Citations, findings: Findings): Draft {
  const rootCause = [
    ...findings.cause,
    findings.withCaller ? callerFacts(facts, evidence, c) : "",
    findings.withOtherThreads ? otherThreads(facts, evidence, c) : "",
    alternativesText(hypotheses, hit?.id ?? null),
  ].filter(Boolean).join(" ");
  c.include(hit?.evidenceIds ?? []);
  return {
    summary: findings.summary,
    rootCause: rootCause || (hit ? (hit.finding ?? "") : "Not determined from the dump alone."),
    confidence: findings.confidence,
    recommendations: [...findings.recommendations, ...foreignLibrariesAdvice(facts), ...debugSymbolsAdvice(facts, findings.recommendations)],
    evidenceIds: c.ids,
  };
}

/**
 * A playbook's `conclude` when its conclusion rests on one hypothesis, the first of `rules` that was
 * confirmed: `findings` says what it found; with none confirmed, the conclusion is that `open` could
 * not be established.
 */
export function concludeOn(facts: Facts, rules: string[], open: string, findings: (grounds: Grounds & { hit: Hypothesis }, c: Citations) => Findings): Playbook["conclude"] {
  return (hypotheses, evidence) => {
    const hit = rules.map((rule) => confirmed(hypotheses, rule)).find((h) => h !== null);
    if (!hit) return undetermined(facts, hypotheses, evidence, open);
    const grounds = { facts, evidence, hypotheses, hit };
    const c = new Citations();
    return conclusion(grounds, c, findings(grounds, c));
  };
}

/** "H2 (use-after-free) was rejected: ..." sentences for the alternatives. */
function alternativesText(hypotheses: Hypothesis[], except: string | null): string {
  const others = hypotheses.filter((h) => h.id !== except && h.status !== "untested" && h.finding);
  return others.map((h) => `${h.id} (${h.statement}) is ${h.status}: ${h.finding}`).join(" ");
}

/** The caller frame's locals and arguments, as one sentence. */
function callerFacts(facts: Facts, evidence: Evidence, c: Citations): string {
  const locals = firstOk(evidence, facts.inCaller(probes.locals()));
  const args = firstOk(evidence, facts.inCaller(probes.arguments()));
  const text = (found: Found<Probe & { kind: "locals" | "arguments" }> | null) => (found?.reading ? variables(found.reading) : null);
  const parts = [text(locals) && `${text(locals)}${c.cite(locals)}`, text(args) && `arguments ${text(args)}${c.cite(args)}`].filter(Boolean);
  return parts.length && facts.caller ? `In ${where(facts.caller)}: ${parts.join("; ")}.` : "";
}

/** Variables as one `name = value` phrase; long values (C++ containers, big structs) are elided. */
function variables(list: Variable[]): string {
  return list
    .slice(0, 6)
    .map(({ name, value }) => {
      const line = `${name} = ${value}`;
      return line.length > 90 ? `${name} = {…}` : line;
    })
    .join(", ");
}

/** The conclusion when no hypothesis was confirmed: what is known, stated as such. */
export function undetermined(facts: Facts, hypotheses: Hypothesis[], evidence: Evidence, open: string): Draft {
  const c = new Citations();
  const bt = evidence.find(BACKTRACE);
  const info = evidence.find(facts.fault.record);
  const summary = `The process died with ${facts.crash.signal ?? "no signal"}${facts.crash.signalCode ? ` (${facts.crash.signalCode})` : ""}${c.cite(info)} in ${where(facts.culprit)}${c.cite(bt)}; the analysis could not establish ${open}.`;
  const tested = alternativesText(hypotheses, null);
  return {
    summary,
    rootCause: tested ? `Tested: ${tested}` : `No hypothesis could be tested against the dump.`,
    confidence: 0.3,
    recommendations: [
      ...foreignLibrariesAdvice(facts),
      facts.culprit?.file
        ? `Reproduce with AddressSanitizer (the program already has debug info), then analyse the new dump.`
        : `Reproduce with a build that has debug info (-g) and, for memory errors, AddressSanitizer, then analyse the new dump.`,
      `Start from ${where(facts.culprit)} on the path ${callPath(facts) || "shown in the backtrace"}.`,
    ],
    evidenceIds: c.ids,
  };
}

/** For a core from another machine: get its libraries first, since what the debugger shows inside them here is not what ran. */
function foreignLibrariesAdvice(facts: Facts): string[] {
  const foreign = facts.triage.foreignLibraries ?? [];
  if (foreign.length === 0) return [];
  const names = foreign.slice(0, 3).map((lib) => lib.path.split("/").at(-1)).join(", ");
  return [
    `The core comes from another machine: ${names}${foreign.length > 3 ? " and more" : ""} ${foreign.length === 1 ? "is" : "are"} ${foreign.some((lib) => lib.status === "different") ? "another build on" : "missing from"} this one. Copy that machine's libraries (or its whole root) here and analyse again with --solib-search-path DIR (or --sysroot DIR), or give their debug files with --debug-file-directory DIR: the stack through them, and their own checks, become readable.`,
  ];
}

/** For stripped code whose packages are known: which debug symbols name it, unless the playbook said so already. */
function debugSymbolsAdvice(facts: Facts, said: string[]): string[] {
  const packages = facts.triage.packages ?? [];
  if (packages.length === 0 || facts.culprit?.file || said.some((text) => /debug symbols/.test(text))) return [];
  return [`Install the debug symbols of ${packages.map((p) => `${p.name} ${p.version}`).join(" and ")} (Debian's debug archive, or debuginfod) and analyse again: the crashing code's functions, lines and variables become visible.`];
}

/** What the process's other threads were doing, from triage's grouping of the thread list. */
function otherThreads(facts: Facts, evidence: Evidence, c: Citations): string {
  const others = facts.triage.threads.count - 1;
  if (others < 1) return "";
  const groups = facts.triage.threads.groups
    .map((g) => ({ ...g, threads: g.threads.filter((t) => t !== facts.crash.thread.id) }))
    .filter((g) => g.threads.length > 0)
    .slice(0, 3)
    .map((g) => `${g.threads.length} in \`${g.function}\``);
  return `The other ${others} thread${others === 1 ? " was" : "s were"} elsewhere: ${groups.join(", ")}${c.cite(evidence.find(THREADS))}; none was running the crashing code.`;
}

/** In a process with other threads, whether one of them changed the data is a fair question. */
export function concurrencyQuestion(facts: Facts): OpenQuestion[] {
  if (facts.triage.threads.count <= 1) return [];
  return [
    {
      text: `The process had ${facts.triage.threads.count} threads; the dump cannot show whether another one changed the data shortly before the crash.`,
      question: "Is the data involved shared between threads, and which lock protects it?",
    },
  ];
}
