/**
 * The stack ran out. Triage has measured the recursion (its cycle and estimated depth) without
 * unwinding it; here the frame size is checked and the recursion's input is read from an inner frame.
 */
import type { Evidence } from "../evidence.js";
import type { Facts } from "./facts.js";
import { alternativesText, Citations, confirmed, notYetRun, verdict, type PlannedHypothesis, type Playbook } from "./index.js";
import { undetermined } from "./memory.js";
import { listedCode } from "./origins.js";
import { basename, plural, where } from "./prose.js";
import { functionSpan, grep } from "./source.js";
import { pointerOf, printed } from "./values.js";

/** Frames one step of the stack takes, from two adjacent frames' `info frame` CFAs. */
function frameBytes(evidence: Evidence, inner: number): { bytes: bigint | null; found: ReturnType<Evidence["find"]>[] } {
  const a = evidence.find(`info frame level ${inner}`);
  const b = evidence.find(`info frame level ${inner + 1}`);
  const cfa = (found: typeof a) => (found?.ok ? /frame at (0x[0-9a-f]+)/.exec(found.output)?.[1] : undefined);
  const x = cfa(a);
  const y = cfa(b);
  return { bytes: x && y ? BigInt(y) - BigInt(x) : null, found: [a, b] };
}

export function stackOverflowPlaybook(facts: Facts): Playbook {
  const recursion = facts.triage.recursion;
  const cycle = recursion?.cycle ?? [];
  const depth = recursion?.depth ?? facts.triage.stackDepth;
  // Frame 1 is a whole frame of the recursion (frame 0 faulted while setting up).
  const inner = 1;
  const recursing: PlannedHypothesis = {
    rule: "runaway-recursion",
    statement: cycle.length
      ? `${cycle.map((f) => `\`${f}\``).join(" → ")} recursed without bound until the stack ran out (about ${plural(depth, "frame")})`
      : `unbounded recursion ran the stack out`,
    plan: [["bt 40", `info frame level ${inner}`, `info frame level ${inner + 1}`]],
    judge(evidence) {
      const bt = evidence.find("bt 40");
      const size = frameBytes(evidence, inner);
      const info = evidence.find("p $_siginfo");
      const c = new Citations();
      if (recursion && size.bytes !== null && size.bytes > 0n) {
        return verdict(
          "confirmed",
          `The backtrace repeats ${cycle.join(" → ")}${c.cite(bt)}; one turn takes ${size.bytes} bytes of stack${c.cite(...size.found)}, so the ${recursion.estimated ? "estimated " : ""}${plural(depth, "frame")} fill the stack, and the fault at ${facts.crash.faultAddress} is just below it${c.cite(info)}.`,
          bt,
          ...size.found,
          info,
        );
      }
      if (recursion) return verdict("confirmed", `The backtrace repeats ${cycle.join(" → ")}${c.cite(bt)}, ${plural(depth, "frame")} deep.`, bt);
      return verdict("inconclusive", `The backtrace does not repeat a cycle${c.cite(bt)}.`, bt);
    },
  };
  const bigFrame: PlannedHypothesis = {
    rule: "huge-frame",
    statement: "one frame with a huge local array or alloca exhausted the stack",
    plan: [[`info frame level ${inner}`, `info frame level ${inner + 1}`]],
    judge(evidence) {
      const size = frameBytes(evidence, inner);
      const c = new Citations();
      if (size.bytes === null) return verdict("inconclusive", "The frame sizes could not be read.", ...size.found);
      if (size.bytes < 4096n) return verdict("rejected", `A frame takes ${size.bytes} bytes${c.cite(...size.found)}: the depth, not the size of a frame, used up the stack.`, ...size.found);
      return verdict("confirmed", `A frame takes ${size.bytes} bytes${c.cite(...size.found)}.`, ...size.found);
    },
  };
  const at = (command: string) => facts.at(inner, command);
  const pointerArgs = [...facts.args.entries()].filter(([, v]) => (pointerOf(v) ?? 0n) > 0n || /<error reading variable/.test(v)).map(([name]) => name).slice(0, 2);
  const span = facts.fn ? functionSpan(facts.source, facts.fn, facts.culprit?.line ?? undefined) : null;
  const recursiveCall = span && facts.fn ? grep(facts.source, new RegExp(`\\b${facts.fn}\\s*\\(`), span.start + 1, span.end)[0] ?? null : null;
  const limits = span ? grep(facts.source, /\b(depth|level|nesting|limit|max_?depth|MAX_DEPTH)\b/i, span.header, span.end) : [];
  return {
    hypotheses: [recursing, bigFrame],
    investigate: (rule, evidence) =>
      rule === "runaway-recursion"
        ? notYetRun(evidence, [at("info args"), at("info locals"), ...pointerArgs.map((name) => at(`p *${name}`)), recursiveCall === null ? null : facts.list(recursiveCall)])
        : [],
    conclude(hypotheses, evidence) {
      const hit = confirmed(hypotheses, "runaway-recursion");
      if (!hit) return undetermined(facts, hypotheses, evidence, "what exhausted the stack");
      const c = new Citations();
      for (const id of hit.evidenceIds) c.ids.push(id);
      const call = recursiveCall === null ? null : evidence.find(facts.list(recursiveCall) ?? "");
      const state = pointerArgs.map((name) => ({ name, found: evidence.find(at(`p *${name}`)) })).filter((s) => printed(s.found) !== null);
      const locals = evidence.find(at("info locals"));
      const summary = `Stack overflow: ${cycle.length > 1 ? `${cycle.map((f) => `\`${f}\``).join(" → ")}, from ${where(facts.culprit)},` : where(facts.culprit)} recursed about ${plural(depth, "time")}${c.cite(evidence.find("bt 40"))} until the stack was exhausted; the next call's frame faulted at ${facts.crash.faultAddress}${c.cite(evidence.find("p $_siginfo"))}.`;
      const rootCause = [
        call?.ok ? `It recurses at ${basename(facts.culprit?.file ?? "")}:${recursiveCall}: \`${listedCode(call)}\`${c.cite(call)}, once per level of nesting in its input.` : "",
        state.length ? `At the fault its input state was ${state.map((s) => `\`*${s.name}\` = ${printed(s.found)}${c.cite(s.found)}`).join("; ")}.` : "",
        locals?.ok ? `An inner frame's locals: ${locals.output.trim().split("\n").slice(0, 4).join(", ")}${c.cite(locals)}.` : "",
        span ? (limits.length === 0 ? `Nothing in \`${facts.fn}\` limits the depth: its body has no depth or limit variable, so the input alone decides how deep it goes.` : `\`${facts.fn}\` mentions a depth/limit at line ${limits[0]}, yet the recursion went ${plural(depth, "frame")} deep: check that limit.`) : "",
        alternativesText(hypotheses, hit.id),
      ].filter(Boolean).join(" ");
      return {
        summary,
        rootCause,
        confidence: 0.9,
        recommendations: [
          `Bound the recursion in \`${facts.fn ?? cycle[0]}\`: pass a depth and reject input nested deeper than a fixed limit (a few hundred levels is plenty for real data).`,
          "Or replace the recursion with an explicit stack on the heap, so nesting costs memory, not the thread's stack.",
        ],
        evidenceIds: c.ids,
      };
    },
    openQuestions: [
      { text: "The dump cannot show whether such deeply nested input is legitimate or hostile.", question: "Where did the deeply nested input come from, and is it from an untrusted client?" },
      { text: "The thread's stack size limit is not recorded in the core.", question: "What stack size does this thread run with (ulimit -s, or the thread attributes)?" },
    ],
  };
}
