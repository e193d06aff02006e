/**
 * A Go culprit's variables, where the dump lets a debugger print them. Triage walked the panicking
 * goroutine's frames from the runtime's g.sched; a debugger shows a frame's variables only when
 * its own unwind of the crashing thread reaches that frame (Delve's does through a throw, gdb's
 * stops at the signal trampoline). Where it does not, the playbooks say so instead of guessing.
 */
import type { Variable } from "../../debuggers/model.js";
import { placed, probes, type Probe } from "../../debuggers/probe.js";
import type { Evidence, Found } from "../evidence.js";
import type { Facts } from "./facts.js";
import { BACKTRACE, type Citations } from "./kit.js";
import { where } from "./prose.js";
import type { SourceFile } from "./source.js";

/** The debugger's number of the culprit's frame on the crashing thread's stack, when its unwind reached it. */
function culpritOnStack(facts: Facts, evidence: Evidence): number | null {
  const frames = evidence.find(BACKTRACE)?.reading?.frames ?? [];
  const name = facts.culprit?.function ?? null;
  return name === null ? null : (frames.find((frame) => frame.function === name)?.level ?? null);
}

function variableProbes(level: number): Probe[] {
  return [placed(probes.locals(), { frame: level }), placed(probes.arguments(), { frame: level })];
}

/** The culprit frame's locals and arguments, asked only where the debugger's unwind shows that frame. */
export function culpritVariables(facts: Facts, evidence: Evidence): Probe[] {
  const level = culpritOnStack(facts, evidence);
  if (level === null) return [];
  return variableProbes(level).filter((probe) => evidence.find(probe) === null);
}

/** What the culprit's frame held of `expression`'s root variable (`c` of `c.entries`), when the debugger printed it. */
export function readable(facts: Facts, evidence: Evidence, expression: string | null): { text: string; found: Found } | null {
  const level = culpritOnStack(facts, evidence);
  const root = expression?.split(/[.[]/)[0] ?? null;
  if (level === null || root === null) return null;
  for (const probe of variableProbes(level)) {
    const found = evidence.find(probe) as Found<Probe & { kind: "locals" | "arguments" }> | null;
    // Delve prints `(unreadable …)` for a variable an optimized build did not keep where the pc is.
    const variable = ((found?.ok ? found.reading : null) ?? []).find((v: Variable) => v.name === root && !/^\(unreadable\b/.test(v.value));
    if (found && variable) return { text: `In the culprit's frame, \`${root}\` = ${variable.value.length > 120 ? `${variable.value.slice(0, 120)}…` : variable.value}.`, found };
  }
  return null;
}

/** The honest sentence where the culprit's variables could not be printed. */
export function unreadableText(facts: Facts, evidence: Evidence, expression: string | null, c: Citations): string {
  const what = expression ? `\`${expression}\`` : "its variables";
  if (culpritOnStack(facts, evidence) === null) {
    return `The value of ${what} is not printed: the culprit's frame is not on the stack the debugger unwinds for the crashing thread${c.cite(evidence.find(BACKTRACE))} (its goroutine's frames were walked from the runtime's saved registers), so the runtime's message is what decides; \`dlv core\` can show the goroutine's locals.`;
  }
  return `The debugger did not print ${what} in the culprit's frame (an optimized build keeps few variables); the runtime's message is what decides.`;
}

/** `map[string]string` for a struct field declared `entries map[string]string` in the culprit's file. */
export function mapTypeOf(source: SourceFile | null, field: string): string | null {
  const pattern = new RegExp(`^\\s*${field}\\s+(map\\[[^\\]]+\\]\\S+)`);
  for (const line of source?.lines ?? []) {
    const match = pattern.exec(line);
    if (match?.[1]) return match[1];
  }
  return null;
}

/**
 * The Go function whose body holds the culprit's line, when it is not the culprit's symbol: a build
 * as shipped inlines small functions, so the frame is the caller's while the line table keeps the
 * callee's line (`(*Cache).Put`, inlined into `main.main`).
 */
function inlinedFrom(facts: Facts): string | null {
  const line = facts.culprit?.line ?? null;
  const symbol = facts.culprit?.function ?? null;
  if (!facts.source || line === null || symbol === null) return null;
  let header = line;
  while (header >= 1 && !/^func\b/.test(facts.source.lines[header - 1] ?? "")) header--;
  const match = /^func\s+(?:\(\s*(?:\w+\s+)?(\*?\w+)(?:\[[^\]]*\])?\s*\)\s*)?(\w+)/.exec(facts.source.lines[header - 1] ?? "");
  if (!match?.[2]) return null;
  const written = match[1] ? `(${match[1]}).${match[2]}` : match[2];
  // `example.com/svc/store.(*Cache).Put` → `(*Cache).Put`; a closure (`main.func1`) is its function's own code.
  const local = (symbol.split("/").at(-1) ?? symbol).replace(/^[\w-]+\./, "");
  return local === written || local.startsWith(`${written}.func`) ? null : written;
}

/** "`main.(*Cache).Put` (main.go:15)", or, inlined, "`main.main` (main.go:15, in `(*Cache).Put` inlined into it)". */
export function goWhere(facts: Facts): string {
  const callee = inlinedFrom(facts);
  const at = where(facts.culprit);
  return callee ? at.replace(/\)$/, `, in \`${callee}\` inlined into it)`) : at;
}
